"""Acceptance 4: offset resets on a real group with committed offsets — preview, refusal while members are
active, apply, and undo in one call; plus the group's live description with lag, and deletion."""

import time

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions

from tests.integration.topics.clients import produce_one
from tests.integration.topics.world import KafkaWorld, create_topic, reconcile

pytestmark = pytest.mark.integration


def _consume_and_commit(consumer: Consumer, topic: str, count: int) -> None:
    consumer.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + 20
    while seen < count and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            seen += 1
    assert seen == count
    consumer.commit(asynchronous=False)


def _committed(world: KafkaWorld, group: str) -> dict[int, int]:
    admin = world.admin_client()
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    return {tp.partition: tp.offset for tp in future.result(10).topic_partitions}


def _group_id(world: KafkaWorld, name: str) -> int:
    reconcile(world)
    groups = world.developer_a.get("/api/v1/consumer-groups/", {"cluster": world.cluster.id}).json()[
        "results"
    ]
    return next(group["id"] for group in groups if group["name"] == name)


def test_a_reset_is_previewed_refused_while_active_applied_and_undone(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    topic, group = world.topic_prefix_a + "ledger", world.group_prefix_a + "billing"
    create_topic(world, world.developer_a, topic, partitions=2)
    producer = world.producer()
    for index in range(10):
        assert produce_one(producer, topic, f"r{index}".encode(), partition=index % 2) is None
    consumer = world.consumer(group)
    _consume_and_commit(consumer, topic, 10)
    group_id = _group_id(world, group)
    url = f"/api/v1/consumer-groups/{group_id}/"

    detail = world.viewer_a.get(url).json()
    assert detail["live"]["state"] == "STABLE"
    (member,) = detail["live"]["members"]
    assert sorted(a["partition"] for a in member["assignments"]) == [0, 1]
    assert member["client_id"]
    assert detail["live"]["total_lag"] == 0

    earliest = {"strategy": "earliest", "topics": [topic]}
    refused = world.developer_a.post(url + "reset-offsets/", earliest, format="json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "group_active"
    consumer.close()

    preview = world.developer_a.post(url + "reset-offsets/preview/", earliest, format="json").json()
    assert preview == [
        {"topic": topic, "partition": 0, "old_offset": 5, "new_offset": 0},
        {"topic": topic, "partition": 1, "old_offset": 5, "new_offset": 0},
    ]
    assert _committed(world, group) == {0: 5, 1: 5}

    applied = world.developer_a.post(url + "reset-offsets/", earliest, format="json")
    assert applied.status_code == 201, applied.json()
    assert _committed(world, group) == {0: 0, 1: 0}
    assert world.viewer_a.get(url).json()["live"]["total_lag"] == 10

    undone = world.developer_a.post(url + "undo-reset/")
    assert undone.status_code == 200, undone.json()
    assert undone.json()["undone_at"] is not None
    assert _committed(world, group) == {0: 5, 1: 5}
    assert world.developer_a.post(url + "undo-reset/").status_code == 409

    shifted = world.developer_a.post(
        url + "reset-offsets/", {"strategy": "shift", "shift_by": -2}, format="json"
    )
    assert [o["new_offset"] for o in shifted.json()["offsets"]] == [3, 3]
    exact = {"strategy": "offset", "offsets": [{"topic": topic, "partition": 1, "offset": 4}]}
    assert world.developer_a.post(url + "reset-offsets/", exact, format="json").status_code == 201
    assert _committed(world, group) == {0: 3, 1: 4}
    beyond = world.developer_a.post(
        url + "reset-offsets/preview/", {"strategy": "shift", "shift_by": 100}, format="json"
    ).json()
    assert [o["new_offset"] for o in beyond] == [5, 5]
    latest = world.developer_a.post(
        url + "reset-offsets/preview/",
        {"strategy": "timestamp", "timestamp": "2000-01-01T00:00:00Z"},
        format="json",
    ).json()
    assert [o["new_offset"] for o in latest] == [0, 0]


def test_a_groups_offsets_for_a_topic_and_the_group_itself_can_be_deleted(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    topic, group = world.topic_prefix_a + "audit", world.group_prefix_a + "auditor"
    create_topic(world, world.developer_a, topic, partitions=1)
    assert produce_one(world.producer(), topic) is None
    consumer = world.consumer(group)
    _consume_and_commit(consumer, topic, 1)
    group_id = _group_id(world, group)
    url = f"/api/v1/consumer-groups/{group_id}/"
    assert world.developer_a.delete(url).status_code == 409
    consumer.close()

    assert world.developer_a.post(url + "delete-offsets/", {"topic": topic}, format="json").status_code == 204
    assert _committed(world, group) == {}
    assert world.developer_a.delete(url).status_code == 204
    admin = world.admin_client()
    assert group not in {g.group_id for g in admin.list_consumer_groups().result(10).valid}
