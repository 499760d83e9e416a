"""AlterReplicaLogDirs in a cluster: a broker moves its replicas of a replicated partition (leader and
follower alike) to another of its log dirs while acks=all records keep arriving; nothing is lost and the
replicas stay in sync."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaAdminClient
from kafka.errors import NoError
from kafka.structs import TopicPartitionReplica

from tests.fixtures.cluster import LocalCluster
from tests.fixtures.servers import wait_until
from tests.integration.cluster.fault_checker import create_topic, wait_for_isr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

TOPIC = "moving"
PARTITIONS = 2


def _produce(cluster: LocalCluster, start: int, count: int) -> None:
    producer = Producer(cluster.client_config(acks="all", **{"linger.ms": "5", "batch.size": "16384"}))
    for index in range(start, start + count):
        producer.produce(TOPIC, value=b"%08d" % index + b"x" * 100, partition=index % PARTITIONS)
        if index % 1000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0


def test_a_broker_moves_its_replicas_to_another_log_dir_under_acks_all_load(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3)
    node = cluster.nodes[2]
    # Node 2 gets a second log dir (a new disk), as an operator would: stop, add it to log.dirs, start.
    node.stop()
    first = Path(node.properties["log.dirs"])
    second = first.with_name("logs-disk2")
    node.properties["log.dirs"] = f"{first},{second}"
    node.start()

    cluster.wait_ready()
    create_topic(cluster, TOPIC, PARTITIONS)
    _produce(cluster, 0, 10_000)

    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap)
    try:
        moves = {TopicPartitionReplica(TOPIC, p, 2): str(second) for p in range(PARTITIONS)}
        assert admin.alter_replica_log_dirs(moves) == dict.fromkeys(moves, NoError)
        _produce(cluster, 10_000, 5_000)  # while the copies run

        def moved() -> bool:
            [result] = admin.describe_log_dirs(brokers=[2])
            hosted = {
                (d["log_dir"], p["partition_index"], p["is_future_key"])
                for d in result["log_dirs"]
                for t in d["topics"]
                if t["name"] == TOPIC
                for p in t["partitions"]
            }
            return hosted == {(str(second), p, False) for p in range(PARTITIONS)}

        wait_until(moved, 90, "node 2's replicas to arrive in its second log dir")
    finally:
        admin.close()
    _produce(cluster, 15_000, 1_000)  # served from the new dir
    assert wait_for_isr(cluster, TOPIC, timeout_s=30)
    assert not any((first / f"{TOPIC}-{p}").exists() for p in range(PARTITIONS))

    consumer = Consumer(cluster.client_config(**{"group.id": "check", "auto.offset.reset": "earliest"}))
    consumer.subscribe([TOPIC])
    values: list[bytes] = []

    def read_all() -> bool:
        values.extend(message.value()[:8] for message in consumer.consume(1000, 0.5))
        return len(values) >= 16_000

    try:
        wait_until(read_all, 60, "every record")
    finally:
        consumer.close()
    assert sorted(values) == [b"%08d" % i for i in range(16_000)]  # each one exactly once
