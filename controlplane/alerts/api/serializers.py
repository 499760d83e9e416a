"""Input validators (…InputSerializer) and output shapes (…Serializer) of the alerting API.

A webhook channel's signing secret appears only in the create and rotate-secret responses.
"""

import math

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from controlplane.alerts.choices import ChannelKind, Severity
from controlplane.alerts.models import (
    Alert,
    AlertRule,
    DeliveryAttempt,
    Notification,
    NotificationChannel,
    Silence,
)
from controlplane.alerts.notices import describe_value
from controlplane.clusters.models import Cluster
from controlplane.jobs.api.serializers import ClusterOfVisibleOrganizationField
from controlplane.lag.observations import Health
from controlplane.tenancy.api.fields import VisiblePrimaryKeyField
from controlplane.tenancy.models import Team

WEEK_SECONDS = 7 * 24 * 3600
PATTERN_HELP = "Shell-style pattern on the whole name: `*` any run of characters, `?` one, `[…]` a set."

# Outputs


class AlertRuleSerializer(serializers.ModelSerializer):
    team_name = serializers.CharField(source="team.name", read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True, default=None, allow_null=True)
    channels = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    statuses = serializers.ListField(child=serializers.ChoiceField(choices=Health.choices), read_only=True)

    class Meta:
        model = AlertRule
        fields = [
            "id", "team", "team_name", "name", "description", "cluster", "cluster_name", "group_pattern",
            "topic_pattern", "all_teams", "granularity", "metric", "comparison", "threshold", "resolve_threshold", "statuses",
            "for_seconds", "severity", "channels", "renotify_interval_seconds", "send_resolved", "enabled",
            "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields


class NotificationChannelSerializer(serializers.ModelSerializer):
    team_name = serializers.CharField(source="team.name", read_only=True)
    url = serializers.SerializerMethodField(
        help_text="Slack-style URLs are credentials: only their host is shown."
    )
    signed = serializers.SerializerMethodField(help_text="Requests carry an HMAC-SHA256 signature header.")
    email_recipients = serializers.ListField(child=serializers.EmailField(), read_only=True)

    class Meta:
        model = NotificationChannel
        fields = [
            "id", "team", "team_name", "name", "kind", "url", "email_recipients", "signed", "enabled",
            "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(serializers.CharField())
    def get_url(self, channel: NotificationChannel) -> str:
        if channel.kind == ChannelKind.SLACK and channel.url:
            scheme, _, rest = channel.url.partition("://")
            return f"{scheme}://{rest.split('/', 1)[0]}/…"
        return channel.url

    @extend_schema_field(serializers.BooleanField())
    def get_signed(self, channel: NotificationChannel) -> bool:
        return bool(channel.secret_encrypted)


class NotificationChannelWithSecretSerializer(NotificationChannelSerializer):
    secret = serializers.SerializerMethodField(
        help_text="The webhook signing secret (empty for other kinds). It is shown only this once."
    )

    class Meta(NotificationChannelSerializer.Meta):
        fields = [*NotificationChannelSerializer.Meta.fields, "secret"]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField())
    def get_secret(self, channel: NotificationChannel) -> str:
        return self.context["secret"]


class SilenceSerializer(serializers.ModelSerializer):
    team_name = serializers.CharField(source="team.name", read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True, default=None, allow_null=True)
    rule_name = serializers.CharField(source="rule.name", read_only=True, default=None, allow_null=True)
    severity = serializers.ChoiceField(choices=Severity.choices, allow_blank=True, read_only=True)
    state = serializers.SerializerMethodField()

    class Meta:
        model = Silence
        fields = [
            "id", "team", "team_name", "cluster", "cluster_name", "group_pattern", "topic_pattern", "rule",
            "rule_name", "severity", "starts_at", "ends_at", "state", "comment", "created_by_name", "created_at",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=["scheduled", "active", "expired"]))
    def get_state(self, silence: Silence) -> str:
        from django.utils import timezone

        now = timezone.now()
        if silence.starts_at > now:
            return "scheduled"
        return "active" if silence.ends_at > now else "expired"


