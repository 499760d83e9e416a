"""Guardrails refuse what would hurt a shared cluster before it reaches the cluster; a change the cluster
does not confirm in time becomes an operation that ends only after the control plane has looked, and the
database, the audit log and the API then say the same as the cluster."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable

import pytest
from django.core.cache import cache

from controlplane.audit.models import AuditEvent
from controlplane.clusters import outcomes
from controlplane.clusters.choices import OperationKind
from controlplane.clusters.models import Operation
from controlplane.topics.models import Topic
from tests.fixtures.broker import SecureBrokerProcess
from tests.fixtures.engines import ManagedCluster
from tests.integration.topics.world import KafkaWorld, build_world

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

BIG = 10_000


def _topics_on_cluster(world: KafkaWorld) -> dict:
    return world.admin_client().list_topics(timeout=30).topics


def _request(world: KafkaWorld, name: str, partitions: int = BIG) -> dict:
    return {"cluster": world.cluster.id, "team": world.team_a.id, "name": name, "partitions": partitions}


def test_a_10000_partition_topic_is_refused_at_once_and_nothing_reaches_the_cluster(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    name = world.topic_prefix_a + "huge"

    started = time.monotonic()
    response = world.developer_a.post("/api/v1/topics/", _request(world, name), format="json")
    elapsed = time.monotonic() - started

    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "policy_violation"
    assert next(v["code"] for v in error["details"]["violations"]) == "too_many_partitions"
    assert "1000 allowed per topic" in error["message"]
    assert response["X-Request-ID"] == error["request_id"]
    assert elapsed < 2.0  # a database check, no cluster round trip
    assert name not in _topics_on_cluster(world)
    assert not Operation.objects.filter(resource_name=name).exists()
    (event,) = AuditEvent.objects.filter(action="topic.create", resource_name=name)
    assert (event.result, event.request_id) == ("failure", error["request_id"])


def test_the_cluster_budget_counts_replicas_on_its_brokers(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    policy = world.team_a.policy
    assert (
        world.org_admin.patch(
            f"/api/v1/policies/{policy.id}/",
            {"max_partitions_per_topic": 5000, "max_total_partitions": 5000},
            format="json",
        ).status_code
        == 200
    )
    name = world.topic_prefix_a + "wide"

    response = world.developer_a.post("/api/v1/topics/", _request(world, name, 4500), format="json")

    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "cluster_partition_budget_exceeded"
    assert error["details"]["budget"]["per_broker"] == 4000
    assert error["details"]["budget"]["brokers"] == 1
    assert name not in _topics_on_cluster(world)
    budget = world.org_admin.get(f"/api/v1/clusters/{world.cluster.id}/").json()["partition_budget"]
    assert budget["max_replicas"] == 4000


def _pause_after_first_look(broker: SecureBrokerProcess, monkeypatch, delay: float) -> threading.Event:
    """SIGSTOPs the broker `delay` seconds after the request's read of the cluster, i.e. while the create
    is on its way or being applied: the cluster is really frozen mid-call."""
    paused = threading.Event()
    handler = outcomes.HANDLERS[OperationKind.TOPIC_CREATE]
    real_look: Callable = handler.look

    def look_then_pause(operation: Operation) -> outcomes.Look:
        look = real_look(operation)
        if not paused.is_set():
            paused.set()
            threading.Timer(delay, lambda: broker.process.send_signal(signal.SIGSTOP)).start()
        return look

    monkeypatch.setattr(handler, "look", look_then_pause)
    return paused


def test_with_the_limit_raised_a_slow_cluster_ends_in_an_operation_that_matches_the_cluster(
    db, settings, secure_broker_factory, monkeypatch
) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    broker = secure_broker_factory()
    world = build_world(ManagedCluster.of_streamhub(broker))
    name = world.topic_prefix_a + "huge"
    policy = world.team_a.policy
    raised = world.org_admin.patch(
        f"/api/v1/policies/{policy.id}/",
        {"max_partitions_per_topic": BIG, "max_total_partitions": BIG},
        format="json",
    )
    assert raised.status_code == 200, raised.json()
    assert raised.json()["effective_limits"]["max_partitions_per_topic"] == BIG
    budget = world.org_admin.patch(
        f"/api/v1/clusters/{world.cluster.id}/guardrails/",
        {"partition_replicas_per_broker": BIG},
        format="json",
    )
    assert budget.status_code == 200, budget.json()
    paused = _pause_after_first_look(broker, monkeypatch, delay=0.3)

    try:
        started = time.monotonic()
        response = world.developer_a.post("/api/v1/topics/", _request(world, name), format="json")
        answered_after = time.monotonic() - started
    finally:
        time.sleep(1)
        broker.process.send_signal(signal.SIGCONT)
    assert paused.is_set()

    # No answer in time is not a failure: the API hands out the operation that settles it.
    assert response.status_code == 202, response.json()
    assert answered_after < 20
    accepted = response.json()
    operation = accepted["operation"]
    assert operation["kind"] == "topic_create"
    assert operation["state"] == "running"
    assert operation["request_id"] == response["X-Request-ID"]
    assert accepted["operation_url"].endswith(f"/api/v1/operations/{operation['id']}/")
    assert not AuditEvent.objects.filter(action="topic.create", resource_name=name).exists()
    # Another team does not see it.
    assert world.admin_b.get(f"/api/v1/operations/{operation['id']}/").status_code == 404

    deadline = time.monotonic() + 120
    while operation["state"] == "running" and time.monotonic() < deadline:
        time.sleep(1)
        polled = world.developer_a.get(f"/api/v1/operations/{operation['id']}/")
        assert polled.status_code == 200
        operation = polled.json()
    assert operation["state"] in ("succeeded", "failed"), operation

    on_cluster = _topics_on_cluster(world).get(name)
    rows = Topic.objects.filter(cluster=world.cluster, name=name)
    events = list(AuditEvent.objects.filter(action="topic.create", resource_name=name))
    assert len(events) == 1
    (event,) = events
    assert event.request_id == operation["request_id"]
    listed = world.developer_a.get("/api/v1/topics/", {"name": name}).json()["results"]
    if operation["state"] == "succeeded":
        assert on_cluster is not None
        assert len(on_cluster.partitions) == BIG
        (row,) = rows
        assert (row.team_id, row.managed, row.partitions, row.observed_partitions) == (
            world.team_a.id,
            True,
            BIG,
            BIG,
        )
        assert (event.result, event.after["partitions"]) == ("success", BIG)
        assert [topic["name"] for topic in listed] == [name]
        assert operation["observed"] == {"exists": True, "partitions": BIG, "replication_factor": 1}
    else:
        assert on_cluster is None
        assert not rows.exists()
        assert event.result == "failure"
        assert listed == []


def test_an_acl_change_a_hung_cluster_does_not_answer_is_an_unknown_outcome_never_a_failure(
    db, settings, secure_broker_factory
) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    broker = secure_broker_factory()
    world = build_world(ManagedCluster.of_streamhub(broker))
    body = {
        "cluster": world.cluster.id,
        "team": world.team_a.id,
        "resource_type": "TOPIC",
        "resource_name": world.topic_prefix_a,
        "pattern_type": "PREFIXED",
        "principal": f"User:{world.account_a.name}",
        "operation": "READ",
    }
    broker.process.send_signal(signal.SIGSTOP)
    try:
        response = world.developer_a.post("/api/v1/acls/", body, format="json")
    finally:
        broker.process.send_signal(signal.SIGCONT)

    assert response.status_code == 503, response.json()
    error = response.json()["error"]
    assert error["code"] == "outcome_unknown"
    assert error["request_id"] == response["X-Request-ID"]
    (event,) = AuditEvent.objects.filter(action="acl.create")
    assert (event.result, event.request_id) == ("unknown", error["request_id"])
    # Once the cluster answers again the same request is confirmed by the cluster itself.
    retried = world.developer_a.post("/api/v1/acls/", body, format="json")
    assert retried.status_code == 201, retried.json()


def test_a_teams_cluster_changes_per_minute_are_limited_and_refusals_do_not_count(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    policy = world.team_a.policy
    assert (
        world.org_admin.patch(
            f"/api/v1/policies/{policy.id}/", {"admin_operations_per_minute": 2}, format="json"
        ).status_code
        == 200
    )
    names = [world.topic_prefix_a + f"rate-{n}" for n in range(3)]
    for name in names[:2]:
        assert (
            world.developer_a.post("/api/v1/topics/", _request(world, name, 1), format="json").status_code
            == 201
        )

    for _ in range(2):  # the refusal itself is not a change: asking again is refused the same way
        refused = world.developer_a.post("/api/v1/topics/", _request(world, names[2], 1), format="json")
        assert refused.status_code == 429, refused.json()
        assert refused.json()["error"]["code"] == "rate_limited"
        assert refused.json()["error"]["details"]["limit_per_minute"] == 2
    assert names[2] not in _topics_on_cluster(world)
    # ACL changes of the team count against the same limit.
    acl = {
        "cluster": world.cluster.id,
        "team": world.team_a.id,
        "resource_type": "TOPIC",
        "resource_name": world.topic_prefix_a,
        "pattern_type": "PREFIXED",
        "principal": f"User:{world.account_a.name}",
        "operation": "READ",
    }
    assert world.developer_a.post("/api/v1/acls/", acl, format="json").status_code == 429


def test_org_admins_set_limits_for_all_their_teams_and_a_team_policy_still_overrides_them(
    kafka_world: KafkaWorld,
) -> None:
    world = kafka_world
    organization = world.team_a.organization_id
    url = f"/api/v1/organizations/{organization}/guardrails/"
    assert world.developer_a.patch(url, {"max_partitions_per_topic": 2000}, format="json").status_code == 403
    raised = world.org_admin.patch(url, {"max_partitions_per_topic": 2000}, format="json")
    assert raised.status_code == 200, raised.json()
    assert raised.json()["limits"] == {"max_partitions_per_topic": 2000}
    assert world.developer_a.get(url).json()["effective_limits"]["max_partitions_per_topic"] == 2000
    policy = world.developer_a.get(f"/api/v1/policies/{world.team_a.policy.id}/").json()
    assert policy["effective_limits"]["max_partitions_per_topic"] == 2000
    name = world.topic_prefix_a + "org-raised"
    dry_run = {**_request(world, name, 1500), "validate_only": True}

    assert world.developer_a.post("/api/v1/topics/", dry_run, format="json").status_code == 200

    world.org_admin.patch(
        f"/api/v1/policies/{world.team_a.policy.id}/", {"max_partitions_per_topic": 100}, format="json"
    )
    refused = world.developer_a.post("/api/v1/topics/", dry_run, format="json")
    assert refused.status_code == 400
    assert "100 allowed per topic" in refused.json()["error"]["message"]
    assert name not in _topics_on_cluster(world)
    assert AuditEvent.objects.filter(action="organization.set_guardrails", result="success").count() == 1
