"""Enumerations of the alerting domain, shared by models, evaluation, API and console."""

from django.db import models


class Metric(models.TextChoices):
    LAG_MESSAGES = "lag_messages", "Lag (messages)"
    LAG_SECONDS = "lag_seconds", "Lag (seconds)"
    STATUS = "status", "Health status"
    TIME_TO_CATCH_UP = "time_to_catch_up", "Time to catch up (seconds)"


class Comparison(models.TextChoices):
    GT = "gt", ">"
    GTE = "gte", "≥"
    LT = "lt", "<"
    LTE = "lte", "≤"


# Comparisons where a larger value is worse; the resolve threshold must then sit at or below the threshold.
RISING_COMPARISONS = (Comparison.GT, Comparison.GTE)


class Granularity(models.TextChoices):
    GROUP = "group", "One alert per group"
    PARTITION = "partition", "One alert per partition"


class Severity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


class AlertState(models.TextChoices):
    PENDING = "pending", "Pending"
    FIRING = "firing", "Firing"
    RESOLVED = "resolved", "Resolved"


ACTIVE_STATES = (AlertState.PENDING, AlertState.FIRING)


class ChannelKind(models.TextChoices):
    WEBHOOK = "webhook", "Webhook"
    SLACK = "slack", "Slack-compatible webhook"
    EMAIL = "email", "E-mail"


class NotificationKind(models.TextChoices):
    FIRING = "firing", "Firing"
    REMINDER = "reminder", "Still firing (re-notification)"
    RESOLVED = "resolved", "Resolved"
    TEST = "test", "Test"


class NotificationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed after every retry"
    SUPPRESSED = "suppressed", "Suppressed by a silence"
