"""Streams groups (KIP-1071) in the control plane, on both engines: a member joins with StreamsGroupHeartbeat
(as a Kafka Streams 4.2 client would, without the JVM), gets its tasks, and the sampler lists the group with its
type; its page shows the member's active tasks and the topology it declared."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from kio.schema.streams_group_heartbeat.v0 import request as heartbeat
from kio.static.primitive import i32, i32Timedelta

from controlplane.clusters.connections import connection_for
from controlplane.groups.models import ConsumerGroup
from controlplane.kafka.connection import protocol_connection
from controlplane.kafka.share_groups import coordinator_address
from controlplane.lag.sampler import sample_cluster
from tests.integration.lag.conftest import lag_redis  # noqa: F401 - the fixture
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration

LOADING = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR: clients ask again


def _heartbeat(world: KafkaWorld, group: str, member: str, epoch: int, topic: str) -> object:
    """One StreamsGroupHeartbeat: the first (epoch 0) declares a one-subtopology topology on `topic`."""
    request = heartbeat.StreamsGroupHeartbeatRequest(
        group_id=group,
        member_id=member,
        member_epoch=i32(epoch),
        endpoint_information_epoch=i32(0),
        rebalance_timeout=i32Timedelta.parse(timedelta(seconds=30)),
        topology=heartbeat.Topology(
            epoch=i32(0),
            subtopologies=(
                heartbeat.Subtopology(
                    subtopology_id="0",
                    source_topics=(topic,),
                    state_changelog_topics=(),
                    repartition_source_topics=(),
                    copartition_groups=(),
                ),
            ),
        )
        if epoch == 0
        else None,
        active_tasks=() if epoch == 0 else None,
        standby_tasks=() if epoch == 0 else None,
        warmup_tasks=() if epoch == 0 else None,
        process_id=member if epoch == 0 else None,
        client_tags=() if epoch == 0 else None,
        task_offsets=None,
        task_end_offsets=None,
    )
    connection = connection_for(world.cluster)
    with protocol_connection(connection, 10, coordinator_address(connection, group)) as wire:
        return wire.request(request)


def test_a_streams_groups_members_tasks_and_topology(
    kafka_world: KafkaWorld,
    lag_redis: str,  # noqa: F811 - the imported fixture
) -> None:
    world = kafka_world
    topic, group = world.topic_prefix_a + "clicks", world.group_prefix_a + "counter"
    create_topic(world, world.developer_a, topic, partitions=2)
    member = str(uuid.uuid4())
    deadline = time.monotonic() + 30
    answer = _heartbeat(world, group, member, 0, topic)
    while answer.error_code in LOADING and time.monotonic() < deadline:  # a new cluster's coordinator
        time.sleep(0.5)
        answer = _heartbeat(world, group, member, 0, topic)
    assert answer.error_code == 0, answer
    epoch = int(answer.member_epoch)
    tasks: list[int] = []
    while not tasks and time.monotonic() < deadline:  # the first assignment may be delayed a few seconds
        time.sleep(0.5)
        answer = _heartbeat(world, group, member, epoch, topic)
        assert answer.error_code == 0, answer
        epoch = int(answer.member_epoch)
        tasks = sorted(int(p) for t in answer.active_tasks or () for p in t.partitions)
    assert tasks == [0, 1]
    _heartbeat(world, group, member, epoch, topic)  # acknowledges the tasks: the member is reconciled

    sample_cluster(world.cluster)
    row = ConsumerGroup.objects.get(cluster=world.cluster, name=group)
    assert (row.group_type, row.team_id, row.member_count) == ("streams", world.team_a.id, 1)
    listed = world.viewer_a.get("/api/v1/consumer-groups/", {"group_type": "streams"}).json()["results"]
    assert [g["name"] for g in listed] == [group]
    assert world.admin_b.get(f"/api/v1/consumer-groups/{row.pk}/").status_code == 404

    live = world.viewer_a.get(f"/api/v1/consumer-groups/{row.pk}/").json()["live"]
    streams = live["streams"]
    (described,) = streams["members"]
    assert (described["member_id"], described["process_id"]) == (member, member)
    assert described["active_tasks"] == [{"subtopology": "0", "partitions": [0, 1]}]
    assert described["standby_tasks"] == described["warmup_tasks"] == []
    (subtopology,) = streams["subtopologies"]
    assert (subtopology["subtopology_id"], subtopology["source_topics"]) == ("0", [topic])
    assert live["share_partitions"] == []
