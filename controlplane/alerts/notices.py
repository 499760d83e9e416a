"""What a notification says: one JSON document per notice, kept with the notification and sent as is."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from controlplane.alerts.choices import Metric, NotificationKind
from controlplane.alerts.conditions import RuleSpec
from controlplane.alerts.models import Alert

PAYLOAD_VERSION = 1

_METRIC_UNITS = {Metric.LAG_MESSAGES: "messages", Metric.LAG_SECONDS: "s", Metric.TIME_TO_CATCH_UP: "s"}


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


_YES_NO_METRICS = {
    Metric.BROKER_DOWN: ("down", "up"),
    Metric.CLUSTER_UNREACHABLE: ("unreachable", "reachable"),
    Metric.PROVISIONING_FAILED: ("failed", "not failed"),
    Metric.CONNECTOR_NOT_RUNNING: ("paused or failed", "running"),
}
_COUNT_UNITS = {
    Metric.UNDER_REPLICATED_PARTITIONS: "partitions",
    Metric.OFFLINE_PARTITIONS: "partitions",
    Metric.UNDER_MIN_ISR_PARTITIONS: "partitions",
    Metric.CONTROLLER_CHANGES_PER_HOUR: "changes in the last hour",
    Metric.REPLICATION_LAG_RECORDS: "records behind",
}


def describe_value(metric: str, value: float | None, status: str) -> str:
    if metric == Metric.STATUS:
        return status
    if value is None:
        return "unknown"
    if metric in _YES_NO_METRICS:
        yes, no = _YES_NO_METRICS[metric]
        return yes if value > 0 else no
    if metric in _COUNT_UNITS:
        return f"{value:,.0f} {_COUNT_UNITS[metric]}"
    if metric == Metric.DISK_USAGE_PERCENT:
        return f"{value:.1f} % used"
    if value == float("inf"):
        return "never (not catching up)"
    # Messages are counted, so they are whole; seconds below 10 keep a decimal.
    whole = metric == Metric.LAG_MESSAGES or value >= 10
    return f"{value:,.0f} {_METRIC_UNITS[metric]}" if whole else f"{value:.1f} {_METRIC_UNITS[metric]}"


def _json_number(value: float | None) -> float | None:
    # JSON has no infinity: "never catches up" is sent as null, with the words in `value_text`.
    return None if value is None or value == float("inf") else value


def alert_payload(
    *, kind: str, rule: RuleSpec, alert: Alert, cluster_name: str, team_name: str
) -> dict[str, Any]:
    where = alert.group_name if not alert.topic else f"{alert.group_name} {alert.topic}[{alert.partition}]"
    headline = {
        NotificationKind.FIRING: "FIRING",
        NotificationKind.REMINDER: "STILL FIRING",
        NotificationKind.RESOLVED: "RESOLVED",
    }[kind]
    value_text = describe_value(rule.metric, alert.value, alert.status)
    return {
        "version": PAYLOAD_VERSION,
        "kind": kind,
        "summary": f"[{headline}] {rule.name}: {where} on {cluster_name}: {rule.metric} {value_text}",
        "alert": {
            "id": alert.pk,
            "state": alert.state,
            "severity": alert.severity,
            "cluster": cluster_name,
            "group": alert.group_name,
            "topic": alert.topic or None,
            "partition": alert.partition,
            "metric": rule.metric,
            "value": _json_number(alert.value),
            "value_text": value_text,
            "status": alert.status,
            "reason": alert.reason,
            "pending_since": _iso(alert.pending_since),
            "fired_at": _iso(alert.fired_at),
            "resolved_at": _iso(alert.resolved_at),
        },
        "rule": {
            "id": rule.id,
            "name": rule.name,
            "team": team_name,
            "threshold": rule.threshold,
            "resolve_threshold": rule.resolve_threshold,
            "comparison": rule.comparison,
            "statuses": sorted(rule.statuses),
            "for_seconds": rule.for_seconds,
        },
    }


def channel_test_payload(*, channel_name: str, team_name: str, at: datetime) -> dict[str, Any]:
    return {
        "version": PAYLOAD_VERSION,
        "kind": NotificationKind.TEST,
        "summary": f"Test notification for channel {channel_name} of team {team_name}.",
        "sent_at": at.isoformat(),
    }
