"""The group coordinator's storage: Kafka's `__consumer_offsets` topic on our own logs.

The topic is created through the controller and replicated like any other; each broker coordinates the
groups of the partitions it leads (`open_group_coordinator`), and its writes count only
once the ISR has them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig
from broker.context import BrokerState
from broker.controller.api import BrokerRegistration, PartitionAssignment, TopicConfigChange
from broker.controller.forwarding import ControllerLink
from broker.controller.rpc.admin import CreateTopicsRequest, NewTopic
from broker.groups.consumer_config import ConsumerGroupConfig, ReplicaRacks, TopicCatalog
from broker.groups.consumer_groups import ConsumerGroups
from broker.groups.coordinator import GroupCoordinator, GroupCoordinatorConfig
from broker.groups.offsets_log import OFFSETS_TOPIC_NAME, OffsetsAppendError
from broker.groups.offsets_replay import CoordinatorEndpoint
from broker.groups.streams_coordinator import StreamsGroups
from broker.metadata.coordinator_records import LogEntry, partition_for_key
from broker.metadata.security_records import SecurityRecord
from broker.metadata.topic_registry import TopicsView
from broker.replication.partition import Partition
from broker.wire.records.batch import iter_batches
from broker.wire.records.records import Record, build_batch, decode_records

log = logging.getLogger(__name__)

# Replay reads this much of a partition per step.
READ_CHUNK_BYTES = 4 * 1024 * 1024
# After a failed attempt to create `__consumer_offsets`, FindCoordinator waits this long to retry.
CREATE_RETRY_S = 1.0
TOPIC_ALREADY_EXISTS = 36


def read_offsets_records(partition: Partition) -> Iterator[LogEntry]:
    """Every keyed data record and every transaction marker of a partition, up to its log end."""
    offset = partition.log_start_offset
    end = partition.log_end_offset
    while offset < end:
        chunk = partition.read(offset, READ_CHUNK_BYTES, end, True)
        if not chunk:
            return
        for batch in iter_batches(chunk):
            producer_id = batch.producer_id if batch.is_transactional else -1
            for record in decode_records(batch):
                record_offset = batch.base_offset + (record.offset_delta or 0)
                if record_offset < offset:
                    continue
                if batch.is_control:
                    marker = control_marker_commit(record.key)
                    if marker is not None:
                        yield LogEntry(record_offset, None, None, batch.producer_id, marker)
                elif record.key is not None:
                    yield LogEntry(record_offset, record.key, record.value, producer_id)
            offset = batch.next_offset


def control_marker_commit(key: bytes | None) -> bool | None:
    """A control record's key (version int16, type int16: 0 abort, 1 commit): whether it commits;
    None for other control records."""
    if key is None or len(key) < 4:
        return None
    kind = int.from_bytes(key[2:4], "big", signed=True)
    return {0: False, 1: True}.get(kind)


def _led_partition(state: BrokerState, topic: str, partition: int) -> Partition:
    led, error = state.partitions.leader(topic, partition)
    if led is None:
        raise OffsetsAppendError(error)
    return led


async def append_and_commit(
    state: BrokerState,
    topic: str,
    partition: int,
    records: Sequence[tuple[bytes, bytes | None]],
    timeout_s: float,
    producer: tuple[int, int] | None = None,
) -> int:
    """Append as the partition's leader with acks=all: returns once the ISR has the batch.

    With `producer` (id, epoch) the batch is transactional, as Kafka writes TxnOffsetCommit
    offsets: no sequence, part of that producer's open transaction until its marker."""
    now_ms = int(time.time() * 1000)
    records_ = [Record(key=key, value=value, timestamp=now_ms) for key, value in records]
    if producer is None:
        batch = build_batch(records_)
    else:
        batch = build_batch(records_, producer_id=producer[0], producer_epoch=producer[1], transactional=True)
    outcome = _led_partition(state, topic, partition).append(
        batch, acks=-1, now_ms=now_ms, from_coordinator=True
    )
    if outcome.result is None:
        raise OffsetsAppendError(outcome.error, outcome.message or "")
    waiting = outcome.acks_pending
    if waiting is not None:
        done, _ = await asyncio.wait({waiting}, timeout=timeout_s)
        if not done:
            waiting.cancel()  # the partition drops cancelled waiters
            raise OffsetsAppendError(ErrorCode.request_timed_out)
        if waiting.result() != ErrorCode.none:
            raise OffsetsAppendError(waiting.result())
    return int(outcome.result.last_offset)


def read_led(state: BrokerState, topic: str, partition: int) -> Iterator[LogEntry]:
    led, _ = state.partitions.leader(topic, partition)
    if led is None:
        raise LookupError(f"{topic}-{partition} is not led by this broker")
    return read_offsets_records(led)


async def wait_until_committed(state: BrokerState, topic: str, partition: int) -> None:
    """Completes when the high watermark covers the log end, or fails when leadership moves."""
    waiting = _led_partition(state, topic, partition).wait_until_committed()
    if waiting is not None and await waiting == ErrorCode.not_leader_or_follower:
        raise OffsetsAppendError(ErrorCode.not_leader_or_follower)


