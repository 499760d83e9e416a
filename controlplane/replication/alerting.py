"""Replication lag, sampled and alerted on every lag sampling run of a flow's target cluster
(`lag.signals.sampling_run_finished`, connected in ReplicationConfig).

Each run samples every running or paused flow that replicates into the cluster: per partition, the source's
end offset against the replica's (offsets only, no record read), kept as a ReplicationLagSample for
LAG_RAW_RETENTION_SECONDS like groups' raw lag history. Then it advances the `replication_lag_records` alerts
through the alerting app's state machine, silences and channels, as Connect's `connector_not_running` does:
a team's alert rule on that metric covers the team's flows (every team's for an all-teams rule) whose name
matches its group pattern, with one alert per flow whose value is the worst partition's lag. The flow's own
threshold (`lag_alert_records`) is the limit when it has one, else the rule's; the rule gives the `for`
duration, severity, channels and silences. A flow whose lag cannot be read now neither fires nor resolves.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from controlplane.alerts.choices import REPLICATION_METRICS, AlertState, Comparison
from controlplane.alerts.conditions import RuleSpec, Subject, glob_matches
from controlplane.alerts.evaluation import active_alerts, commit, load_rules, load_silences, new_evaluation
from controlplane.alerts.models import Alert
from controlplane.alerts.transitions import advance, forget
from controlplane.clusters.models import Cluster
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.lag.observations import SamplingRun
from controlplane.replication.choices import FlowState
from controlplane.replication.models import ReplicationFlow, ReplicationLagSample
from controlplane.replication.services import partition_lag

logger = logging.getLogger(__name__)

SAMPLED_STATES = (FlowState.RUNNING, FlowState.PAUSED)
HISTORY_SAMPLES = 60  # the flow's detail shows this many of its latest samples
RECENT_ALERTS = 10


def sample_flow(flow: ReplicationFlow, at: datetime) -> ReplicationLagSample:
    """Stores the flow's lag now; a cluster that cannot answer is kept as the sample's error."""
    try:
        rows = partition_lag(flow)
    except KafkaGatewayError as error:
        return ReplicationLagSample.objects.create(flow=flow, observed_at=at, error=str(error)[:2000])
    lags = [row["lag_records"] for row in rows]
    return ReplicationLagSample.objects.create(
        flow=flow,
        observed_at=at,
        lag_records=sum(lags),
        max_partition_lag_records=max(lags, default=0),
        partitions=[
            {"topic": row["topic"], "partition": row["partition"], "lag_records": row["lag_records"]}
            for row in rows
        ],
    )


def flow_subject(flow: ReplicationFlow, sample: ReplicationLagSample) -> Subject:
    if sample.max_partition_lag_records is None:
        value, reason = None, f"The flow's lag is unknown: {sample.error}"
    else:
        worst = max(sample.partitions, key=lambda row: row["lag_records"], default=None)
        where = f" (worst: {worst['topic']}[{worst['partition']}])" if worst and worst["lag_records"] else ""
        value = float(sample.max_partition_lag_records)
        reason = (
            f"Flow {flow.name}: {sample.lag_records} records not replicated yet, "
            f"{sample.max_partition_lag_records} on the worst partition{where}; the flow is {flow.state}."
        )
    return Subject(
        fingerprint=fingerprint(flow),
        group=flow.name,
        topic="",
        partition=None,
        value=value,
        status=flow.state,
        reason=reason,
    )


def flow_rule(rule: RuleSpec, flow: ReplicationFlow) -> RuleSpec | None:
    """The rule as it judges this flow: above the flow's threshold (the rule's when the flow has none); None
    when neither sets one."""
    limit = flow.lag_alert_records or rule.threshold
    if not limit:
        return None
    return dataclasses.replace(rule, threshold=float(limit), comparison=Comparison.GT, resolve_threshold=None)


def evaluate_replication_alerts(
    cluster: Cluster, samples: list[tuple[ReplicationFlow, ReplicationLagSample]], at: datetime
) -> None:
    """Advances the alerts of the flows into the cluster and records the notifications they cause."""
    rules = load_rules(cluster, REPLICATION_METRICS)
    active = active_alerts(cluster.pk, REPLICATION_METRICS)
    if not rules and not active:
        return
    silences = load_silences(rules, cluster.pk, at) if rules else []
    evaluation = new_evaluation(rules, active)
    seen: set[tuple[int, str]] = set()
    for rule in rules.values():
        for flow, sample in samples:
            if not (rule.all_teams or rule.team_id == flow.team_id) or not glob_matches(
                rule.group_pattern, flow.name
            ):
                continue
            judged_by = flow_rule(rule, flow)
            if judged_by is None:
                continue
            subject = flow_subject(flow, sample)
            key = (rule.id, subject.fingerprint)
            seen.add(key)
            transition = advance(judged_by, cluster.pk, active.get(key), subject, at, silences)
            if transition.alert is not None:
                evaluation.transitions.append((judged_by, transition))
    for key, alert in active.items():
        if key not in seen:
            reason = (
                "The flow is gone, stopped, or has no threshold."
                if key[0] in rules
                else "The rule is disabled."
            )
            evaluation.transitions.append((rules.get(key[0]), forget(alert, at, reason)))
    commit(evaluation, cluster, at, REPLICATION_METRICS)


def sample_and_evaluate_flows(sender: type, *, run: SamplingRun, **kwargs: Any) -> None:
    """Each lag sampling run of a cluster samples the flows replicating into it and judges their alerts."""
    at = timezone.now()
    flows = ReplicationFlow.objects.filter(
        target_cluster_id=run.cluster_id, state__in=SAMPLED_STATES
    ).select_related("source_cluster", "target_cluster")
    samples = []
    for flow in flows:
        sample = sample_flow(flow, at)
        if sample.error:
            logger.info("replication lag of flow %s unknown: %s", flow.pk, sample.error)
        samples.append((flow, sample))
    ReplicationLagSample.objects.filter(
        flow__target_cluster_id=run.cluster_id,
        observed_at__lt=at - timedelta(seconds=settings.LAG_RAW_RETENTION_SECONDS),
    ).delete()
    cluster = Cluster.objects.select_related("organization").filter(pk=run.cluster_id).first()
    if cluster is not None:
        evaluate_replication_alerts(cluster, samples, at)


def fingerprint(flow: ReplicationFlow) -> str:
    return f"replication_flow:{flow.pk}"


def flow_alerts(flow: ReplicationFlow) -> tuple[str, list[Alert]]:
    """The flow's alert state (`firing`, `pending`, or `ok` when no alert is active) and its latest alerts."""
    alerts = list(
        Alert.objects.filter(
            cluster_id=flow.target_cluster_id,
            rule__metric__in=REPLICATION_METRICS,
            fingerprint=fingerprint(flow),
        )
        .select_related("rule")
        .order_by("-pending_since")[:RECENT_ALERTS]
    )
    states = {alert.state for alert in alerts}
    for state in (AlertState.FIRING, AlertState.PENDING):
        if state in states:
            return state, alerts
    return "ok", alerts


def lag_history(flow: ReplicationFlow) -> list[ReplicationLagSample]:
    """The flow's latest samples, oldest first."""
    return list(reversed(flow.lag_samples.order_by("-observed_at")[:HISTORY_SAMPLES]))
