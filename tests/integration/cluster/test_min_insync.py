"""Acceptance 3 of the cluster issue: min.insync.replicas protects acks=all writes when brokers are down.

Two of three brokers go down while the controller quorum stays up: node 1 is the only controller (with
every node a controller, two nodes down would also take the quorum away and nothing could shrink the ISR).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import KafkaError, Message, Producer

from tests.fixtures.cluster import LocalCluster
from tests.fixtures.servers import wait_until
from tests.integration.cluster.fault_checker import create_topic, partition_states, wait_for_isr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TOPIC = "guarded"


@pytest.fixture
def one_controller_cluster(cluster_factory: Callable[..., LocalCluster]) -> LocalCluster:
    return cluster_factory(3, controllers=1)


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


def test_acks_all_fails_with_not_enough_replicas_until_a_second_broker_returns(
    one_controller_cluster: LocalCluster,
) -> None:
    create_topic(one_controller_cluster, TOPIC, 1)
    assert produce_one(one_controller_cluster, "all") is None

    one_controller_cluster.node(2).stop()  # controlled shutdown: leaves the ISR at once
    one_controller_cluster.node(
        3
    ).kill9()  # fenced after broker.session.timeout.ms, then removed from the ISR
    one_controller_cluster.wait_ready()
    wait_until(
        lambda: partition_states(one_controller_cluster, TOPIC)[0][2] == [1],
        30,
        "the ISR to shrink to the leader",
    )

    error = produce_one(one_controller_cluster, "all")
    assert error is not None, "acks=all was acknowledged with one in-sync replica"
    assert error.code() in (KafkaError.NOT_ENOUGH_REPLICAS, KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND), (
        error
    )
    # Kafka's documented behaviour: min.insync.replicas only guards acks=all.
    assert produce_one(one_controller_cluster, "1") is None

    one_controller_cluster.node(2).start()
    one_controller_cluster.wait_ready()
    assert wait_for_isr(one_controller_cluster, TOPIC, 30, size=2), partition_states(
        one_controller_cluster, TOPIC
    )
    assert produce_one(one_controller_cluster, "all") is None
