"""Share groups (KIP-932) on three nodes: a ShareConsumer keeps receiving every record across a kill -9 of
its group coordinator's broker, and records already accepted on partitions whose leader survived are not
delivered again (the killed broker's own share-partitions start over: README, share groups)."""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from collections.abc import Callable

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic
from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
from kio.static.primitive import i8

from tests.fixtures.cluster import LocalCluster
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

PARTITIONS = 4


def _produce(bootstrap: str, topic: str, values: list[str]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for index, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=index % PARTITIONS)
    assert producer.flush(30) == 0


def test_a_share_consumer_keeps_every_record_across_a_kill_of_its_coordinator(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3)
    topic, group = f"share-{uuid.uuid4().hex[:8]}", f"sg-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 3)])[topic].result(20)
    reset = ConfigResource(
        ConfigResource.Type.GROUP,
        group,
        incremental_configs=[
            ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([reset])[reset].result(20)
    values = [f"v-{i}" for i in range(200)]
    _produce(cluster.bootstrap, topic, values[:100])

    seen: dict[str, list[tuple[int, int]]] = defaultdict(list)
    consumer = ShareConsumer(
        {"bootstrap.servers": cluster.bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    )
    consumer.subscribe([topic])

    def drain(wanted: set[str], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not wanted <= set(seen):
            assert time.monotonic() < deadline, (
                f"missing after {timeout_s}s: {sorted(wanted - set(seen))[:10]}"
            )
            for message in consumer.poll(0.5):
                if message.error() is None:
                    seen[message.value().decode()].append((message.partition(), message.delivery_count()))
                    consumer.acknowledge(message, AcknowledgeType.ACCEPT)
            consumer.commit_sync()

    try:
        drain(set(values[:100]), 60)
        with WireClient(cluster.brokers[0].bootstrap) as wire:
            found = wire.request(FindCoordinatorRequest(key_type=i8(0), coordinator_keys=(group,)))
        coordinator = int(found.coordinators[0].node_id)
        metadata = admin.list_topics(topic, timeout=10).topics[topic].partitions
        surviving = {index for index, partition in metadata.items() if partition.leader != coordinator}
        cluster.node(coordinator).kill9()
        survivors = ",".join(node.bootstrap for node in cluster.brokers if node.node_id != coordinator)
        _produce(survivors, topic, values[100:])
        drain(set(values), 90)
    finally:
        consumer.close()
    again = {value: deliveries for value, deliveries in seen.items() if len(deliveries) > 1}
    assert all(deliveries[0][0] not in surviving for deliveries in again.values()), again
