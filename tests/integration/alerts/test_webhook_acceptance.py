"""Acceptance 3 of issue 8: a rule `lag_seconds > 30 for 1m` fires once to a webhook receiver (signature
verified), does not re-fire while firing until the re-notify interval, sends resolved when the consumer
catches up, and is suppressed by a matching silence. Sampling runs are built with controlled observation
times; delivery is real: a Celery worker posts to an HTTP server in this test."""

from datetime import timedelta

from django.utils import timezone

from controlplane.alerts.choices import AlertState, NotificationStatus
from controlplane.alerts.evaluation import evaluate_alerts
from controlplane.alerts.models import Alert, Notification
from tests.fixtures.servers import wait_until
from tests.integration.alerts.conftest import World, created

GROUP = "payments-ledger"
DELIVERY_TIMEOUT = 30


def _channel_and_rule(world: World, receiver_url: str, **rule: object) -> tuple[str, dict]:
    channel = created(
        world.developer.post(
            "/api/v1/alert-channels/",
            {"team": world.team.pk, "name": "on-call hook", "kind": "webhook", "url": receiver_url},
            format="json",
        )
    )
    assert channel["secret"].startswith("whsec_")
    body = {
        "team": world.team.pk,
        "name": "payments fall behind",
        "cluster": world.cluster.pk,
        "group_pattern": "payments-*",
        "metric": "lag_seconds",
        "comparison": "gt",
        "threshold": 30,
        "for_seconds": 60,
        "severity": "critical",
        "channels": [channel["id"]],
        "send_resolved": True,
        **rule,
    }
    return channel["secret"], created(world.developer.post("/api/v1/alert-rules/", body, format="json"))


def _drive(world: World, start, seconds: range, lag: float) -> None:
    for offset in seconds:
        evaluate_alerts(world.run(start + timedelta(seconds=offset), {GROUP: lag, "payments-audit": 1.0}))


def _received(receiver, count: int) -> None:
    wait_until(lambda: len(receiver.received) >= count, DELIVERY_TIMEOUT, f"{count} webhook requests")


def test_it_fires_once_reminds_after_the_interval_and_sends_resolved(
    delivery_worker, webhook_receiver
) -> None:
    world = delivery_worker
    secret, rule = _channel_and_rule(world, webhook_receiver.url, renotify_interval_seconds=300)
    start = timezone.now() - timedelta(hours=1)

    _drive(world, start, range(0, 60, 15), lag=45)  # held for 45 s: still pending
    assert Alert.objects.get().state == AlertState.PENDING
    assert not Notification.objects.exists()

    _drive(world, start, range(60, 61), lag=50)  # held for 60 s: fires
    _received(webhook_receiver, 1)
    [fired] = webhook_receiver.signed_by(secret)
    assert fired["kind"] == "firing"
    assert fired["alert"]["group"] == GROUP
    assert fired["alert"]["value"] == 50
    assert fired["alert"]["severity"] == "critical"
    assert fired["rule"]["id"] == rule["id"]
    assert webhook_receiver.received[0].path == "/hooks/lag"

    _drive(world, start, range(75, 360, 15), lag=80)  # firing for 285 s < the 300 s re-notify interval
    assert Notification.objects.count() == 1
    _drive(world, start, range(360, 361), lag=80)  # 300 s after the firing notice
    _received(webhook_receiver, 2)
    _drive(world, start, range(375, 376), lag=2)  # caught up
    _received(webhook_receiver, 3)
    kinds = [body["kind"] for body in webhook_receiver.signed_by(secret)]
    assert kinds == ["firing", "reminder", "resolved"]

    alert = Alert.objects.get()
    assert alert.state == AlertState.RESOLVED
    assert alert.resolved_at == start + timedelta(seconds=375)
    assert alert.notification_count == 3
    wait_until(
        lambda: Notification.objects.filter(status=NotificationStatus.SENT).count() == 3,
        DELIVERY_TIMEOUT,
        "sent",
    )
    attempt = Notification.objects.order_by("created_at").first().attempts.get()
    assert attempt.succeeded
    assert attempt.status_code == 204

    history = world.developer.get("/api/v1/alerts/", {"state": "resolved"}).json()["results"]
    assert [(a["group_name"], a["state"], a["value"]) for a in history] == [(GROUP, "resolved", 2.0)]


def test_a_matching_silence_suppresses_notifications_until_it_is_expired(
    delivery_worker, webhook_receiver
) -> None:
    world = delivery_worker
    secret, rule = _channel_and_rule(world, webhook_receiver.url)
    start = timezone.now() - timedelta(minutes=10)
    silence = created(
        world.developer.post(
            "/api/v1/alert-silences/",
            {
                "team": world.team.pk,
                "group_pattern": "payments-led*",
                "rule": rule["id"],
                "starts_at": (start - timedelta(minutes=1)).isoformat(),
                "ends_at": (timezone.now() + timedelta(hours=1)).isoformat(),
                "comment": "migrating the ledger",
            },
            format="json",
        )
    )
    assert silence["state"] == "active"

    _drive(world, start, range(0, 121, 15), lag=45)
    alert = Alert.objects.get()
    assert alert.state == AlertState.FIRING  # a silenced alert still fires
    assert alert.silenced_by_id == silence["id"]
    suppressed = Notification.objects.get()
    assert suppressed.status == NotificationStatus.SUPPRESSED
    assert suppressed.silence_id == silence["id"]
    assert suppressed.attempt_count == 0

    created(world.developer.post(f"/api/v1/alert-silences/{silence['id']}/expire/"), 200)
    evaluate_alerts(world.run(timezone.now() + timedelta(seconds=1), {GROUP: 45}))
    _received(webhook_receiver, 1)
    [announced] = webhook_receiver.signed_by(secret)
    assert announced["kind"] == "firing"
    assert announced["alert"]["id"] == alert.pk


def test_failed_deliveries_are_retried_with_backoff_and_every_attempt_is_recorded(
    delivery_worker, webhook_receiver
) -> None:
    world = delivery_worker
    webhook_receiver.failures_left = 2
    secret, _rule = _channel_and_rule(world, webhook_receiver.url, for_seconds=0)
    evaluate_alerts(world.run(timezone.now(), {GROUP: 90}))
    _received(webhook_receiver, 3)
    wait_until(
        lambda: Notification.objects.filter(status=NotificationStatus.SENT).exists(), DELIVERY_TIMEOUT, "sent"
    )
    notification = Notification.objects.get()
    attempts = list(notification.attempts.order_by("number"))
    assert [(a.number, a.status_code, a.succeeded) for a in attempts] == [
        (1, 503, False),
        (2, 503, False),
        (3, 204, True),
    ]
    assert attempts[0].error == "The receiver answered HTTP 503."
    # The second retry waited about twice as long as the first.
    first_wait = attempts[1].started_at - attempts[0].started_at
    second_wait = attempts[2].started_at - attempts[1].started_at
    assert first_wait >= timedelta(seconds=0.2)
    assert second_wait >= timedelta(seconds=0.4)
    assert len({r.body for r in webhook_receiver.received}) == 1  # the same signed body each time
    assert len(webhook_receiver.signed_by(secret)) == 3
