"""A follower whose log diverged from its new leader's truncates the divergent tail, then copies the new
epoch's records (OffsetForLeaderEpoch, as Kafka's followers do).

Node 1 is the only controller; brokers 2 and 3 hold the topic. Broker 3 goes down, broker 2 appends records
only it will ever have and dies too; broker 3 comes back and is elected uncleanly (the topic allows it), so
the records of epoch 1 start where broker 3's log ends. When broker 2 returns as a follower, its five
divergent records must go.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.cluster import ClusterNode, LocalCluster
from tests.fixtures.servers import wait_until
from tests.integration.cluster.fault_checker import partition_states

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TOPIC = "diverging"


def led_by(cluster: LocalCluster, leader: int, *, isr: list[int]) -> bool:
    current, _replicas, current_isr = partition_states(cluster, TOPIC)[0]
    return (current, sorted(current_isr)) == (leader, isr)


def log_bytes(node: ClusterNode) -> bytes:
    directory = node.data_dir / "logs" / f"{TOPIC}-0"
    return b"".join(path.read_bytes() for path in sorted(directory.glob("*.log")))


def produce(cluster: LocalCluster, values: list[bytes], **settings: str) -> None:
    producer = Producer(
        cluster.client_config(**{"linger.ms": "5", "message.timeout.ms": "30000", **settings})
    )
    errors: list[object] = []
    for value in values:
        producer.produce(TOPIC, value, partition=0, on_delivery=lambda error, _m: errors.append(error))
    assert producer.flush(60) == 0
    assert errors == [None] * len(values)


def consume_all(cluster: LocalCluster, count: int) -> list[bytes]:
    consumer = Consumer(
        cluster.client_config(**{"group.id": "truncation-reader", "enable.auto.commit": "false"})
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    read: list[bytes] = []
    try:
        for _ in range(120):
            for message in consumer.consume(100, timeout=0.5):
                assert message.error() is None, message.error()
                read.append(message.value())
            if len(read) >= count:
                break
    finally:
        consumer.close()
    return read


def test_a_follower_truncates_its_divergent_tail_after_an_unclean_election(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(3, controllers=1, properties={"replica.lag.time.max.ms": "2000"})
    configs = {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}
    admin = AdminClient(cluster.client_config())
    admin.create_topics([NewTopic(TOPIC, num_partitions=1, replica_assignment=[[2, 3]], config=configs)])[
        TOPIC
    ].result(30)
    wait_until(lambda: led_by(cluster, 2, isr=[2, 3]), 30, "broker 2 leading, ISR full")
    committed = [f"committed-{i}".encode() for i in range(10)]
    produce(cluster, committed, acks="all")
    old_leader, old_follower = cluster.node(2), cluster.node(3)
    wait_until(lambda: log_bytes(old_follower) == log_bytes(old_leader), 30, "broker 3 to catch up")

    old_follower.kill9()
    wait_until(lambda: partition_states(cluster, TOPIC)[0][2] == [2], 30, "the ISR to shrink to broker 2")
    divergent = [f"divergent-{i}".encode() for i in range(5)]
    produce(cluster, divergent, acks="1", **{"enable.idempotence": "false"})
    diverged_log = log_bytes(old_leader)
    old_leader.kill9()

    old_follower.start()
    wait_until(lambda: partition_states(cluster, TOPIC)[0][0] == 3, 30, "broker 3 to be elected uncleanly")
    newer = [f"epoch-new-{i}".encode() for i in range(3)]
    produce(cluster, newer, acks="1", **{"enable.idempotence": "false"})

    old_leader.start()
    wait_until(lambda: log_bytes(old_leader) == log_bytes(old_follower), 30, "broker 2 to converge")
    assert log_bytes(old_leader) != diverged_log
    assert b"divergent" not in log_bytes(old_leader)
    assert consume_all(cluster, 13) == committed + newer
