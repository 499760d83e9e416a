"""Enumerations of the alerting domain, shared by models, evaluation, API and console."""

from django.db import models


class Metric(models.TextChoices):
    LAG_MESSAGES = "lag_messages", "Lag (messages)"
    LAG_SECONDS = "lag_seconds", "Lag (seconds)"
    STATUS = "status", "Health status"
    TIME_TO_CATCH_UP = "time_to_catch_up", "Time to catch up (seconds)"
    # Cluster health: evaluated on every cluster-health sample, not per consumer group.
    BROKER_DOWN = "broker_down", "Broker down"
    UNDER_REPLICATED_PARTITIONS = "under_replicated_partitions", "Under-replicated partitions"
    OFFLINE_PARTITIONS = "offline_partitions", "Offline partitions"
    UNDER_MIN_ISR_PARTITIONS = "under_min_isr_partitions", "Partitions under min.insync.replicas"
    CONTROLLER_CHANGES_PER_HOUR = "controller_changes_per_hour", "Controller changes in the last hour"
    DISK_USAGE_PERCENT = "disk_usage_percent", "Disk usage per broker (%)"
    CLUSTER_UNREACHABLE = "cluster_unreachable", "Cluster unreachable"
    PROVISIONING_FAILED = "provisioning_failed", "Provisioning failed"
    # Kafka Connect: evaluated on the connect app's look at the connectors of each cluster.
    CONNECTOR_NOT_RUNNING = "connector_not_running", "Connector or task paused or failed"
    # Replication flows (MirrorMaker 2): evaluated on each lag sampling run of the flow's target cluster.
    REPLICATION_LAG_RECORDS = "replication_lag_records", "Replication lag (records behind, worst partition)"


LAG_METRICS = (Metric.LAG_MESSAGES, Metric.LAG_SECONDS, Metric.STATUS, Metric.TIME_TO_CATCH_UP)
CONNECTOR_METRICS = (Metric.CONNECTOR_NOT_RUNNING,)
REPLICATION_METRICS = (Metric.REPLICATION_LAG_RECORDS,)
CLUSTER_METRICS = tuple(
    metric for metric in Metric if metric not in (*LAG_METRICS, *CONNECTOR_METRICS, *REPLICATION_METRICS)
)

# The threshold a cluster-health rule gets when none is given (fires when the value is above it): any broker
# down, any bad partition, more than 3 controller elections an hour, a log-dir volume over 85 % full.
CLUSTER_METRIC_DEFAULT_THRESHOLDS: dict[str, float] = {
    Metric.BROKER_DOWN: 0,
    Metric.UNDER_REPLICATED_PARTITIONS: 0,
    Metric.OFFLINE_PARTITIONS: 0,
    Metric.UNDER_MIN_ISR_PARTITIONS: 0,
    Metric.CONTROLLER_CHANGES_PER_HOUR: 3,
    Metric.DISK_USAGE_PERCENT: 85,
    Metric.CLUSTER_UNREACHABLE: 0,
    Metric.PROVISIONING_FAILED: 0,
    # 1 when the connector or one of its tasks is paused, stopped or failed.
    Metric.CONNECTOR_NOT_RUNNING: 0,
    # Records the flow's worst partition is behind. The flow's own `lag_alert_records` takes precedence; the
    # rule's threshold covers the flows without one (0: only flows with their own threshold are alerted).
    Metric.REPLICATION_LAG_RECORDS: 0,
}


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
