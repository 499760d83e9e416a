"""The classic consumer-group coordinator (JoinGroup/SyncGroup/Heartbeat/LeaveGroup era).

It follows Kafka's state machine: Empty -> PreparingRebalance -> CompletingRebalance ->
Stable, with Dead for deleted groups. JoinGroup and SyncGroup wait (on futures) until the
rebalance completes; timers come from an injectable clock. Offsets and group metadata
are written to `__consumer_offsets` in Kafka's own format, and replayed on start.

A group belongs to one `__consumer_offsets` partition (`partition_for_group`). A single node
owns them all; a cluster broker owns those it leads: `load_partition` when it becomes the
leader, `unload_partition` when leadership moves (broker/server/group_storage.py follows the
metadata log), and answers NOT_COORDINATOR for every other group.

Assignments are opaque bytes: eager and cooperative assignors both run in the clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kio.schema.errors import ErrorCode

from broker.groups.clock import Clock, LoopClock, Timer
from broker.groups.group import (
    CommittedOffset,
    Group,
    GroupState,
    JoinResult,
    Member,
    SyncResult,
)
from broker.groups.offsets_format import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    OffsetsFormatError,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    encode_group_metadata_key,
    encode_group_metadata_value,
    encode_offset_commit_key,
    encode_offset_commit_value,
    partition_for_group,
)
from broker.groups.offsets_log import OffsetsAppendError, OffsetsLog

log = logging.getLogger(__name__)

CLASSIC_GROUP_TYPE = "classic"
MAX_KEY_STRING_BYTES = 0x7FFF
# What a group's ACL-free answer to "which operations may I do" is: READ, DELETE, DESCRIBE.
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)


@dataclass(frozen=True, slots=True)
class GroupCoordinatorConfig:
    """Kafka's broker settings for groups, under their Kafka names (in milliseconds)."""

    initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    max_group_size: int = 2**31 - 1  # group.max.size
    offsets_retention_ms: int = 10080 * 60_000  # offsets.retention.minutes
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes


