"""Share-partition state on `__share_group_state` (KIP-932's persister), both of its sides, as Kafka 4.2 splits them.

The share coordinator of a share-partition is the leader of its `__share_group_state` partition (Kafka's
abs(hash("group:topicId:partition")) % partitions). It keeps the latest ShareSnapshot of each key it holds,
replayed from that partition when it first serves it after taking the lead, and answers Initialize, Read,
Write, Delete and ReadSummary ShareGroupState (`ShareCoordinatorState`; the handlers are
`broker/handlers/share_state.py`). A write merges the batches it carries into the stored ones (newer states
win where they overlap, nothing below the start offset is kept) and is fenced when its leader or state epoch
is older than the stored one, so a deposed share-partition leader cannot overwrite its successor's state.

The share-partition leader (`ShareStateStore`) reads a share-partition's state from its coordinator when it
first serves it under a leader epoch, and writes the window of every share-partition a request changed
before it answers, so an acknowledged record stays acknowledged and a delivery count survives a leader
change. It calls its own coordinator directly and another broker's with ReadShareGroupState /
WriteShareGroupState over the inter-broker listener. The topic is created through the controller on first use (as
`__consumer_offsets`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kio.schema.delete_share_group_state.v0.request import (
    DeleteShareGroupStateRequest,
    DeleteStateData,
)
from kio.schema.delete_share_group_state.v0.request import (
    PartitionData as DeletePartition,
)
from kio.schema.errors import ErrorCode
from kio.schema.initialize_share_group_state.v0.request import (
    InitializeShareGroupStateRequest,
    InitializeStateData,
)
from kio.schema.initialize_share_group_state.v0.request import (
    PartitionData as InitializePartition,
)
from kio.schema.read_share_group_state.v0.request import (
    PartitionData as ReadPartition,
)
from kio.schema.read_share_group_state.v0.request import (
    ReadShareGroupStateRequest,
    ReadStateData,
)
from kio.schema.read_share_group_state_summary.v1.request import (
    PartitionData as SummaryPartition,
)
from kio.schema.read_share_group_state_summary.v1.request import (
    ReadShareGroupStateSummaryRequest,
    ReadStateSummaryData,
)
from kio.schema.write_share_group_state.v1.request import (
    PartitionData as WritePartition,
)
from kio.schema.write_share_group_state.v1.request import (
    StateBatch as WriteBatch,
)
from kio.schema.write_share_group_state.v1.request import (
    WriteShareGroupStateRequest,
    WriteStateData,
)
from kio.static.primitive import i8, i16, i32, i64

from broker.config import BrokerConfig
from broker.context import BrokerState
from broker.groups.offsets_log import OffsetsAppendError
from broker.metadata.coordinator_records import CoordinatorRecordError
from broker.replication.peer_connection import PeerConnectionError
from broker.server.group_storage import PartitionLeaderLocator, append_and_commit, read_led
from broker.server.txn_storage import PeerPool
from broker.share.persister import (
    FENCED_LEADER_EPOCH_MESSAGE,
    FENCED_STATE_EPOCH_MESSAGE,
    NOT_INITIALIZED,
    UNINITIALIZED_READ,
    UNINITIALIZED_WRITE,
    CoordinatorAnswer,
    ShareKey,
    merge_batches,
)
from broker.share.share_partition import SharePartition
from broker.share.state_records import (
    SHARE_STATE_TOPIC,
    ShareSnapshot,
    StateBatch,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    share_coordinator_key,
    share_state_partition,
)

log = logging.getLogger(__name__)

# How long a share-partition leader keeps retrying a read or write its share coordinator cannot take yet.
PERSISTER_RETRY_S = 15.0
RETRIABLE = frozenset(
    {
        ErrorCode.coordinator_not_available,
        ErrorCode.not_coordinator,
        ErrorCode.coordinator_load_in_progress,
        ErrorCode.not_leader_or_follower,
        ErrorCode.request_timed_out,
    }
)


@dataclass(slots=True)
class _Shard:
    """What the coordinator holds for one `__share_group_state` partition it leads, under one leader epoch."""

    leader_epoch: int
    snapshots: dict[ShareKey, ShareSnapshot] = field(default_factory=dict)
    # The newest leader epoch each key's share-partition leader read or wrote with (Kafka's leaderEpochMap).
    leader_epochs: dict[ShareKey, int] = field(default_factory=dict)


def share_state_topic_spec(config: BrokerConfig) -> dict[str, Any]:
    return {
        "name": SHARE_STATE_TOPIC,
        "partitions": config.get_int("share.coordinator.state.topic.num.partitions"),
        "replication_factor": config.get_int("share.coordinator.state.topic.replication.factor"),
        "configs": share_state_topic_configs(config),
        "internal": True,
    }


def share_state_topic_configs(config: BrokerConfig) -> dict[str, str]:
    return {
        "cleanup.policy": "compact",
        "compression.type": "producer",
        "min.insync.replicas": str(config.get_int("share.coordinator.state.topic.min.isr")),
    }


class ShareCoordinatorState:
    """The share coordinator's side: the snapshots of the keys whose `__share_group_state` partition this
    broker leads."""

    def __init__(self, state: BrokerState) -> None:
        self._state = state
        self._shards: dict[int, _Shard] = {}
        self.locator = PartitionLeaderLocator(
            state, self, state.cluster, SHARE_STATE_TOPIC, share_state_topic_spec
        )

    @property
    def num_partitions(self) -> int:
        topic = self._state.metadata.get(SHARE_STATE_TOPIC)
        if topic is not None:
            return topic.partitions
        return self._state.config.get_int("share.coordinator.state.topic.num.partitions")

    def partition_of(self, key: ShareKey) -> int | None:
        """The key's `__share_group_state` partition; None while the topic does not exist (the controller is
        asked to create it)."""
        if self._state.metadata.get(SHARE_STATE_TOPIC) is None:
            self.locator.locate(share_coordinator_key(*key), self._listener())
            return None
        return share_state_partition(*key, self.num_partitions)

    def ensure_topic(self) -> bool:
        """Whether `__share_group_state` exists; the controller is asked to create it otherwise (FindCoordinator
        with the share key type does, as in Kafka)."""
        if self._state.metadata.get(SHARE_STATE_TOPIC) is not None:
            return True
        return self.partition_of(("", uuid.UUID(int=0), 0)) is not None

    def locate(self, key: str, listener_name: str) -> tuple[ErrorCode, int, str, int]:
        """FindCoordinator's share key type: (error, node id, host, port)."""
        found = self.locator.locate(key, listener_name)
        return found.error_code, found.node_id, found.host, found.port

    def _listener(self) -> str:
        replication = self._state.replication
        name = replication.config.inter_broker.listener_name if replication is not None else None
        return name or ""

    def coordinator_of(self, key: ShareKey) -> int | None:
        """The broker id of the key's share coordinator, None when it has none right now."""
        partition = self.partition_of(key)
        if partition is None:
            return None
        leader = self._state.partitions.leader_for(SHARE_STATE_TOPIC, partition)
        return None if leader < 0 else leader

    def _shard(self, key: ShareKey) -> tuple[int, _Shard] | ErrorCode:
        """The loaded state of the key's partition where this broker leads it; replayed on first use under a
        new leader epoch (a broker that led it before may have missed writes)."""
        partition = self.partition_of(key)
        if partition is None:
            return ErrorCode.coordinator_not_available
        led, _error = self._state.partitions.leader(SHARE_STATE_TOPIC, partition)
        if led is None:
            return ErrorCode.not_coordinator
        shard = self._shards.get(partition)
        if shard is None or shard.leader_epoch != led.leader_epoch:
            shard = self._shards[partition] = _Shard(led.leader_epoch)
            for entry in read_led(self._state, SHARE_STATE_TOPIC, partition):
                if entry.key is None:
                    continue
                try:
                    decoded = decode_key(entry.key)
                    if decoded is None:
                        continue
                    if entry.value is None:
                        shard.snapshots.pop(decoded, None)
                    else:
                        shard.snapshots[decoded] = snapshot = decode_value(entry.value)
                        shard.leader_epochs[decoded] = snapshot.leader_epoch
                except CoordinatorRecordError as exc:
                    log.warning(
                        "skipping a malformed %s record at offset %d: %s",
                        SHARE_STATE_TOPIC,
                        entry.offset,
                        exc,
                    )
        return partition, shard

    def _topic_error(self, key: ShareKey) -> ErrorCode | None:
        topic = self._state.metadata.get_by_id(key[1])
        if topic is None or not 0 <= key[2] < topic.partitions:
            return ErrorCode.unknown_topic_or_partition
        return None

    def read(self, key: ShareKey, leader_epoch: int) -> CoordinatorAnswer:
        """ReadShareGroupState: the stored snapshot, recording the reader's leader epoch (which fences older
        leaders' writes)."""
        found = self._shard(key)
        if isinstance(found, ErrorCode):
            return CoordinatorAnswer(found)
        _partition, shard = found
        if key not in shard.snapshots:
            return CoordinatorAnswer(ErrorCode.invalid_request, message=UNINITIALIZED_READ)
        if shard.leader_epochs.get(key, -1) > leader_epoch:
            return CoordinatorAnswer(ErrorCode.fenced_leader_epoch, message=FENCED_LEADER_EPOCH_MESSAGE)
        if (error := self._topic_error(key)) is not None:
            return CoordinatorAnswer(error)
        if leader_epoch >= 0:
            shard.leader_epochs[key] = leader_epoch
        return CoordinatorAnswer(snapshot=shard.snapshots.get(key))

    def summary(self, key: ShareKey) -> CoordinatorAnswer:
        found = self._shard(key)
        if isinstance(found, ErrorCode):
            return CoordinatorAnswer(found)
        if (error := self._topic_error(key)) is not None:
            return CoordinatorAnswer(error)
        return CoordinatorAnswer(snapshot=found[1].snapshots.get(key))

    async def write(
        self,
        key: ShareKey,
        *,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[StateBatch],
    ) -> CoordinatorAnswer:
        """WriteShareGroupState: the batches merged into the stored state (-1 keeps a stored epoch or start)."""
        found = self._shard(key)
        if isinstance(found, ErrorCode):
            return CoordinatorAnswer(found)
        partition, shard = found
        current = shard.snapshots.get(key)
        if current is None:
            return CoordinatorAnswer(ErrorCode.invalid_request, message=UNINITIALIZED_WRITE)
        if shard.leader_epochs.get(key, -1) > leader_epoch:
            return CoordinatorAnswer(ErrorCode.fenced_leader_epoch, message=FENCED_LEADER_EPOCH_MESSAGE)
        if current.state_epoch > state_epoch:
            return CoordinatorAnswer(ErrorCode.fenced_state_epoch, message=FENCED_STATE_EPOCH_MESSAGE)
        if (error := self._topic_error(key)) is not None:
            return CoordinatorAnswer(error)
        now = int(time.time() * 1000)
        start = current.start_offset if start_offset == -1 else start_offset
        snapshot = ShareSnapshot(
            snapshot_epoch=current.snapshot_epoch + 1,
            state_epoch=current.state_epoch if state_epoch == -1 else state_epoch,
            leader_epoch=current.leader_epoch if leader_epoch == -1 else leader_epoch,
            start_offset=start,
            create_timestamp=current.create_timestamp,
            write_timestamp=now,
            state_batches=merge_batches(current.state_batches, batches, start),
        )
        return await self._append(partition, shard, key, snapshot)

    async def initialize(self, key: ShareKey, *, state_epoch: int, start_offset: int) -> CoordinatorAnswer:
        """InitializeShareGroupState: the share-partition starts over at `start_offset` under a newer state
        epoch (nothing in flight)."""
        found = self._shard(key)
        if isinstance(found, ErrorCode):
            return CoordinatorAnswer(found)
        partition, shard = found
        current = shard.snapshots.get(key)
        if current is not None and current.state_epoch > state_epoch:
            return CoordinatorAnswer(ErrorCode.fenced_state_epoch, message=FENCED_STATE_EPOCH_MESSAGE)
        if (error := self._topic_error(key)) is not None:
            return CoordinatorAnswer(error)
        now = int(time.time() * 1000)
        snapshot = ShareSnapshot(
            snapshot_epoch=0 if current is None else current.snapshot_epoch + 1,
            state_epoch=state_epoch,
            leader_epoch=-1,
            start_offset=start_offset,
            create_timestamp=now,
            write_timestamp=now,
            state_batches=(),
        )
        return await self._append(partition, shard, key, snapshot)

    async def delete(self, key: ShareKey) -> CoordinatorAnswer:
        """DeleteShareGroupState: a tombstone; the share-partition is not initialized afterwards."""
        found = self._shard(key)
        if isinstance(found, ErrorCode):
            return CoordinatorAnswer(found)
        partition, shard = found
        if key in shard.snapshots:
            try:
                await append_and_commit(
                    self._state, SHARE_STATE_TOPIC, partition, [(encode_key(*key), None)], self._timeout_s()
                )
            except OffsetsAppendError as exc:
                return CoordinatorAnswer(_retriable(exc.error_code))
            shard.snapshots.pop(key, None)
            shard.leader_epochs.pop(key, None)
        return CoordinatorAnswer()

    async def _append(
        self, partition: int, shard: _Shard, key: ShareKey, snapshot: ShareSnapshot
    ) -> CoordinatorAnswer:
        try:
            await append_and_commit(
                self._state,
                SHARE_STATE_TOPIC,
                partition,
                [(encode_key(*key), encode_value(snapshot))],
                self._timeout_s(),
            )
        except OffsetsAppendError as exc:
            return CoordinatorAnswer(_retriable(exc.error_code))
        shard.snapshots[key] = snapshot
        if snapshot.leader_epoch >= 0:
            shard.leader_epochs[key] = snapshot.leader_epoch
        return CoordinatorAnswer(snapshot=snapshot)

    def _timeout_s(self) -> float:
        return self._state.config.get_int("share.coordinator.write.timeout.ms") / 1000


