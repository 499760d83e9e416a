"""Each channel kind delivers for real: the test action through a Celery worker to a signed webhook, Slack-style
messages to an HTTP receiver, e-mail through Django's e-mail backend; 4xx answers are not retried."""

from django.core import mail
from django.utils import timezone

from controlplane.alerts.choices import NotificationStatus
from controlplane.alerts.delivery import attempt_delivery
from controlplane.alerts.evaluation import evaluate_alerts
from controlplane.alerts.models import Notification
from tests.fixtures.servers import wait_until
from tests.integration.alerts.conftest import World, created


def _channel(world: World, **body) -> dict:
    return created(
        world.developer.post("/api/v1/alert-channels/", {"team": world.team.pk, **body}, format="json")
    )


def _firing_rule(world: World, channel_id: int) -> None:
    body = {
        "team": world.team.pk, "name": "any lag", "metric": "lag_messages", "threshold": 0, "for_seconds": 0,
        "channels": [channel_id],
    }  # fmt: skip
    created(world.developer.post("/api/v1/alert-rules/", body, format="json"))


def test_the_test_action_sends_a_signed_test_notice_through_the_worker(
    delivery_worker, webhook_receiver
) -> None:
    world = delivery_worker
    channel = _channel(world, name="hook", kind="webhook", url=webhook_receiver.url)
    queued = created(world.developer.post(f"/api/v1/alert-channels/{channel['id']}/test/"), 202)
    assert queued["kind"] == "test"
    assert queued["status"] == "pending"
    wait_until(lambda: len(webhook_receiver.received) == 1, 30, "the test notice")
    [notice] = webhook_receiver.signed_by(channel["secret"])
    assert notice["kind"] == "test"
    assert "hook" in notice["summary"]

    def sent() -> dict:
        return world.developer.get(f"/api/v1/alert-notifications/{queued['id']}/").json()

    wait_until(lambda: sent()["status"] == "sent", 30, "the notification to be marked sent")
    [attempt] = sent()["attempts"]
    assert attempt["succeeded"] is True
    assert attempt["status_code"] == 204


def test_slack_channels_post_text_and_blocks(world: World, webhook_receiver) -> None:
    channel = _channel(world, name="chat", kind="slack", url=webhook_receiver.url)
    _firing_rule(world, channel["id"])
    evaluate_alerts(world.run(timezone.now(), {"payments-ledger": 40.0}))
    notification = Notification.objects.get()
    assert attempt_delivery(notification.pk) is None
    [request] = webhook_receiver.received
    assert request.json["text"].startswith("[FIRING] any lag: payments-ledger on prod")
    assert request.json["blocks"][0]["type"] == "section"
    notification.refresh_from_db()
    assert notification.status == NotificationStatus.SENT


def test_email_channels_send_through_djangos_email_backend(world: World, settings) -> None:
    settings.ALERT_EMAIL_FROM = "alerts@example.com"
    channel = _channel(world, name="mail", kind="email", email_recipients=["oncall@example.com"])
    _firing_rule(world, channel["id"])
    evaluate_alerts(world.run(timezone.now(), {"payments-ledger": 40.0}))
    attempt_delivery(Notification.objects.get().pk)
    [message] = mail.outbox
    assert message.to == ["oncall@example.com"]
    assert message.from_email == "alerts@example.com"
    assert message.subject.startswith("[FIRING] any lag: payments-ledger")
    assert "reason: lag 40.0 s" in message.body


def test_a_4xx_answer_fails_the_notification_without_retrying(world: World, webhook_receiver) -> None:
    channel = _channel(world, name="hook", kind="webhook", url=webhook_receiver.url + "/gone")
    _firing_rule(world, channel["id"])
    webhook_receiver.status_for_path["/hooks/lag/gone"] = 410
    evaluate_alerts(world.run(timezone.now(), {"payments-ledger": 40.0}))
    notification = Notification.objects.get()
    assert attempt_delivery(notification.pk) is None  # no retry is scheduled
    notification.refresh_from_db()
    assert notification.status == NotificationStatus.FAILED
    assert notification.last_error == "The receiver answered HTTP 410."
    assert attempt_delivery(notification.pk) is None  # a failed notification is not sent again
    assert notification.attempts.count() == 1
