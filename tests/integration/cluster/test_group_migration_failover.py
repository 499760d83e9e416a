"""A group in the middle of a protocol migration survives a kill -9 of its coordinator's broker.

On a 3-broker cluster a classic confluent-kafka group (two members) gets a `group.protocol=consumer`
member: the group is now a consumer group with classic members. The broker coordinating it is killed
with SIGKILL. The new coordinator rebuilds the group from `__consumer_offsets` (the classic members'
metadata included): the same three members stay in the same consumer group, keep their partitions and
consume what is produced afterwards; no record is lost.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient

from tests.fixtures.cluster import LocalCluster
from tests.integration.broker.test_consumer_protocol import (
    Member,
    members,  # noqa: F401 - the fixture
    unique,
    wait_for,
)
from tests.integration.cluster.fault_checker import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PARTITIONS = 6
FAILOVER_TIMEOUT_S = 60.0
CLASSIC = {
    "heartbeat.interval.ms": "500",
    "session.timeout.ms": "10000",
    "partition.assignment.strategy": "range",
}


@pytest.fixture
def cluster(cluster_factory) -> LocalCluster:
    return cluster_factory(
        3,
        properties={
            "group.consumer.heartbeat.interval.ms": "500",
            "group.consumer.session.timeout.ms": "10000",
        },
    )


def produce(cluster: LocalCluster, topic: str, values: list[bytes]) -> None:
    producer = Producer(cluster.client_config(acks="all", **{"enable.idempotence": "true"}))
    for index, value in enumerate(values):
        producer.produce(topic, value, partition=index % PARTITIONS)
    assert producer.flush(60) == 0


def describe(cluster: LocalCluster, group: str) -> Any:
    """The group as its coordinator describes it, retried while the coordinator moves."""
    admin = AdminClient(cluster.client_config())
    deadline = time.monotonic() + FAILOVER_TIMEOUT_S
    while True:
        try:
            return admin.describe_consumer_groups([group], request_timeout=5)[group].result(timeout=10)
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_a_mixed_group_survives_a_kill_of_its_coordinator(
    cluster: LocalCluster,
    members,  # noqa: F811 - the fixture imported above
) -> None:
    topic, group = unique("mixed"), unique("mixed-g")
    create_topic(cluster, topic, PARTITIONS)
    before = [f"a{i}".encode() for i in range(300)]
    produce(cluster, topic, before)
    bootstrap = cluster.bootstrap
    classic = [Member(bootstrap, group, topic, f"classic-{i}", **CLASSIC).start() for i in range(2)]
    members.extend(classic)
    wait_for(lambda: sorted(len(m.owned) for m in classic) == [3, 3], timeout=60)
    modern = Member(bootstrap, group, topic, "modern", **{"group.protocol": "consumer"}).start()
    members.append(modern)
    wait_for(
        lambda: sorted(len(m.owned) for m in members) == [2, 2, 2],
        timeout=60,
        describe=lambda: [(m.name, m.owned, m.error) for m in members],
    )
    mixed = describe(cluster, group)
    assert mixed.type.name == "CONSUMER"
    member_ids = sorted(m.member_id for m in mixed.members)
    assert len(member_ids) == 3

    coordinator = mixed.coordinator.id
    cluster.node(coordinator).kill9()

    after = [f"b{i}".encode() for i in range(300)]
    produce(cluster, topic, after)
    wait_for(
        lambda: {v for m in members for _, v in m.consumed} >= set(before + after),
        timeout=FAILOVER_TIMEOUT_S,
        describe=lambda: (
            len({v for m in members for _, v in m.consumed}),
            [(m.name, m.error) for m in members],
        ),
    )
    survived = describe(cluster, group)
    assert survived.coordinator.id != coordinator
    assert survived.type.name == "CONSUMER"
    # The same members, not new ones that joined afresh.
    assert sorted(m.member_id for m in survived.members) == member_ids
    assert all(m.error is None for m in members), [(m.name, m.error) for m in members]
    assert sorted(len(m.owned) for m in members) == [2, 2, 2]
