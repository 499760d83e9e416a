"""The console's group lifecycle on a real cluster: offsets deleted for a chosen topic only (the group keeps
the other topic's), refused in words while a consumer is subscribed to that topic."""

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions

from tests.integration.groups.test_offset_resets import _committed, _consume_and_commit, _group_id
from tests.integration.topics.clients import produce_one
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration


def test_offsets_of_a_chosen_topic_go_and_the_others_stay(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    kept, dropped = world.topic_prefix_a + "kept", world.topic_prefix_a + "dropped"
    group = world.group_prefix_a + "two-topics"
    for topic in (kept, dropped):
        create_topic(world, world.developer_a, topic, partitions=1)
        assert produce_one(world.producer(), topic) is None
    consumer = world.consumer(group)
    _consume_and_commit(consumer, dropped, 1)
    group_id = _group_id(world, group)
    url = f"/api/v1/consumer-groups/{group_id}/delete-offsets/"

    refused = world.developer_a.post(url, {"topic": dropped}, format="json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "group_subscribed"
    assert "subscribed to this topic" in refused.json()["error"]["message"]
    consumer.close()
    other = world.consumer(group)
    _consume_and_commit(other, kept, 1)
    other.close()

    assert world.developer_a.post(url, {"topic": dropped}, format="json").status_code == 204

    admin = world.admin_client()
    left = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
    assert {tp.topic for tp in left.topic_partitions} == {kept}
    assert _committed(world, group) == {0: 1}
