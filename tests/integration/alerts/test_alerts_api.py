"""The alerting REST API: team scoping, validation in the error shape, secrets shown once, acknowledgement."""

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.alerts.evaluation import evaluate_alerts
from controlplane.alerts.models import Alert, NotificationChannel
from controlplane.audit.models import AuditEvent
from controlplane.core.encryption import decrypt_secret
from tests.integration.alerts.conftest import World, created

RULE = {
    "name": "search is slow",
    "metric": "lag_messages",
    "comparison": "gt",
    "threshold": 1000,
    "resolve_threshold": 100,
    "for_seconds": 0,
}


def _rule(world: World, client=None, **overrides) -> dict:
    body = {"team": world.team.pk, **RULE, **overrides}
    return created((client or world.developer).post("/api/v1/alert-rules/", body, format="json"))


def test_it_shows_a_webhook_secret_only_in_the_create_response_and_stores_it_encrypted(world: World) -> None:
    body = {"team": world.team.pk, "name": "hook", "kind": "webhook", "url": "https://example.com/hook"}
    channel = created(world.developer.post("/api/v1/alert-channels/", body, format="json"))
    stored = NotificationChannel.objects.get(pk=channel["id"])
    assert channel["signed"] is True
    assert channel["secret"] not in stored.secret_encrypted
    assert decrypt_secret(stored.secret_encrypted) == channel["secret"]
    again = world.developer.get(f"/api/v1/alert-channels/{channel['id']}/").json()
    assert "secret" not in again
    audit = AuditEvent.objects.get(action="alert_channel.create")
    assert channel["secret"] not in str(audit.after)

    rotated = created(world.developer.post(f"/api/v1/alert-channels/{channel['id']}/rotate-secret/"), 200)
    assert rotated["secret"] != channel["secret"]
    stored.refresh_from_db()
    assert decrypt_secret(stored.secret_encrypted) == rotated["secret"]


