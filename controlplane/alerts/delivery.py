"""Delivering notifications: one attempt per call, each recorded, retried with exponential backoff by the
Celery task that calls it."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from controlplane.alerts.channels import DeliveryError, send
from controlplane.alerts.choices import NotificationStatus
from controlplane.alerts.models import DeliveryAttempt, Notification
from controlplane.core.encryption import UnreadableSecret

logger = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 600.0


def max_attempts() -> int:
    return settings.ALERT_DELIVERY_MAX_ATTEMPTS


def backoff_seconds(attempt_number: int) -> float:
    """Seconds before the attempt after `attempt_number`: base, 2 * base, 4 * base … capped."""
    base = settings.ALERT_DELIVERY_BACKOFF_SECONDS
    return min(base * 2 ** (attempt_number - 1), MAX_BACKOFF_SECONDS)


def _claim(notification: Notification) -> int | None:
    """Takes the next attempt number, or None when another worker already did (a redelivered task)."""
    number = notification.attempt_count + 1
    claimed = Notification.objects.filter(
        pk=notification.pk, status=NotificationStatus.PENDING, attempt_count=notification.attempt_count
    ).update(attempt_count=number)
    return number if claimed else None


def attempt_delivery(notification_id: int) -> float | None:
    """Sends a pending notification once. Returns the delay before the next try, or None when done
    (sent, failed for good, or not pending any more)."""
    notification = Notification.objects.select_related("channel").filter(pk=notification_id).first()
    if notification is None or notification.status != NotificationStatus.PENDING:
        return None
    number = _claim(notification)
    if number is None:
        return None
    channel = notification.channel
    started_at, started = timezone.now(), time.monotonic()
    status_code, error, retryable = None, "", False
    if not channel.enabled:
        error = "The channel is disabled."
    else:
        try:
            status_code = send(channel, notification.payload)
        except DeliveryError as failure:
            status_code, error, retryable = failure.status_code, str(failure), failure.retryable
        except UnreadableSecret as failure:
            error = str(failure)
    DeliveryAttempt.objects.create(
        notification=notification,
        number=number,
        started_at=started_at,
        duration_ms=round((time.monotonic() - started) * 1000, 3),
        status_code=status_code,
        error=error,
        succeeded=not error,
    )
    if not error:
        Notification.objects.filter(pk=notification.pk).update(
            status=NotificationStatus.SENT, sent_at=timezone.now(), last_error=""
        )
        return None
    logger.warning(
        "alert notification %s to channel %s: attempt %d failed: %s",
        notification.pk,
        channel.pk,
        number,
        error,
    )
    if retryable and number < max_attempts():
        Notification.objects.filter(pk=notification.pk).update(last_error=error)
        return backoff_seconds(number)
    Notification.objects.filter(pk=notification.pk).update(status=NotificationStatus.FAILED, last_error=error)
    return None


def unsent_notification_ids(*, older_than: timedelta) -> list[int]:
    """Pending notifications never tried (their task was never queued, e.g. Redis was down at the time)."""
    cutoff = timezone.now() - older_than
    return list(
        Notification.objects.filter(
            status=NotificationStatus.PENDING, attempt_count=0, created_at__lt=cutoff
        ).values_list("pk", flat=True)[:1000]
    )
