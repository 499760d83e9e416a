"""Prometheus text exposition of every group's lag and health, for people who alert from Prometheus.

GET /metrics answers a bearer token: settings.METRICS_TOKEN (every group of every organization) or an
org admin's personal API key (the groups of the organizations it administers)."""

from __future__ import annotations

import hmac
from collections.abc import Iterable

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from controlplane.accounts.services import authenticate_api_key
from controlplane.lag.models import GroupLag
from controlplane.lag.observations import Health
from controlplane.tenancy.access import Actor, org_roles

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_FAMILIES = [
    (
        "kafka_consumergroup_lag_messages",
        "Records between the committed offset and the log end, per partition.",
    ),
    ("kafka_consumergroup_lag_seconds", "Age of the first unconsumed record, per partition."),
    ("kafka_consumergroup_total_lag_messages", "Lag in records summed over the group's partitions."),
    ("kafka_consumergroup_max_lag_seconds", "The group's worst partition lag in seconds."),
    ("kafka_consumergroup_time_to_catch_up_seconds", "Estimated time until the group has no lag."),
    ("kafka_consumergroup_members", "Members of the group."),
    ("kafka_consumergroup_status", "1 for the group's current health status, 0 for the others."),
]


def _escape(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{name}="{_escape(value)}"' for name, value in labels.items()) + "}"


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def render_metrics(rows: Iterable[GroupLag]) -> str:
    """The exposition text for the given GroupLag rows (with group and cluster selected)."""
    samples: dict[str, list[str]] = {name: [] for name, _help in _FAMILIES}
    for row in rows:
        group = {"cluster": row.cluster.name, "group": row.group.name}
        for p in row.partitions:
            labels = _labels(**group, topic=p["topic"], partition=p["partition"])
            samples["kafka_consumergroup_lag_messages"].append(f"{labels} {p['lag_messages']}")
            if p["lag_seconds"] is not None:
                samples["kafka_consumergroup_lag_seconds"].append(f"{labels} {_number(p['lag_seconds'])}")
        labels = _labels(**group)
        samples["kafka_consumergroup_total_lag_messages"].append(f"{labels} {row.lag_messages}")
        if row.lag_seconds is not None:
            samples["kafka_consumergroup_max_lag_seconds"].append(f"{labels} {_number(row.lag_seconds)}")
        if row.time_to_catch_up_seconds is not None:
            samples["kafka_consumergroup_time_to_catch_up_seconds"].append(
                f"{labels} {_number(row.time_to_catch_up_seconds)}"
            )
        samples["kafka_consumergroup_members"].append(f"{labels} {row.member_count}")
        for status in Health.values:
            flag = 1 if row.status == status else 0
            samples["kafka_consumergroup_status"].append(f"{_labels(**group, status=status)} {flag}")
    lines = []
    for name, help_text in _FAMILIES:
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
        lines += [f"{name}{sample}" for sample in samples[name]]
    return "\n".join(lines) + "\n"


def _visible_rows(request: HttpRequest) -> QuerySet | None:
    """The rows the bearer may read, or None when it is neither the metrics token nor an org admin's key."""
    parts = request.headers.get("Authorization", "").split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    token = parts[1]
    rows = GroupLag.objects.select_related("group", "cluster").order_by("cluster_id", "group__name")
    if settings.METRICS_TOKEN and hmac.compare_digest(token.encode(), settings.METRICS_TOKEN.encode()):
        return rows
    api_key = authenticate_api_key(raw_token=token)
    if api_key is None or api_key.service_account_id is not None:
        return None
    organizations = list(org_roles(Actor(user=api_key.user, api_key=api_key)))
    return rows.filter(cluster__organization_id__in=organizations) if organizations else None


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    rows = _visible_rows(request)
    if rows is None:
        response = HttpResponse("a metrics token or an org admin's API key is required\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(render_metrics(rows), content_type=CONTENT_TYPE)
