"""Topics through the REST API on a real cluster: create (and dry-run), configs, partitions, purge,
delete with confirmation, message browsing and test messages; bad input is a 4xx that explains itself."""

import time
from datetime import UTC, datetime

import pytest

from controlplane.audit.models import AuditEvent
from controlplane.clusters.models import Cluster, Operation
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.models import TeamPolicy
from tests.fixtures.broker import free_port
from tests.integration.topics.clients import produce_one
from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration


def test_it_creates_a_topic_and_shows_its_live_partitions_and_config_sources(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "events"
    created = create_topic(
        world,
        world.developer_a,
        name,
        partitions=3,
        configs={"retention.ms": "3600000", "segment.ms": "600000"},
    )

    detail = world.viewer_a.get(f"/api/v1/topics/{created['id']}/").json()

    assert [p["partition"] for p in detail["live"]["partitions"]] == [0, 1, 2]
    assert all(p["leader"] == 1 for p in detail["live"]["partitions"])
    retention = detail["live"]["configs"]["retention.ms"]
    documentation = retention.pop("documentation")
    # Neither engine lists a broker synonym while log.retention.ms itself is unset: the control plane derives
    # the broker's default as Kafka does (log.retention.ms, else .minutes, else .hours). Apache Kafka
    # describes the broker's log.retention.ms as null (so .hours gives it), ours with the derived value.
    default = retention.pop("default")
    assert (default["value"], default["source"]) == ("604800000", "DEFAULT_CONFIG")
    assert default["name"] == ("log.retention.hours" if world.broker.is_apache_kafka else "log.retention.ms")
    assert retention == {
        "value": "3600000",
        "source": "DYNAMIC_TOPIC_CONFIG",
        "read_only": False,
        "sensitive": False,
        "type": "long",
        "choices": [],
        "multiple": False,
        "unit": "ms",
        "unlimited": "-1",
        "rule": {
            "allowed": True,
            "minimum": 0,
            "maximum": 30 * 24 * 3600 * 1000,
            "reason": "The team's guardrail caps retention; unlimited is not allowed.",
        },
    }
    assert documentation  # each engine words it its own way
    segment = detail["live"]["configs"]["segment.ms"]
    assert (segment["value"], segment["source"]) == ("600000", "DYNAMIC_TOPIC_CONFIG")
    assert (segment["default"]["value"], segment["default"]["source"]) == ("604800000", "DEFAULT_CONFIG")
    cleanup = detail["live"]["configs"]["cleanup.policy"]
    assert cleanup["source"] != "DYNAMIC_TOPIC_CONFIG"
    assert (cleanup["type"], cleanup["choices"], cleanup["multiple"]) == ("list", ["delete", "compact"], True)
    assert detail["live"]["configs"]["segment.bytes"]["unit"] == "bytes"
    assert AuditEvent.objects.filter(action="topic.create", resource_name=name, result="success").exists()

    def searched(text: str) -> list[str]:
        rows = world.viewer_a.get("/api/v1/topics/", {"search": text}).json()["results"]
        return [row["name"] for row in rows]

    assert searched("EVEN") == [name]
    assert searched("no-such-topic") == []


def test_a_dry_run_creates_nothing(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    body = {
        "cluster": world.cluster.id,
        "team": world.team_a.id,
        "name": world.topic_prefix_a + "dry",
        "partitions": 2,
    }
    response = world.developer_a.post("/api/v1/topics/", {**body, "validate_only": True}, format="json")

    assert response.status_code == 200, response.json()
    assert world.developer_a.get("/api/v1/topics/", {"cluster": world.cluster.id}).json()["count"] == 0
    admin = world.admin_client()
    assert body["name"] not in admin.list_topics(timeout=5).topics


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"name": "elsewhere.orders"}, 400, "policy_violation"),
        ({"name": "<the team's prefix>"}, 400, "policy_violation"),
        ({"configs": {"retention.mss": "1"}}, 400, "unknown_config"),
        ({"partitions": 0}, 400, "invalid"),
        # The guardrail knows the cluster's brokers: refused before the request reaches the cluster.
        ({"replication_factor": 3}, 400, "not_enough_brokers"),
    ],
)
def test_it_refuses_bad_topic_requests_with_an_explanation(
    kafka_world: KafkaWorld, change: dict, status: int, code: str
) -> None:
    world = kafka_world
    body = {
        "cluster": world.cluster.id,
        "team": world.team_a.id,
        "name": world.topic_prefix_a + "bad",
        "partitions": 1,
    }
    if change.get("name") == "<the team's prefix>":
        change = {"name": world.topic_prefix_a}  # exactly the prefix, nothing after it
    response = world.developer_a.post("/api/v1/topics/", {**body, **change}, format="json")

    assert response.status_code == status, response.json()
    assert response.json()["error"]["code"] == code


