"""Rack-aware server-side assignment of consumer-protocol groups on a 3-broker cluster.

Each broker has its own `broker.rack`; a topic's partitions have one replica each, so every
partition lives in exactly one rack. Three members, one per rack, join a consumer group over raw
ConsumerGroupHeartbeat requests with their `rack_id`; the target assignment ConsumerGroupDescribe
shows must give each member the partitions of its own rack (both assignors), two each.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.consumer_group_describe.v0.request import ConsumerGroupDescribeRequest
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
from kio.static.primitive import i8

from tests.fixtures.cluster import LocalCluster
from tests.integration.broker.kafka_wire import WireClient, join_consumer_group

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

RACKS = {1: "zone-a", 2: "zone-b", 3: "zone-c"}
PARTITIONS = 6


@pytest.fixture
def racked_cluster(cluster_factory) -> LocalCluster:
    return cluster_factory(
        3,
        properties={"group.consumer.heartbeat.interval.ms": "500"},
        node_properties={node: {"broker.rack": rack} for node, rack in RACKS.items()},
    )


def coordinator_of(cluster: LocalCluster, group: str, timeout_s: float = 30.0) -> str:
    """The group's coordinator; COORDINATOR_NOT_AVAILABLE while `__consumer_offsets` is being made."""
    deadline = time.monotonic() + timeout_s
    with WireClient(cluster.brokers[0].bootstrap) as wire:
        while True:
            answer = wire.request(FindCoordinatorRequest(key_type=i8(0), coordinator_keys=(group,)))
            found = answer.coordinators[0]
            if found.error_code == ErrorCode.none:
                return f"{found.host}:{found.port}"
            assert found.error_code == ErrorCode.coordinator_not_available, found
            assert time.monotonic() < deadline, f"no coordinator for {group} after {timeout_s}s"
            time.sleep(0.2)


def join(wire: WireClient, group: str, topic: str, rack: str, assignor: str) -> str:
    answer = join_consumer_group(wire, group, (topic,), rack=rack, assignor=assignor)
    assert answer.error_code == ErrorCode.none, answer
    return answer.member_id


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_members_are_assigned_the_partitions_in_their_rack(
    racked_cluster: LocalCluster, assignor: str
) -> None:
    topic, group = f"racked-{uuid.uuid4().hex[:8]}", f"racks-{assignor}"
    admin = AdminClient(racked_cluster.client_config())
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    placement = admin.list_topics(topic, timeout=10).topics[topic].partitions
    rack_of_partition = {p: RACKS[placement[p].replicas[0]] for p in placement}
    # The controller spreads single-replica partitions over the brokers: two per rack.
    assert sorted(rack_of_partition.values()) == sorted(list(RACKS.values()) * 2)

    with WireClient(coordinator_of(racked_cluster, group)) as wire:
        member_rack = {join(wire, group, topic, rack, assignor): rack for rack in RACKS.values()}
        described = wire.request(
            ConsumerGroupDescribeRequest(group_ids=(group,), include_authorized_operations=False)
        )
    described_group = described.groups[0]
    assert described_group.error_code == ErrorCode.none, described_group
    assert described_group.assignor_name == assignor
    targets = {}
    for member in described_group.members:
        assert member.rack_id == member_rack[member.member_id]
        partitions = [p for tp in member.target_assignment.topic_partitions for p in tp.partitions]
        targets[member.rack_id] = sorted(rack_of_partition[p] for p in partitions)
    assert targets == {rack: [rack, rack] for rack in RACKS.values()}


def test_confluent_consumers_with_client_rack_get_their_racks_partitions(
    racked_cluster: LocalCluster,
) -> None:
    """librdkafka sends `client.rack` as the member's rack in ConsumerGroupHeartbeat."""
    topic, group = f"racked-{uuid.uuid4().hex[:8]}", f"racks-client-{uuid.uuid4().hex[:6]}"
    admin = AdminClient(racked_cluster.client_config())
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    placement = admin.list_topics(topic, timeout=10).topics[topic].partitions
    rack_of_partition = {p: RACKS[placement[p].replicas[0]] for p in placement}
    consumers = [
        Consumer(
            racked_cluster.client_config(
                **{"group.id": group, "group.protocol": "consumer", "client.rack": rack}
            )
        )
        for rack in RACKS.values()
    ]
    try:
        for consumer in consumers:
            consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while True:
            for consumer in consumers:
                consumer.poll(0.1)
            assigned = {
                rack: sorted(rack_of_partition[tp.partition] for tp in consumer.assignment())
                for rack, consumer in zip(RACKS.values(), consumers, strict=True)
            }
            if assigned == {rack: [rack, rack] for rack in RACKS.values()}:
                break
            assert time.monotonic() < deadline, f"not rack-aligned after 60 s: {assigned}"
    finally:
        for consumer in consumers:
            consumer.close()
