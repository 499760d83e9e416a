"""Connector alerts: a connector, or one of its tasks, paused, stopped or failed raises the
`connector_not_running` alert of every rule that covers it, and resolves once everything runs again.

Each evaluation asks Connect for the status of every connector on the cluster's Connect clusters, then advances
the alerts through the alerting app's state machine, silences and channels (as the cluster-health rules do).
A rule covers its team's connectors (every team's for an all-teams rule) whose name matches its group pattern.
A connector whose status Connect cannot give now (workers unreachable) neither fires nor resolves.
"""

from __future__ import annotations

from django.utils import timezone

from controlplane.alerts.choices import ACTIVE_STATES, CONNECTOR_METRICS
from controlplane.alerts.conditions import Subject, glob_matches
from controlplane.alerts.evaluation import active_alerts, commit, load_rules, load_silences, new_evaluation
from controlplane.alerts.models import Alert
from controlplane.alerts.transitions import advance, forget
from controlplane.clusters.models import Cluster
from controlplane.connect.choices import ConnectClusterStatus
from controlplane.connect.models import Connector
from controlplane.connect.services import connector_status

NOT_RUNNING_STATES = frozenset({"PAUSED", "STOPPED", "FAILED"})
UNKNOWN_STATES = frozenset({"UNKNOWN", "UNREACHABLE"})


def connector_subject(connector: Connector, status: dict) -> Subject:
    """1.0 when the connector or a task is paused, stopped or failed, 0.0 when all run, None when unknown."""
    state = status.get("state", "UNKNOWN")
    not_running = [f"the connector is {state}"] if state in NOT_RUNNING_STATES else []
    not_running += [
        f"task {task['id']} is {task['state']}"
        for task in status.get("tasks", [])
        if task.get("state") in NOT_RUNNING_STATES
    ]
    if state in UNKNOWN_STATES:
        value, reason = None, f"Connect gave no status: {status.get('error', '')}"
    elif not_running:
        value, reason = 1.0, f"Connector {connector.name}: {', '.join(not_running)}."
    else:
        value, reason = 0.0, f"Connector {connector.name} and its tasks run ({state})."
    return Subject(
        fingerprint=f"connector:{connector.pk}",
        group=connector.name,
        topic="",
        partition=None,
        value=value,
        status=state,
        reason=reason,
    )


def clusters_to_evaluate() -> list[int]:
    """Clusters with connectors on a live Connect cluster, or with an active connector alert (whose connector
    may be gone: the evaluation resolves it)."""
    with_connectors = Connector.objects.exclude(
        connect_cluster__status=ConnectClusterStatus.DELETED
    ).values_list("connect_cluster__cluster_id", flat=True)
    alerted = Alert.objects.filter(state__in=ACTIVE_STATES, rule__metric__in=CONNECTOR_METRICS).values_list(
        "cluster_id", flat=True
    )
    return sorted({*with_connectors, *alerted})


def evaluate_connector_alerts(cluster: Cluster) -> None:
    """Advances every connector alert of the cluster's connectors and records the notifications it causes."""
    rules = load_rules(cluster, CONNECTOR_METRICS)
    active = active_alerts(cluster.pk, CONNECTOR_METRICS)
    if not rules and not active:
        return
    at = timezone.now()
    silences = load_silences(rules, cluster.pk, at) if rules else []
    evaluation = new_evaluation(rules, active)
    connectors = Connector.objects.filter(connect_cluster__cluster=cluster).exclude(
        connect_cluster__status=ConnectClusterStatus.DELETED
    )
    subjects = [
        (connector, connector_subject(connector, connector_status(connector=connector)))
        for connector in connectors.select_related("connect_cluster")
        if any(rule.all_teams or rule.team_id == connector.team_id for rule in rules.values())
    ]
    seen: set[tuple[int, str]] = set()
    for rule in rules.values():
        for connector, subject in subjects:
            if not (rule.all_teams or rule.team_id == connector.team_id):
                continue
            if not glob_matches(rule.group_pattern, connector.name):
                continue
            key = (rule.id, subject.fingerprint)
            seen.add(key)
            transition = advance(rule, cluster.pk, active.get(key), subject, at, silences)
            if transition.alert is not None:
                evaluation.transitions.append((rules[rule.id], transition))
    for key, alert in active.items():
        if key not in seen:
            reason = "The connector is gone." if key[0] in rules else "The rule is disabled."
            evaluation.transitions.append((rules.get(key[0]), forget(alert, at, reason)))
    commit(evaluation, cluster, at, CONNECTOR_METRICS)
