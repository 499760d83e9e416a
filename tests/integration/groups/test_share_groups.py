"""Share groups (KIP-932) in the control plane, on both engines (our broker and Apache Kafka 4.2): a real
ShareConsumer accepts some records and holds the rest; the lag sampler stores the group's backlog, an alert
rule on it fires and resolves through the real alert pipeline, its page shows the share-partitions and
delivery settings, its offsets are reset with preview (refused while it has members) and the reset undone;
another team sees none of it."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import AcknowledgeType, Message, ShareConsumer

from controlplane.alerts.choices import AlertState
from controlplane.alerts.models import Alert
from controlplane.audit.models import AuditEvent
from controlplane.clusters.connections import connection_for
from controlplane.groups.models import ConsumerGroup
from controlplane.kafka import share_groups as kafka_share
from controlplane.lag.sampler import sample_cluster
from tests.integration.lag.conftest import lag_redis  # noqa: F401 - the fixture
from tests.integration.topics.clients import produce_one
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration

RECORDS = 10


def _share_consumer(world: KafkaWorld, group: str, topic: str) -> ShareConsumer:
    consumer = ShareConsumer(
        {
            **world.client_config("admin", "admin-secret"),
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
        }
    )
    consumer.subscribe([topic])
    return consumer


def _first_batch(consumer: ShareConsumer) -> list[Message]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        batch = [m for m in consumer.poll(0.5) if m.error() is None]
        if batch:
            return batch
    raise AssertionError("the share consumer got no record")


def _reported_backlog(world: KafkaWorld, group: str) -> int:
    """The backlog as the broker tells it: the lag of every share-partition it has state for."""
    offsets = kafka_share.share_group_offsets(connection_for(world.cluster), group)
    return sum(offset.lag for offset in offsets.values() if offset.lag >= 0)


def _sampled(
    world: KafkaWorld, group: str, *, at_least: int = 0, exactly: int | None = None
) -> ConsumerGroup:
    """Samples until the group's stored backlog is the broker's (Apache Kafka has no state for a partition
    until the group first reads it, and then answers its lag -1: unknown, left out as Kafka's tools do)."""
    seen = []
    for _run in range(20):
        sample_cluster(world.cluster)
        row = ConsumerGroup.objects.filter(cluster=world.cluster, name=group).first()
        reported = _reported_backlog(world, group)
        seen.append(row and (row.group_type, row.total_lag, row.member_count, reported))
        wanted = reported if exactly is None else exactly
        if row is not None and row.total_lag == reported == wanted and wanted >= at_least:
            return row
        time.sleep(0.5)
    raise AssertionError(f"the broker's backlog was never sampled: {seen}")


def test_a_share_groups_backlog_alert_settings_and_reset(
    kafka_world: KafkaWorld,
    lag_redis: str,  # noqa: F811 - the imported fixture
) -> None:
    world = kafka_world
    topic, group = world.topic_prefix_a + "jobs", world.group_prefix_a + "workers"
    create_topic(world, world.developer_a, topic, partitions=2)
    connection = connection_for(world.cluster)
    # Before the group exists, as an operator would: read the topic from its start.
    kafka_share.alter_group_configs(
        connection, group_id=group, set_configs={"share.auto.offset.reset": "earliest"}
    )
    producer = world.producer()
    for index in range(RECORDS):
        assert produce_one(producer, topic, f"job-{index}".encode(), partition=index % 2) is None

    consumer = _share_consumer(world, group, topic)
    try:
        batch = _first_batch(consumer)
        accepted, held = batch[:4], batch[4:]
        for message in accepted:
            consumer.acknowledge(message, AcknowledgeType.ACCEPT)
        consumer.commit_sync()
        row = _sampled(world, group, at_least=1)
        backlog = row.total_lag
        # Our broker has state for both partitions at once; Apache Kafka for the one it delivered from.
        assert backlog == (
            len(batch) - len(accepted) if world.broker.is_apache_kafka else RECORDS - len(accepted)
        )
        assert (row.group_type, row.team_id, row.member_count) == ("share", world.team_a.id, 1)
        listed = world.developer_a.get(
            "/api/v1/consumer-groups/", {"cluster": world.cluster.id, "group_type": "share"}
        ).json()["results"]
        assert [(g["name"], g["group_type"], g["total_lag"]) for g in listed] == [(group, "share", backlog)]
        # Team B's prefixes do not cover the group: not listed, not found.
        assert world.admin_b.get("/api/v1/consumer-groups/", {"group_type": "share"}).json()["count"] == 0
        assert world.admin_b.get(f"/api/v1/consumer-groups/{row.pk}/").status_code == 404

        url = f"/api/v1/consumer-groups/{row.pk}/"
        live = world.viewer_a.get(url).json()["live"]
        assert live["state"] == "STABLE"
        (member,) = live["members"]
        assert sorted(a["partition"] for a in member["assignments"]) == [0, 1]
        partitions = live["share_partitions"]
        assert sum(p["lag"] for p in partitions) == live["total_lag"] == backlog
        for p in partitions:
            assert p["log_end_offset"] == RECORDS // 2
            assert p["in_flight"] == p["log_end_offset"] - p["start_offset"]
            assert p["acknowledged"] + p["lag"] == p["in_flight"]
        settings = {c["name"]: c for c in live["share_configs"]}
        assert settings["share.auto.offset.reset"]["value"] == "earliest"
        assert settings["share.auto.offset.reset"]["source"] == "GROUP_CONFIG"
        assert settings["share.record.lock.duration.ms"]["source"] != "GROUP_CONFIG"

        # Delivery settings: developers change them (audited), viewers may not, the cluster checks bounds.
        body = {"set": {"share.record.lock.duration.ms": "20000"}}
        assert world.viewer_a.post(url + "share-configs/", body, format="json").status_code == 403
        assert world.developer_a.post(url + "share-configs/", body, format="json").status_code == 204
        settings = {c["name"]: c for c in world.viewer_a.get(url).json()["live"]["share_configs"]}
        assert settings["share.record.lock.duration.ms"]["value"] == "20000"
        refused = world.developer_a.post(
            url + "share-configs/", {"set": {"share.record.lock.duration.ms": "1"}}, format="json"
        )
        assert refused.status_code == 400, refused.json()
        unknown = world.developer_a.post(
            url + "share-configs/", {"set": {"retention.ms": "1"}}, format="json"
        )
        assert unknown.json()["error"]["code"] == "unknown_config"
        assert AuditEvent.objects.filter(action="group.alter_configs", resource_id=str(row.pk)).count() == 3

        # An alert rule on the backlog fires on the next sampling run and resolves once all is accepted.
        rule = world.developer_a.post(
            "/api/v1/alert-rules/",
            {
                "team": world.team_a.id,
                "name": "jobs pile up",
                "group_pattern": group,
                "metric": "lag_messages",
                "comparison": "gt",
                "threshold": backlog - 1,
                "for_seconds": 0,
            },
            format="json",
        )
        assert rule.status_code == 201, rule.json()
        sample_cluster(world.cluster)
        assert Alert.objects.get(rule__name="jobs pile up").state == AlertState.FIRING

        # Still a member: Kafka changes a share group's offsets only while it is empty.
        earliest = {"strategy": "earliest", "topics": [topic]}
        busy = world.developer_a.post(url + "reset-offsets/", earliest, format="json")
        assert busy.status_code == 409
        assert busy.json()["error"]["code"] == "group_active"
        assert "empty" in busy.json()["error"]["message"]

        for message in held:
            consumer.acknowledge(message, AcknowledgeType.ACCEPT)
        consumer.commit_sync()
        seen = len(batch)
        deadline = time.monotonic() + 60
        while seen < RECORDS and time.monotonic() < deadline:
            for message in consumer.poll(0.5):
                if message.error() is None:
                    consumer.acknowledge(message, AcknowledgeType.ACCEPT)
                    seen += 1
            consumer.commit_sync()
        assert seen == RECORDS
        _sampled(world, group, exactly=0)
        assert Alert.objects.get(rule__name="jobs pile up").state == AlertState.RESOLVED
    finally:
        consumer.close()

    # Empty now: preview, apply and undo a reset to the earliest offsets.
    deadline = time.monotonic() + 30
    while world.viewer_a.get(url).json()["live"]["members"] and time.monotonic() < deadline:
        time.sleep(0.5)
    before = {
        (p["topic"], p["partition"]): p["start_offset"]
        for p in world.viewer_a.get(url).json()["live"]["share_partitions"]
    }

    def previewed(body: dict) -> list[tuple[int, int]]:
        answer = world.developer_a.post(url + "reset-offsets/preview/", body, format="json")
        assert answer.status_code == 200, answer.json()
        return [(p["partition"], p["new_offset"]) for p in answer.json()]

    end = RECORDS // 2
    assert previewed({"strategy": "latest", "topics": [topic]}) == [(0, end), (1, end)]
    assert previewed({"strategy": "timestamp", "topics": [topic], "timestamp": "2100-01-01T00:00:00Z"}) == [
        (0, end),
        (1, end),
    ]
    exact = {"strategy": "offset", "offsets": [{"topic": topic, "partition": 1, "offset": 2}]}
    assert previewed(exact) == [(1, 2)]
    preview = world.developer_a.post(url + "reset-offsets/preview/", earliest, format="json").json()
    assert preview == [
        {"topic": topic, "partition": p, "old_offset": before[(topic, p)], "new_offset": 0} for p in (0, 1)
    ]
    applied = world.developer_a.post(url + "reset-offsets/", earliest, format="json")
    assert applied.status_code == 201, applied.json()
    live = world.viewer_a.get(url).json()["live"]
    assert [p["start_offset"] for p in live["share_partitions"]] == [0, 0]
    if not world.broker.is_apache_kafka:  # Kafka answers lag -1 until the group reads the partition again
        assert live["total_lag"] == RECORDS
    undone = world.developer_a.post(url + "undo-reset/")
    assert undone.status_code == 200, undone.json()
    after = {
        (p["topic"], p["partition"]): p["start_offset"]
        for p in world.viewer_a.get(url).json()["live"]["share_partitions"]
    }
    # A partition the group had no state for keeps the reset's offset when its topic had state elsewhere
    # (DeleteShareGroupOffsets forgets whole topics only).
    assert {key: after[key] for key in before} == before
    assert AuditEvent.objects.filter(action="group.reset_offsets", resource_id=str(row.pk)).exists()

    # Forgetting the topic's state (DeleteShareGroupOffsets), then the group itself.
    forgot = world.developer_a.post(url + "delete-offsets/", {"topic": topic}, format="json")
    assert forgot.status_code == 204, forgot.json()
    assert kafka_share.share_group_offsets(connection_for(world.cluster), group) == {}
    deleted = world.developer_a.delete(url)
    assert deleted.status_code == 204, deleted.json()
    assert kafka_share.describe_share_group(connection_for(world.cluster), group) is None
    assert not ConsumerGroup.objects.filter(pk=row.pk).exists()
