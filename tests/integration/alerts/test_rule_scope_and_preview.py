"""Org admins' rules over every team's groups, and the preview of the groups a rule matches now."""

from dataclasses import asdict

import pytest
from django.utils import timezone

from controlplane.alerts.evaluation import evaluate_alerts
from controlplane.alerts.models import Alert
from controlplane.groups.models import ConsumerGroup
from controlplane.lag.models import GroupLag
from controlplane.lag.observations import HEALTH_SEVERITY
from tests.integration.alerts.conftest import World, _group, created

pytestmark = pytest.mark.integration


def _rule(world: World, client, **body) -> dict:
    defaults = {
        "team": world.team.pk,
        "name": "any lag",
        "metric": "lag_seconds",
        "threshold": 30,
        "for_seconds": 0,
    }
    return created(client.post("/api/v1/alert-rules/", {**defaults, **body}, format="json"))


def test_only_org_admins_make_rules_over_every_teams_groups(world: World) -> None:
    refused = world.developer.post(
        "/api/v1/alert-rules/",
        {"team": world.team.pk, "name": "all", "metric": "lag_seconds", "threshold": 30, "all_teams": True},
        format="json",
    )
    assert refused.status_code == 403
    rule = _rule(world, world.admin, name="fleet", all_teams=True)
    assert rule["all_teams"] is True

    # A group of the other team breaches: the org admin's all-teams rule fires; a team rule would not.
    _rule(world, world.developer, name="team only")
    evaluate_alerts(world.run(timezone.now(), {"search-indexer": 90.0}, team=world.other_team))
    [alert] = Alert.objects.all()
    assert alert.rule.name == "fleet"
    assert alert.group_name == "search-indexer"
    # The developer cannot turn the org admin's rule into a team rule or change it.
    assert (
        world.developer.patch(
            f"/api/v1/alert-rules/{rule['id']}/", {"all_teams": False}, format="json"
        ).status_code
        == 403
    )


def _sampled(world: World, team, name: str, seconds: float) -> None:
    observation = _group(world.cluster.pk, team.pk, 0, name, seconds)
    group = ConsumerGroup.objects.create(cluster=world.cluster, team=team, name=name)
    GroupLag.objects.create(
        group=group, cluster=world.cluster, status=observation.status, severity=HEALTH_SEVERITY[observation.status],
        reason=observation.reason, lag_messages=observation.lag_messages, lag_seconds=observation.lag_seconds,
        time_to_catch_up_seconds=observation.time_to_catch_up_seconds,
        partitions=[asdict(partition) for partition in observation.partitions], observed_at=timezone.now(),
    )  # fmt: skip


def test_the_preview_lists_the_groups_a_rule_matches_now(world: World) -> None:
    _sampled(world, world.team, "payments-ledger", 90.0)
    _sampled(world, world.team, "payments-audit", 5.0)
    _sampled(world, world.other_team, "search-indexer", 120.0)
    body = {"team": world.team.pk, "metric": "lag_seconds", "threshold": 30, "group_pattern": "payments-*"}

    preview = world.developer.post("/api/v1/alert-rules/preview/", body, format="json")
    assert preview.status_code == 200, preview.json()
    assert preview.json()["count"] == 2
    assert {(g["group"], g["breaches_now"]) for g in preview.json()["groups"]} == {
        ("payments-ledger", True),
        ("payments-audit", False),
    }
    narrowed = world.developer.post(
        "/api/v1/alert-rules/preview/", {**body, "group_pattern": "*-ledger"}, format="json"
    ).json()
    assert [g["group"] for g in narrowed["groups"]] == ["payments-ledger"]

    # An org admin's all-teams preview sees the other team's group too; a developer may not ask for it.
    fleet = world.admin.post(
        "/api/v1/alert-rules/preview/", {**body, "group_pattern": "*", "all_teams": True}, format="json"
    ).json()
    assert {g["group"] for g in fleet["groups"]} == {"payments-ledger", "payments-audit", "search-indexer"}
    assert (
        world.developer.post(
            "/api/v1/alert-rules/preview/", {**body, "all_teams": True}, format="json"
        ).status_code
        == 403
    )
    # Nothing was saved.
    assert world.developer.get("/api/v1/alert-rules/").json()["count"] == 0
