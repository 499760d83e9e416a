"""Share groups (KIP-932) on three nodes, checked record by record across a kill -9 of a share coordinator's
broker (the leader of `__share_group_state` partitions holding the group's state): every record is delivered
until accepted, rejected ones are archived, released and lock-timed-out ones come back with a higher delivery
count, and nothing accepted is delivered again nor any record lost. The state of each share-partition lives
with its share coordinator, so the partitions the killed broker led restart on their new leaders where they
were, and their surviving leaders keep persisting through the new share coordinators."""

from __future__ import annotations

import base64
import time
import uuid
from collections import defaultdict
from collections.abc import Callable

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer, TopicCollection
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

from broker.share.state_records import SHARE_STATE_TOPIC, share_state_partition
from tests.fixtures.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PARTITIONS = 4
LOCK_MS = 3000
STATE_PARTITIONS = 6
PROPERTIES = {
    "group.share.record.lock.duration.ms": str(LOCK_MS),
    "group.share.min.record.lock.duration.ms": str(LOCK_MS),
    "share.coordinator.state.topic.num.partitions": str(STATE_PARTITIONS),
}
KINDS = ("accept", "reject", "release")

Delivery = tuple[str, int, int]  # (topic, partition, delivery count)


def _topic_uuid(topic_id: object) -> uuid.UUID:
    """confluent-kafka prints a topic id as Kafka does (URL-safe base64, unpadded)."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(f"{topic_id}=="))


def _produce(bootstrap: str, topic: str, values: list[str], partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for index, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=index % partitions)
    assert producer.flush(30) == 0


def _consumer(bootstrap: str, group: str, topics: list[str]) -> ShareConsumer:
    consumer = ShareConsumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    )
    consumer.subscribe(topics)
    return consumer


def _decide(value: str, count: int) -> AcknowledgeType:
    if value.startswith("reject"):
        return AcknowledgeType.REJECT
    if value.startswith("release") and count == 1:
        return AcknowledgeType.RELEASE
    return AcknowledgeType.ACCEPT


def _consume(
    consumer: ShareConsumer, done: Callable[[], bool], seen: dict[str, list[Delivery]], timeout_s: float
) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, f"not done after {timeout_s}s: {dict(seen)}"
        for message in consumer.poll(0.5):
            if message.error() is not None:
                continue  # a moved leader or coordinator: the client retries
            value = message.value().decode()
            count = message.delivery_count()
            seen[value].append((message.topic(), message.partition(), count))
            consumer.acknowledge(message, _decide(value, count))
        consumer.commit_sync()


def _kill_target(admin: AdminClient, group: str, topics: dict[str, uuid.UUID]) -> int:
    """The broker to kill: a share coordinator of the group's state that also leads share-partitions, so
    both a leader change and a coordinator change happen (the one coordinating most keys)."""
    state = admin.list_topics(SHARE_STATE_TOPIC, timeout=10).topics[SHARE_STATE_TOPIC].partitions
    coordinating: dict[int, int] = defaultdict(int)
    leading: set[int] = set()
    for name, topic_id in topics.items():
        for index, partition in admin.list_topics(name, timeout=10).topics[name].partitions.items():
            leading.add(partition.leader)
            coordinating[state[share_state_partition(group, topic_id, index, len(state))].leader] += 1
    candidates = [broker for broker in coordinating if broker in leading] or list(coordinating)
    return max(candidates, key=lambda broker: coordinating[broker])


def test_share_records_are_delivered_until_done_across_a_kill_of_a_share_coordinator(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3, properties=PROPERTIES)
    group = f"sg-{uuid.uuid4().hex[:8]}"
    main, held_topic = f"share-{uuid.uuid4().hex[:8]}", f"held-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for topic, partitions in ((main, PARTITIONS), (held_topic, 1)):
        admin.create_topics([NewTopic(topic, partitions, 3)])[topic].result(30)
    reset = ConfigResource(
        ConfigResource.Type.GROUP,
        group,
        incremental_configs=[
            ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([reset])[reset].result(30)
    before = [f"{KINDS[i % 3]}-a{i}" for i in range(60)]
    after = [f"{KINDS[i % 3]}-b{i}" for i in range(60)]
    held_values = [f"accept-held{i}" for i in range(6)]
    _produce(cluster.bootstrap, main, before, PARTITIONS)

    seen: dict[str, list[Delivery]] = defaultdict(list)

    def settled(values: list[str]) -> Callable[[], bool]:
        return lambda: (
            all(seen[v] for v in values) and all(len(seen[v]) == 2 for v in values if v.startswith("release"))
        )

    # The worker alone reads `main`; it shares the held topic's one partition with a member that goes silent.
    worker = _consumer(cluster.bootstrap, group, [main, held_topic])
    silent = _consumer(cluster.bootstrap, group, [held_topic])
    try:
        _consume(worker, settled(before), seen, 90)
        # The silent member acquires records and never acknowledges them: they are in flight at the kill.
        _produce(cluster.bootstrap, held_topic, held_values, 1)
        held: list[str] = []
        deadline = time.monotonic() + 60
        while not held:
            assert time.monotonic() < deadline, "the silent member acquired nothing"
            held = [m.value().decode() for m in silent.poll(0.5) if m.error() is None]
        described = admin.describe_topics(TopicCollection([main, held_topic]))
        topic_ids = {name: _topic_uuid(future.result(10).topic_id) for name, future in described.items()}
        victim = _kill_target(admin, group, topic_ids)
        cluster.node(victim).kill9()
        survivors = ",".join(node.bootstrap for node in cluster.brokers if node.node_id != victim)
        _produce(survivors, main, after, PARTITIONS)
        _consume(worker, settled(before + after + held_values), seen, 150)
        # Nothing more may come: every record is done.
        settle_until = time.monotonic() + 2 * LOCK_MS / 1000
        while time.monotonic() < settle_until:
            extra = [m.value().decode() for m in worker.poll(0.3) if m.error() is None]
            assert not extra, f"records delivered again after they were done: {extra}"
    finally:
        worker.close()
        silent.close()

    for value in before + after + held_values:
        counts = [count for _topic, _partition, count in seen[value]]
        assert counts == sorted(set(counts)), (value, seen[value])
        if value in held:
            # Acquired by the silent member at the kill: back after its lock ran out, counted.
            assert counts == [2], (value, seen[value])
        elif value.startswith(("accept", "reject")):
            assert counts == [1], (value, seen[value])
        else:
            assert counts == [1, 2], (value, seen[value])