@dataclass(frozen=True, slots=True)
class PartitionOffset:
    """One partition's offset in an OffsetCommit request."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


@dataclass(frozen=True, slots=True)
class OffsetCommitter:
    """Who commits offsets, as an OffsetCommit or TxnOffsetCommit names it."""

    member_id: str
    generation_id: int  # the member epoch for a consumer-protocol group
    group_instance_id: str | None
    transactional: bool = False


@dataclass(frozen=True, slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = CLASSIC_GROUP_TYPE


@dataclass(frozen=True, slots=True)
class DescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupDescription:
    error_code: int
    group_id: str
    state: str
    protocol_type: str
    protocol_data: str
    members: tuple[DescribedMember, ...]


def is_valid_group_id(group_id: str) -> bool:
    """Non-empty and short enough for the int16-length strings of `__consumer_offsets` keys."""
    return bool(group_id) and len(group_id.encode()) <= MAX_KEY_STRING_BYTES


class CoordinatorLocator(Protocol):
    """Which broker coordinates a group (FindCoordinator) when that is not always this one."""

    def locate(self, group_id: str, listener_name: str) -> CoordinatorEndpoint: ...


@dataclass(frozen=True, slots=True)
class CoordinatorEndpoint:
    error_code: int
    node_id: int = -1
    host: str = ""
    port: int = -1


@dataclass(eq=False, slots=True)
class OwnedPartition:
    """A `__consumer_offsets` partition whose groups this coordinator serves once `loaded`."""

    loaded: bool = False
    # Transaction markers (producer id, commit) written while the partition was loading: the
    # replay may have read the log before them, so they are applied once it has finished.
    markers_during_load: list[tuple[int, bool]] = field(default_factory=list)


# Kafka's GroupMetadataManager turns storage errors into ones group clients act on: retry
# later (COORDINATOR_NOT_AVAILABLE) or look the coordinator up again (NOT_COORDINATOR).
_APPEND_ERRORS = {
    ErrorCode.unknown_topic_or_partition: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas_after_append: ErrorCode.coordinator_not_available,
    ErrorCode.request_timed_out: ErrorCode.coordinator_not_available,
    ErrorCode.not_leader_or_follower: ErrorCode.not_coordinator,
    ErrorCode.kafka_storage_error: ErrorCode.not_coordinator,
}
_TOO_LARGE = {ErrorCode.message_too_large, ErrorCode.record_list_too_large, ErrorCode.invalid_fetch_size}


def coordinator_error_for_append(error_code: int, *, offset_commit: bool) -> int:
    """The group-level answer for an append to `__consumer_offsets` that failed with `error_code`."""
    if error_code in _TOO_LARGE:
        return ErrorCode.invalid_commit_offset_size if offset_commit else ErrorCode.unknown_server_error
    return _APPEND_ERRORS.get(error_code, error_code)  # type: ignore[call-overload]


class GroupCoordinator:
    """Serves the groups of the `__consumer_offsets` partitions it owns.

    A single node owns every partition from the start (`owns_every_partition`); in a cluster
    a partition is loaded when this broker becomes its leader and unloaded when leadership
    moves away, and groups of other partitions get NOT_COORDINATOR.
    """

    def __init__(
        self,
        log: OffsetsLog,
        config: GroupCoordinatorConfig | None = None,
        clock: Clock | None = None,
        *,
        owns_every_partition: bool = True,
    ) -> None:
        self.log = log
        self.config = config or GroupCoordinatorConfig()
        self.clock: Clock = clock or LoopClock()
        self.groups: dict[str, Group] = {}
        self.partitions: dict[int, OwnedPartition] = {}
        if owns_every_partition:
            self.partitions = {p: OwnedPartition() for p in range(log.num_partitions)}
        # Set in a cluster, where FindCoordinator may name another broker.
        self.locator: CoordinatorLocator | None = None
        # TxnOffsetCommit offsets waiting for their transaction's marker: producer id -> group ->
        # partition -> offset. The commit marker makes them the group's offsets; abort drops them.
        self.pending_transactions: dict[int, dict[str, dict[tuple[str, int], CommittedOffset]]] = {}
        self.stopped = False
        self._tasks: set[asyncio.Task[None]] = set()
        # Partition loads may wait for followers; stopping cancels them rather than waiting.
        self._loads: set[asyncio.Task[None]] = set()

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Replays every owned partition of `__consumer_offsets`, then serves their groups."""
        for partition, owned in list(self.partitions.items()):
            await self._replay_partition(partition, owned)

    def load_partition(self, partition: int) -> asyncio.Task[None] | None:
        """Becomes the coordinator of the partition's groups; they get COORDINATOR_LOAD_IN_PROGRESS
        until its log is replayed (in the returned task). None when already owned or stopped."""
        if self.stopped or partition in self.partitions:
            return None
        owned = self.partitions[partition] = OwnedPartition()

        async def replay() -> None:
            try:
                await self._replay_partition(partition, owned)
            except Exception:
                log.exception("loading __consumer_offsets partition %d failed", partition)
                if self.partitions.get(partition) is owned:
                    del self.partitions[partition]
                return
            if owned.loaded:
                groups = sum(1 for group_id in self.groups if self.partition_for(group_id) == partition)
                log.info("coordinating the %d groups of __consumer_offsets partition %d", groups, partition)

        task = asyncio.get_running_loop().create_task(replay(), name=f"load-offsets-{partition}")
        self._loads.add(task)
        task.add_done_callback(self._loads.discard)
        return task

    def unload_partition(self, partition: int) -> None:
        """Stops coordinating the partition's groups: their waiting JoinGroup/SyncGroup requests
        get NOT_COORDINATOR, timers stop and the state is dropped (the new leader replays it)."""
        if self.partitions.pop(partition, None) is None:
            return
        unloaded = [group_id for group_id in self.groups if self.partition_for(group_id) == partition]
        for group_id in unloaded:
            group = self.groups.pop(group_id)
            self._release_group(group)
            # Like Kafka: an unloaded group is Dead, so writes still in flight leave it alone.
            group.transition_to(GroupState.DEAD, self.clock.now_ms())
        for by_group in self.pending_transactions.values():
            for group_id in [g for g in by_group if self.partition_for(g) == partition]:
                del by_group[group_id]
        log.info("unloaded __consumer_offsets partition %d (%d groups)", partition, len(unloaded))

    def owns_partition(self, partition: int) -> bool:
        return partition in self.partitions

    async def _replay_partition(self, partition: int, owned: OwnedPartition) -> None:
        metadata: dict[str, GroupMetadataValue | None] = {}
        offsets: dict[str, dict[tuple[str, int], CommittedOffset | None]] = {}
        # Offsets written inside a transaction, per producer, until its marker says what they become.
        open_transactions: dict[int, list[tuple[bytes, bytes | None]]] = {}
        for count, entry in enumerate(self.log.read(partition)):
            if count % 1000 == 999:
                await asyncio.sleep(0)  # let the broker keep serving during a long replay
                if self.partitions.get(partition) is not owned:
                    return  # unloaded meanwhile: the log may be changing under us
            if entry.key is None:
                written = open_transactions.pop(entry.producer_id, [])
                if entry.commit:
                    for key_bytes, value_bytes in written:
                        self._replay_safely(partition, key_bytes, value_bytes, metadata, offsets)
                continue
            if entry.producer_id >= 0:
                open_transactions.setdefault(entry.producer_id, []).append((entry.key, entry.value))
                continue
            if entry.value is None:
                # A tombstone (DeleteGroups, expiry) also drops the offset from open transactions.
                for producer_id, written in open_transactions.items():
                    open_transactions[producer_id] = [r for r in written if r[0] != entry.key]
            self._replay_safely(partition, entry.key, entry.value, metadata, offsets)
        if self.partitions.get(partition) is not owned:
            return
        # A new leader may hold records its followers lack; serve them once they are committed.
        with contextlib.suppress(OffsetsAppendError):  # leadership moved: the check below sees it
            await self.log.wait_until_committed(partition)
        if self.partitions.get(partition) is not owned:
            return
        for group_id in metadata.keys() | offsets.keys():
            if self.partition_for(group_id) != partition:
                log.warning("group %s found in __consumer_offsets partition %d: ignored", group_id, partition)
                continue
            value = metadata.get(group_id)
            group_offsets = {tp: o for tp, o in offsets.get(group_id, {}).items() if o is not None}
            if value is None and not group_offsets:
                continue
            group = self._group_from_metadata(group_id, value)
            group.offsets = group_offsets
            self.groups[group_id] = group
        for producer_id, written in open_transactions.items():
            pending: dict[str, dict[tuple[str, int], CommittedOffset | None]] = {}
            for key_bytes, value_bytes in written:
                self._replay_safely(partition, key_bytes, value_bytes, {}, pending)
            for group_id, group_offsets in pending.items():
                kept = {tp: o for tp, o in group_offsets.items() if o is not None}
                self.pending_transactions.setdefault(producer_id, {}).setdefault(group_id, {}).update(kept)
        owned.loaded = True
        for producer_id, commit in owned.markers_during_load:
            self.complete_transaction(partition, producer_id, commit)
        owned.markers_during_load.clear()

    def _replay_safely(
        self,
        partition: int,
        key_bytes: bytes,
        value_bytes: bytes | None,
        metadata: dict[str, GroupMetadataValue | None],
        offsets: dict[str, dict[tuple[str, int], CommittedOffset | None]],
    ) -> None:
        try:
            self._replay_record(key_bytes, value_bytes, metadata, offsets)
        except OffsetsFormatError:
            log.warning("skipping an unreadable __consumer_offsets record in partition %d", partition)

    @staticmethod
    def _replay_record(
        key_bytes: bytes,
        value_bytes: bytes | None,
        metadata: dict[str, GroupMetadataValue | None],
        offsets: dict[str, dict[tuple[str, int], CommittedOffset | None]],
    ) -> None:
        key = decode_key(key_bytes)
        if isinstance(key, OffsetCommitKey):
            committed = None
            if value_bytes is not None:
                value = decode_offset_commit_value(value_bytes)
                committed = CommittedOffset(
                    offset=value.offset,
                    leader_epoch=value.leader_epoch,
                    metadata=value.metadata,
                    commit_timestamp=value.commit_timestamp,
                    expire_timestamp=value.expire_timestamp,
                )
            offsets.setdefault(key.group, {})[(key.topic, key.partition)] = committed
        elif isinstance(key, GroupMetadataKey):
            if value_bytes is None:
                metadata[key.group] = None
                # A group tombstone follows its offsets' tombstones; drop what came before.
                offsets.pop(key.group, None)
            else:
                metadata[key.group] = decode_group_metadata_value(value_bytes)

    def _group_from_metadata(self, group_id: str, value: GroupMetadataValue | None) -> Group:
        group = Group(group_id=group_id, current_state_timestamp=self.clock.now_ms())
        if value is None:
            return group
        group.generation_id = value.generation
        group.protocol_type = value.protocol_type or None
        group.protocol_name = value.protocol
        if value.current_state_timestamp >= 0:
            group.current_state_timestamp = value.current_state_timestamp
        for stored in value.members:
            member = Member(
                member_id=stored.member_id,
                group_instance_id=stored.group_instance_id,
                client_id=stored.client_id,
                client_host=stored.client_host,
                session_timeout_ms=stored.session_timeout,
                rebalance_timeout_ms=stored.rebalance_timeout,
                protocol_type=value.protocol_type,
                protocols=((value.protocol or "", stored.subscription),),
                assignment=stored.assignment,
            )
            group.add_member(member)
            # Loaded members must heartbeat again, or expire like any other member.
            self._schedule_session_timeout(group, member)
        group.leader_id = value.leader if value.leader in group.members else next(iter(group.members), None)
        group.state = GroupState.STABLE if group.members else GroupState.EMPTY
        return group

    async def stop(self) -> None:
        """Stops timers and answers every waiting request with NOT_COORDINATOR."""
        self.stopped = True
        for load in list(self._loads):
            load.cancel()
        for group in self.groups.values():
            self._release_group(group)
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _release_group(self, group: Group) -> None:
        for timer in (group.rebalance_timer, group.sync_timer, *group.pending_members.values()):
            if timer is not None:
                timer.cancel()
        for member in group.members.values():
            if member.session_timer is not None:
                member.session_timer.cancel()
            self._answer_join(member, JoinResult(ErrorCode.not_coordinator, member_id=member.member_id))
            self._answer_sync(member, SyncResult(ErrorCode.not_coordinator))

    async def close(self) -> None:
        await self.stop()

    def group_count(self) -> int:
        return len(self.groups)

    def partition_for(self, group_id: str) -> int:
        return partition_for_group(group_id, self.log.num_partitions)

    def availability_error(self, group_id: str) -> int | None:
        """NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this broker cannot serve `group_id` now (share
        groups, kept beside this coordinator, ask it too)."""
        return self._availability_error(group_id)

    def _availability_error(self, group_id: str) -> int | None:
        if self.stopped:
            return ErrorCode.not_coordinator
        owned = self.partitions.get(self.partition_for(group_id))
        if owned is None:
            return ErrorCode.not_coordinator
        if not owned.loaded:
            return ErrorCode.coordinator_load_in_progress
        return None

    # --- JoinGroup ---------------------------------------------------------------------------

    async def join_group(
        self,
        *,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str,
        protocols: Sequence[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        client_id: str,
        client_host: str,
        require_known_member_id: bool,
    ) -> JoinResult:
        error = self._availability_error(group_id)
        if error is not None:
            return JoinResult(error, member_id=member_id)
        if not is_valid_group_id(group_id):
            return JoinResult(ErrorCode.invalid_group_id, member_id=member_id)
        if not self.config.min_session_timeout_ms <= session_timeout_ms <= self.config.max_session_timeout_ms:
            return JoinResult(ErrorCode.invalid_session_timeout, member_id=member_id)
        if rebalance_timeout_ms < 0:
            rebalance_timeout_ms = session_timeout_ms
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                return JoinResult(ErrorCode.unknown_member_id, member_id=member_id)
            group = Group(group_id=group_id, current_state_timestamp=self.clock.now_ms())
            self.groups[group_id] = group
        if group.is_(GroupState.DEAD):
            return JoinResult(ErrorCode.coordinator_not_available, member_id=member_id)
        if not group.supports_protocols(protocol_type, {name for name, _ in protocols}):
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        member = Member(
            member_id=member_id,
            group_instance_id=group_instance_id,
            client_id=client_id,
            client_host=client_host,
            session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            protocol_type=protocol_type,
            protocols=tuple(protocols),
        )
        log.debug("group %s: JoinGroup from %r (%s)", group_id, member_id, group.state.value)
        if not member_id:
            return await self._join_unknown_member(group, member, require_known_member_id)
        return await self._join_known_member(group, member)

    async def _join_unknown_member(
        self, group: Group, joining: Member, require_known_member_id: bool
    ) -> JoinResult:
        new_member_id = f"{joining.client_id}-{uuid.uuid4()}"
        instance_id = joining.group_instance_id
        if instance_id is not None and instance_id in group.static_members:
            return await self._rejoin_static_member(
                group, group.static_members[instance_id], new_member_id, joining
            )
        if len(group.members) + len(group.pending_members) >= self.config.max_group_size:
            return JoinResult(ErrorCode.group_max_size_reached, member_id=new_member_id)
        if instance_id is None and require_known_member_id:
            # KIP-394: hand out the id first, so a client that gives up mid-join cannot leave
            # an unknown member behind; the id is forgotten if it never comes back.
            group.pending_members[new_member_id] = self.clock.call_later(
                joining.session_timeout_ms, lambda: self._expire_pending_member(group, new_member_id)
            )
            return JoinResult(ErrorCode.member_id_required, member_id=new_member_id)
        joining.member_id = new_member_id
        return await self._add_member_and_rebalance(group, joining)

    async def _join_known_member(self, group: Group, joining: Member) -> JoinResult:
        member_id = joining.member_id
        instance_id = joining.group_instance_id
        if member_id in group.pending_members:
            timer = group.pending_members.pop(member_id)
            if timer is not None:
                timer.cancel()
            return await self._add_member_and_rebalance(group, joining)
        fenced = self._fenced_instance_error(group, member_id, instance_id)
        if fenced is not None:
            return JoinResult(fenced, member_id=member_id)
        member = group.members.get(member_id)
        if member is None or group.is_(GroupState.EMPTY):
            return JoinResult(ErrorCode.unknown_member_id, member_id=member_id)
        same_protocols = member.protocols == joining.protocols
        if group.is_(GroupState.COMPLETING_REBALANCE) and same_protocols:
            # The member lost our JoinGroup answer: send the same one again.
            self._schedule_session_timeout(group, member)
            return self._join_result_for(group, member)
        if group.is_(GroupState.STABLE) and same_protocols and member_id != group.leader_id:
            self._schedule_session_timeout(group, member)
            return self._join_result_for(group, member)
        self._update_member(member, joining)
        future = self._await_join(member)
        self._prepare_rebalance(group)
        self._maybe_complete_join(group)
        return await asyncio.shield(future)

    async def _rejoin_static_member(
        self, group: Group, old_member_id: str, new_member_id: str, joining: Member
    ) -> JoinResult:
        """KIP-345: a restarted static member takes over its old identity without a rebalance."""
        old = group.members[old_member_id]
        self._answer_join(old, JoinResult(ErrorCode.fenced_instance_id, member_id=old_member_id))
        self._answer_sync(old, SyncResult(ErrorCode.fenced_instance_id))
        assert joining.group_instance_id is not None
        previous_leader = group.leader_id
        member = group.replace_static_member(joining.group_instance_id, old_member_id, new_member_id)
        self._update_member(member, joining)
        if group.is_(GroupState.STABLE) and group.select_protocol() == group.protocol_name:
            self._schedule_session_timeout(group, member)
            generation = group.generation_id
            error = await self._store_group(group)
            if error is not None and group.generation_id == generation:
                return JoinResult(error, member_id=new_member_id)
            # Like Kafka: name the leader by its old id, so a restarted leader acts as a
            # follower and fetches its assignment instead of re-assigning a stable group.
            return JoinResult(
                ErrorCode.none,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader=previous_leader or "",
                member_id=new_member_id,
            )
        future = self._await_join(member)
        if not group.is_(GroupState.PREPARING_REBALANCE):
            self._prepare_rebalance(group)
        self._maybe_complete_join(group)
        return await asyncio.shield(future)

    async def _add_member_and_rebalance(self, group: Group, member: Member) -> JoinResult:
        future = self._await_join(member)
        group.add_member(member)
        group.new_member_added = True
        self._schedule_session_timeout(group, member)
        self._prepare_rebalance(group)
        self._maybe_complete_join(group)
        return await asyncio.shield(future)

    def _await_join(self, member: Member) -> asyncio.Future[JoinResult]:
        # A member that sends JoinGroup twice gets the first one answered; Kafka drops it.
        self._answer_join(member, JoinResult(ErrorCode.rebalance_in_progress, member_id=member.member_id))
        member.join_future = asyncio.get_running_loop().create_future()
        return member.join_future

    @staticmethod
    def _update_member(member: Member, joining: Member) -> None:
        member.protocols = joining.protocols
        member.protocol_type = joining.protocol_type
        member.session_timeout_ms = joining.session_timeout_ms
        member.rebalance_timeout_ms = joining.rebalance_timeout_ms
        member.client_id = joining.client_id
        member.client_host = joining.client_host

    @staticmethod
    def _fenced_instance_error(group: Group, member_id: str, instance_id: str | None) -> int | None:
        if instance_id is None:
            return None
        known = group.static_members.get(instance_id)
        if known is not None and known != member_id:
            return ErrorCode.fenced_instance_id
        return None

    def _expire_pending_member(self, group: Group, member_id: str) -> None:
        if member_id in group.pending_members:
            # An id that never came back is forgotten; the rebalance may be waiting for it.
            del group.pending_members[member_id]
            self._maybe_complete_join(group)

    def _join_result_for(self, group: Group, member: Member) -> JoinResult:
        assert group.protocol_name is not None
        members: tuple[tuple[str, str | None, bytes], ...] = ()
        if member.member_id == group.leader_id:
            members = tuple(
                (m.member_id, m.group_instance_id, m.metadata_for(group.protocol_name))
                for m in group.members.values()
            )
        return JoinResult(
            ErrorCode.none,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            member_id=member.member_id,
            members=members,
        )

    # --- rebalancing -------------------------------------------------------------------------

    def _prepare_rebalance(self, group: Group) -> None:
        if group.is_(GroupState.PREPARING_REBALANCE):
            return
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._cancel(group.sync_timer)
            for member in group.members.values():
                member.assignment = b""
                self._answer_sync(member, SyncResult(ErrorCode.rebalance_in_progress))
        was_empty = group.is_(GroupState.EMPTY)
        group.transition_to(GroupState.PREPARING_REBALANCE, self.clock.now_ms())
        delay = self.config.initial_rebalance_delay_ms
        if was_empty and delay > 0:
            group.in_initial_delay = True
            group.new_member_added = False
            remaining = max(group.max_rebalance_timeout_ms() - delay, 0)
            group.rebalance_timer = self.clock.call_later(
                delay, lambda: self._on_initial_delay_elapsed(group, remaining)
            )
        else:
            group.rebalance_timer = self.clock.call_later(
                group.max_rebalance_timeout_ms(), lambda: self._complete_join(group)
            )

    def _on_initial_delay_elapsed(self, group: Group, remaining_ms: int) -> None:
        if not group.is_(GroupState.PREPARING_REBALANCE):
            return
        if group.new_member_added and remaining_ms > 0:
            # Members keep arriving: wait one more delay, within the rebalance timeout.
            group.new_member_added = False
            delay = min(self.config.initial_rebalance_delay_ms, remaining_ms)
            left = max(remaining_ms - self.config.initial_rebalance_delay_ms, 0)
            group.rebalance_timer = self.clock.call_later(
                delay, lambda: self._on_initial_delay_elapsed(group, left)
            )
            return
        group.in_initial_delay = False
        self._complete_join(group)

    def _maybe_complete_join(self, group: Group) -> None:
        if (
            group.is_(GroupState.PREPARING_REBALANCE)
            and not group.in_initial_delay
            and group.all_members_joined()
        ):
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if not group.is_(GroupState.PREPARING_REBALANCE):
            return
        self._cancel(group.rebalance_timer)
        group.in_initial_delay = False
        for member in list(group.members.values()):
            if not member.is_awaiting_join:
                self._remove_member(group, member)
        group.generation_id += 1
        now = self.clock.now_ms()
        if not group.members:
            group.protocol_name = None
            group.leader_id = None
            group.transition_to(GroupState.EMPTY, now)
            self._spawn(self._store_group(group))
            return
        group.protocol_name = group.select_protocol()
        group.transition_to(GroupState.COMPLETING_REBALANCE, now)
        log.debug(
            "group %s: generation %d with %s, leader %s",
            group.group_id,
            group.generation_id,
            list(group.members),
            group.leader_id,
        )
        for member in group.members.values():
            self._answer_join(member, self._join_result_for(group, member))
            self._schedule_session_timeout(group, member)
        generation = group.generation_id
        group.sync_timer = self.clock.call_later(
            group.max_rebalance_timeout_ms(), lambda: self._on_sync_timeout(group, generation)
        )

    def _on_sync_timeout(self, group: Group, generation: int) -> None:
        """Members that never sent SyncGroup after a join are gone; rebalance without them."""
        if not group.is_(GroupState.COMPLETING_REBALANCE) or group.generation_id != generation:
            return
        for member in list(group.members.values()):
            if not member.is_awaiting_sync:
                self._remove_member(group, member)
        self._prepare_rebalance(group)
        self._maybe_complete_join(group)

    def _schedule_session_timeout(self, group: Group, member: Member) -> None:
        self._cancel(member.session_timer)
        member.session_timer = self.clock.call_later(
            member.session_timeout_ms, lambda: self._on_session_expired(group, member)
        )

    def _on_session_expired(self, group: Group, member: Member) -> None:
        if group.members.get(member.member_id) is not member:
            return
        if member.is_awaiting_join or member.is_awaiting_sync:
            # A member parked in JoinGroup/SyncGroup cannot heartbeat; the rebalance and
            # sync timeouts decide its fate instead.
            self._schedule_session_timeout(group, member)
            return
        log.info("group %s: member %s session expired", group.group_id, member.member_id)
        self._remove_member_and_rebalance(group, member)

    def _remove_member(self, group: Group, member: Member) -> None:
        group.remove_member(member.member_id)
        self._cancel(member.session_timer)
        self._answer_join(member, JoinResult(ErrorCode.unknown_member_id, member_id=member.member_id))
        self._answer_sync(member, SyncResult(ErrorCode.unknown_member_id))

    def _remove_member_and_rebalance(self, group: Group, member: Member) -> None:
        self._remove_member(group, member)
        if group.is_(GroupState.STABLE) or group.is_(GroupState.COMPLETING_REBALANCE):
            self._prepare_rebalance(group)
        self._maybe_complete_join(group)

    # --- SyncGroup ---------------------------------------------------------------------------

    async def sync_group(
        self,
        *,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Mapping[str, bytes],
    ) -> SyncResult:
        error = self._availability_error(group_id)
        if error is not None:
            return SyncResult(error)
        group = self.groups.get(group_id)
        if group is None:
            return SyncResult(ErrorCode.unknown_member_id)
        fenced = self._fenced_instance_error(group, member_id, group_instance_id)
        if fenced is not None:
            return SyncResult(fenced)
        member = group.members.get(member_id)
        if member is None or group.is_(GroupState.EMPTY):
            return SyncResult(ErrorCode.unknown_member_id)
        if generation_id != group.generation_id:
            return SyncResult(ErrorCode.illegal_generation)
        if (protocol_type and protocol_type != group.protocol_type) or (
            protocol_name and protocol_name != group.protocol_name
        ):
            return SyncResult(ErrorCode.inconsistent_group_protocol)
        log.debug("group %s: SyncGroup from %s (%s)", group_id, member_id, group.state.value)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return SyncResult(ErrorCode.rebalance_in_progress)
        self._schedule_session_timeout(group, member)
        if group.is_(GroupState.STABLE):
            return SyncResult(ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name)
        self._answer_sync(member, SyncResult(ErrorCode.rebalance_in_progress))
        member.sync_future = future = asyncio.get_running_loop().create_future()
        if member_id == group.leader_id:
            # Shielded: a leader that disconnects mid-write must not leave the group half-synced.
            generation = group.generation_id
            completion = asyncio.ensure_future(self._store_sync(group, assignments))
            try:
                stored = await asyncio.shield(completion)
            except asyncio.CancelledError:
                completion.add_done_callback(lambda done: self._finish_stored_sync(group, generation, done))
                raise
            # The group turns Stable and the leader, which computed the assignment, is answered in this
            # step; the waiting followers after it. A follower's SyncGroup cannot overtake the leader's
            # answer, and clients' rebalance listeners (aiokafka's tests among them) expect the leader
            # to hold its assignment once a follower holds its own. Kafka's order is unspecified.
            self._finish_sync(group, generation, stored)
            if future.done():
                return future.result()
        return await asyncio.shield(future)

    def _finish_stored_sync(
        self, group: Group, generation: int, done: asyncio.Future[dict[str, bytes] | None]
    ) -> None:
        if not done.cancelled() and done.exception() is None:
            self._finish_sync(group, generation, done.result())

    async def _store_sync(self, group: Group, assignments: Mapping[str, bytes]) -> dict[str, bytes] | None:
        """Writes the leader's assignment; returns it completed for every member, or None when the
        write failed (the members are told, and the group rebalances) or a rebalance overtook it."""
        generation = group.generation_id
        complete = {member_id: assignments.get(member_id, b"") for member_id in group.members}
        error = await self._store_group(group, complete)
        if not group.is_(GroupState.COMPLETING_REBALANCE) or group.generation_id != generation:
            return None  # a rebalance started while we were writing; it answered the waiters
        if error is not None:
            for member in group.members.values():
                self._answer_sync(member, SyncResult(error))
            self._prepare_rebalance(group)
            self._maybe_complete_join(group)
            return None
        return complete

    def _finish_sync(self, group: Group, generation: int, complete: dict[str, bytes] | None) -> None:
        """The stored assignment takes effect: Stable, and every waiting member answered."""
        if (
            complete is None
            or not group.is_(GroupState.COMPLETING_REBALANCE)
            or group.generation_id != generation
        ):
            return
        self._cancel(group.sync_timer)
        for member_id, member in group.members.items():
            member.assignment = complete.get(member_id, b"")
        group.transition_to(GroupState.STABLE, self.clock.now_ms())
        for member in group.members.values():
            self._answer_sync(
                member,
                SyncResult(ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name),
            )

    # --- Heartbeat and LeaveGroup ------------------------------------------------------------

    def heartbeat(
        self, *, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> int:
        error = self._availability_error(group_id)
        if error is not None:
            return error
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.unknown_member_id
        fenced = self._fenced_instance_error(group, member_id, group_instance_id)
        if fenced is not None:
            return fenced
        member = group.members.get(member_id)
        if member is None or group.is_(GroupState.EMPTY):
            return ErrorCode.unknown_member_id
        if generation_id != group.generation_id:
            return ErrorCode.illegal_generation
        self._schedule_session_timeout(group, member)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return ErrorCode.rebalance_in_progress
        return ErrorCode.none

    def leave_group(
        self, *, group_id: str, members: Sequence[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        """Removes (member_id, group_instance_id) pairs; returns a group error and one per member."""
        error = self._availability_error(group_id)
        if error is not None:
            return error, [error] * len(members)
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.none, [ErrorCode.unknown_member_id] * len(members)
        results: list[int] = []
        removed_any = False
        for member_id, instance_id in members:
            if not member_id and instance_id is not None:
                member_id = group.static_members.get(instance_id, "")
            fenced = self._fenced_instance_error(group, member_id, instance_id)
            if fenced is not None:
                results.append(fenced)
            elif member_id in group.pending_members:
                self._cancel(group.pending_members.pop(member_id))
                results.append(ErrorCode.none)
                removed_any = True
            elif member_id in group.members:
                self._remove_member(group, group.members[member_id])
                results.append(ErrorCode.none)
                removed_any = True
            else:
                results.append(ErrorCode.unknown_member_id)
        if removed_any:
            if group.is_(GroupState.STABLE) or group.is_(GroupState.COMPLETING_REBALANCE):
                self._prepare_rebalance(group)
            self._maybe_complete_join(group)
        return ErrorCode.none, results

    # --- offsets -----------------------------------------------------------------------------

    async def commit_offsets(
        self,
        *,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: Sequence[PartitionOffset],
        retention_ms: int = -1,
    ) -> list[int]:
        """Commits offsets; returns one error code per entry of `offsets`, in order."""
        error = self._commit_error(group_id, OffsetCommitter(member_id, generation_id, group_instance_id))
        if error is not None:
            return [error] * len(offsets)
        group = self._offsets_holder(group_id)
        if member_id in group.members:
            self._schedule_session_timeout(group, group.members[member_id])
        now = self.clock.now_ms()
        results, accepted = self._accept_offsets(
            offsets, now, expire_timestamp=now + retention_ms if retention_ms >= 0 else -1
        )
        if not accepted:
            return results

        def apply() -> None:
            self._offsets_holder(group_id).offsets.update(accepted)

        return await self._write_offsets(group_id, results, accepted, apply)

    async def commit_transactional_offsets(
        self,
        *,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: Sequence[PartitionOffset],
    ) -> list[int]:
        """TxnOffsetCommit: the offsets are written to the group's partition inside the producer's
        transaction and stay pending until its marker arrives (`complete_transaction`)."""
        error = self._commit_error(
            group_id, OffsetCommitter(member_id, generation_id, group_instance_id, transactional=True)
        )
        if error is not None:
            return [error] * len(offsets)
        results, accepted = self._accept_offsets(offsets, self.clock.now_ms(), expire_timestamp=-1)
        if not accepted:
            return results

        def apply() -> None:
            self.pending_transactions.setdefault(producer_id, {}).setdefault(group_id, {}).update(accepted)

        return await self._write_offsets(
            group_id, results, accepted, apply, producer=(producer_id, producer_epoch)
        )

    def _commit_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        """Why an (transactional) offset commit is refused, or None: the checks every group shares,
        then the group type's own check of the committing member (`_committing_member_error`)."""
        error = self._availability_error(group_id)
        if error is not None:
            return error
        if not is_valid_group_id(group_id):
            return ErrorCode.invalid_group_id
        return self._committing_member_error(group_id, committer)

    def _committing_member_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        """A classic group's check: the member and its generation (Kafka's ClassicGroup rule)."""
        generation_id, member_id, transactional = (
            committer.generation_id,
            committer.member_id,
            committer.transactional,
        )
        group = self.groups.get(group_id)
        if group is None:
            # Admin tools and manual-assignment consumers commit without joining.
            return None if generation_id < 0 or transactional else ErrorCode.illegal_generation
        if group.is_(GroupState.DEAD):
            return ErrorCode.coordinator_not_available
        if transactional and generation_id < 0:
            return None  # TxnOffsetCommit before v3 carries no member (KIP-447 added it)
        fenced = self._fenced_instance_error(group, member_id, committer.group_instance_id)
        if fenced is not None:
            return fenced
        if generation_id < 0 and group.is_(GroupState.EMPTY):
            return None
        # Kafka checks the member and its generation before the group's state: an unknown member is told so
        # (and rejoins) even while the group awaits its leader's assignment.
        if member_id not in group.members:
            return ErrorCode.unknown_member_id
        if generation_id != group.generation_id:
            return ErrorCode.illegal_generation
        if not transactional and group.is_(GroupState.COMPLETING_REBALANCE):
            return ErrorCode.rebalance_in_progress
        return None

    def _accept_offsets(
        self, offsets: Sequence[PartitionOffset], now: int, *, expire_timestamp: int
    ) -> tuple[list[int], dict[tuple[str, int], CommittedOffset]]:
        """One error code per entry (in order) and the offsets that may be written."""
        results: list[int] = []
        accepted: dict[tuple[str, int], CommittedOffset] = {}
        for entry in offsets:
            metadata = entry.metadata or ""
            if len(metadata.encode()) > self.config.offset_metadata_max_bytes:
                results.append(ErrorCode.offset_metadata_too_large)
                continue
            if len(entry.topic.encode()) > MAX_KEY_STRING_BYTES:
                results.append(ErrorCode.unknown_topic_or_partition)
                continue
            results.append(ErrorCode.none)
            accepted[(entry.topic, entry.partition)] = CommittedOffset(
                offset=entry.offset,
                leader_epoch=entry.leader_epoch,
                metadata=metadata,
                commit_timestamp=now,
                expire_timestamp=expire_timestamp,
            )
        return results, accepted

    async def _write_offsets(
        self,
        group_id: str,
        results: list[int],
        accepted: Mapping[tuple[str, int], CommittedOffset],
        apply: Callable[[], None],
        *,
        producer: tuple[int, int] | None = None,
    ) -> list[int]:
        """Appends the accepted offsets to the group's partition, then `apply`s them in memory."""
        records = [
            (
                encode_offset_commit_key(OffsetCommitKey(group_id, topic, partition)),
                encode_offset_commit_value(
                    OffsetCommitValue(
                        offset=committed.offset,
                        metadata=committed.metadata,
                        commit_timestamp=committed.commit_timestamp,
                        leader_epoch=committed.leader_epoch,
                        expire_timestamp=committed.expire_timestamp,
                    )
                ),
            )
            for (topic, partition), committed in accepted.items()
        ]

        async def write() -> list[int]:
            append_error = await self._append(
                self.partition_for(group_id), records, offset_commit=True, producer=producer
            )
            if append_error is not None:
                return [append_error if code == ErrorCode.none else code for code in results]
            apply()
            return results

        # Shielded so a cancelled request cannot leave the log and the memory disagreeing.
        return await asyncio.shield(write())

    def _offsets_holder(self, group_id: str) -> Group:
        """The classic group entry that holds `group_id`'s offsets (an Empty one is made if none)."""
        return self.groups.setdefault(
            group_id, Group(group_id=group_id, current_state_timestamp=self.clock.now_ms())
        )

    def complete_transaction(self, partition: int, producer_id: int, commit: bool) -> None:
        """The marker of `producer_id`'s transaction was written to `partition`: its pending offsets
        of that partition's groups become committed offsets, or are dropped on abort."""
        owned = self.partitions.get(partition)
        if owned is not None and not owned.loaded:
            # Being replayed (a new leader): the transaction it finds open is completed afterwards.
            owned.markers_during_load.append((producer_id, commit))
            return
        by_group = self.pending_transactions.get(producer_id)
        if not by_group:
            return
        for group_id in [g for g in by_group if self.partition_for(g) == partition]:
            pending = by_group.pop(group_id)
            if not commit:
                continue
            self._offsets_holder(group_id).offsets.update(pending)
        if not by_group:
            del self.pending_transactions[producer_id]

    def has_pending_offsets(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether a transaction holds an offset of the group's partition (OffsetFetch require_stable)."""
        return any(
            (topic, partition) in by_group.get(group_id, {})
            for by_group in self.pending_transactions.values()
        )

    def fetch_offsets(
        self,
        *,
        group_id: str,
        topics: Sequence[tuple[str, Sequence[int]]] | None,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[int, list[tuple[str, int, CommittedOffset | None]]]:
        """Committed offsets of the listed partitions (all of the group's when `topics` is None).

        A member that names itself (OffsetFetch v9) is checked by the group type
        (`_fetching_member_error`). Offsets still pending in a transaction are not returned
        (`has_pending_offsets` tells OffsetFetch with `require_stable` to answer UNSTABLE_OFFSET_COMMIT).
        """
        error = self._availability_error(group_id)
        if error is None:
            error = self._fetching_member_error(group_id, member_id, member_epoch)
        if error is not None:
            return error, []
        group = self.groups.get(group_id)
        stored = group.offsets if group is not None else {}
        if topics is None:
            return ErrorCode.none, [(t, p, committed) for (t, p), committed in sorted(stored.items())]
        return ErrorCode.none, [(t, p, stored.get((t, p))) for t, partitions in topics for p in partitions]

    def _fetching_member_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int | None:
        """A classic group lets anyone read its offsets (Kafka's ClassicGroup.validateOffsetFetch)."""
        return None

    async def delete_offsets(
        self, *, group_id: str, partitions: Sequence[tuple[str, int]]
    ) -> tuple[int, list[int]]:
        error = self._availability_error(group_id)
        if error is not None:
            return error, []
        if not is_valid_group_id(group_id):
            return ErrorCode.invalid_group_id, []
        group = self.groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.group_id_not_found, []
        subscribed: set[str] = set()
        if not group.is_(GroupState.EMPTY):
            topics = group.subscribed_topics()
            if topics is None:
                return ErrorCode.non_empty_group, []
            subscribed = topics
        results = [
            ErrorCode.group_subscribed_to_topic if topic in subscribed else ErrorCode.none
            for topic, _ in partitions
        ]
        doomed = [
            (topic, partition)
            for (topic, partition), code in zip(partitions, results, strict=True)
            if code == ErrorCode.none and (topic, partition) in group.offsets
        ]
        if doomed:
            append_error = await asyncio.shield(self._remove_offsets(group, doomed))
            if append_error is not None:
                return append_error, []
        return ErrorCode.none, results

    async def _remove_offsets(self, group: Group, keys: Sequence[tuple[str, int]]) -> int | None:
        records: list[tuple[bytes, bytes | None]] = [
            (encode_offset_commit_key(OffsetCommitKey(group.group_id, t, p)), None) for t, p in keys
        ]
        error = await self._append(self.partition_for(group.group_id), records)
        if error is None:
            for key in keys:
                group.offsets.pop(key, None)
        return error

    # --- admin -------------------------------------------------------------------------------

    async def delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        results: dict[str, int] = {}
        for group_id in group_ids:
            error = self._availability_error(group_id)
            group = self.groups.get(group_id)
            if group is None and error is None and self._pending_offsets_of(group_id):
                # Only a transaction's offsets so far: Kafka has made it an empty group by now (kept
                # in the map, so a marker arriving during the deletion finds it dead).
                group = self.groups[group_id] = Group(
                    group_id=group_id, current_state_timestamp=self.clock.now_ms()
                )
            if error is not None:
                results[group_id] = error
            elif not is_valid_group_id(group_id):
                results[group_id] = ErrorCode.invalid_group_id
            elif group is None or group.is_(GroupState.DEAD):
                results[group_id] = ErrorCode.group_id_not_found
            elif not group.is_(GroupState.EMPTY):
                results[group_id] = ErrorCode.non_empty_group
            else:
                results[group_id] = await asyncio.shield(self._delete_group(group))
        return results

    async def _delete_group(self, group: Group) -> int:
        """Tombstones for the group's offsets, those still pending in open transactions included, and
        for its metadata. As in Kafka, the pending ones are dropped: a later commit marker leaves the
        group deleted (replay drops them at the tombstone too)."""
        group.transition_to(GroupState.DEAD, self.clock.now_ms())
        pending = self._pending_offsets_of(group.group_id)
        doomed = group.offsets.keys() | {tp for _, tp, _ in pending}
        records: list[tuple[bytes, bytes | None]] = [
            (encode_offset_commit_key(OffsetCommitKey(group.group_id, t, p)), None) for t, p in sorted(doomed)
        ]
        records.append((encode_group_metadata_key(GroupMetadataKey(group.group_id)), None))
        error = await self._append(self.partition_for(group.group_id), records)
        if error is not None:
            group.transition_to(GroupState.EMPTY, self.clock.now_ms())
            return error
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]
        for producer_id, tp, offset in pending:
            # Offsets a transaction wrote while the tombstones were being written stay its own.
            by_group = self.pending_transactions.get(producer_id, {})
            offsets = by_group.get(group.group_id, {})
            if offsets.get(tp) is offset:
                del offsets[tp]
            if not offsets:
                by_group.pop(group.group_id, None)
            if not by_group:
                self.pending_transactions.pop(producer_id, None)
        return ErrorCode.none

    def _pending_offsets_of(self, group_id: str) -> list[tuple[int, tuple[str, int], CommittedOffset]]:
        """(producer id, partition, offset) of the group's offsets pending in open transactions."""
        return [
            (producer_id, tp, offset)
            for producer_id, by_group in self.pending_transactions.items()
            for tp, offset in by_group.get(group_id, {}).items()
        ]

    def list_groups(
        self, *, states_filter: Sequence[str] = (), types_filter: Sequence[str] = ()
    ) -> tuple[int, list[ListedGroup]]:
        """The groups of the partitions this coordinator owns (Kafka's ListGroups per broker)."""
        if self.stopped:
            return ErrorCode.not_coordinator, []
        if not all(owned.loaded for owned in self.partitions.values()):
            return ErrorCode.coordinator_load_in_progress, []
        states = {s.lower() for s in states_filter}
        types = {t.lower() for t in types_filter}
        if types and CLASSIC_GROUP_TYPE not in types:
            return ErrorCode.none, []
        listed = [
            ListedGroup(group.group_id, group.protocol_type or "", group.state.value)
            for group in self.groups.values()
            if not group.is_(GroupState.DEAD) and (not states or group.state.value.lower() in states)
        ]
        return ErrorCode.none, sorted(listed, key=lambda g: g.group_id)

    def describe_group(self, group_id: str) -> GroupDescription:
        error = self._availability_error(group_id)
        if error is not None:
            return GroupDescription(error, group_id, "", "", "", ())
        if not is_valid_group_id(group_id):
            return GroupDescription(ErrorCode.invalid_group_id, group_id, "", "", "", ())
        group = self.groups.get(group_id)
        if group is None:
            # Kafka's answer for an unknown group in DescribeGroups v0-5.
            return GroupDescription(ErrorCode.none, group_id, GroupState.DEAD.value, "", "", ())
        stable = group.is_(GroupState.STABLE) and group.protocol_name is not None
        members = tuple(
            DescribedMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                # Like Kafka: metadata and assignment only once the group is Stable.
                metadata=m.metadata_for(group.protocol_name) if stable and group.protocol_name else b"",
                assignment=m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        return GroupDescription(
            ErrorCode.none,
            group_id,
            group.state.value,
            group.protocol_type or "",
            (group.protocol_name or "") if stable else "",
            members,
        )

    # --- offsets retention -------------------------------------------------------------------

    async def expire_offsets(self, now_ms: int | None = None) -> int:
        """Drops expired offsets (offsets.retention.minutes) and then empty groups; returns the count.

        An Empty consumer group's offsets expire together, counted from when it became
        empty; a group that never had members (commits from admin tools) expires each
        offset from its commit time; a live consumer group only loses offsets of topics
        it no longer subscribes to (KIP-211, KIP-496).
        """
        if self.stopped:
            return 0
        now = self.clock.now_ms() if now_ms is None else now_ms
        retention = self.config.offsets_retention_ms
        expired_total = 0
        for group in list(self.groups.values()):
            # As in Kafka, an offset a transaction is about to replace does not expire meanwhile.
            expired = [
                tp
                for tp in self._expired_offsets(group, now, retention)
                if not self.has_pending_offsets(group.group_id, *tp)
            ]
            delete_group = (
                group.is_(GroupState.EMPTY)
                and not group.pending_members  # a client is mid-way through joining
                and len(expired) == len(group.offsets)
            )
            if not expired and not delete_group:
                continue
            records: list[tuple[bytes, bytes | None]] = [
                (encode_offset_commit_key(OffsetCommitKey(group.group_id, t, p)), None) for t, p in expired
            ]
            if delete_group:
                records.append((encode_group_metadata_key(GroupMetadataKey(group.group_id)), None))
            if await self._append(self.partition_for(group.group_id), records) is not None:
                continue  # not written (not owned any more, or too few replicas): memory stays
            for key in expired:
                group.offsets.pop(key, None)
            expired_total += len(expired)
            if delete_group and group.is_(GroupState.EMPTY) and not group.offsets:
                group.transition_to(GroupState.DEAD, now)
                self.groups.pop(group.group_id, None)
        return expired_total

    @staticmethod
    def _expired_offsets(group: Group, now: int, retention: int) -> list[tuple[str, int]]:
        def expired(committed: CommittedOffset, base: int) -> bool:
            if committed.expire_timestamp >= 0:
                return committed.expire_timestamp <= now
            return base + retention <= now

        if group.is_(GroupState.EMPTY):
            if group.protocol_type is None:
                return [tp for tp, c in group.offsets.items() if expired(c, c.commit_timestamp)]
            return [tp for tp, c in group.offsets.items() if expired(c, group.current_state_timestamp)]
        subscribed = group.subscribed_topics() if group.is_(GroupState.STABLE) else None
        if subscribed is None:
            return []
        return [
            tp
            for tp, c in group.offsets.items()
            if tp[0] not in subscribed and expired(c, c.commit_timestamp)
        ]

    # --- persistence -------------------------------------------------------------------------

    async def _store_group(self, group: Group, assignments: Mapping[str, bytes] | None = None) -> int | None:
        protocol = group.protocol_name
        value = GroupMetadataValue(
            protocol_type=group.protocol_type or "",
            generation=group.generation_id,
            protocol=protocol,
            leader=group.leader_id,
            current_state_timestamp=group.current_state_timestamp,
            members=tuple(
                MemberMetadata(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    rebalance_timeout=m.rebalance_timeout_ms,
                    session_timeout=m.session_timeout_ms,
                    subscription=m.metadata_for(protocol) if protocol else b"",
                    assignment=(assignments or {}).get(m.member_id, m.assignment),
                )
                for m in group.members.values()
            ),
        )
        try:
            record = (
                encode_group_metadata_key(GroupMetadataKey(group.group_id)),
                encode_group_metadata_value(value),
            )
        except OffsetsFormatError:
            # A client id or instance id too long for Kafka's int16-length strings.
            log.warning("group %s: metadata does not fit Kafka's record format", group.group_id)
            return ErrorCode.unknown_server_error
        return await self._append(self.partition_for(group.group_id), [record])

    async def _append(
        self,
        partition: int,
        records: Sequence[tuple[bytes, bytes | None]],
        *,
        offset_commit: bool = False,
        producer: tuple[int, int] | None = None,
    ) -> int | None:
        """Writes to an owned, loaded partition; None once the log has it (in a cluster: the ISR),
        else the error for the client."""
        owned = self.partitions.get(partition)
        if owned is None or not owned.loaded:
            return ErrorCode.not_coordinator
        try:
            if producer is None:
                await self.log.append(partition, records)
            else:
                await self.log.append(partition, records, producer)
        except OffsetsAppendError as exc:
            return coordinator_error_for_append(exc.error_code, offset_commit=offset_commit)
        except Exception:
            log.exception("writing to __consumer_offsets partition %d failed", partition)
            return ErrorCode.coordinator_not_available
        if self.partitions.get(partition) is not owned:
            # Leadership moved while the ISR was awaited: the new coordinator replays the log.
            return ErrorCode.not_coordinator
        return None

    # --- small helpers -----------------------------------------------------------------------

    @staticmethod
    def _answer_join(member: Member, result: JoinResult) -> None:
        if member.join_future is not None and not member.join_future.done():
            member.join_future.set_result(result)

    @staticmethod
    def _answer_sync(member: Member, result: SyncResult) -> None:
        if member.sync_future is not None and not member.sync_future.done():
            member.sync_future.set_result(result)

    @staticmethod
    def _cancel(timer: Timer | None) -> None:
        if timer is not None:
            timer.cancel()

    def _spawn(self, work: Awaitable[object]) -> None:
        async def run() -> None:
            await work

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Waits for background writes (group metadata, expiry) to finish; used by tests and shutdown."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