def test_duplicates_partition_decreases_and_wrong_confirmations_are_refused(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "twice"
    topic = create_topic(world, world.developer_a, name, partitions=2)
    body = {"cluster": world.cluster.id, "team": world.team_a.id, "name": name, "partitions": 1}

    assert world.developer_a.post("/api/v1/topics/", body, format="json").status_code == 409
    fewer = world.developer_a.post(
        f"/api/v1/topics/{topic['id']}/partitions/", {"partitions": 1}, format="json"
    )
    assert fewer.status_code == 400
    assert fewer.json()["error"]["code"] == "invalid_partitions"
    wrong = world.developer_a.delete(
        f"/api/v1/topics/{topic['id']}/", {"confirm_name": "nope"}, format="json"
    )
    assert wrong.status_code == 400
    assert (
        world.viewer_a.post(
            f"/api/v1/topics/{topic['id']}/partitions/", {"partitions": 4}, format="json"
        ).status_code
        == 403
    )


def test_it_changes_configs_adds_partitions_purges_and_deletes(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "lifecycle"
    topic = create_topic(world, world.developer_a, name, partitions=1)
    url = f"/api/v1/topics/{topic['id']}/"
    producer = world.producer()
    for index in range(5):
        assert produce_one(producer, name, f"r{index}".encode()) is None

    # Purged first: Kafka refuses DeleteRecords on a compacted-only topic (see the test below).
    purged = world.developer_a.post(url + "purge/", {"partition": 0, "before_offset": 3}, format="json")
    assert purged.json() == {"start_offsets": {"0": 3}}
    configs = world.developer_a.patch(
        url + "configs/", {"configs": {"cleanup.policy": "compact"}}, format="json"
    )
    assert configs.status_code == 200, configs.json()
    grown = world.developer_a.post(url + "partitions/", {"partitions": 3}, format="json")
    assert grown.json()["partitions"] == 3

    live = world.developer_a.get(url).json()["live"]
    assert live["configs"]["cleanup.policy"]["value"] == "compact"
    assert len(live["partitions"]) == 3
    assert live["partitions"][0]["start_offset"] == 3
    assert live["partitions"][0]["end_offset"] == 5
    # The list agrees with the page just read: 2 messages left, not the 5 the last reconcile saw.
    listed = world.developer_a.get("/api/v1/topics/", {"search": name}).json()["results"]
    assert [(row["name"], row["message_count"]) for row in listed] == [(name, 2)]
    assert listed[0]["size_bytes"] == sum(p["size_bytes"] for p in live["partitions"])

    assert world.developer_a.delete(url, {"confirm_name": name}, format="json").status_code == 204
    deadline = time.monotonic() + 5
    while name in world.admin_client().list_topics(timeout=5).topics and time.monotonic() < deadline:
        time.sleep(0.1)
    assert name not in world.admin_client().list_topics(timeout=5).topics


def test_purging_a_compacted_topic_is_refused_as_apache_kafka_refuses_it(kafka_world: KafkaWorld) -> None:
    """Kafka's DeleteRecords answers POLICY_VIOLATION on a log whose cleanup.policy lacks `delete`
    (compaction keeps each key's latest record); our broker purged it until the engine matrix showed this."""
    world = kafka_world
    name = world.topic_prefix_a + "compacted"
    topic = create_topic(world, world.developer_a, name, configs={"cleanup.policy": "compact"})
    url = f"/api/v1/topics/{topic['id']}/"
    assert produce_one(world.producer(), name, b"v", key=b"k") is None

    refused = world.developer_a.post(url + "purge/", {"partition": 0, "before_offset": 1}, format="json")

    assert refused.status_code == 400, refused.json()
    assert refused.json()["error"]["details"]["kafka_error"] == "POLICY_VIOLATION"
    assert world.viewer_a.get(url).json()["live"]["partitions"][0]["start_offset"] == 0
    both = world.developer_a.patch(
        url + "configs/", {"configs": {"cleanup.policy": "compact,delete"}}, format="json"
    )
    assert both.status_code == 200, both.json()
    purged = world.developer_a.post(url + "purge/", {"partition": 0, "before_offset": 1}, format="json")
    assert purged.json() == {"start_offsets": {"0": 1}}


def test_the_browser_returns_produced_records_by_offset_and_by_timestamp_with_headers(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "browse"
    topic = create_topic(world, world.developer_a, name, partitions=1)
    url = f"/api/v1/topics/{topic['id']}/"
    early = world.developer_a.post(
        url + "produce/", {"key": "k1", "value": "first", "headers": {"trace": "abc"}}, format="json"
    )
    assert early.status_code == 201, early.json()
    time.sleep(0.05)
    between = datetime.now(UTC)
    time.sleep(0.05)
    binary = world.developer_a.post(url + "produce/", {"value": "AP8=", "encoding": "base64"}, format="json")
    assert binary.json() == {"partition": 0, "offset": 1}
    for bad in ("YR==", "not base64!", "AP8"):  # non-canonical, not base64, unpadded: refused, nothing sent
        refused = world.developer_a.post(
            url + "produce/", {"value": bad, "encoding": "base64"}, format="json"
        )
        assert refused.status_code == 400, (bad, refused.json())
        assert refused.json()["error"]["code"] == "invalid_payload"

    by_offset = world.viewer_a.get(
        url + "messages/", {"start": "offset", "partition": 0, "offset": 0}
    ).json()["messages"]
    assert [m["offset"] for m in by_offset] == [0, 1]
    assert by_offset[0]["key"] == {"data": "k1", "encoding": "utf-8"}
    assert by_offset[0]["value"] == {"data": "first", "encoding": "utf-8"}
    assert by_offset[0]["headers"] == [{"key": "trace", "value": {"data": "abc", "encoding": "utf-8"}}]
    assert by_offset[1]["value"] == {"data": "AP8=", "encoding": "base64"}

    by_time = world.viewer_a.get(
        url + "messages/", {"start": "timestamp", "timestamp": between.isoformat()}
    ).json()["messages"]
    assert [m["offset"] for m in by_time] == [1]
    newest = world.viewer_a.get(url + "messages/", {"start": "newest", "limit": 1}).json()["messages"]
    assert [m["offset"] for m in newest] == [1]
    filtered = world.viewer_a.get(url + "messages/", {"start": "earliest", "header_key": "trace"}).json()[
        "messages"
    ]
    assert [m["offset"] for m in filtered] == [0]
    assert world.viewer_a.post(url + "produce/", {"value": "x"}, format="json").status_code == 403


def test_configs_beyond_the_team_policy_are_refused_on_create_and_update(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    policy, _ = TeamPolicy.objects.get_or_create(team=world.team_a)
    tenancy.update_policy(actor=Actor.system(), policy=policy, changes={"max_retention_ms": 86_400_000})
    body = {
        "cluster": world.cluster.id,
        "team": world.team_a.id,
        "name": world.topic_prefix_a + "long",
        "partitions": 1,
    }

    too_long = world.developer_a.post(
        "/api/v1/topics/", {**body, "configs": {"retention.ms": "-1"}}, format="json"
    )
    assert too_long.status_code == 400
    assert too_long.json()["error"]["details"]["violations"][0]["code"] == "retention_too_long"
    topic = create_topic(world, world.developer_a, body["name"], configs={"retention.ms": "3600000"})
    update = world.developer_a.patch(
        f"/api/v1/topics/{topic['id']}/configs/", {"configs": {"retention.ms": "999999999999"}}, format="json"
    )
    assert update.status_code == 400
    assert update.json()["error"]["code"] == "policy_violation"
    # The editor is told the bound before anyone saves.
    rule = world.viewer_a.get(f"/api/v1/topics/{topic['id']}/").json()["live"]["configs"]["retention.ms"][
        "rule"
    ]
    assert (rule["allowed"], rule["maximum"]) == (True, 86_400_000)


def test_a_cluster_that_does_not_answer_is_refused_with_nothing_sent(kafka_world: KafkaWorld) -> None:
    """The cluster is read before a change is sent: unreachable then, the request is refused (certainly
    not applied), and the operation and the audit log say the same."""
    world = kafka_world
    Cluster.objects.filter(pk=world.cluster.pk).update(bootstrap_servers=f"127.0.0.1:{free_port()}")
    body = {
        "cluster": world.cluster.id,
        "team": world.team_a.id,
        "name": world.topic_prefix_a + "x",
        "partitions": 1,
    }

    response = world.developer_a.post("/api/v1/topics/", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "cluster_unreachable"
    assert response.json()["error"]["details"]["kafka_error"] in ("_TRANSPORT", "_TIMED_OUT")
    assert AuditEvent.objects.filter(action="topic.create", result="failure").exists()
    operation = Operation.objects.get(resource_name=body["name"])
    assert operation.state == "failed"
    assert "Nothing was sent" in operation.error
