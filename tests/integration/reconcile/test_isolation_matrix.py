"""Acceptance 2: a member of team A can neither see nor change team B's topics, ACLs, quotas and groups —
list, detail, update and delete, each tested — while seeing its own."""

import pytest

from tests.integration.topics.clients import produce_one
from tests.integration.topics.world import KafkaWorld, reconcile

pytestmark = pytest.mark.integration


@pytest.fixture
def team_b_resources(kafka_world: KafkaWorld) -> dict[str, int]:
    world = kafka_world
    cluster = world.cluster.id
    topic = world.admin_b.post(
        "/api/v1/topics/",
        {
            "cluster": cluster,
            "team": world.team_b.id,
            "name": world.topic_prefix_b + "index",
            "partitions": 1,
        },
        format="json",
    )
    assert topic.status_code == 201, topic.json()
    grant = world.admin_b.post(
        "/api/v1/access-grants/",
        {
            "cluster": cluster,
            "service_account": world.account_b.id,
            "template": "consumer",
            "topic_prefix": world.topic_prefix_b,
            "group_prefix": world.group_prefix_b,
        },
        format="json",
    )
    assert grant.status_code == 201, grant.json()
    quota = world.admin_b.post(
        "/api/v1/quotas/",
        {"cluster": cluster, "entity": {"user": world.account_b.name}, "values": {"consumer_byte_rate": 1e6}},
        format="json",
    )
    assert quota.status_code == 201, quota.json()
    name = world.topic_prefix_b + "index"
    assert produce_one(world.producer(), name) is None
    consumer = world.consumer(world.group_prefix_b + "indexer")
    consumer.subscribe([name])
    while (message := consumer.poll(0.5)) is None or message.error() is not None:
        pass
    consumer.commit(asynchronous=False)
    consumer.close()
    reconcile(world)
    groups = world.admin_b.get("/api/v1/consumer-groups/", {"cluster": cluster}).json()["results"]
    (group,) = [g for g in groups if g["name"] == world.group_prefix_b + "indexer"]
    return {
        "topics": topic.json()["id"],
        "access-grants": grant.json()["id"],
        "acls": grant.json()["bindings"][0]["id"],
        "quotas": quota.json()["id"],
        "consumer-groups": group["id"],
    }


UPDATES = {
    "topics": ("patch", "configs/", {"configs": {"retention.ms": "1000"}}),
    "acls": ("post", "adopt/", {"team": None}),
    "access-grants": ("post", "", {}),
    "quotas": ("patch", "", {"values": {"consumer_byte_rate": 1}}),
    "consumer-groups": ("post", "reset-offsets/", {"strategy": "earliest"}),
}


@pytest.mark.parametrize("resource", ["topics", "acls", "access-grants", "quotas", "consumer-groups"])
def test_team_a_neither_sees_nor_changes_team_bs(
    kafka_world: KafkaWorld, team_b_resources: dict[str, int], resource: str
) -> None:
    world = kafka_world
    object_id = team_b_resources[resource]
    url = f"/api/v1/{resource}/{object_id}/"

    for client in (world.developer_a, world.viewer_a):
        listed = client.get(f"/api/v1/{resource}/", {"cluster": world.cluster.id}).json()["results"]
        assert object_id not in {row["id"] for row in listed}
        assert client.get(url).status_code == 404
        method, suffix, body = UPDATES[resource]
        assert getattr(client, method)(url + suffix, body, format="json").status_code in (404, 405)
        assert client.delete(url, {"confirm_name": "x"}, format="json").status_code == 404

    # The owner and the org admin do see it, so the 404s above are isolation, not a broken endpoint.
    assert world.admin_b.get(url).status_code == 200
    assert object_id in {
        row["id"]
        for row in world.org_admin.get(f"/api/v1/{resource}/", {"cluster": world.cluster.id}).json()[
            "results"
        ]
    }