def _retriable(error: int) -> ErrorCode:
    """A write the coordinator could not make durable: the caller retries at the (maybe new) coordinator."""
    if error == ErrorCode.not_leader_or_follower:
        return ErrorCode.not_coordinator
    return ErrorCode(error)


class ShareStateStore:
    """The share-partition leader's side of the persister (`broker.share.share_state.ShareStateStore`)."""

    def __init__(self, state: BrokerState) -> None:
        self._state = state
        self.coordinator = ShareCoordinatorState(state)
        self._peers = PeerPool(state, "share-state")
        # Read from the coordinator, waiting for `restore`.
        self._read: dict[ShareKey, ShareSnapshot | None] = {}
        # Per share-partition: the window version last written (or read) and the state epoch it holds.
        self._written: dict[ShareKey, tuple[int, int]] = {}
        # The group coordinator's initializations in flight (kept so they are not collected, cancelled on close).
        self._initializations: set[asyncio.Task[None]] = set()

    async def _retrying(self, call: Callable[[], Awaitable[CoordinatorAnswer]]) -> CoordinatorAnswer:
        """`call` again while the share coordinator is being created, elected or loaded, as Kafka's persister
        retries, so a client sees its fetch wait rather than an error across a coordinator change."""
        deadline = time.monotonic() + PERSISTER_RETRY_S
        backoff = 0.05
        while True:
            answer = await call()
            if (
                answer.error not in RETRIABLE
                or time.monotonic() + backoff > deadline
                or self._state.stopping.is_set()
            ):
                return answer
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 0.5)

    async def prepare(self, key: ShareKey, leader_epoch: int) -> ErrorCode:
        """Read the share-partition's state from its coordinator, for `restore` to start from."""

        async def read_once() -> CoordinatorAnswer:
            coordinator = self.coordinator.coordinator_of(key)
            if coordinator is None:
                return CoordinatorAnswer(ErrorCode.coordinator_not_available)
            if coordinator == self._state.node_id:
                return self.coordinator.read(key, leader_epoch)
            return await self._remote_read(coordinator, key, leader_epoch)

        answer = await self._retrying(read_once)
        if answer.uninitialized:
            self._read[key] = None
            return ErrorCode.none
        if answer.error == ErrorCode.none:
            self._read[key] = answer.snapshot
        return answer.error

    def restore(
        self, key: ShareKey, *, delivery_count_limit: int, max_in_flight: int
    ) -> SharePartition | None:
        """The share-partition as its coordinator last stored it (read by `prepare`), or None when it has no
        state."""
        snapshot = self._read.pop(key, None)
        if snapshot is None:
            self._written.pop(key, None)
            return None
        if snapshot.start_offset == NOT_INITIALIZED:
            # Initialized by the group coordinator without a start: the leader picks it (share.auto.offset.reset)
            # and writes under the state epoch the initialization set.
            self._written[key] = (-1, snapshot.state_epoch)
            return None
        share = SharePartition.restored(
            snapshot.start_offset,
            snapshot.state_batches,
            delivery_count_limit=delivery_count_limit,
            max_in_flight=max_in_flight,
        )
        self._written[key] = (share.version, snapshot.state_epoch)
        return share

    async def save(self, key: ShareKey, share: SharePartition, leader_epoch: int) -> bool:
        """Write the window if it changed since the last write; False when it could not be written."""
        version, state_epoch = self._written.get(key, (-1, 0))
        if version == share.version:
            return True
        if key not in self._written:
            # Not initialized at its coordinator: the group coordinator initializes a share-partition before it
            # assigns it (`start_initializing`), so only a fetch of an unassigned partition gets here; its
            # leader initializes it then, before its first write.
            answer = await self._retrying(lambda: self._initialize(key, 0, share.start_offset))
            if answer.error == ErrorCode.none:
                self._written[key] = (-1, 0)
            else:
                log.warning("share state of %s not initialized: %s", key, answer.error.name)
                if answer.error == ErrorCode.fenced_state_epoch:
                    # The group coordinator initialized it meanwhile: read that before serving it next.
                    self._state.share.partitions.pop(key, None)
                return False
        answer = await self._retrying(lambda: self._write(key, max(state_epoch, 0), leader_epoch, share))
        if answer.error != ErrorCode.none:
            log.warning("share state of %s not written: %s", key, answer.error.name)
            if answer.error in (ErrorCode.fenced_leader_epoch, ErrorCode.fenced_state_epoch):
                # Another leader (or an offsets reset) moved on: read it again before serving it next.
                self._state.share.partitions.pop(key, None)
                self._written.pop(key, None)
            return False
        self._written[key] = (share.version, state_epoch)
        return True

    def start_initializing(
        self, group_id: str, state_epoch: int, topic_partitions: Mapping[uuid.UUID, frozenset[int]]
    ) -> None:
        """Initialize these share-partitions of the group at their share coordinators in the background, as
        Kafka's group coordinator does after answering the heartbeat that found them, and tell the group
        coordinator which were initialized (its next heartbeat assigns them) and which failed (handed out
        again)."""
        task = asyncio.create_task(
            self._initialize_for_group(group_id, state_epoch, topic_partitions),
            name=f"share-initialize-{group_id}",
        )
        self._initializations.add(task)
        task.add_done_callback(self._initializations.discard)

    async def _initialize_for_group(
        self, group_id: str, state_epoch: int, topic_partitions: Mapping[uuid.UUID, frozenset[int]]
    ) -> None:
        keys = [
            (group_id, topic_id, p) for topic_id, partitions in topic_partitions.items() for p in partitions
        ]
        outcomes = await asyncio.gather(*(self._ensure_initialized(key, state_epoch) for key in keys))
        done: dict[uuid.UUID, frozenset[int]] = {}
        failed: dict[uuid.UUID, frozenset[int]] = {}
        for (_group, topic_id, partition), ok in zip(keys, outcomes, strict=True):
            into = done if ok else failed
            into[topic_id] = into.get(topic_id, frozenset()) | {partition}
        groups = self._state.share.groups
        groups.initialized(group_id, done)
        groups.initialization_failed(group_id, failed)

    async def _ensure_initialized(self, key: ShareKey, state_epoch: int) -> bool:
        """The share-partition has state at its coordinator: kept when it has a start already (the group ran
        before this coordinator learned of it, e.g. before a restart), else initialized without one."""
        current = await self._retrying(lambda: self._summary(key))
        if current.error != ErrorCode.none:
            log.info("share state of %s not read for initialization: %s", key, current.error.name)
            return False
        if current.snapshot is not None and current.snapshot.start_offset != NOT_INITIALIZED:
            return True
        answer = await self._retrying(lambda: self._initialize(key, state_epoch, NOT_INITIALIZED))
        if answer.error == ErrorCode.fenced_state_epoch:
            return True  # initialized under a newer state epoch already
        if answer.error != ErrorCode.none:
            log.info("share state of %s not initialized: %s", key, answer.error.name)
            return False
        return True

    async def reset(self, key: ShareKey, start_offset: int) -> bool:
        """AlterShareGroupOffsets: the share-partition starts over at `start_offset` under a newer state epoch,
        which fences the writes of a leader still holding the old window. Retried as the persister's other calls
        are: the group's first reset may be what creates `__share_group_state` (franz-go's
        TestShareGroupOffsetsAdmin got COORDINATOR_NOT_AVAILABLE from it; Kafka's persister waits that out)."""
        current = await self._retrying(lambda: self._summary(key))
        if current.error != ErrorCode.none:
            return False
        state_epoch = 0 if current.snapshot is None else current.snapshot.state_epoch + 1
        answer = await self._retrying(lambda: self._initialize(key, state_epoch, start_offset))
        if answer.error != ErrorCode.none:
            return False
        self._written.pop(key, None)
        return True

    async def _summary(self, key: ShareKey) -> CoordinatorAnswer:
        coordinator = self.coordinator.coordinator_of(key)
        if coordinator is None:
            return CoordinatorAnswer(ErrorCode.coordinator_not_available)
        if coordinator == self._state.node_id:
            return self.coordinator.summary(key)
        return await self._remote(
            coordinator,
            ReadShareGroupStateSummaryRequest(
                group_id=key[0],
                topics=(
                    ReadStateSummaryData(
                        topic_id=key[1],
                        partitions=(SummaryPartition(partition=i32(key[2]), leader_epoch=i32(-1)),),
                    ),
                ),
            ),
            "ReadShareGroupStateSummary",
        )

    async def _initialize(self, key: ShareKey, state_epoch: int, start_offset: int) -> CoordinatorAnswer:
        coordinator = self.coordinator.coordinator_of(key)
        if coordinator is None:
            return CoordinatorAnswer(ErrorCode.coordinator_not_available)
        if coordinator == self._state.node_id:
            return await self.coordinator.initialize(key, state_epoch=state_epoch, start_offset=start_offset)
        request = InitializeShareGroupStateRequest(
            group_id=key[0],
            topics=(
                InitializeStateData(
                    topic_id=key[1],
                    partitions=(
                        InitializePartition(
                            partition=i32(key[2]),
                            state_epoch=i32(state_epoch),
                            start_offset=i64(start_offset),
                        ),
                    ),
                ),
            ),
        )
        return await self._remote(coordinator, request, "InitializeShareGroupState")

    async def forget(self, key: ShareKey) -> None:
        """DeleteShareGroupOffsets: the share-partition starts over when next read."""
        self._written.pop(key, None)
        coordinator = self.coordinator.coordinator_of(key)
        if coordinator == self._state.node_id:
            answer = await self.coordinator.delete(key)
            if answer.error != ErrorCode.none:
                log.warning("share state of %s not deleted: %s", key, answer.error.name)
        elif coordinator is not None:
            await self._remote(
                coordinator,
                DeleteShareGroupStateRequest(
                    group_id=key[0],
                    topics=(
                        DeleteStateData(
                            topic_id=key[1], partitions=(DeletePartition(partition=i32(key[2])),)
                        ),
                    ),
                ),
                "DeleteShareGroupState",
            )

    async def _write(
        self, key: ShareKey, state_epoch: int, leader_epoch: int, share: SharePartition
    ) -> CoordinatorAnswer:
        coordinator = self.coordinator.coordinator_of(key)
        if coordinator is None:
            return CoordinatorAnswer(ErrorCode.coordinator_not_available)
        batches = share.state_batches()
        if coordinator == self._state.node_id:
            return await self.coordinator.write(
                key,
                state_epoch=state_epoch,
                leader_epoch=leader_epoch,
                start_offset=share.start_offset,
                batches=batches,
            )
        request = WriteShareGroupStateRequest(
            group_id=key[0],
            topics=(
                WriteStateData(
                    topic_id=key[1],
                    partitions=(
                        WritePartition(
                            partition=i32(key[2]),
                            state_epoch=i32(state_epoch),
                            leader_epoch=i32(leader_epoch),
                            start_offset=i64(share.start_offset),
                            state_batches=tuple(
                                WriteBatch(
                                    first_offset=i64(first),
                                    last_offset=i64(last),
                                    delivery_state=i8(state),
                                    delivery_count=i16(count),
                                )
                                for first, last, state, count in batches
                            ),
                        ),
                    ),
                ),
            ),
        )
        return await self._remote(coordinator, request, "WriteShareGroupState")

    async def _remote_read(self, coordinator: int, key: ShareKey, leader_epoch: int) -> CoordinatorAnswer:
        request = ReadShareGroupStateRequest(
            group_id=key[0],
            topics=(
                ReadStateData(
                    topic_id=key[1],
                    partitions=(ReadPartition(partition=i32(key[2]), leader_epoch=i32(leader_epoch)),),
                ),
            ),
        )
        answer = await self._remote(coordinator, request, "ReadShareGroupState")
        return answer

    async def _remote(self, coordinator: int, request: Any, purpose: str) -> CoordinatorAnswer:
        """One key's request to its coordinator on another broker; its partition's answer."""
        try:
            response = await self._peers.request(coordinator, request)
        except PeerConnectionError as exc:
            log.info("%s with broker %d failed: %s", purpose, coordinator, exc)
            return CoordinatorAnswer(ErrorCode.coordinator_not_available)
        for result in response.results:
            for partition in result.partitions:
                error = ErrorCode(partition.error_code)
                if error != ErrorCode.none or not hasattr(partition, "start_offset"):
                    return CoordinatorAnswer(error, message=partition.error_message)
                snapshot = ShareSnapshot(
                    snapshot_epoch=0,
                    state_epoch=int(partition.state_epoch),
                    leader_epoch=-1,
                    start_offset=int(partition.start_offset),
                    create_timestamp=0,
                    write_timestamp=0,
                    state_batches=tuple(
                        (
                            int(b.first_offset),
                            int(b.last_offset),
                            int(b.delivery_state),
                            int(b.delivery_count),
                        )
                        for b in getattr(partition, "state_batches", ())
                    ),
                )
                return CoordinatorAnswer(snapshot=snapshot)
        return CoordinatorAnswer(ErrorCode.unknown_server_error)

    async def close(self) -> None:
        for task in list(self._initializations):
            task.cancel()
        await asyncio.gather(*self._initializations, return_exceptions=True)
        await self._peers.close()
