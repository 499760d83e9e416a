"""Share groups (KIP-932) on our broker with confluent-kafka's ShareConsumer, checked record by record:
every record is delivered until accepted, rejected ones are archived, released and lock-timed-out ones come
back with a higher delivery count, records past the delivery-count limit are archived, and what was
acknowledged stays acknowledged across a kill -9 of the broker."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic
from kio.schema.alter_share_group_offsets.v0 import request as alter_offsets
from kio.schema.delete_share_group_offsets.v0 import request as delete_offsets
from kio.schema.describe_share_group_offsets.v1 import request as describe_offsets
from kio.schema.errors import ErrorCode
from kio.schema.list_groups.v5.request import ListGroupsRequest
from kio.static.primitive import i32, i64

from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

LOCK_MS = 1000
DELIVERY_LIMIT = 3
SHARE_BROKER = {
    "group.share.record.lock.duration.ms": LOCK_MS,
    "group.share.min.record.lock.duration.ms": LOCK_MS,
    "group.share.delivery.count.limit": DELIVERY_LIMIT,
    "share.coordinator.state.topic.num.partitions": 3,
}

Delivery = tuple[int, int, int]  # (partition, offset, delivery count)


def _share_topic(bootstrap: str, partitions: int = 2) -> tuple[str, str]:
    """A new topic and a share group on it that starts at the earliest offset."""
    topic, group = f"share-{uuid.uuid4().hex[:8]}", f"sg-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)
    reset = ConfigResource(
        ConfigResource.Type.GROUP,
        group,
        incremental_configs=[
            ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([reset])[reset].result(10)
    return topic, group


def _produce(bootstrap: str, topic: str, values: list[str], partitions: int = 2) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for index, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=index % partitions)
    assert producer.flush(10) == 0


def _consumer(bootstrap: str, group: str, topic: str) -> ShareConsumer:
    consumer = ShareConsumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    )
    consumer.subscribe([topic])
    return consumer


def _consume(
    consumer: ShareConsumer,
    decide: Callable[[str, int], AcknowledgeType],
    done: Callable[[], bool],
    seen: dict[str, list[Delivery]],
    timeout_s: float = 30.0,
) -> None:
    """Poll, acknowledge each record as `decide(value, delivery count)` says, until `done()`."""
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, f"not done after {timeout_s}s: {dict(seen)}"
        for message in consumer.poll(0.5):
            assert message.error() is None, message.error()
            value = message.value().decode()
            count = message.delivery_count()
            seen[value].append((message.partition(), message.offset(), count))
            consumer.acknowledge(message, decide(value, count))
        consumer.commit_sync()


def test_it_delivers_until_accepted_archives_rejects_and_redelivers_releases_and_timeouts(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    broker = broker_factory(properties=SHARE_BROKER)
    # One partition: both members are assigned it (with two, the silent member would hold one alone).
    topic, group = _share_topic(broker.bootstrap, partitions=1)
    timed_out = [f"timeout-{i}" for i in range(6)]
    _produce(broker.bootstrap, topic, timed_out, partitions=1)
    # A member that acquires records and then goes silent: its locks run out after LOCK_MS.
    silent = _consumer(broker.bootstrap, group, topic)
    held: list[str] = []
    deadline = time.monotonic() + 20
    while not held and time.monotonic() < deadline:
        held = [m.value().decode() for m in silent.poll(0.5) if m.error() is None]
    assert held, "the silent member acquired nothing"

    kinds = ("accept", "reject", "release", "always-release")
    values = [f"{kinds[i % 4]}-{i}" for i in range(24)]
    _produce(broker.bootstrap, topic, values, partitions=1)

    def decide(value: str, count: int) -> AcknowledgeType:
        if value.startswith("reject"):
            return AcknowledgeType.REJECT
        if value.startswith("always-release") or (value.startswith("release") and count == 1):
            return AcknowledgeType.RELEASE
        return AcknowledgeType.ACCEPT

    seen: dict[str, list[Delivery]] = defaultdict(list)

    def done() -> bool:
        settled = all(seen[v] for v in values + timed_out) and all(
            len(seen[v]) == 2 for v in values if v.startswith("release")
        )
        return settled and all(len(seen[v]) >= DELIVERY_LIMIT for v in values if v.startswith("always"))

    worker = _consumer(broker.bootstrap, group, topic)
    try:
        _consume(worker, decide, done, seen)
        # Nothing more may come: accepted and rejected records are done, the rest reached the limit.
        settle_until = time.monotonic() + 2 * LOCK_MS / 1000
        while time.monotonic() < settle_until:
            extra = [m.value().decode() for m in worker.poll(0.3) if m.error() is None]
            assert not extra, f"records delivered again after they were done: {extra}"
    finally:
        worker.close()
        silent.close()

    for value in values + timed_out:
        counts = [count for _partition, _offset, count in seen[value]]
        assert counts == sorted(set(counts)), (value, seen[value])
        if value.startswith(("accept", "reject")):
            assert counts == [1], (value, seen[value])
        elif value.startswith("release"):
            assert counts == [1, 2], (value, seen[value])
        elif value.startswith("always"):
            assert counts == list(range(1, DELIVERY_LIMIT + 1)), (value, seen[value])
    # The silent member's records came back after their lock expired, as a second delivery.
    for value in held:
        assert seen[value][0][2] == 2, (value, seen[value])


def test_acknowledged_records_stay_acknowledged_after_a_kill_9(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    broker = broker_factory(properties=SHARE_BROKER)
    topic, group = _share_topic(broker.bootstrap)
    values = [f"v-{i}" for i in range(20)]
    _produce(broker.bootstrap, topic, values)
    kept = set(values[:10])
    seen: dict[str, list[Delivery]] = defaultdict(list)
    first = _consumer(broker.bootstrap, group, topic)
    try:
        # The first half is accepted; the rest is released (given back, its delivery counted).
        _consume(
            first,
            lambda v, _c: AcknowledgeType.ACCEPT if v in kept else AcknowledgeType.RELEASE,
            lambda: kept <= set(seen),
            seen,
        )
    finally:
        first.close()

    broker.restart(hard=True)
    after: dict[str, list[Delivery]] = defaultdict(list)
    second = _consumer(broker.bootstrap, group, topic)
    try:
        _consume(
            second, lambda _v, _c: AcknowledgeType.ACCEPT, lambda: set(values) - kept <= set(after), after
        )
        settle_until = time.monotonic() + 1.0
        while time.monotonic() < settle_until:
            for message in second.poll(0.3):
                after[message.value().decode()].append((message.partition(), message.offset(), 0))
    finally:
        second.close()
    assert not kept & set(after), f"accepted before the kill, delivered again: {sorted(kept & set(after))}"
    # Released before the kill: the persisted delivery count goes on.
    for value in set(values) - kept:
        if seen[value]:
            assert after[value][0][2] == seen[value][-1][2] + 1, (value, seen[value], after[value])


def test_a_share_fetch_that_allows_no_bytes_acquires_nothing(broker: BrokerProcess) -> None:
    """librdkafka's 0180: a share consumer with fetch.max.bytes=0 receives no records, as from Kafka 4.2 (which
    answered 0 records to it, and 5 to fetch.max.bytes=1, in 10 polls of 1 s each); nothing is acquired either:
    a member of the same group fetching normally gets every record at its first delivery."""
    topic, group = _share_topic(broker.bootstrap, partitions=1)
    values = [f"zero-{i}" for i in range(10)]
    _produce(broker.bootstrap, topic, values, partitions=1)
    starved = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "fetch.max.bytes": 0})
    starved.subscribe([topic])
    try:
        polled = [m for _ in range(5) for m in starved.poll(1.0) if m.error() is None]
        assert polled == []
        seen: dict[str, list[Delivery]] = defaultdict(list)
        worker = _consumer(broker.bootstrap, group, topic)
        try:
            _consume(worker, lambda _v, _c: AcknowledgeType.ACCEPT, lambda: len(seen) == len(values), seen)
        finally:
            worker.close()
        assert {value: [count for *_at, count in got] for value, got in seen.items()} == {
            v: [1] for v in values
        }
    finally:
        starved.close()


_HOLDER = """
import sys
from confluent_kafka import ShareConsumer
consumer = ShareConsumer(
    {"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "share.acknowledgement.mode": "explicit"}
)
consumer.subscribe([sys.argv[3]])
while True:
    held = [m for m in consumer.poll(0.5) if m.error() is None]
    if held:
        print(len(held), flush=True)
        sys.stdin.read()
"""


def test_records_of_a_consumer_killed_mid_session_come_back_when_its_connection_closes(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    """A ShareConsumer killed with -9 never closes its share session; Kafka 4.2 ends the session when its
    connection closes and offers the records again at once, well inside their 30 s acquisition lock."""
    broker = broker_factory(properties={"group.share.record.lock.duration.ms": 30_000})
    topic, group = _share_topic(broker.bootstrap, partitions=1)
    values = [f"held-{i}" for i in range(10)]
    _produce(broker.bootstrap, topic, values, partitions=1)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, broker.bootstrap, group, topic],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        held = int(holder.stdout.readline())
    finally:
        holder.kill()
        holder.wait(10)
    seen: dict[str, list[Delivery]] = defaultdict(list)
    worker = _consumer(broker.bootstrap, group, topic)
    try:
        _consume(
            worker,
            lambda _v, _c: AcknowledgeType.ACCEPT,
            lambda: len(seen) == len(values),
            seen,
            timeout_s=15,
        )
    finally:
        worker.close()
    redelivered = [value for value, got in seen.items() if got[0][2] == 2]
    assert len(redelivered) == held


def test_share_group_offsets_are_listed_described_reset_and_deleted(broker: BrokerProcess) -> None:
    topic, group = _share_topic(broker.bootstrap, partitions=1)
    _produce(broker.bootstrap, topic, [f"v-{i}" for i in range(10)], partitions=1)
    seen: dict[str, list[Delivery]] = defaultdict(list)
    consumer = _consumer(broker.bootstrap, group, topic)
    try:
        _consume(consumer, lambda _v, _c: AcknowledgeType.ACCEPT, lambda: len(seen) == 10, seen)
        with WireClient(broker.bootstrap) as wire:
            listed = wire.request(ListGroupsRequest(states_filter=(), types_filter=("share",)))
            assert [
                (g.group_type, g.protocol_type, g.group_state) for g in listed.groups if g.group_id == group
            ] == [("share", "share", "Stable")]
            # Members present: offsets cannot be reset (Kafka's GROUP_NOT_EMPTY).
            refused = wire.request(_alter(group, topic, 2))
            assert refused.error_code == ErrorCode.non_empty_group
    finally:
        consumer.close()
    with WireClient(broker.bootstrap) as wire:
        assert _described(wire, group) == [(topic, 0, 10, 0)]
        assert wire.request(_alter(group, topic, 2)).error_code == ErrorCode.none
        assert _described(wire, group) == [(topic, 0, 2, 8)]
        deleted = wire.request(
            delete_offsets.DeleteShareGroupOffsetsRequest(
                group_id=group, topics=(delete_offsets.DeleteShareGroupOffsetsRequestTopic(topic_name=topic),)
            )
        )
        assert deleted.error_code == ErrorCode.none
        assert [t.error_code for t in deleted.responses] == [ErrorCode.none]
        assert _described(wire, group) == []


def test_the_first_offsets_reset_waits_for_the_share_state_topic_it_creates(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    # A fresh broker has no `__share_group_state` yet: this reset is what creates it (franz-go's
    # TestShareGroupOffsetsAdmin was answered COORDINATOR_NOT_AVAILABLE; Kafka's persister retries).
    broker = broker_factory(**SHARE_BROKER)
    topic, group = _share_topic(broker.bootstrap, partitions=1)
    _produce(broker.bootstrap, topic, [f"v-{i}" for i in range(10)], partitions=1)
    with WireClient(broker.bootstrap) as wire:
        altered = wire.request(_alter(group, topic, 2))
        assert [p.error_code for t in altered.responses for p in t.partitions] == [ErrorCode.none]
        assert _described(wire, group) == [(topic, 0, 2, 8)]
        # The reset created the (empty) group, as in Kafka: its offsets can be deleted (franz-go's
        # TestShareGroupOffsetsAdmin was answered GROUP_ID_NOT_FOUND here).
        deleted = wire.request(
            delete_offsets.DeleteShareGroupOffsetsRequest(
                group_id=group, topics=(delete_offsets.DeleteShareGroupOffsetsRequestTopic(topic_name=topic),)
            )
        )
        assert (deleted.error_code, [t.error_code for t in deleted.responses]) == (
            ErrorCode.none,
            [ErrorCode.none],
        )


def _alter(group: str, topic: str, offset: int) -> alter_offsets.AlterShareGroupOffsetsRequest:
    return alter_offsets.AlterShareGroupOffsetsRequest(
        group_id=group,
        topics=(
            alter_offsets.AlterShareGroupOffsetsRequestTopic(
                topic_name=topic,
                partitions=(
                    alter_offsets.AlterShareGroupOffsetsRequestPartition(
                        partition_index=i32(0), start_offset=i64(offset)
                    ),
                ),
            ),
        ),
    )


def _described(wire: WireClient, group: str) -> list[tuple[str, int, int, int]]:
    """(topic, partition, start offset, lag) of every partition the group has state for."""
    answer = wire.request(
        describe_offsets.DescribeShareGroupOffsetsRequest(
            groups=(describe_offsets.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None),)
        )
    )
    (described,) = answer.groups
    assert described.error_code == ErrorCode.none
    return [
        (topic.topic_name, int(p.partition_index), int(p.start_offset), int(p.lag))
        for topic in described.topics
        for p in topic.partitions
    ]
