from datetime import datetime

import django_filters
from django.db.models import Q, QuerySet
from django.utils import timezone

from controlplane.alerts.choices import (
    ACTIVE_STATES,
    CLUSTER_METRICS,
    CONNECTOR_METRICS,
    LAG_METRICS,
    REPLICATION_METRICS,
    AlertState,
    ChannelKind,
    Metric,
    NotificationKind,
    NotificationStatus,
    Severity,
)
from controlplane.alerts.models import Alert, AlertRule, Notification, NotificationChannel, Silence
from controlplane.core.api.filters import ApiFilterSet, IdFilter, StrictBooleanFilter, UtcDateTimeFilter

SILENCE_STATES = [("scheduled", "Scheduled"), ("active", "Active"), ("expired", "Expired")]


class AlertRuleFilterSet(ApiFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    metric = django_filters.ChoiceFilter(choices=Metric.choices)
    severity = django_filters.ChoiceFilter(choices=Severity.choices)

    class Meta:
        model = AlertRule
        fields = ["team", "cluster", "name", "metric", "severity", "enabled"]


class NotificationChannelFilterSet(ApiFilterSet):
    kind = django_filters.ChoiceFilter(choices=ChannelKind.choices)

    class Meta:
        model = NotificationChannel
        fields = ["team", "kind", "enabled"]


class SilenceFilterSet(ApiFilterSet):
    state = django_filters.ChoiceFilter(choices=SILENCE_STATES, method="filter_state")

    class Meta:
        model = Silence
        fields = ["team", "cluster", "rule", "state"]

    def filter_state(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        now = timezone.now()
        conditions = {
            "scheduled": Q(starts_at__gt=now),
            "active": Q(starts_at__lte=now, ends_at__gt=now),
            "expired": Q(ends_at__lte=now),
        }
        return queryset.filter(conditions[value])


class AlertFilterSet(ApiFilterSet):
    state = django_filters.MultipleChoiceFilter(choices=AlertState.choices)
    active = StrictBooleanFilter(method="filter_active", help_text="Pending or firing.")
    team = IdFilter(field_name="rule__team")
    severity = django_filters.ChoiceFilter(choices=Severity.choices)
    group = django_filters.CharFilter(field_name="group_name", lookup_expr="icontains")
    acknowledged = StrictBooleanFilter(field_name="acknowledged_at", lookup_expr="isnull", exclude=True)
    since = django_filters.IsoDateTimeFilter(
        method="filter_since", help_text="Alerts still open at or after this time."
    )
    until = UtcDateTimeFilter(field_name="pending_since", lookup_expr="lt", help_text="Alerts opened before.")
    kind = django_filters.ChoiceFilter(
        choices=[
            ("lag", "Consumer lag"),
            ("cluster_health", "Cluster health"),
            ("connector", "Connectors"),
            ("replication", "Replication flows"),
        ],
        method="filter_kind",
        help_text="Alerts of lag rules, of cluster-health rules (brokers, partitions, disks, reachability), or "
        "of connector rules (a Kafka Connect connector or task not running), or of replication rules (a "
        "MirrorMaker 2 flow's replica behind its threshold).",
    )

    class Meta:
        model = Alert
        fields = ["state", "active", "cluster", "rule", "team", "severity", "group", "acknowledged"]

    def filter_active(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        active = Q(state__in=ACTIVE_STATES)
        return queryset.filter(active if value else ~active)

    def filter_since(self, queryset: QuerySet, name: str, value: datetime) -> QuerySet:
        return queryset.filter(Q(resolved_at__isnull=True) | Q(resolved_at__gte=value))

    def filter_kind(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        families = {
            "lag": LAG_METRICS,
            "cluster_health": CLUSTER_METRICS,
            "connector": CONNECTOR_METRICS,
            "replication": REPLICATION_METRICS,
        }
        return queryset.filter(rule__metric__in=families[value])


class NotificationFilterSet(ApiFilterSet):
    kind = django_filters.ChoiceFilter(choices=NotificationKind.choices)
    status = django_filters.ChoiceFilter(choices=NotificationStatus.choices)

    class Meta:
        model = Notification
        fields = ["alert", "channel", "kind", "status"]
