from django.conf import settings
from django.db import models
from django.db.models import Q

from controlplane.alerts.choices import (
    ACTIVE_STATES,
    AlertState,
    ChannelKind,
    Comparison,
    Granularity,
    Metric,
    NotificationKind,
    NotificationStatus,
    Severity,
)
from controlplane.clusters.models import Cluster
from controlplane.tenancy.models import Team


class Authored(models.Model):
    """Who created a team's alerting object, and when it last changed."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class NotificationChannel(Authored):
    """Where a team's alerts are sent. Webhooks are signed with a per-channel secret kept encrypted."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="alert_channels")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=ChannelKind.choices)
    url = models.URLField(max_length=2000, blank=True)  # webhook and Slack kinds
    email_recipients = models.JSONField(default=list, blank=True)  # e-mail kind
    # HMAC-SHA256 key of webhook signatures, Fernet-encrypted (core.encryption); shown once at creation.
    secret_encrypted = models.TextField(blank=True)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["team_id", "name"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="unique_alert_channel_per_team")]

    def __str__(self) -> str:
        return self.name


class AlertRule(Authored):
    """A team's condition on its consumer groups' lag, held for a duration before it fires."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="alert_rules")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True, max_length=1000)
    # No cluster: every cluster of the team's organization.
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, null=True, blank=True, related_name="alert_rules"
    )
    group_pattern = models.CharField(max_length=255, default="*")  # shell-style glob on the group name
    topic_pattern = models.CharField(max_length=255, default="*")
    # Org admins' rules may match the groups of every team of the organization (and groups of no team), not
    # only the rule's team's.
    all_teams = models.BooleanField(default=False)
    granularity = models.CharField(max_length=20, choices=Granularity.choices, default=Granularity.GROUP)
    metric = models.CharField(max_length=30, choices=Metric.choices)
    comparison = models.CharField(max_length=5, choices=Comparison.choices, default=Comparison.GT)
    threshold = models.FloatField(null=True, blank=True)  # numeric metrics
    # Hysteresis: a firing alert resolves only once the value is back past this (default: the threshold).
    resolve_threshold = models.FloatField(null=True, blank=True)
    statuses = models.JSONField(default=list, blank=True)  # status metric: Health values that fire
    for_seconds = models.PositiveIntegerField(default=0)
    severity = models.CharField(max_length=20, choices=Severity.choices, default=Severity.WARNING)
    channels = models.ManyToManyField(NotificationChannel, blank=True, related_name="rules")
    renotify_interval_seconds = models.PositiveIntegerField(null=True, blank=True)  # None: notify once
    send_resolved = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["team_id", "name"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="unique_alert_rule_per_team")]

    def __str__(self) -> str:
        return self.name


class Silence(models.Model):
    """Suppresses notifications of the team's alerts that match every given matcher, inside a time window."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="alert_silences")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    group_pattern = models.CharField(max_length=255, default="*")
    topic_pattern = models.CharField(max_length=255, default="*")
    rule = models.ForeignKey(
        AlertRule, on_delete=models.CASCADE, null=True, blank=True, related_name="silences"
    )
    severity = models.CharField(max_length=20, choices=Severity.choices, blank=True)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    comment = models.TextField(max_length=1000)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by_name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-starts_at", "-id"]
        indexes = [models.Index(fields=["team", "ends_at"])]

    def __str__(self) -> str:
        return f"silence #{self.pk}"


class Alert(models.Model):
    """One rule's alert on one group (or partition): pending, then firing, then resolved. Resolved alerts are
    the history; a new breach after a resolution is a new alert."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="alerts")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="alerts")
    group_name = models.CharField(max_length=255)
    topic = models.CharField(max_length=255, blank=True)
    partition = models.IntegerField(null=True, blank=True)
    # group, or group/topic/partition: what makes the alert one alert of its rule.
    fingerprint = models.CharField(max_length=600)
    state = models.CharField(max_length=20, choices=AlertState.choices)
    severity = models.CharField(max_length=20, choices=Severity.choices)
    value = models.FloatField(null=True, blank=True)  # the metric's last value (status: its Health rank)
    status = models.CharField(max_length=20, blank=True)  # the observed Health at the last evaluation
    reason = models.TextField(blank=True)
    pending_since = models.DateTimeField()
    fired_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    last_evaluated_at = models.DateTimeField()
    last_notified_at = models.DateTimeField(null=True, blank=True)
    notification_count = models.PositiveIntegerField(default=0)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    acknowledged_by_name = models.CharField(max_length=200, blank=True)
    silenced_by = models.ForeignKey(
        Silence, on_delete=models.SET_NULL, null=True, blank=True, related_name="silenced_alerts"
    )

    class Meta:
        ordering = ["-pending_since", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "fingerprint"],
                condition=Q(state__in=ACTIVE_STATES),
                name="one_active_alert_per_rule_and_fingerprint",
            )
        ]
        indexes = [models.Index(fields=["cluster", "state"]), models.Index(fields=["state", "pending_since"])]

    def __str__(self) -> str:
        return f"alert of rule #{self.rule_id} on {self.fingerprint}"


class Notification(models.Model):
    """One message for one channel: a firing, reminder, resolved or test notice, or one a silence suppressed."""

    alert = models.ForeignKey(
        Alert, on_delete=models.CASCADE, null=True, blank=True, related_name="notifications"
    )
    channel = models.ForeignKey(NotificationChannel, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    status = models.CharField(max_length=20, choices=NotificationStatus.choices)
    silence = models.ForeignKey(Silence, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    payload = models.JSONField(default=dict)
    attempt_count = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["channel", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} notification #{self.pk}"


class DeliveryAttempt(models.Model):
    """One try at sending a notification, successful or not."""

    notification = models.ForeignKey(Notification, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField()
    duration_ms = models.FloatField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    succeeded = models.BooleanField()

    class Meta:
        ordering = ["notification_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["notification", "number"], name="unique_delivery_attempt_number")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.notification_id}"


class ClusterHealthSample(models.Model):
    """The last cluster-health look at a cluster (what the overview shows), and what evaluation remembers
    between looks: when each broker was last listed (an external cluster's broker that stops being listed
    is down, not gone) and when the controller changed."""

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, primary_key=True, related_name="health_sample"
    )
    observed_at = models.DateTimeField()
    reachable = models.BooleanField(null=True)  # None: not asked (the cluster is not running)
    error = models.TextField(blank=True)
    controller_id = models.IntegerField(null=True, blank=True)
    controller_changes = models.JSONField(default=list)  # unix seconds of changes within the last hour
    broker_last_seen = models.JSONField(default=dict)  # node id (as text) -> unix seconds
    values = models.JSONField(default=dict)  # metric -> value; per-broker metrics: {node id: value}

    def __str__(self) -> str:
        return f"health of cluster #{self.cluster_id}"