def test_slack_urls_are_credentials_and_are_not_shown_in_full(world: World) -> None:
    url = "https://hooks.slack.com/services/T000/B000/XXXXSECRET"
    body = {"team": world.team.pk, "name": "chat", "kind": "slack", "url": url}
    channel = created(world.developer.post("/api/v1/alert-channels/", body, format="json"))
    assert channel["url"] == "https://hooks.slack.com/…"
    assert channel["secret"] == ""


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "webhook", "url": ""}, "url"),
        ({"kind": "webhook", "url": "ftp://example.com/x"}, "url"),
        ({"kind": "email", "email_recipients": []}, "email_recipients"),
        ({"kind": "email", "email_recipients": ["not an address"]}, "email_recipients"),
    ],
)
def test_it_refuses_channels_without_a_usable_destination(world: World, body: dict, field: str) -> None:
    response = world.developer.post(
        "/api/v1/alert-channels/", {"team": world.team.pk, "name": "x", **body}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert field in response.json()["error"]["details"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"threshold": None}, "threshold"),
        ({"resolve_threshold": 5000}, "resolve_threshold"),
        ({"metric": "status", "threshold": None, "resolve_threshold": None, "statuses": []}, "statuses"),
        ({"metric": "status", "statuses": ["STALLED"]}, "threshold"),
        ({"metric": "speed"}, "metric"),
        ({"for_seconds": -1}, "for_seconds"),
        ({"renotify_interval_seconds": 5}, "renotify_interval_seconds"),
    ],
)
def test_it_names_the_field_at_fault_when_a_rule_is_invalid(
    world: World, overrides: dict, field: str
) -> None:
    body = {"team": world.team.pk, **RULE, **overrides}
    response = world.developer.post("/api/v1/alert-rules/", body, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert list(error["details"]) == [field]


def test_a_rule_cannot_send_to_another_teams_channel(world: World) -> None:
    body = {
        "team": world.other_team.pk,
        "name": "theirs",
        "kind": "email",
        "email_recipients": ["o@example.com"],
    }
    theirs = created(world.admin.post("/api/v1/alert-channels/", body, format="json"))
    response = world.admin.post(
        "/api/v1/alert-rules/", {"team": world.team.pk, **RULE, "channels": [theirs["id"]]}, format="json"
    )
    assert response.status_code == 400
    # By id only: the refusal names no other team's objects.
    assert response.json()["error"]["details"]["channels"] == [
        f"These channels belong to another team: {theirs['id']}."
    ]
    # A developer of the team cannot even name it: to them it does not exist (404, as an id in the path).
    response = world.developer.post(
        "/api/v1/alert-rules/", {"team": world.team.pk, **RULE, "channels": [theirs["id"]]}, format="json"
    )
    assert response.status_code == 404
    assert "does not exist" in str(response.json()["error"]["details"]["channels"])


def test_tenants_see_only_their_teams_rules_and_org_admins_see_all(world: World) -> None:
    mine = _rule(world)
    theirs = _rule(world, world.admin, team=world.other_team.pk, name="other team's rule")
    names = {rule["name"] for rule in world.developer.get("/api/v1/alert-rules/").json()["results"]}
    assert names == {mine["name"]}
    assert world.outsider.get(f"/api/v1/alert-rules/{mine['id']}/").status_code == 404
    assert (
        world.outsider.patch(
            f"/api/v1/alert-rules/{mine['id']}/", {"threshold": 1}, format="json"
        ).status_code
        == 404
    )
    all_names = {rule["name"] for rule in world.admin.get("/api/v1/alert-rules/").json()["results"]}
    assert all_names == {mine["name"], theirs["name"]}


def test_viewers_read_but_do_not_change_rules(world: World) -> None:
    rule = _rule(world)
    assert world.viewer.get(f"/api/v1/alert-rules/{rule['id']}/").status_code == 200
    response = world.viewer.patch(f"/api/v1/alert-rules/{rule['id']}/", {"threshold": 5}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


def test_an_update_is_checked_against_the_rules_other_values(world: World) -> None:
    rule = _rule(world)
    response = world.developer.patch(f"/api/v1/alert-rules/{rule['id']}/", {"threshold": 50}, format="json")
    assert response.status_code == 400
    assert list(response.json()["error"]["details"]) == ["resolve_threshold"]
    ok = world.developer.patch(
        f"/api/v1/alert-rules/{rule['id']}/", {"threshold": 50, "resolve_threshold": 10}, format="json"
    )
    assert ok.status_code == 200
    assert (ok.json()["threshold"], ok.json()["resolve_threshold"]) == (50, 10)


def test_alerts_are_listed_for_their_team_acknowledged_once_and_resolved_quietly_when_disabled(
    world: World,
) -> None:
    rule = _rule(world)
    _rule(world, world.admin, team=world.other_team.pk, name="theirs")
    now = timezone.now()
    ours = world.run(now, {"payments-a": 500.0, "payments-b": 1.0})  # 5000 and 10 messages
    theirs = world.run(now, {"search-a": 500.0}, team=world.other_team)
    evaluate_alerts(replace(ours, groups=ours.groups + theirs.groups))  # one run sees the whole cluster
    active = world.developer.get("/api/v1/alerts/", {"active": "true"}).json()["results"]
    assert [(a["group_name"], a["state"], a["value"], a["rule_name"]) for a in active] == [
        ("payments-a", "firing", 5000.0, rule["name"])
    ]
    assert len(world.admin.get("/api/v1/alerts/", {"active": "true"}).json()["results"]) == 2

    alert_id = active[0]["id"]
    assert world.viewer.post(f"/api/v1/alerts/{alert_id}/acknowledge/").status_code == 403
    acknowledged = created(world.developer.post(f"/api/v1/alerts/{alert_id}/acknowledge/"), 200)
    assert acknowledged["acknowledged_by_name"] == "dave"
    assert acknowledged["acknowledged_at"] is not None
    assert world.developer.post(f"/api/v1/alerts/{alert_id}/acknowledge/").status_code == 409
    assert world.outsider.post(f"/api/v1/alerts/{alert_id}/acknowledge/").status_code == 404
    assert world.developer.get("/api/v1/alerts/", {"acknowledged": "true"}).json()["count"] == 1

    world.developer.patch(f"/api/v1/alert-rules/{rule['id']}/", {"enabled": False}, format="json")
    alert = Alert.objects.get(pk=alert_id)
    assert alert.state == "resolved"
    assert alert.reason == "The rule was disabled."
    assert not alert.notifications.exists()


def test_silences_are_created_listed_and_expired(world: World) -> None:
    rule = _rule(world)
    body = {
        "team": world.team.pk,
        "rule": rule["id"],
        "group_pattern": "payments-*",
        "ends_at": (timezone.now() + timedelta(hours=2)).isoformat(),
        "comment": "maintenance",
    }
    silence = created(world.developer.post("/api/v1/alert-silences/", body, format="json"))
    assert (silence["state"], silence["created_by_name"], silence["rule_name"]) == (
        "active",
        "dave",
        rule["name"],
    )
    assert world.developer.get("/api/v1/alert-silences/", {"state": "active"}).json()["count"] == 1
    expired = created(world.developer.post(f"/api/v1/alert-silences/{silence['id']}/expire/"), 200)
    assert expired["state"] == "expired"
    assert world.developer.post(f"/api/v1/alert-silences/{silence['id']}/expire/").status_code == 409

    past = {**body, "ends_at": (timezone.now() - timedelta(minutes=1)).isoformat()}
    response = world.developer.post("/api/v1/alert-silences/", past, format="json")
    assert response.status_code == 400
    assert "ends_at" in response.json()["error"]["details"]


def test_evaluation_keeps_one_alert_per_subject_with_its_latest_value(world: World) -> None:
    _rule(world, for_seconds=60)
    start = timezone.now()
    for offset, seconds in [(0, 200.0), (15, 300.0), (30, 250.0)]:
        evaluate_alerts(world.run(start + timedelta(seconds=offset), {"payments-a": seconds}))
    alert = Alert.objects.get()
    assert alert.state == "pending"
    assert alert.value == 2500  # 250 s of lag at 10 messages/s in the test runs
    assert alert.pending_since == start
    assert alert.last_evaluated_at == start + timedelta(seconds=30)
    evaluate_alerts(world.run(start + timedelta(seconds=60), {"payments-a": 300.0}))
    alert.refresh_from_db()
    assert alert.state == "firing"
    assert alert.fired_at == start + timedelta(seconds=60)
    evaluate_alerts(world.run(start + timedelta(seconds=75), {}))  # the group is gone
    alert.refresh_from_db()
    assert alert.state == "resolved"
    assert alert.reason == "The group is no longer observed."
