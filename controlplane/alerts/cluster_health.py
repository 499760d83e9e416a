"""Cluster-health alert rules: broker down, under-replicated / offline / under-min-ISR partitions, controller
changes per hour, disk usage per broker, cluster unreachable, provisioning failed.

Every `LAG_SAMPLING_INTERVAL_SECONDS` (Celery beat, `alerts.sample_cluster_health_all`) each cluster that some
enabled cluster-health rule covers is looked at once (`describe_cluster_health`); the sample is kept
(`ClusterHealthSample`, shown on the console's overview) and the rules are evaluated through the same state
machine, silences, acknowledgements and channels as lag rules (`transitions.advance`, `evaluation.commit`).
A value that could not be observed (a broker whose disks could not be asked, every value of an unreachable
cluster but `cluster_unreachable` itself) neither fires nor resolves.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from controlplane.alerts.choices import CLUSTER_METRICS, Metric
from controlplane.alerts.conditions import RuleSpec, Subject, glob_matches
from controlplane.alerts.evaluation import (
    active_alerts,
    commit,
    load_rules,
    load_silences,
    new_evaluation,
)
from controlplane.alerts.models import AlertRule, ClusterHealthSample
from controlplane.alerts.transitions import advance, forget
from controlplane.clusters.choices import WATCHED_STATUSES, BrokerStatus, ClusterStatus
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.health import ClusterHealthReport, describe_cluster_health

logger = logging.getLogger(__name__)

# An external cluster's broker that was listed within this window and is not listed now is down; after it,
# the broker is taken as removed (its alert resolves quietly).
BROKER_MEMORY = timedelta(hours=24)
CONTROLLER_WINDOW_SECONDS = 3600
PER_BROKER_METRICS = (Metric.BROKER_DOWN, Metric.DISK_USAGE_PERCENT)
CLUSTER_SUBJECT = "cluster"
PROBE_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class HealthObservation:
    """One look at one cluster, as the rules see it."""

    cluster_id: int
    observed_at: datetime
    cluster_values: dict[str, float | None]  # cluster-wide metric -> value (None: unknown now)
    broker_values: dict[str, dict[int, float | None]]  # per-broker metric -> node id -> value
    reasons: dict[str, str] = field(default_factory=dict)  # metric (or "metric:node") -> why, in words


def _subject(fingerprint: str, label: str, value: float | None, reason: str) -> Subject:
    return Subject(
        fingerprint=fingerprint, group=label, topic="", partition=None, value=value, status="", reason=reason
    )


def subjects_of(rule: RuleSpec, observation: HealthObservation) -> list[Subject]:
    """One subject per broker for per-broker metrics (the rule's group pattern filters `broker <id>`), else
    one for the cluster."""
    if rule.metric in PER_BROKER_METRICS:
        subjects = [
            _subject(
                f"broker:{node_id}",
                f"broker {node_id}",
                value,
                observation.reasons.get(f"{rule.metric}:{node_id}", ""),
            )
            for node_id, value in sorted(observation.broker_values.get(rule.metric, {}).items())
        ]
        return [subject for subject in subjects if glob_matches(rule.group_pattern, subject.group)]
    value = observation.cluster_values.get(rule.metric)
    return [_subject(CLUSTER_SUBJECT, CLUSTER_SUBJECT, value, observation.reasons.get(rule.metric, ""))]


def _known_brokers(cluster: Cluster, sample: ClusterHealthSample | None, now: float) -> set[int]:
    known = set(cluster.brokers.values_list("node_id", flat=True))
    if sample is not None:
        horizon = now - BROKER_MEMORY.total_seconds()
        known |= {int(node) for node, seen in sample.broker_last_seen.items() if seen >= horizon}
    return known


def _unknown_observation(known: set[int], **values: float | None) -> dict:
    return {
        "cluster_values": {
            Metric.UNDER_REPLICATED_PARTITIONS: None,
            Metric.OFFLINE_PARTITIONS: None,
            Metric.UNDER_MIN_ISR_PARTITIONS: None,
            Metric.CONTROLLER_CHANGES_PER_HOUR: None,
            **values,
        },
        "broker_values": {
            Metric.BROKER_DOWN: dict.fromkeys(known),
            Metric.DISK_USAGE_PERCENT: dict.fromkeys(known),
        },
    }


def observe(cluster: Cluster) -> HealthObservation:
    """Looks at the cluster (unless it is not running) and stores the sample; returns what rules see."""
    at = timezone.now()
    now = at.timestamp()
    sample = ClusterHealthSample.objects.filter(cluster=cluster).first()
    known = _known_brokers(cluster, sample, now)
    failed = 1.0 if cluster.status == ClusterStatus.FAILED else 0.0
    reasons: dict[str, str] = {
        Metric.PROVISIONING_FAILED: cluster.status_reason if failed else "The cluster is not in failed state."
    }
    report: ClusterHealthReport | None = None
    error = ""
    if cluster.status in WATCHED_STATUSES:
        try:
            report = describe_cluster_health(connection_for(cluster), timeout_seconds=PROBE_TIMEOUT_SECONDS)
        except KafkaGatewayError as failure:
            error = str(failure)
    if report is None:
        unreachable = 1.0 if error else None  # not running: not asked, so not known to be unreachable
        reasons[Metric.CLUSTER_UNREACHABLE] = f"The cluster did not answer: {error}" if error else ""
        parts = _unknown_observation(
            known, **{Metric.CLUSTER_UNREACHABLE: unreachable, Metric.PROVISIONING_FAILED: failed}
        )
        _store(cluster, sample, at, reachable=False if error else None, error=error, values=parts)
        return HealthObservation(cluster.pk, at, reasons=reasons, **parts)

    dead_in_database = set(cluster.brokers.filter(status=BrokerStatus.DEAD).values_list("node_id", flat=True))
    last_seen = {
        node: seen
        for node, seen in (sample.broker_last_seen if sample is not None else {}).items()
        if seen >= now - BROKER_MEMORY.total_seconds()
    }
    last_seen.update({str(node): now for node in report.broker_ids - dead_in_database})
    down: dict[int, float | None] = {}
    for node in sorted(known | report.broker_ids):
        is_down = node not in report.broker_ids or node in dead_in_database
        down[node] = 1.0 if is_down else 0.0
        reasons[f"{Metric.BROKER_DOWN}:{node}"] = (
            f"Broker {node} is not listed by the cluster (stopped, fenced or unreachable)."
            if is_down
            else f"Broker {node} is listed by the cluster."
        )
    disks = {node: report.disk_used_percent.get(node) for node in down}
    for node, used in disks.items():
        reasons[f"{Metric.DISK_USAGE_PERCENT}:{node}"] = (
            f"Broker {node}'s fullest log-dir volume is {used:.1f} % used."
            if used is not None
            else f"Broker {node} did not report its log-dir volumes."
        )

    changes = [moment for moment in (sample.controller_changes if sample else []) if moment > now - 3600]
    previous_controller = sample.controller_id if sample is not None else None
    if (
        previous_controller is not None
        and report.controller_id >= 0
        and report.controller_id != previous_controller
    ):
        changes.append(now)
    controller = report.controller_id if report.controller_id >= 0 else previous_controller
    partitions = report.partition_count
    reasons.update(
        {
            Metric.CLUSTER_UNREACHABLE: "The cluster answers.",
            Metric.UNDER_REPLICATED_PARTITIONS: f"{report.under_replicated_partitions} of {partitions} "
            "partitions have fewer in-sync replicas than replicas.",
            Metric.OFFLINE_PARTITIONS: f"{report.offline_partitions} of {partitions} partitions have no leader.",
            Metric.UNDER_MIN_ISR_PARTITIONS: f"{report.under_min_isr_partitions} of {partitions} partitions "
            "have fewer in-sync replicas than their topic's min.insync.replicas (acks=all produce fails).",
            Metric.CONTROLLER_CHANGES_PER_HOUR: f"The controller changed {len(changes)} times in the last hour "
            f"(now broker {controller}).",
        }
    )
    parts = {
        "cluster_values": {
            Metric.CLUSTER_UNREACHABLE: 0.0,
            Metric.PROVISIONING_FAILED: failed,
            Metric.UNDER_REPLICATED_PARTITIONS: float(report.under_replicated_partitions),
            Metric.OFFLINE_PARTITIONS: float(report.offline_partitions),
            Metric.UNDER_MIN_ISR_PARTITIONS: float(report.under_min_isr_partitions),
            Metric.CONTROLLER_CHANGES_PER_HOUR: float(len(changes)),
        },
        "broker_values": {Metric.BROKER_DOWN: down, Metric.DISK_USAGE_PERCENT: disks},
    }
    _store(
        cluster,
        sample,
        at,
        reachable=True,
        error="",
        values=parts,
        controller_id=controller,
        controller_changes=changes,
        broker_last_seen=last_seen,
    )
    return HealthObservation(cluster.pk, at, reasons=reasons, **parts)


def _store(
    cluster: Cluster,
    sample: ClusterHealthSample | None,
    at: datetime,
    *,
    reachable: bool | None,
    error: str,
    values: dict,
    **memory: object,
) -> None:
    kept = {
        "controller_id": sample.controller_id if sample else None,
        "controller_changes": sample.controller_changes if sample else [],
        "broker_last_seen": sample.broker_last_seen if sample else {},
    }
    flat = {
        **values["cluster_values"],
        **{
            metric: {str(node): v for node, v in per.items()}
            for metric, per in values["broker_values"].items()
        },
    }
    ClusterHealthSample.objects.update_or_create(
        cluster=cluster,
        defaults={
            "observed_at": at,
            "reachable": reachable,
            "error": error[:2000],
            "values": flat,
            **kept,
            **memory,
        },
    )


def evaluate(cluster: Cluster, observation: HealthObservation) -> None:
    """Advances every cluster-health alert of the cluster and records the notifications it causes."""
    rules = load_rules(cluster, CLUSTER_METRICS)
    active = active_alerts(cluster.pk, CLUSTER_METRICS)
    if not rules and not active:
        return
    at = observation.observed_at
    silences = load_silences(rules, cluster.pk, at) if rules else []
    evaluation = new_evaluation(rules, active)
    seen: set[tuple[int, str]] = set()
    for rule in rules.values():
        for subject in subjects_of(rule, observation):
            key = (rule.id, subject.fingerprint)
            seen.add(key)
            transition = advance(rule, cluster.pk, active.get(key), subject, at, silences)
            if transition.alert is not None:
                evaluation.transitions.append((rule, transition))
    for key, alert in active.items():
        if key not in seen:
            reason = (
                "The broker is no longer part of the cluster." if key[0] in rules else "The rule is disabled."
            )
            evaluation.transitions.append((rules.get(key[0]), forget(alert, at, reason)))
    commit(evaluation, cluster, at, CLUSTER_METRICS)


def sample_and_evaluate(cluster_id: int) -> HealthObservation | None:
    cluster = Cluster.objects.select_related("organization").filter(pk=cluster_id).first()
    if cluster is None:
        return None
    started = time.monotonic()
    observation = observe(cluster)
    evaluate(cluster, observation)
    logger.debug("cluster-health sample of cluster %s in %.2f s", cluster_id, time.monotonic() - started)
    return observation


def clusters_to_sample() -> list[int]:
    """Clusters that an enabled cluster-health rule covers (a rule without a cluster covers every cluster
    of its team's organization), and that are running, degraded, or failed (provisioning_failed)."""
    rules = AlertRule.objects.filter(enabled=True, metric__in=CLUSTER_METRICS)
    everywhere = rules.filter(cluster__isnull=True).values("team__organization_id")
    named = rules.filter(cluster__isnull=False).values("cluster_id")
    return list(
        Cluster.objects.filter(status__in=[*WATCHED_STATUSES, ClusterStatus.FAILED])
        .filter(Q(organization_id__in=everywhere) | Q(pk__in=named))
        .values_list("pk", flat=True)
    )