class PartitionOffsetsLog:
    """OffsetsLog over `__consumer_offsets` through the partition layer: appends as the partition's
    leader and returns once the ISR has the batch (Kafka's acks=all for the offsets topic). A single
    node, a cluster of one, leads every partition."""

    def __init__(self, state: BrokerState, num_partitions: int, commit_timeout_ms: int) -> None:
        self._state = state
        # The configured count until the topic exists; then the topic's (the listener keeps it).
        self.num_partitions = num_partitions
        self._commit_timeout_s = commit_timeout_ms / 1000

    async def append(
        self,
        partition: int,
        records: Sequence[tuple[bytes, bytes | None]],
        producer: tuple[int, int] | None = None,
    ) -> int:
        return await append_and_commit(
            self._state, OFFSETS_TOPIC_NAME, partition, records, self._commit_timeout_s, producer
        )

    def read(self, partition: int) -> Iterator[LogEntry]:
        return read_led(self._state, OFFSETS_TOPIC_NAME, partition)

    async def wait_until_committed(self, partition: int) -> None:
        await wait_until_committed(self._state, OFFSETS_TOPIC_NAME, partition)


class LeadershipListener:
    """A broker.controller.api.MetadataListener (registered after the ReplicaManager, so a
    replica is already leader or follower when this runs): a coordinator loads a partition of its
    internal topic (`__consumer_offsets`, `__transaction_state`) when this broker becomes its
    leader and unloads it when leadership moves away."""

    def __init__(self, coordinator: Any, storage: Any, node_id: int, topic: str = OFFSETS_TOPIC_NAME) -> None:
        self._coordinator = coordinator
        self._storage = storage
        self._node_id = node_id
        self._topic = topic

    def on_image_loaded(
        self, partitions: Sequence[PartitionAssignment], brokers: Sequence[BrokerRegistration]
    ) -> None:
        mine = [a for a in partitions if a.topic == self._topic]
        if mine:
            self._storage.num_partitions = max(a.partition for a in mine) + 1
        led = {a.partition for a in mine if a.leader == self._node_id}
        for partition in [p for p in self._coordinator.partitions if p not in led]:
            self._coordinator.unload_partition(partition)
        for partition in sorted(led):
            self._coordinator.load_partition(partition)

    def on_partition_changed(
        self, previous: PartitionAssignment | None, current: PartitionAssignment
    ) -> None:
        if current.topic != self._topic:
            return
        # Partitions of a new topic arrive one by one: the count only grows here.
        self._storage.num_partitions = max(self._storage.num_partitions, current.partition + 1)
        if current.leader == self._node_id:
            self._coordinator.load_partition(current.partition)
        else:
            self._coordinator.unload_partition(current.partition)

    def on_partition_removed(self, previous: PartitionAssignment) -> None:
        if previous.topic == self._topic:
            self._coordinator.unload_partition(previous.partition)

    def on_topic_configs_changed(self, change: TopicConfigChange) -> None:
        """Topic configs do not move coordinators."""

    def on_broker_changed(self, broker: BrokerRegistration) -> None:
        """Leadership changes arrive as partition changes."""

    def on_broker_configs_changed(self, resource_name: str, configs: Mapping[str, str]) -> None:
        """Dynamic broker configs do not move coordinators."""

    def on_security_records(self, records: Sequence[SecurityRecord]) -> None:
        """ACLs are checked by the request handlers."""


def offsets_topic_configs(config: BrokerConfig) -> dict[str, str]:
    return {
        "cleanup.policy": "compact",
        "compression.type": "producer",
        "segment.bytes": str(config.get_int("offsets.topic.segment.bytes")),
    }


