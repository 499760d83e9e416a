"""Sending one notification through one channel: signed JSON webhooks, Slack-compatible incoming webhooks
and e-mail through Django's e-mail backend. Each send returns the HTTP status or raises DeliveryError;
the caller records the attempt and decides on retries. Secrets and webhook URLs never reach the logs."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import secrets
import time
from typing import Any

from django.conf import settings
from django.core.mail import send_mail

from controlplane.alerts.choices import ChannelKind
from controlplane.alerts.models import NotificationChannel
from controlplane.core import outbound
from controlplane.core.encryption import decrypt_secret

SIGNATURE_HEADER = "X-StreamHub-Signature"
TIMESTAMP_HEADER = "X-StreamHub-Timestamp"
USER_AGENT = "StreamHub-Alerts/1"
SECRET_PREFIX = "whsec_"


class DeliveryError(Exception):
    """A send failed; `retryable` is False when trying again cannot help (e.g. the receiver said 4xx)."""

    def __init__(self, message: str, *, status_code: int | None = None, retryable: bool = True) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = retryable


def new_signing_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>`: the timestamp is signed so a captured request
    cannot be replayed later with a fresh timestamp header."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signature_is_valid(secret: str, timestamp: str, body: bytes, header: str) -> bool:
    return hmac.compare_digest(signature(secret, timestamp, body), header)


def _timeout() -> float:
    return settings.ALERT_DELIVERY_TIMEOUT_SECONDS


def _post_json(url: str, body: bytes, headers: dict[str, str]) -> int:
    """Posts through `core.outbound`: the host is resolved and checked now and the connection goes to the
    checked address; a redirect is not followed (a receiver could point us at an internal address)."""
    all_headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
    try:
        response = outbound.post(url, body, all_headers, timeout=_timeout())
    except outbound.RefusedDestination as refusal:
        # The address will not become acceptable by trying again (an operator must allowlist it).
        raise DeliveryError(f"Refused to send: {refusal}", retryable=False) from None
    except (OSError, http.client.HTTPException) as error:
        raise DeliveryError(f"Could not reach the receiver: {error or type(error).__name__}.") from None
    status = response.status
    if 200 <= status < 300:
        return status
    if 300 <= status < 400:
        raise DeliveryError(
            f"The receiver answered HTTP {status} (a redirect); redirects are not followed.",
            status_code=status,
            retryable=False,
        )
    # Throttled or a server error: worth another try. Any other answer will not change by retrying.
    raise DeliveryError(
        f"The receiver answered HTTP {status}.", status_code=status, retryable=status == 429 or status >= 500
    )


def send_webhook(channel: NotificationChannel, payload: dict[str, Any]) -> int:
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    timestamp = str(int(time.time()))
    secret = decrypt_secret(channel.secret_encrypted)
    headers = {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, body)}
    return _post_json(channel.url, body, headers)


def slack_message(payload: dict[str, Any]) -> dict[str, Any]:
    """Incoming-webhook format (Slack, Mattermost, Rocket.Chat): `text` as the fallback, blocks for layout."""
    summary = payload["summary"]
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": f"*{summary}*"}}]
    alert = payload.get("alert")
    if alert is not None:
        fields = [
            ("Severity", alert["severity"]),
            ("Group", alert["group"]),
            ("Status", alert["status"] or "-"),
            ("Value", alert["value_text"]),
        ]
        blocks.append(
            {"type": "section", "fields": [{"type": "mrkdwn", "text": f"*{k}*\n{v}"} for k, v in fields]}
        )
        if alert["reason"]:
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": alert["reason"]}]})
    return {"text": summary, "blocks": blocks}


def send_slack(channel: NotificationChannel, payload: dict[str, Any]) -> int:
    return _post_json(channel.url, json.dumps(slack_message(payload)).encode(), {})


def _email_body(payload: dict[str, Any]) -> str:
    lines = [payload["summary"], ""]
    alert = payload.get("alert")
    if alert is not None:
        lines += [f"{key}: {value}" for key, value in alert.items() if value not in (None, "")]
    return "\n".join(lines)


def send_email(channel: NotificationChannel, payload: dict[str, Any]) -> int | None:
    try:
        send_mail(
            subject=payload["summary"][:200],
            message=_email_body(payload),
            from_email=settings.ALERT_EMAIL_FROM or settings.DEFAULT_FROM_EMAIL,
            recipient_list=list(channel.email_recipients),
        )
    except OSError as error:  # SMTP connection and protocol errors
        raise DeliveryError(f"The mail server refused or could not be reached: {error}.") from None
    return None


SENDERS = {ChannelKind.WEBHOOK: send_webhook, ChannelKind.SLACK: send_slack, ChannelKind.EMAIL: send_email}


def send(channel: NotificationChannel, payload: dict[str, Any]) -> int | None:
    return SENDERS[channel.kind](channel, payload)
