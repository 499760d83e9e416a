"""The lag API on a real SASL broker: tenants see only their teams' groups, a group's health with members
and partitions, its chart from raw samples and from rollups, and /metrics behind a bearer token."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from controlplane.lag import history
from controlplane.lag.models import LagRollup
from controlplane.lag.sampler import sample_cluster
from tests.integration.groups.test_offset_resets import _consume_and_commit
from tests.integration.topics.clients import produce_one
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration


def _commit_some(world: KafkaWorld, topic: str, group: str, count: int) -> None:
    consumer = world.consumer(group)
    _consume_and_commit(consumer, topic, count)
    consumer.close()


@pytest.fixture
def sampled(kafka_world: KafkaWorld, lag_redis: str) -> KafkaWorld:
    """Team A's group 5 records behind on a 1-partition topic, team B's group caught up; two runs."""
    world = kafka_world
    topic_a, topic_b = world.topic_prefix_a + "orders", world.topic_prefix_b + "queries"
    create_topic(world, world.developer_a, topic_a)
    body = {"cluster": world.cluster.id, "team": world.team_b.id, "name": topic_b, "partitions": 1}
    assert world.admin_b.post("/api/v1/topics/", body, format="json").status_code == 201
    producer = world.producer()
    for index in range(8):
        assert produce_one(producer, topic_a, f"a{index}".encode()) is None
    assert produce_one(producer, topic_b, b"b") is None
    _commit_some(world, topic_a, world.group_prefix_a + "billing", 3)
    _commit_some(world, topic_b, world.group_prefix_b + "indexer", 1)
    sample_cluster(world.cluster)
    sample_cluster(world.cluster)
    return world


def _names(response) -> set[str]:
    assert response.status_code == 200, response.json()
    return {row["name"] for row in response.json()["results"]}


def test_tenants_see_only_their_teams_groups_and_org_admins_see_all(sampled: KafkaWorld) -> None:
    world = sampled
    mine, theirs = world.group_prefix_a + "billing", world.group_prefix_b + "indexer"
    query = {"cluster": world.cluster.id}
    assert _names(world.developer_a.get("/api/v1/lag/groups/", query)) == {mine}
    assert _names(world.admin_b.get("/api/v1/lag/groups/", query)) == {theirs}
    assert {mine, theirs} <= _names(world.org_admin.get("/api/v1/lag/groups/", query))

    rows = world.org_admin.get("/api/v1/lag/groups/", query).json()["results"]
    billing = next(row for row in rows if row["name"] == mine)
    assert billing["lag_messages"] == 5
    assert billing["status"] == "STOPPED"  # nobody is consuming and 5 records wait
    assert billing["lag_seconds"] is not None
    assert not billing["lag_seconds_is_lower_bound"]

    other = world.admin_b.get(f"/api/v1/lag/groups/{billing['group']}/")
    assert other.status_code == 404
    detail = world.viewer_a.get(f"/api/v1/lag/groups/{billing['group']}/").json()
    (partition,) = detail["partitions"]
    assert partition["committed_offset"] == 3
    assert partition["log_end_offset"] == 8
    assert partition["status"] == "STOPPED"
    assert detail["members"] == []
    assert detail["reason"].startswith(f"{world.topic_prefix_a}orders/0: ")

    # By name too (group names hold dots), with ?cluster= to pick one; another team's group is 404 by name.
    by_name = world.viewer_a.get(f"/api/v1/lag/groups/{mine}/")
    assert by_name.status_code == 200, by_name.json()
    assert by_name.json()["group"] == billing["group"]
    assert world.viewer_a.get(f"/api/v1/lag/groups/{mine}/", {"cluster": world.cluster.id}).status_code == 200
    assert world.viewer_a.get(f"/api/v1/lag/groups/{mine}/chart/").status_code == 200
    assert world.admin_b.get(f"/api/v1/lag/groups/{mine}/").status_code == 404
    assert world.viewer_a.get("/api/v1/lag/groups/no.such.group/").status_code == 404


def test_a_groups_chart_comes_from_raw_samples_for_an_hour_and_from_rollups_beyond(
    sampled: KafkaWorld,
) -> None:
    world = sampled
    rows = world.developer_a.get("/api/v1/lag/groups/", {"cluster": world.cluster.id}).json()["results"]
    group_id = rows[0]["group"]
    url = f"/api/v1/lag/groups/{group_id}/chart/"

    raw = world.developer_a.get(url).json()
    assert raw["resolution"] == "raw"
    assert len(raw["times"]) == 2
    assert raw["total"]["lag_messages"] == [5, 5]
    (series,) = raw["partitions"]
    assert series["lag_messages"] == [5, 5]
    assert all(seconds is not None for seconds in series["lag_seconds"])

    # The rollup task's first pass marks where it starts; a pass after the samples' minute has ended rolls
    # that minute up, and a repeated pass changes nothing.
    client, now = history.lag_redis(), time.time()
    history.roll_up_cluster(client, world.cluster.id, [group_id], now - 60)
    history.roll_up_cluster(client, world.cluster.id, [group_id], now + 60)
    history.roll_up_cluster(client, world.cluster.id, [group_id], now + 60)
    (minute,) = LagRollup.objects.filter(group_id=group_id, resolution="1m")
    assert minute.samples == 2
    assert minute.lag_messages_max == 5
    since = (timezone.now() - timezone.timedelta(hours=3)).isoformat()
    rolled = world.developer_a.get(url, {"since": since}).json()
    assert rolled["resolution"] == "1m"
    assert rolled["total"]["lag_messages"][-1] == 5
    assert rolled["partitions"][0]["topic"] == world.topic_prefix_a + "orders"

    refused = world.developer_a.get(url, {"since": since, "until": since})
    assert refused.status_code == 400


def test_metrics_need_the_metrics_token_or_an_org_admins_key(sampled: KafkaWorld, settings, client) -> None:
    world = sampled
    settings.METRICS_TOKEN = "scrape-me"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401

    scraped = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert scraped.status_code == 200
    assert scraped["Content-Type"].startswith("text/plain; version=0.0.4")
    text = scraped.content.decode()
    group = world.group_prefix_a + "billing"
    assert (
        f'kafka_consumergroup_total_lag_messages{{cluster="{world.cluster.name}",group="{group}"}} 5' in text
    )
    assert (
        f'kafka_consumergroup_status{{cluster="{world.cluster.name}",group="{group}",status="STOPPED"}} 1'
        in text
    )

    org_admin_token = world.org_admin._credentials["HTTP_AUTHORIZATION"]
    assert client.get("/metrics", HTTP_AUTHORIZATION=org_admin_token).status_code == 200
    developer_token = world.developer_a._credentials["HTTP_AUTHORIZATION"]
    assert client.get("/metrics", HTTP_AUTHORIZATION=developer_token).status_code == 401


def test_a_partition_the_group_never_committed_shows_its_backlog_but_stays_out_of_the_groups_lag(
    kafka_world: KafkaWorld, lag_redis: str
) -> None:
    """The group committed partition 0 of a two-partition topic and never partition 1: the group's lag is
    partition 0's remainder, as kafka-consumer-groups.sh and the group's live page count it (LAG "-" where
    nothing is committed); partition 1 shows every record from the log start (what a new consumer with
    earliest reset, and the backlog job, would read) and its reason says so."""
    from confluent_kafka import TopicPartition

    world = kafka_world
    topic, group = world.topic_prefix_a + "split", world.group_prefix_a + "half"
    create_topic(world, world.developer_a, topic, partitions=2)
    producer = world.producer()
    for partition, count in ((0, 3), (1, 4)):
        for index in range(count):
            assert produce_one(producer, topic, f"{partition}-{index}".encode(), partition=partition) is None
    consumer = world.consumer(group)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.commit(offsets=[TopicPartition(topic, 0, 2)], asynchronous=False)
    consumer.close()

    sample_cluster(world.cluster)
    rows = world.developer_a.get("/api/v1/lag/groups/", {"cluster": world.cluster.id}).json()["results"]
    row = next(row for row in rows if row["name"] == group)
    assert row["lag_messages"] == 1
    detail = world.developer_a.get(f"/api/v1/lag/groups/{row['group']}/").json()
    by_partition = {p["partition"]: p for p in detail["partitions"]}
    assert by_partition[0]["lag_messages"] == 1
    assert by_partition[1]["committed_offset"] is None
    assert by_partition[1]["lag_messages"] == 4
    assert by_partition[1]["status"] == "NO_COMMIT"
    assert "the 4 records from the log start 0 are unread" in by_partition[1]["reason"]
    # Partition 0 waits with nobody consuming (STOPPED), which ranks worse: the group's reason is its.
    assert detail["status"] == "STOPPED"
    assert detail["reason"] == f"{topic}/0: " + by_partition[0]["reason"]


def test_a_lag_rule_fires_on_a_sampled_group_and_resolves_once_it_catches_up(sampled: KafkaWorld) -> None:
    """Lag alerting end to end on each engine: the sampler's run (lag read over the Kafka protocol) is what
    the rule is evaluated on."""
    from controlplane.alerts.models import Alert

    world = sampled
    group = world.group_prefix_a + "billing"
    rule = world.developer_a.post(
        "/api/v1/alert-rules/",
        {
            "team": world.team_a.id,
            "name": "billing is behind",
            "metric": "lag_messages",
            "comparison": "gt",
            "threshold": 2,
            "resolve_threshold": 0,
            "for_seconds": 0,
            "cluster": world.cluster.id,
        },
        format="json",
    )
    assert rule.status_code == 201, rule.json()

    sample_cluster(world.cluster)
    firing = Alert.objects.get(rule_id=rule.json()["id"], state="firing")
    assert group in firing.group_name
    assert firing.value == 5

    _commit_some(world, world.topic_prefix_a + "orders", group, 5)
    sample_cluster(world.cluster)
    firing.refresh_from_db()
    assert firing.state == "resolved"