class AlertSerializer(serializers.ModelSerializer):
    rule_name = serializers.CharField(source="rule.name", read_only=True)
    metric = serializers.CharField(source="rule.metric", read_only=True)
    team = serializers.IntegerField(source="rule.team_id", read_only=True)
    team_name = serializers.CharField(source="rule.team.name", read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True)
    value = serializers.SerializerMethodField(
        help_text="The metric's last value; null when unknown or infinite."
    )
    value_text = serializers.SerializerMethodField()

    class Meta:
        model = Alert
        fields = [
            "id", "rule", "rule_name", "team", "team_name", "cluster", "cluster_name", "group_name", "topic",
            "partition", "state", "severity", "metric", "value", "value_text", "status", "reason",
            "pending_since", "fired_at", "resolved_at", "last_evaluated_at", "last_notified_at",
            "notification_count", "acknowledged_at", "acknowledged_by_name", "silenced_by",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_value(self, alert: Alert) -> float | None:
        return alert.value if alert.value is not None and math.isfinite(alert.value) else None

    @extend_schema_field(serializers.CharField())
    def get_value_text(self, alert: Alert) -> str:
        return describe_value(alert.rule.metric, alert.value, alert.status)


class DeliveryAttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = DeliveryAttempt
        fields = ["number", "started_at", "duration_ms", "status_code", "error", "succeeded"]
        read_only_fields = fields


class NotificationSerializer(serializers.ModelSerializer):
    channel_name = serializers.CharField(source="channel.name", read_only=True)
    summary = serializers.SerializerMethodField()
    attempts = DeliveryAttemptSerializer(many=True, read_only=True)

    class Meta:
        model = Notification
        fields = [
            "id", "alert", "channel", "channel_name", "kind", "status", "silence", "summary", "attempt_count",
            "last_error", "created_at", "sent_at", "attempts",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(serializers.CharField())
    def get_summary(self, notification: Notification) -> str:
        return notification.payload.get("summary", "")


# Inputs


class AlertRuleUpdateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(max_length=1000, required=False, allow_blank=True)
    cluster = ClusterOfVisibleOrganizationField(
        queryset=Cluster.objects.all(), required=False, allow_null=True, help_text="None: every cluster."
    )
    group_pattern = serializers.CharField(max_length=255, required=False, help_text=PATTERN_HELP)
    topic_pattern = serializers.CharField(max_length=255, required=False, help_text=PATTERN_HELP)
    all_teams = serializers.BooleanField(
        required=False, help_text="Org admins: match the groups of every team of the organization."
    )
    granularity = serializers.ChoiceField(
        choices=AlertRule._meta.get_field("granularity").choices, required=False
    )
    metric = serializers.ChoiceField(choices=AlertRule._meta.get_field("metric").choices)
    comparison = serializers.ChoiceField(
        choices=AlertRule._meta.get_field("comparison").choices, required=False
    )
    threshold = serializers.FloatField(required=False, allow_null=True, min_value=0)
    resolve_threshold = serializers.FloatField(required=False, allow_null=True, min_value=0)
    statuses = serializers.ListField(child=serializers.ChoiceField(choices=Health.choices), required=False)
    for_seconds = serializers.IntegerField(min_value=0, max_value=WEEK_SECONDS, required=False)
    severity = serializers.ChoiceField(choices=AlertRule._meta.get_field("severity").choices, required=False)
    channels = VisiblePrimaryKeyField(
        queryset=NotificationChannel.objects.all(), team_path="team", many=True, required=False
    )
    renotify_interval_seconds = serializers.IntegerField(
        min_value=60, max_value=WEEK_SECONDS, required=False, allow_null=True, help_text="None: notify once."
    )
    send_resolved = serializers.BooleanField(required=False)
    enabled = serializers.BooleanField(required=False)

    def validate_statuses(self, value: list[str]) -> list[str]:
        return sorted(set(value))


class AlertRuleCreateInputSerializer(AlertRuleUpdateInputSerializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())


class AlertRulePreviewInputSerializer(AlertRuleCreateInputSerializer):
    name = serializers.CharField(max_length=100, required=False)


class RuleMatchSerializer(serializers.Serializer):
    group_id = serializers.IntegerField()
    group = serializers.CharField()
    cluster = serializers.IntegerField()
    cluster_name = serializers.CharField()
    team_name = serializers.CharField(allow_null=True)
    status = serializers.CharField()
    lag_messages = serializers.IntegerField()
    lag_seconds = serializers.FloatField(allow_null=True)
    breaches_now = serializers.BooleanField(help_text="The rule's condition holds for this group now.")


class RulePreviewSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Groups the rule matches now.")
    groups = RuleMatchSerializer(many=True, help_text="At most 100 of them, worst first.")


class NotificationChannelUpdateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    # Not a URLField: Django's URL validator wants a dotted public name and refuses an internal single-label
    # host (`http://alertmanager:9093/`). The service checks the URL (scheme, host, port) and where the name
    # resolves: internal addresses stay refused unless OUTBOUND_ALLOWED_NETWORKS allows them.
    url = serializers.CharField(
        max_length=2000,
        required=False,
        allow_blank=True,
        help_text="http or https URL; the host may be a single-label internal name when it resolves to an "
        "address OUTBOUND_ALLOWED_NETWORKS allows",
    )
    email_recipients = serializers.ListField(child=serializers.EmailField(), max_length=20, required=False)
    enabled = serializers.BooleanField(required=False)


class NotificationChannelCreateInputSerializer(NotificationChannelUpdateInputSerializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())
    kind = serializers.ChoiceField(choices=ChannelKind.choices)


class SilenceCreateInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())
    cluster = ClusterOfVisibleOrganizationField(
        queryset=Cluster.objects.all(), required=False, allow_null=True
    )
    rule = VisiblePrimaryKeyField(
        queryset=AlertRule.objects.all(), team_path="team", required=False, allow_null=True
    )
    group_pattern = serializers.CharField(max_length=255, default="*", help_text=PATTERN_HELP)
    topic_pattern = serializers.CharField(max_length=255, default="*", help_text=PATTERN_HELP)
    severity = serializers.ChoiceField(choices=Silence._meta.get_field("severity").choices, required=False)
    starts_at = serializers.DateTimeField(required=False, help_text="Default: now.")
    ends_at = serializers.DateTimeField()
    comment = serializers.CharField(max_length=1000)
