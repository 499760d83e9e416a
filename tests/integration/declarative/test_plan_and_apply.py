"""Resources as code against real clusters: export a team, apply it to a fresh team on another cluster, and
plan again; diffs, drift made by hand, pruning, guardrails at plan time, and an apply that a paused broker
interrupts (the report agrees with the cluster, the audit log and the API)."""

from __future__ import annotations

import signal
import threading
import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
from django.core.cache import cache
from django.db import connection
from rest_framework.test import APIClient

from controlplane.acls import services as acls_services
from controlplane.acls.models import AccessGrant, AclBinding
from controlplane.audit.models import AuditEvent
from controlplane.clusters import outcomes
from controlplane.clusters import services as clusters
from controlplane.clusters.choices import ACTIVE_OPERATION_STATES, OperationKind
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Operation
from controlplane.declarative import services as declarative_services
from controlplane.kafka import topics as kafka_topics
from controlplane.kafka.acls import describe_acls
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import TeamPolicy
from controlplane.topics.models import Topic
from tests.fixtures.engines import ManagedCluster, engine_params
from tests.integration.topics.world import KafkaWorld, api_client, build_world, create_topic

pytestmark = pytest.mark.integration
SYSTEM = Actor.system()


@pytest.fixture(params=engine_params(slow_on_apache_kafka=True))
def engine(request: pytest.FixtureRequest) -> str:
    """Both engines; Apache Kafka's runs only with `-m apache_kafka` (CI's time budget)."""
    return request.param


def _plan(client: APIClient, documents: list[dict], **extra: Any) -> dict:
    response = client.post(
        "/api/v1/declarative/plan/",
        {"documents": documents, "file_set": "repo/kafka", **extra},
        format="json",
    )
    assert response.status_code == 200, response.json()
    return response.json()


def _apply(client: APIClient, documents: list[dict], **extra: Any) -> dict:
    response = client.post(
        "/api/v1/declarative/apply/",
        {"documents": documents, "file_set": "repo/kafka", **extra},
        format="json",
    )
    assert response.status_code == 200, response.json()
    return response.json()


def _changes(plan: dict) -> dict[tuple[str, str], dict]:
    return {(c["kind"], c["name"]): c for c in plan["changes"] if c["action"] != "unchanged"}


def _live_topics(config: dict[str, str]) -> set[str]:
    return set(AdminClient(config).list_topics(timeout=10).topics)


def _acls_on_cluster(world: KafkaWorld, principal: str) -> set[tuple[str, str]]:
    return {
        (acl.resource_type, acl.operation)
        for acl in describe_acls(connection_for(world.cluster))
        if acl.principal == principal
    }


def _fresh_team_on_another_cluster(other: ManagedCluster, prefix: str) -> tuple[Any, Any, APIClient]:
    """Another organization, a team with the same topic prefix, and the other cluster registered for it."""
    uid = uuid.uuid4().hex[:8]
    organization = tenancy.create_organization(actor=SYSTEM, name=f"Other {uid}")
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Payments")
    tenancy.add_prefix(actor=SYSTEM, team=team, resource_type=PrefixResourceType.TOPIC, prefix=prefix)
    user, client = api_client(f"tina-{uid}")
    tenancy.add_member(actor=SYSTEM, team=team, user=user, role=TeamRole.TEAM_ADMIN)
    registered = clusters.register_external_cluster(
        actor=SYSTEM, organization=organization, name=f"other-{uid}", **other.registration()
    )
    return team, registered, client