class PartitionLeaderLocator:
    """FindCoordinator: the leader of the key's partition of an internal topic
    (`__consumer_offsets` for groups, `__transaction_state` for transactional ids).

    The topic is created through the controller on the first lookup (as Kafka does); until it
    has a leader the answer is COORDINATOR_NOT_AVAILABLE and clients retry.
    """

    def __init__(
        self,
        state: BrokerState,
        storage: Any,
        cluster: ControllerLink,
        topic: str = OFFSETS_TOPIC_NAME,
        topic_spec: Callable[[BrokerConfig], dict[str, Any]] | None = None,
    ) -> None:
        self._state = state
        self._storage = storage  # has the topic's current num_partitions
        self._cluster = cluster
        self._topic = topic
        self._topic_spec = topic_spec or offsets_topic_spec
        self._creating: asyncio.Task[None] | None = None
        self._retry_after = 0.0

    def locate(self, key: str, listener_name: str) -> CoordinatorEndpoint:
        partitions = self._state.partitions
        partition = partition_for_key(key, self._storage.num_partitions)
        if not partitions.knows(self._topic, partition):
            if self._cluster.image.topic_by_name(self._topic) is None:
                self._create_topic()
            return CoordinatorEndpoint(ErrorCode.coordinator_not_available)
        endpoint = partitions.leader_endpoint(self._topic, partition, listener_name)
        if endpoint is None:
            return CoordinatorEndpoint(ErrorCode.coordinator_not_available)
        leader = partitions.leader_for(self._topic, partition)
        return CoordinatorEndpoint(ErrorCode.none, leader, endpoint.host, endpoint.port)

    def _create_topic(self) -> None:
        if self._creating is not None and not self._creating.done():
            return
        if time.monotonic() < self._retry_after:
            return
        self._creating = asyncio.get_running_loop().create_task(self._create(), name=f"create-{self._topic}")

    async def _create(self) -> None:
        # As in Kafka: never a smaller replication factor than configured. With too few live
        # brokers the controller refuses, lookups answer COORDINATOR_NOT_AVAILABLE and retry.
        topic = self._topic_spec(self._state.config)
        try:
            result = await self._cluster.call(CreateTopicsRequest((NewTopic(**topic),)))
        except Exception as exc:  # the controller is unreachable or refused: a later lookup retries
            log.warning("creating %s failed: %s", self._topic, exc)
            self._retry_after = time.monotonic() + CREATE_RETRY_S
            return
        for answer in result.results:
            if answer.error_code not in (0, TOPIC_ALREADY_EXISTS):
                log.warning("creating %s refused: %s", self._topic, answer.message)
                self._retry_after = time.monotonic() + CREATE_RETRY_S
                return
        log.info(
            "created %s (%d partitions, replication factor %d)",
            self._topic,
            topic["partitions"],
            topic["replication_factor"],
        )


def offsets_topic_spec(config: BrokerConfig) -> dict[str, Any]:
    return {
        "name": OFFSETS_TOPIC_NAME,
        "partitions": config.offsets_topic_num_partitions,
        "replication_factor": config.get_int("offsets.topic.replication.factor"),
        "configs": offsets_topic_configs(config),
        "internal": True,
    }


def coordinator_config(config: BrokerConfig) -> GroupCoordinatorConfig:
    return GroupCoordinatorConfig(
        initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
        min_session_timeout_ms=config.group_min_session_timeout_ms,
        max_session_timeout_ms=config.group_max_session_timeout_ms,
        offsets_retention_ms=config.get_int("offsets.retention.minutes") * 60_000,
    )


def consumer_group_config(config: BrokerConfig) -> ConsumerGroupConfig:
    return ConsumerGroupConfig(
        session_timeout_ms=config.get_int("group.consumer.session.timeout.ms"),
        heartbeat_interval_ms=config.get_int("group.consumer.heartbeat.interval.ms"),
        max_size=config.get_int("group.consumer.max.size"),
        assignors=tuple(config.values["group.consumer.assignors"]),  # type: ignore[arg-type]
        migration_policy=config.get_str("group.consumer.migration.policy"),
        regex_refresh_interval_ms=config.get_int("group.consumer.regex.refresh.interval.ms"),
    )


# Kafka's internal topics, which no subscription (names or regex) reaches.
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC_NAME, "__transaction_state"})


def topic_catalog(state: BrokerState) -> TopicCatalog:
    """What consumer groups may subscribe to: every topic but the internal ones, by name."""
    return TopicsView(
        state.metadata,
        lambda topics: MappingProxyType(
            {
                topic.name: (topic.topic_id, topic.partitions)
                for topic in topics
                if topic.name not in INTERNAL_TOPICS
            }
        ),
    )


def replica_racks(state: BrokerState) -> ReplicaRacks:
    """The racks (`broker.rack`) of the brokers holding a partition's replicas, for the
    consumer group assignors' rack awareness."""

    def racks(topic: str, partition: int) -> frozenset[str]:
        return state.partitions.replica_racks(topic, partition)

    return racks


def open_group_coordinator(state: BrokerState) -> tuple[GroupCoordinator, LeadershipListener]:
    """The broker's group coordinator and the metadata listener that moves groups with the
    leadership of `__consumer_offsets` partitions.

    Call it once `state.replication` (the ReplicaManager behind `state.partitions`) and `state.cluster` exist, on the
    event loop; partitions this broker already leads start loading at once.
    """
    config = state.config
    offsets_log = PartitionOffsetsLog(
        state, config.offsets_topic_num_partitions, config.get_int("offsets.commit.timeout.ms")
    )
    coordinator = GroupCoordinator(offsets_log, coordinator_config(config))
    ConsumerGroups(
        coordinator,
        consumer_group_config(config),
        topic_catalog=topic_catalog(state),
        replica_racks=replica_racks(state),
    )
    StreamsGroups(coordinator)
    coordinator.locator = PartitionLeaderLocator(state, offsets_log, state.cluster)
    listener = LeadershipListener(coordinator, offsets_log, state.node_id)
    # The listener may be registered after the broker caught up: start from what it knows now.
    listener.on_image_loaded(state.partitions.assignments_of(OFFSETS_TOPIC_NAME), [])
    return coordinator, listener
