"""Cluster mode with many partitions (the bounded version of bench/partition_scale.py, which runs 10,000).

A three-broker cluster with the provisioner's timings takes a 2,000-partition RF 3 topic: creation
completes, every ISR is full in every broker's Metadata, the active controller stays, no broker is
fenced and the other clients (`Probe`) keep being answered. Deleting the topic leaves the remaining
partitions fully replicated everywhere. Consumers keep reading through a leadership change, both with
fetch sessions (kafka-python) and without (librdkafka).
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters.provisioners.local import FAILOVER_TIMINGS
from tests.integration.cluster.fault_checker import create_topic, partition_states
from tests.integration.cluster.scale_checker import (
    PROBE_PARTITIONS,
    PROBE_TOPIC,
    Probe,
    controller_elections,
    create_when_brokers_unfenced,
    fencings,
    topic_fully_replicated,
)

PARTITIONS = 2000
# On the shared 2-core machine the 2,000 partitions take 2-4 s; other clients wait well under a second.
ISR_DEADLINE_S = 90
SLOWEST_PROBE_S = 5.0


def wait_fully_replicated(cluster, topic: str, partitions: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if topic_fully_replicated(cluster, topic, partitions):
            return True
        time.sleep(1)
    return False


def test_a_large_topic_is_created_and_deleted_while_the_cluster_stays_healthy(cluster_factory):
    cluster = cluster_factory(3, properties=dict(FAILOVER_TIMINGS))
    admin = AdminClient(cluster.client_config())
    create_when_brokers_unfenced(admin, NewTopic(PROBE_TOPIC, PROBE_PARTITIONS, 3))
    assert wait_fully_replicated(cluster, PROBE_TOPIC, PROBE_PARTITIONS, 30)
    elections, fenced = controller_elections(cluster), fencings(cluster)
    probe = Probe(cluster)
    probe.start()
    try:
        admin.create_topics([NewTopic("wide", PARTITIONS, 3)], operation_timeout=60)["wide"].result(90)
        assert wait_fully_replicated(cluster, "wide", PARTITIONS, ISR_DEADLINE_S)
        # Some quiet time after the burst: sessions, ISR checks and checkpoints must not upset anything.
        time.sleep(5)
    finally:
        probe.stop()
    assert probe.failures == []
    assert probe.rounds > 0
    assert probe.slowest_s < SLOWEST_PROBE_S
    assert controller_elections(cluster) == elections, "the active controller moved"
    assert fencings(cluster) == fenced, "a broker was fenced"

    admin.delete_topics(["wide"], operation_timeout=60)["wide"].result(90)
    assert wait_fully_replicated(cluster, PROBE_TOPIC, PROBE_PARTITIONS, 30)
    for node in cluster.brokers:
        listed = AdminClient(cluster.client_config(**{"bootstrap.servers": node.bootstrap})).list_topics(
            timeout=10
        )
        assert "wide" not in listed.topics


def test_consumers_with_and_without_fetch_sessions_read_through_a_leadership_change(cluster_factory):
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaPythonPartition

    cluster = cluster_factory(3, properties=dict(FAILOVER_TIMINGS))
    create_topic(cluster, "moving", 6)
    producer = Producer(cluster.client_config(acks="all"))

    def produce(first: int, count: int) -> None:
        for n in range(first, first + count):
            producer.produce("moving", str(n).encode(), partition=n % 6)
        assert producer.flush(30) == 0

    session_consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap, enable_auto_commit=False, fetch_max_wait_ms=200
    )
    session_consumer.assign([KafkaPythonPartition("moving", p) for p in range(6)])
    session_consumer.seek_to_beginning()
    plain_consumer = Consumer(cluster.client_config(**{"group.id": "plain", "enable.auto.commit": "false"}))
    plain_consumer.assign([TopicPartition("moving", p, 0) for p in range(6)])
    seen_with_session: set[bytes] = set()
    seen_plain: set[bytes] = set()

    def read_until(count: int) -> None:
        deadline = time.monotonic() + 60
        while (len(seen_with_session) < count or len(seen_plain) < count) and time.monotonic() < deadline:
            for records in session_consumer.poll(timeout_ms=100).values():
                seen_with_session.update(r.value for r in records)
            seen_plain.update(
                m.value() for m in plain_consumer.consume(100, timeout=0.1) if m.error() is None
            )

    try:
        produce(0, 60)
        read_until(60)
        # Leadership moves: the broker leading partition 0 stops (controlled shutdown hands its
        # partitions over), records go to the new leaders, then it comes back.
        leader = partition_states(cluster, "moving")[0][0]
        cluster.node(leader).stop()
        produce(60, 60)
        read_until(120)
        cluster.node(leader).start()
        produce(120, 60)
        read_until(180)
        handlers = session_consumer._fetcher._session_handlers
        assert any(handler.next_metadata.session_id > 0 for handler in handlers.values())
    finally:
        session_consumer.close()
        plain_consumer.close()
    expected = {str(n).encode() for n in range(180)}
    assert seen_with_session == expected
    assert seen_plain == expected