def test_export_applies_to_a_fresh_team_on_another_cluster_then_diffs_drift_and_prune_are_exact(
    kafka_world: KafkaWorld, secure_broker_factory
) -> None:
    world = kafka_world
    orders, payments = world.topic_prefix_a + "orders", world.topic_prefix_a + "payments"
    create_topic(world, world.developer_a, orders, partitions=2, configs={"retention.ms": "86400000"})
    create_topic(world, world.developer_a, payments, partitions=1)
    grant = world.developer_a.post(
        "/api/v1/access-grants/",
        {
            "cluster": world.cluster.id,
            "service_account": world.account_a.id,
            "template": "producer",
            "topic_prefix": world.topic_prefix_a,
        },
        format="json",
    )
    assert grant.status_code == 201, grant.json()

    exported = world.developer_a.get(
        "/api/v1/declarative/export/", {"team": world.team_a.slug, "cluster": world.cluster.id}
    )
    assert exported.status_code == 200, exported.json()
    documents = exported.json()["documents"]
    assert {(d["kind"], d["metadata"]["name"]) for d in documents} >= {
        ("Topic", orders),
        ("Topic", payments),
        ("ServiceAccount", world.account_a.name),
    }
    # The team's own resources, declared as they are, plan as no change but a claim of ownership.
    own = _plan(world.developer_a, documents)
    assert {c["action"] for c in own["changes"]} == {"update"}
    assert all(set(c["diff"]) == {"managedBy"} for c in own["changes"])

    # Another cluster, another organization: a fresh team with the same prefix gets everything.
    # A broker of its own with ACLs on (the grant's bindings go there too).
    other_cluster = ManagedCluster.of_streamhub(secure_broker_factory())
    other = other_cluster.client_config()
    team, cluster, client = _fresh_team_on_another_cluster(other_cluster, world.topic_prefix_a)
    placed = {"team": team.slug, "cluster": cluster.name}
    first = _plan(client, documents, **placed)
    assert {(c["kind"], c["action"]) for c in first["changes"]} == {
        ("ServiceAccount", "create"),
        ("Topic", "create"),
        ("AccessGrant", "create"),
    }
    applied = _apply(client, documents, plan_id=first["plan_id"], **placed)
    report = applied["change_set"]["report"]
    assert applied["change_set"]["state"] == "applied", report
    assert {c["status"] for c in report["changes"]} == {"applied"}
    assert {orders, payments} <= _live_topics(other)
    assert _plan(client, documents, **placed)["counts"]["create"] == 0
    assert _changes(_plan(client, documents, **placed)) == {}
    assert _apply(client, documents, **placed)["change_set"] is None  # applying twice changes nothing

    # One document changed: exactly that diff.
    changed = [
        {**d, "spec": {**d["spec"], "configs": {"retention.ms": 3600000}}}
        if d["metadata"]["name"] == orders
        else d
        for d in documents
    ]
    diff = _changes(_plan(client, changed, **placed))
    assert list(diff) == [("Topic", orders)]
    assert diff[("Topic", orders)]["diff"] == {"configs.retention.ms": {"from": "86400000", "to": "3600000"}}
    _apply(client, changed, **placed)
    assert _changes(_plan(client, changed, **placed)) == {}

    # A change by hand on the cluster is drift: the plan shows it and puts it back.
    admin = AdminClient(other)
    by_hand = ConfigResource(
        ResourceType.TOPIC,
        orders,
        incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for future in admin.incremental_alter_configs([by_hand]).values():
        future.result(10)
    drifted = _changes(_plan(client, changed, **placed))[("Topic", orders)]
    assert drifted["diff"] == {"configs.retention.ms": {"from": "1000", "to": "3600000"}}
    assert drifted["drift"] == {"configs.retention.ms": {"recorded": "3600000", "on_cluster": "1000"}}
    _apply(client, changed, **placed)
    assert _changes(_plan(client, changed, **placed)) == {}

    # A topic made by clicks in the same team is not the file set's: prune never touches it.
    clicked = world.topic_prefix_a + "clicked"
    made = client.post(
        "/api/v1/topics/",
        {"cluster": cluster.id, "team": team.id, "name": clicked, "partitions": 1},
        format="json",
    )
    assert made.status_code == 201, made.json()
    without_payments = [d for d in changed if d["metadata"]["name"] != payments]
    kept = _plan(client, without_payments, **placed)
    assert _changes(kept) == {}
    assert [u["name"] for u in kept["undeclared"]] == [payments]
    pruned = _plan(client, without_payments, prune=True, **placed)
    assert {k: c["action"] for k, c in _changes(pruned).items()} == {("Topic", payments): "delete"}
    _apply(client, without_payments, prune=True, **placed)
    live = _live_topics(other)
    assert payments not in live
    assert {orders, clicked} <= live
    assert Topic.objects.filter(cluster=cluster, name=clicked).exists()


def test_a_guardrail_violation_is_refused_at_plan_time_with_its_reason_and_apply_changes_nothing(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    documents = [
        {
            "kind": "Topic",
            "metadata": {
                "name": world.topic_prefix_a + "fine",
                "team": world.team_a.slug,
                "cluster": world.cluster.name,
            },
            "spec": {"partitions": 1},
        },
        {
            "kind": "Topic",
            "metadata": {
                "name": world.topic_prefix_a + "forever",
                "team": world.team_a.slug,
                "cluster": world.cluster.name,
            },
            "spec": {"partitions": 1, "configs": {"retention.ms": -1}},
        },
        {
            "kind": "Topic",
            "metadata": {
                "name": world.topic_prefix_b + "theirs",
                "team": world.team_a.slug,
                "cluster": world.cluster.name,
            },
            "spec": {"partitions": 1},
        },
    ]
    plan = _plan(world.developer_a, documents)
    actions = {c["name"]: (c["action"], (c.get("refusal") or {}).get("code")) for c in plan["changes"]}
    assert actions == {
        world.topic_prefix_a + "fine": ("create", None),
        world.topic_prefix_a + "forever": ("refused", "policy_violation"),
        world.topic_prefix_b + "theirs": ("refused", "policy_violation"),
    }
    (forever,) = [c for c in plan["changes"] if c["name"].endswith("forever")]
    assert "retention" in forever["refusal"]["message"]
    refused = world.developer_a.post(
        "/api/v1/declarative/apply/", {"documents": documents, "file_set": "repo/kafka"}, format="json"
    )
    assert refused.status_code == 409, refused.json()
    assert refused.json()["error"]["code"] == "plan_refused"
    assert not Topic.objects.filter(cluster=world.cluster, name=world.topic_prefix_a + "fine").exists()
    # A viewer may plan (it reads) but not apply: the services' own role checks answer.
    assert _plan(world.viewer_a, documents[:1])["counts"]["refused"] == 1


def _pause_during_third_create(broker: Any, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """SIGSTOPs the broker just after the third batch of topic creations read the cluster (batches of two):
    that batch is on its way (or applied, or not) when the broker freezes; what follows meets a broker
    that answers nothing."""
    monkeypatch.setattr(declarative_services, "TOPIC_CREATE_BATCH", 2)
    paused = threading.Event()
    handler = outcomes.HANDLERS[OperationKind.TOPIC_CREATE]
    real_look = handler.look
    looks = []

    def look_then_pause(operation: Any) -> outcomes.Look:
        look = real_look(operation)
        looks.append(operation.pk)
        if len(looks) == 3 and not paused.is_set():
            paused.set()
            threading.Timer(0.05, lambda: broker.process.send_signal(signal.SIGSTOP)).start()
        return look

    monkeypatch.setattr(handler, "look", look_then_pause)
    return paused


def test_a_broker_paused_mid_apply_gives_a_report_that_matches_the_cluster_the_audit_log_and_the_api(
    db, settings, secure_broker_factory, monkeypatch
) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    broker = secure_broker_factory()
    world = build_world(ManagedCluster.of_streamhub(broker))
    names = [world.topic_prefix_a + f"t{n}" for n in range(8)]
    documents = [
        {
            "kind": "Topic",
            "metadata": {"name": name, "team": world.team_a.slug, "cluster": world.cluster.name},
            "spec": {"partitions": 1},
        }
        for name in names
    ]
    paused = _pause_during_third_create(broker, monkeypatch)
    try:
        applied = _apply(world.developer_a, documents)
    finally:
        broker.process.send_signal(signal.SIGCONT)
    assert paused.is_set()
    change_set = applied["change_set"]
    report = {c["name"]: c for c in change_set["report"]["changes"]}
    statuses = [report[name]["status"] for name in names]
    assert statuses[:4] == ["applied"] * 4, statuses
    assert change_set["state"] == "partial", statuses
    assert "failed" in statuses or "unknown" in statuses or "pending" in statuses, statuses
    # Changes still being confirmed settle once the broker answers (as the beat would settle them).
    outcomes.settle_running(world.cluster)
    on_cluster = _live_topics(world.broker.client_config())
    listed = {
        t["name"]
        for t in world.developer_a.get("/api/v1/topics/", {"cluster": world.cluster.id, "limit": 100}).json()[
            "results"
        ]
    }
    for name, status in zip(names, statuses, strict=True):
        created = AuditEvent.objects.filter(
            action="topic.create", resource_name=name, result="success"
        ).exists()
        if status == "applied":
            assert (name in on_cluster, name in listed, created) == (True, True, True), (name, status)
        elif status in ("failed", "skipped"):  # never reported failed for something that happened
            assert (name in on_cluster, name in listed, created) == (False, False, False), (name, status)
        else:  # pending / unknown: the operation has settled now, and the three agree with each other
            assert (name in on_cluster) == (name in listed) == created, (name, status)
    (event,) = AuditEvent.objects.filter(action="change_set.apply")
    assert event.result == "failure"
    assert event.after["counts"]["applied"] == statuses.count("applied")
    listed_sets = world.developer_a.get("/api/v1/change-sets/").json()["results"]
    assert [s["id"] for s in listed_sets] == [change_set["id"]]

    # Applying again finishes the job. A create the broker never received stays "being confirmed" until its
    # operation gives up (60 s): the plan refuses it by the API's reason meanwhile, and the rest applies.
    still_running = set(
        Operation.objects.filter(state__in=ACTIVE_OPERATION_STATES).values_list("resource_name", flat=True)
    )
    if still_running:
        refusals = {
            c["name"]: c["refusal"]["code"]
            for c in _plan(world.developer_a, documents)["changes"]
            if c["action"] == "refused"
        }
        assert refusals == dict.fromkeys(still_running, "change_in_progress")
    ready = [d for d in documents if d["metadata"]["name"] not in still_running]
    again = _apply(world.developer_a, ready)
    assert again["change_set"]["state"] == "applied", again["change_set"]["report"]
    assert {d["metadata"]["name"] for d in ready} <= _live_topics(world.broker.client_config())
    assert _apply(world.developer_a, ready)["change_set"] is None


def test_grants_quotas_and_service_accounts_update_in_place_and_prune(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    place = {"team": world.team_a.slug, "cluster": world.cluster.name}
    account = {
        "kind": "ServiceAccount",
        "metadata": {"name": f"{world.account_a.name}-etl", "team": world.team_a.slug},
        "spec": {},
    }
    grant = {
        "kind": "AccessGrant",
        "metadata": {"name": "etl-access", **place},
        "spec": {
            "serviceAccount": account["metadata"]["name"],
            "template": "producer",
            "topicPrefix": world.topic_prefix_a,
        },
    }
    quota = {
        "kind": "Quota",
        "metadata": {"name": "etl", **place},
        "spec": {"user": account["metadata"]["name"], "values": {"producer_byte_rate": 1048576}},
    }
    first = _apply(world.developer_a, [account, grant, quota])
    assert first["change_set"]["state"] == "applied", first["change_set"]["report"]
    assert [c["kind"] for c in first["change_set"]["report"]["changes"]] == [
        "ServiceAccount",
        "AccessGrant",
        "Quota",
    ]
    principal = f"User:{account['metadata']['name']}"
    assert _acls_on_cluster(world, principal) == {("TOPIC", "WRITE"), ("TOPIC", "DESCRIBE")}

    consumer = {
        **grant,
        "spec": {**grant["spec"], "template": "consumer", "groupPrefix": world.group_prefix_a},
    }
    faster = {
        **quota,
        "spec": {**quota["spec"], "values": {"producer_byte_rate": 2097152, "consumer_byte_rate": 4194304}},
    }
    changes = _changes(_plan(world.developer_a, [account, consumer, faster]))
    assert changes[("AccessGrant", "etl-access")]["diff"] == {
        "template": {"from": "producer", "to": "consumer"},
        "groupPrefix": {"from": "", "to": world.group_prefix_a},
    }
    assert changes[("Quota", "etl")]["diff"] == {
        "values.consumer_byte_rate": {"from": None, "to": 4194304.0},
        "values.producer_byte_rate": {"from": 1048576.0, "to": 2097152.0},
    }
    assert _apply(world.developer_a, [account, consumer, faster])["change_set"]["state"] == "applied"
    grants = world.developer_a.get("/api/v1/access-grants/", {"cluster": world.cluster.id}).json()["results"]
    assert [
        (g["template"], g["group_prefix"]) for g in grants if g["service_account"] != world.account_a.id
    ] == [("consumer", world.group_prefix_a)]
    assert _changes(_plan(world.developer_a, [account, consumer, faster])) == {}
    assert _acls_on_cluster(world, principal) == {("TOPIC", "READ"), ("TOPIC", "DESCRIBE"), ("GROUP", "READ")}

    pruned = _plan(world.developer_a, [account, consumer], prune=True)
    assert {k: c["action"] for k, c in _changes(pruned).items()} == {("Quota", "etl"): "delete"}
    assert _apply(world.developer_a, [account, consumer], prune=True)["change_set"]["state"] == "applied"
    quotas = world.developer_a.get("/api/v1/quotas/", {"cluster": world.cluster.id}).json()["results"]
    assert [q for q in quotas if q["entity_key"].startswith(f"user={account['metadata']['name']}")] == []


def _statements_of_a_plan(client: APIClient, documents: list[dict]) -> int:
    counted = 0

    def count(execute, sql, params, many, context):  # Django's execute_wrapper protocol
        nonlocal counted
        counted += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        assert _changes(_plan(client, documents)) == {}
    return counted


def test_a_plan_reads_what_it_compares_once_not_once_per_document(kafka_world: KafkaWorld) -> None:
    """Planning a thousand topics with their grants took minutes: every document looked up its claim, its
    topic and its grant on its own. What remains per document is the guardrail the topics service checks
    (no change in progress), so two more applied topics with grants cost at most a statement each."""
    world = kafka_world
    place = {"team": world.team_a.slug, "cluster": world.cluster.name}

    def declared(count: int) -> list[dict]:
        documents = []
        for index in range(count):
            name = f"{world.topic_prefix_a}bulk-{index}"
            documents.append(
                {"kind": "Topic", "metadata": {"name": name, **place}, "spec": {"partitions": 1}}
            )
            documents.append(
                {
                    "kind": "AccessGrant",
                    "metadata": {"name": f"bulk-{index}-producer", **place},
                    "spec": {
                        "serviceAccount": world.account_a.name,
                        "template": "producer",
                        "topicPrefix": name,
                    },
                }
            )
        return documents

    assert _apply(world.developer_a, declared(2))["change_set"]["state"] == "applied"
    with_two = _statements_of_a_plan(world.developer_a, declared(2))
    assert _apply(world.developer_a, declared(4))["change_set"]["state"] == "applied"
    with_four = _statements_of_a_plan(world.developer_a, declared(4))

    assert with_four - with_two <= 2, (with_two, with_four)


def test_a_plan_beyond_the_teams_change_rate_is_refused_before_anything_happens(
    kafka_world: KafkaWorld,
) -> None:
    """Applying never stops midway with rate_limited: the plan counts its cluster changes against what the
    team may make now and refuses those past it, with the numbers."""
    world = kafka_world
    TeamPolicy.objects.update_or_create(team=world.team_a, defaults={"admin_operations_per_minute": 4})

    def topics(*names: str) -> list[dict]:
        return [
            {
                "kind": "Topic",
                "metadata": {"name": world.topic_prefix_a + name, "team": world.team_a.slug},
                "spec": {"partitions": 1},
            }
            for name in names
        ]

    placed = {"cluster": world.cluster.name}
    five = topics("a", "b", "c", "d", "e")
    plan = _plan(world.developer_a, five, **placed)
    assert [c["action"] for c in plan["changes"]] == ["create"] * 4 + ["refused"]
    refusal = plan["changes"][-1]["refusal"]
    assert refusal["code"] == "change_rate_limit"
    assert refusal["details"] == {
        "cluster_changes": 5,
        "limit_per_minute": 4,
        "made_in_last_minute": 0,
        "fit_now": 4,
    }
    assert "Apply at most 4 changes at a time" in refusal["message"]
    refused = world.developer_a.post(
        "/api/v1/declarative/apply/", {"documents": five, "file_set": "repo/kafka", **placed}, format="json"
    )
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "plan_refused")
    assert not Topic.objects.filter(cluster=world.cluster, name__startswith=world.topic_prefix_a).exists()

    # Three are applied whole; of the two left, one fits in the minute: the plan says to come back.
    assert _apply(world.developer_a, five[:3], **placed)["change_set"]["state"] == "applied"
    later = _changes(_plan(world.developer_a, five, **placed))
    assert [c["action"] for c in later.values()] == ["create", "refused"]
    details = later[("Topic", world.topic_prefix_a + "e")]["refusal"]["details"]
    assert (details["made_in_last_minute"], details["fit_now"], details["retry_after_seconds"]) == (3, 1, 60)


def test_topic_creations_go_in_one_request_and_each_is_reported_as_it_came_out(
    kafka_world: KafkaWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three topics in one CreateTopics request; the cluster refuses the middle one's config value (the plan
    checks names, the cluster values): the other two are created and reported applied, it is reported
    failed with the cluster's reason, and what follows the batch is skipped."""
    world = kafka_world
    requests: list[list[str]] = []
    real_create_topics = kafka_topics.create_topics

    def counted(connection: Any, topics: list, **options: Any) -> dict:
        requests.append([topic.name for topic in topics])
        return real_create_topics(connection, topics, **options)

    monkeypatch.setattr(kafka_topics, "create_topics", counted)
    place = {"team": world.team_a.slug, "cluster": world.cluster.name}
    names = [world.topic_prefix_a + name for name in ("one", "two", "three")]
    documents = [
        {
            "kind": "Topic",
            "metadata": {"name": name, **place},
            "spec": {
                "partitions": 1,
                "configs": {"cleanup.policy": "bogus" if name.endswith("two") else "delete"},
            },
        }
        for name in names
    ]
    documents.append(
        {
            "kind": "AccessGrant",
            "metadata": {"name": "after-the-topics", **place},
            "spec": {
                "serviceAccount": world.account_a.name,
                "template": "producer",
                "topicPrefix": world.topic_prefix_a,
            },
        }
    )
    change_set = _apply(world.developer_a, documents)["change_set"]
    assert requests == [names]
    statuses = {
        c["name"]: (c["status"], (c.get("reason") or {}).get("code")) for c in change_set["report"]["changes"]
    }
    assert statuses[names[0]] == statuses[names[2]] == ("applied", None)
    assert statuses[names[1]][0] == "failed"
    assert statuses["after-the-topics"] == ("skipped", None)
    assert change_set["state"] == "partial"
    on_cluster = _live_topics(world.broker.client_config())
    assert (names[0] in on_cluster, names[1] in on_cluster, names[2] in on_cluster) == (True, False, True)
    created = set(
        AuditEvent.objects.filter(
            action="topic.create", result="success", resource_name__in=names
        ).values_list("resource_name", flat=True)
    )
    assert created == {names[0], names[2]}

    # Grants likewise: every binding of three grants in one CreateAcls request, each grant recorded.
    acl_requests: list[int] = []
    real_create_acls_each = acls_services.create_acls_each

    def counted_acls(connection: Any, acls: list, **options: Any) -> dict:
        acl_requests.append(len(set(acls)))
        return real_create_acls_each(connection, acls, **options)

    monkeypatch.setattr(acls_services, "create_acls_each", counted_acls)
    grants = [
        {
            "kind": "AccessGrant",
            "metadata": {"name": f"grant-{template}", **place},
            "spec": {"serviceAccount": world.account_a.name, "template": template, "topicPrefix": prefix},
        }
        for template, prefix in (("producer", names[0]), ("consumer", names[2]), ("producer", names[2]))
    ]
    for grant in grants:
        if grant["spec"]["template"] == "consumer":
            grant["spec"]["groupPrefix"] = world.group_prefix_a
    grants[2]["metadata"]["name"] = "grant-producer-three"
    granted = _apply(world.developer_a, grants)["change_set"]
    assert granted["state"] == "applied", granted["report"]
    assert AccessGrant.objects.filter(service_account=world.account_a).count() == 3
    bindings = AclBinding.objects.filter(grant__service_account=world.account_a)
    assert acl_requests == [
        len({(b.resource_type, b.resource_name, b.pattern_type, b.operation) for b in bindings})
    ]
