"""What channels send, without sending: webhook signatures, Slack-compatible messages, backoff."""

from datetime import UTC, datetime

from controlplane.alerts.channels import new_signing_secret, signature, signature_is_valid, slack_message
from controlplane.alerts.choices import Metric
from controlplane.alerts.conditions import RuleSpec
from controlplane.alerts.delivery import backoff_seconds
from controlplane.alerts.models import Alert
from controlplane.alerts.notices import alert_payload, channel_test_payload, describe_value

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_signature_covers_the_timestamp_and_the_body() -> None:
    secret = new_signing_secret()
    header = signature(secret, "1700000000", b'{"a":1}')
    assert header.startswith("sha256=")
    assert len(header) == 7 + 64
    assert signature_is_valid(secret, "1700000000", b'{"a":1}', header)
    assert not signature_is_valid(secret, "1700000001", b'{"a":1}', header)
    assert not signature_is_valid(secret, "1700000000", b'{"a":2}', header)
    assert not signature_is_valid(new_signing_secret(), "1700000000", b'{"a":1}', header)


def test_each_channel_gets_its_own_secret() -> None:
    assert new_signing_secret() != new_signing_secret()
    assert new_signing_secret().startswith("whsec_")


def _payload(kind: str = "firing", value: float = 75.0) -> dict:
    rule = RuleSpec(
        id=1, name="slow payments", team_id=3, cluster_id=None, group_pattern="*", topic_pattern="*",
        granularity="group", metric="lag_seconds", comparison="gt", threshold=30.0, resolve_threshold=None,
        statuses=frozenset(), for_seconds=60, renotify_interval_seconds=None, send_resolved=True, severity="critical",
    )  # fmt: skip
    alert = Alert(
        id=5, rule_id=1, cluster_id=2, group_name="payments-ledger", fingerprint="payments-ledger", state="firing",
        severity="critical", value=value, status="LAGGING", reason="Lag grew across the window.",
        pending_since=AT, fired_at=AT, last_evaluated_at=AT,
    )  # fmt: skip
    return alert_payload(kind=kind, rule=rule, alert=alert, cluster_name="prod", team_name="Payments")


def test_the_payload_says_what_fired_where() -> None:
    payload = _payload()
    assert payload["summary"] == "[FIRING] slow payments: payments-ledger on prod: lag_seconds 75 s"
    assert payload["alert"]["value"] == 75.0
    assert payload["rule"]["threshold"] == 30.0
    assert payload["alert"]["fired_at"] == AT.isoformat()


def test_an_infinite_value_is_sent_as_null_with_words() -> None:
    payload = _payload(value=float("inf"))
    assert payload["alert"]["value"] is None
    assert payload["alert"]["value_text"] == "never (not catching up)"


def test_slack_messages_have_text_and_blocks() -> None:
    message = slack_message(_payload("resolved"))
    assert message["text"].startswith("[RESOLVED] slow payments")
    assert message["blocks"][0]["text"]["text"] == f"*{message['text']}*"
    assert any(block["type"] == "context" for block in message["blocks"])
    test_message = slack_message(channel_test_payload(channel_name="ops", team_name="Payments", at=AT))
    assert test_message == {"text": test_message["text"], "blocks": test_message["blocks"]}
    assert len(test_message["blocks"]) == 1


def test_retries_back_off_exponentially_up_to_a_cap(settings) -> None:
    settings.ALERT_DELIVERY_BACKOFF_SECONDS = 2
    assert [backoff_seconds(n) for n in (1, 2, 3, 4)] == [2, 4, 8, 16]
    assert backoff_seconds(30) == 600


def test_a_message_count_is_described_as_a_whole_number_and_short_seconds_keep_a_decimal() -> None:
    assert describe_value(Metric.LAG_MESSAGES, 1.0, "OK") == "1 messages"
    assert describe_value(Metric.LAG_MESSAGES, 12345.0, "OK") == "12,345 messages"
    assert describe_value(Metric.LAG_SECONDS, 2.5, "OK") == "2.5 s"
