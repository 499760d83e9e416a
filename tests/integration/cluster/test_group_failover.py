"""Group coordinators move with `__consumer_offsets` leadership (issue #11).

A confluent-kafka consumer group on a 3-node cluster commits offsets; the broker leading the group's
`__consumer_offsets` partition is killed with SIGKILL. The group must find the new coordinator (the new
leader of that partition), still see every acknowledged commit, keep consuming and committing, and a
later member must resume exactly at the last committed offsets: nothing committed is lost and nothing
is read again except the tail that was consumed but never committed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from broker.groups.offsets_format import partition_for_group
from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.fault_checker import create_topic, partition_states

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

TOPIC = "group-failover"
GROUP = "failover-readers"
PARTITIONS = 3
OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_PARTITIONS = 3  # offsets.topic.num.partitions in the test defaults
FAILOVER_TIMEOUT_S = 60.0

T = TypeVar("T")


def retrying(action: Callable[[], T], timeout_s: float, what: str) -> T:
    """`action()` until it stops raising KafkaException (a coordinator moving answers with retriable
    errors for a while); the last error after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return action()
        except KafkaException as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: still failing after {timeout_s}s: {exc}") from exc
            time.sleep(0.25)


def produce(cluster: LocalCluster, first: int, count: int) -> dict[int, int]:
    """`count` records spread over the partitions with acks=all; partition -> end offset after them."""
    producer = Producer(cluster.client_config(acks="all", **{"enable.idempotence": "true", "linger.ms": "5"}))
    errors: list[KafkaError] = []
    ends: dict[int, int] = {}

    def delivered(error: KafkaError | None, message: Message) -> None:
        if error is not None:
            errors.append(error)
        else:
            partition, offset = message.partition(), message.offset()
            assert partition is not None
            assert offset is not None
            ends[partition] = max(ends.get(partition, 0), offset + 1)

    for number in range(first, first + count):
        producer.produce(TOPIC, str(number).encode(), partition=number % PARTITIONS, on_delivery=delivered)
    assert producer.flush(60) == 0, "records still unacknowledged after 60 s"
    assert not errors, errors
    return ends


# The group's protocol: the classic one's timeouts are the client's; a consumer-protocol (KIP-848)
# member takes them from the coordinator and must not set them.
CLIENT_SETTINGS = {
    "classic": {"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"},
    "consumer": {"group.protocol": "consumer"},
}


def group_consumer(cluster: LocalCluster, protocol: str = "classic") -> Consumer:
    consumer = Consumer(
        cluster.client_config(
            **{
                "group.id": GROUP,
                "enable.auto.commit": "false",
                "auto.offset.reset": "earliest",
                "topic.metadata.refresh.interval.ms": "1000",
                "fetch.wait.max.ms": "100",
                **CLIENT_SETTINGS[protocol],
            }
        )
    )
    consumer.subscribe([TOPIC])
    return consumer


