"""The test/bootstrap static assignments file and its local AlterPartition."""

from __future__ import annotations

import json

import pytest

from broker.config import ConfigError
from broker.controller.api import AlterPartitionRequest
from tests.fixtures.static_assignments import (
    accept_alter_partition,
    parse_static_assignments,
    static_topic_id,
)

FILE = {
    "cluster_id": "abc",
    "brokers": {"1": "127.0.0.1:9092", "2": "10.0.0.2:9093"},
    "topics": {
        "orders": {
            "partitions": [
                {"leader": 1, "leader_epoch": 3, "replicas": [1, 2]},
                {"leader": 2, "replicas": [2, 1], "isr": [2]},
            ]
        }
    },
}


def test_it_reads_brokers_partitions_and_the_cluster_id() -> None:
    layout = parse_static_assignments(json.dumps(FILE), "PLAINTEXT")
    assert layout.cluster_id == "abc"
    assert [(b.broker_id, b.endpoints[0].host, b.endpoints[0].port) for b in layout.brokers] == [
        (1, "127.0.0.1", 9092),
        (2, "10.0.0.2", 9093),
    ]
    first, second = layout.partitions
    assert (first.leader, first.leader_epoch, first.replicas, first.isr) == (1, 3, (1, 2), (1, 2))
    assert (second.partition, second.leader_epoch, second.isr) == (1, 0, (2,))
    assert first.topic_id == second.topic_id == static_topic_id("orders")


def test_every_broker_derives_the_same_topic_id_from_the_name() -> None:
    assert static_topic_id("orders") == static_topic_id("orders") != static_topic_id("payments")


@pytest.mark.parametrize("text", ["{", '{"topics": {"t": {}}}', '{"brokers": {"x": "h:1"}}'])
def test_it_rejects_a_malformed_file_with_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match=r"replication\.static\.assignments"):
        parse_static_assignments(text, "PLAINTEXT")


def test_an_accepted_isr_change_bumps_the_partition_epoch() -> None:
    (current, _) = parse_static_assignments(json.dumps(FILE), "PLAINTEXT").partitions
    request = AlterPartitionRequest(
        broker_id=1,
        broker_epoch=-1,
        topic_id=current.topic_id,
        partition=0,
        leader_epoch=3,
        partition_epoch=0,
        new_isr=(1,),
    )
    accepted = accept_alter_partition(current, request)
    assert (accepted.isr, accepted.partition_epoch, accepted.leader_epoch) == ((1,), 1, 3)
