"""AlertChannel and AlertRule documents: exported, applied to a fresh team, diffed, refused by the alert
services' own checks at plan time, pruned; a channel's URL never shows in a plan, a report or a claim."""

from __future__ import annotations

import json

import pytest

from controlplane.alerts import services as alerts
from controlplane.alerts.models import AlertRule, NotificationChannel
from controlplane.declarative.models import ChangeSet, ManagedResource
from tests.fixtures.engines import STREAMHUB, ManagedCluster
from tests.integration.declarative.test_plan_and_apply import (
    SYSTEM,
    _apply,
    _changes,
    _fresh_team_on_another_cluster,
    _plan,
)
from tests.integration.topics.world import KafkaWorld

pytestmark = pytest.mark.integration
HOOK = "https://hooks.example.com/services/T000/B000/first-secret-token"
ROTATED = "https://hooks.example.com/services/T000/B000/second-secret-token"


@pytest.fixture
def engine() -> str:
    """Rules and channels live in the control plane's database: one engine is enough."""
    return STREAMHUB


def _with_url(documents: list[dict], url: str) -> list[dict]:
    """What the CLI sends once it has read the channel's ${ENV_VAR}."""
    return [
        {**d, "spec": {**d["spec"], "url": url}} if d["kind"] == "AlertChannel" and "url" in d["spec"] else d
        for d in documents
    ]


def test_rules_and_channels_export_apply_diff_refuse_and_prune_without_showing_the_url(
    kafka_world: KafkaWorld, managed_cluster: ManagedCluster
) -> None:
    world = kafka_world
    channel, _secret = alerts.create_channel(
        actor=SYSTEM, team=world.team_a, name="oncall", kind="webhook", url=HOOK
    )
    alerts.create_rule(
        actor=SYSTEM,
        team=world.team_a,
        channels=[channel],
        name="orders-lag",
        cluster=world.cluster,
        metric="lag_messages",
        threshold=1000,
        for_seconds=60,
    )
    exported = world.developer_a.get(
        "/api/v1/declarative/export/", {"team": world.team_a.slug, "cluster": world.cluster.id}
    ).json()["documents"]
    documents = [d for d in exported if d["kind"] in ("AlertChannel", "AlertRule")]
    assert documents == [
        {
            "apiVersion": "streamhub.io/v1",
            "kind": "AlertChannel",
            "metadata": {"name": "oncall", "team": world.team_a.slug},
            "spec": {"type": "webhook", "enabled": True, "url": "${STREAMHUB_CHANNEL_ONCALL_URL}"},
        },
        {
            "apiVersion": "streamhub.io/v1",
            "kind": "AlertRule",
            "metadata": {"name": "orders-lag", "team": world.team_a.slug, "cluster": world.cluster.name},
            "spec": {"threshold": 1000.0, "forSeconds": 60, "metric": "lag_messages", "channels": ["oncall"]},
        },
    ]
    documents = _with_url(documents, HOOK)

    team, cluster, client = _fresh_team_on_another_cluster(managed_cluster, world.topic_prefix_a)
    placed = {"team": team.slug, "cluster": cluster.name}
    first = _plan(client, documents, **placed)
    assert HOOK not in json.dumps(first)
    created = _changes(first)
    assert {key: c["action"] for key, c in created.items()} == {
        ("AlertChannel", "oncall"): "create",
        ("AlertRule", "orders-lag"): "create",  # its channel is one the same plan creates
    }
    assert created[("AlertChannel", "oncall")]["diff"]["url"] == {"from": None, "to": "(secret)"}
    applied = _apply(client, documents, **placed)
    assert applied["change_set"]["state"] == "applied", applied["change_set"]["report"]
    rule = AlertRule.objects.get(team=team, name="orders-lag")
    assert (rule.cluster_id, rule.threshold, [c.name for c in rule.channels.all()]) == (
        cluster.id,
        1000.0,
        ["oncall"],
    )
    assert NotificationChannel.objects.get(team=team, name="oncall").url == HOOK
    assert _changes(_plan(client, documents, **placed)) == {}
    assert _apply(client, documents, **placed)["change_set"] is None

    # One field changed: exactly that diff. A new URL: "secret changed", and the URL nowhere.
    changed = [
        {**d, "spec": {**d["spec"], "threshold": 5000}} if d["kind"] == "AlertRule" else d
        for d in _with_url(documents, ROTATED)
    ]
    plan = _plan(client, changed, **placed)
    assert {key: c["diff"] for key, c in _changes(plan).items()} == {
        ("AlertChannel", "oncall"): {"url": {"from": "(secret)", "to": "(secret changed)"}},
        ("AlertRule", "orders-lag"): {"threshold": {"from": 1000.0, "to": 5000.0}},
    }
    applied = _apply(client, changed, **placed)
    assert applied["change_set"]["state"] == "applied"
    assert NotificationChannel.objects.get(team=team, name="oncall").url == ROTATED
    assert AlertRule.objects.get(team=team, name="orders-lag").threshold == 5000.0
    stored = json.dumps(
        [
            plan,
            applied,
            list(ChangeSet.objects.values("report")),
            list(ManagedResource.objects.values("spec")),
        ]
    )
    assert HOOK not in stored
    assert ROTATED not in stored
    claims = client.get("/api/v1/managed-resources/", {"kind": "AlertChannel"})
    assert claims.status_code == 200, claims.json()
    assert ROTATED not in json.dumps(claims.json())

    # A rule watching every team's groups needs an org admin: refused at plan time, with the reason.
    everyone = [
        {**d, "spec": {**d["spec"], "allTeams": True}} if d["kind"] == "AlertRule" else d for d in changed
    ]
    refused = _changes(_plan(client, everyone, **placed))[("AlertRule", "orders-lag")]
    assert (refused["action"], refused["refusal"]["code"]) == ("refused", "permission_denied")
    assert not AlertRule.objects.get(team=team, name="orders-lag").all_teams

    # Prune deletes the undeclared managed rule, never one made through the API.
    alerts.create_rule(actor=SYSTEM, team=team, name="clicked", metric="lag_messages", threshold=1)
    channel_only = [d for d in changed if d["kind"] == "AlertChannel"]
    pruned = _plan(client, channel_only, prune=True, **placed)
    assert {key: c["action"] for key, c in _changes(pruned).items()} == {
        ("AlertRule", "orders-lag"): "delete"
    }
    assert _apply(client, channel_only, prune=True, **placed)["change_set"]["state"] == "applied"
    assert sorted(AlertRule.objects.filter(team=team).values_list("name", flat=True)) == ["clicked"]
    assert NotificationChannel.objects.filter(team=team, name="oncall").exists()


def test_a_channel_name_another_team_manages_as_code_is_refused(kafka_world: KafkaWorld) -> None:
    world = kafka_world

    def channel(team: str) -> dict:
        return {
            "kind": "AlertChannel",
            "metadata": {"name": "oncall", "team": team},
            "spec": {"type": "email", "emailRecipients": [f"oncall@{team}.example.com"]},
        }

    assert _apply(world.developer_a, [channel(world.team_a.slug)])["change_set"]["state"] == "applied"
    # The same file set name (a monorepo folder both teams use): still not team b's to take.
    (refused,) = _plan(world.admin_b, [channel(world.team_b.slug)])["changes"]
    assert (refused["action"], refused["refusal"]["code"]) == ("refused", "managed_by_other_team")
    assert not NotificationChannel.objects.filter(team=world.team_b).exists()
