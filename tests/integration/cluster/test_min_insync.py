"""Acceptance 3 of the cluster issue: min.insync.replicas protects acks=all writes when brokers are down.

Two of the partition's three replicas go down while the controller quorum stays up: four nodes, three of
them controllers, and the replicas on nodes 1, 2 and 4, so stopping 2 and 4 leaves controllers 1 and 3 (with
every node a controller, two brokers down would also take the quorum away and nothing could shrink the ISR).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Message, Producer

from tests.fixtures.cluster import LocalCluster, start_cluster
from tests.fixtures.servers import wait_until
from tests.integration.cluster.fault_checker import create_topic, partition_states, wait_for_isr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TOPIC = "guarded"


@pytest.fixture
def cluster4(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = start_cluster(tmp_path / "cluster", 4, controllers=3)
    try:
        yield cluster
    finally:
        cluster.stop()


def produce_one(cluster: LocalCluster, acks: str, timeout_s: float = 20.0) -> KafkaError | None:
    """Send one record without retries; the delivery report's error (None when acknowledged)."""
    producer = Producer(
        cluster.client_config(
            acks=acks,
            retries="0",
            **{"enable.idempotence": "false", "message.timeout.ms": "10000", "request.timeout.ms": "5000"},
        )
    )
    outcome: list[KafkaError | None] = []

    def delivered(error: KafkaError | None, _message: Message) -> None:
        outcome.append(error)

    producer.produce(TOPIC, b"guarded record", partition=0, on_delivery=delivered)
    producer.flush(timeout_s)
    assert outcome, "no delivery report"
    return outcome[0]


def test_acks_all_fails_with_not_enough_replicas_until_a_second_replica_returns(
    cluster4: LocalCluster,
) -> None:
    create_topic(cluster4, TOPIC, 1, replica_assignment=[[1, 2, 4]])
    assert produce_one(cluster4, "all") is None

    cluster4.node(2).stop()  # controlled shutdown: leaves the ISR at once
    cluster4.node(4).kill9()  # fenced after broker.session.timeout.ms, then removed from the ISR
    cluster4.wait_ready()
    wait_until(lambda: partition_states(cluster4, TOPIC)[0][2] == [1], 30, "the ISR to shrink to the leader")

    error = produce_one(cluster4, "all")
    assert error is not None, "acks=all was acknowledged with one in-sync replica"
    assert error.code() in (KafkaError.NOT_ENOUGH_REPLICAS, KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND), (
        error
    )
    # Kafka's documented behaviour: min.insync.replicas only guards acks=all.
    assert produce_one(cluster4, "1") is None

    cluster4.node(2).start()
    cluster4.wait_ready()
    assert wait_for_isr(cluster4, TOPIC, 30, size=2), partition_states(cluster4, TOPIC)
    assert produce_one(cluster4, "all") is None
