"""Streams groups (KIP-1071) in the control plane, on both engines: a member joins with StreamsGroupHeartbeat
(as a Kafka Streams 4.2 client would, without the JVM), gets its tasks, and the sampler lists the group with its
type; its page shows the member's active tasks and the topology it declared."""

from __future__ import annotations

import pytest

from controlplane.groups.models import ConsumerGroup
from controlplane.lag.sampler import sample_cluster
from tests.integration.groups.streams_member import join_streams_group
from tests.integration.lag.conftest import lag_redis  # noqa: F401 - the fixture
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration


def test_a_streams_groups_members_tasks_and_topology(
    kafka_world: KafkaWorld,
    lag_redis: str,  # noqa: F811 - the imported fixture
) -> None:
    world = kafka_world
    topic, group = world.topic_prefix_a + "clicks", world.group_prefix_a + "counter"
    create_topic(world, world.developer_a, topic, partitions=2)
    joined = join_streams_group(world.cluster, group, topic)
    assert joined.active_partitions == [0, 1]
    member = joined.member_id

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