class Reader:
    """Polls one consumer and remembers every (partition, offset) it was handed, in order."""

    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.seen: list[tuple[int, int]] = []
        self.next_offsets: dict[int, int] = {}

    def read_until(self, done: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not done after {timeout_s}s (read {len(self.seen)} records)")
            message = self.consumer.poll(0.2)
            if message is None:
                continue
            if message.error() is not None:
                # Broker and coordinator failures are reported here; the client recovers by itself.
                assert not message.error().fatal(), message.error()
                continue
            partition, offset = message.partition(), message.offset()
            assert partition is not None
            assert offset is not None
            self.seen.append((partition, offset))
            self.next_offsets[partition] = offset + 1

    def commit(self, timeout_s: float = FAILOVER_TIMEOUT_S) -> dict[int, int]:
        """Commit the positions read so far (synchronously, retried while the coordinator moves)."""
        positions = dict(self.next_offsets)
        offsets = [TopicPartition(TOPIC, p, o) for p, o in sorted(positions.items())]

        def commit_once() -> None:
            answered = self.consumer.commit(offsets=offsets, asynchronous=False)
            failed = [tp for tp in answered or [] if tp.error is not None]
            if failed:
                raise KafkaException(failed[0].error)

        retrying(commit_once, timeout_s, "committing offsets")
        return positions

    def committed(self) -> dict[int, int]:
        """The group's committed offsets as its coordinator answers them (OffsetFetch)."""
        partitions = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        answered = retrying(
            lambda: self.consumer.committed(partitions, timeout=5), FAILOVER_TIMEOUT_S, "fetching offsets"
        )
        return {tp.partition: tp.offset for tp in answered if tp.offset >= 0}


def coordinator_of_group(cluster: LocalCluster, *, not_on: int | None = None) -> int:
    """The broker FindCoordinator names for the group, once it is the leader of the group's
    `__consumer_offsets` partition (and not `not_on`, a broker just killed)."""
    admin = AdminClient(cluster.client_config())
    partition = partition_for_group(GROUP, OFFSETS_PARTITIONS)
    deadline = time.monotonic() + FAILOVER_TIMEOUT_S
    while True:
        try:
            described = admin.describe_consumer_groups([GROUP], request_timeout=5)[GROUP].result(timeout=10)
            leader = partition_states(cluster, OFFSETS_TOPIC)[partition][0]
            named = described.coordinator.id
            if named == leader and named != not_on:
                return int(named)
            answer = f"FindCoordinator named {named}, the partition leader is {leader}"
        except KafkaException as exc:
            answer = str(exc)
        if time.monotonic() > deadline:
            raise AssertionError(f"no agreed coordinator after {FAILOVER_TIMEOUT_S}s: {answer}")
        time.sleep(0.25)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_group_resumes_from_its_committed_offsets_after_its_coordinator_is_killed(
    cluster3: LocalCluster, protocol: str
) -> None:
    create_topic(cluster3, TOPIC, PARTITIONS)
    ends = produce(cluster3, 0, 300)
    first = Reader(group_consumer(cluster3, protocol))
    first.read_until(lambda: len(first.seen) >= 150, FAILOVER_TIMEOUT_S, "the first half")
    committed_before_kill = first.commit()
    # A tail the member reads but never commits: a successor may read it again, nothing before it.
    read_before_tail = len(first.seen)
    first.read_until(lambda: len(first.seen) >= read_before_tail + 30, 30, "the uncommitted tail")
    positions_at_kill = dict(first.next_offsets)

    coordinator = coordinator_of_group(cluster3)
    cluster3.node(coordinator).kill9()

    # The new coordinator answers with every commit the old one acknowledged, and nothing else.
    assert first.committed() == committed_before_kill
    assert coordinator_of_group(cluster3, not_on=coordinator) != coordinator

    # The member keeps consuming what is produced after the failover and commits to the new coordinator.
    for partition, end in produce(cluster3, 300, 300).items():
        ends[partition] = max(ends.get(partition, 0), end)
    total = sum(ends.values())
    first.read_until(lambda: len(set(first.seen)) >= total - 60, FAILOVER_TIMEOUT_S, "after the failover")
    committed_after_kill = first.commit()
    assert first.committed() == committed_after_kill
    for partition, offset in committed_before_kill.items():
        assert committed_after_kill[partition] >= offset
    # Whatever the member read twice (a rebalance restarts at the committed offsets) lies in the
    # uncommitted tail.
    repeated = {entry for entry in first.seen if first.seen.count(entry) > 1}
    for partition, offset in repeated:
        assert committed_before_kill.get(partition, 0) <= offset < positions_at_kill[partition], (
            partition,
            offset,
        )
    first.consumer.close()

    # A new member of the group starts exactly at the committed offsets and reads the rest.
    successor = Reader(group_consumer(cluster3, protocol))
    try:
        successor.read_until(
            lambda: all(
                successor.next_offsets.get(p, committed_after_kill.get(p, 0)) >= end
                for p, end in ends.items()
            ),
            FAILOVER_TIMEOUT_S,
            "the successor reaching the end",
        )
    finally:
        successor.consumer.close()
    for partition, end in ends.items():
        read = [offset for p, offset in successor.seen if p == partition]
        start = committed_after_kill.get(partition, 0)
        assert read == list(range(start, end)), (partition, start, end, read[:5])
        # Together the two members read every acknowledged record of the partition.
        assert {offset for p, offset in first.seen if p == partition} | set(read) == set(range(end))
