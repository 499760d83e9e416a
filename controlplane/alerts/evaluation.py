"""Alert evaluation at the end of each lag-sampling run of one cluster.

The sampler calls `evaluate_alerts(run)`; one run may carry thousands of groups, so rules, active alerts and
silences are loaded once, patterns are compiled once, and every write is a bulk statement in one
transaction. Notifications are only recorded here: Celery tasks deliver them after the commit.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from celery import current_app
from django.db import connection, transaction
from django.db.models import Q

from controlplane.alerts.choices import ACTIVE_STATES, LAG_METRICS, NotificationStatus
from controlplane.alerts.conditions import RuleSpec, subjects_of
from controlplane.alerts.models import Alert, AlertRule, Notification, Silence
from controlplane.alerts.notices import alert_payload
from controlplane.alerts.transitions import SilenceSpec, Transition, advance, forget
from controlplane.clusters.models import Cluster
from controlplane.lag.observations import SamplingRun

logger = logging.getLogger(__name__)

# Inserts in batches of one size repeat one SQL text, which the driver parses once instead of per batch.
BULK_BATCH = 250

# What evaluation writes to an alert it already had; last_evaluated_at is set for all of them in one statement.
ALERT_FIELDS_CHANGED_BY_EVALUATION = [
    "state", "value", "status", "reason", "fired_at", "resolved_at", "last_notified_at", "notification_count",
    "silenced_by",
]  # fmt: skip


def rule_spec(rule: AlertRule) -> RuleSpec:
    return RuleSpec(
        id=rule.pk,
        name=rule.name,
        team_id=rule.team_id,
        cluster_id=rule.cluster_id,
        group_pattern=rule.group_pattern,
        topic_pattern=rule.topic_pattern,
        granularity=rule.granularity,
        metric=rule.metric,
        comparison=rule.comparison,
        threshold=rule.threshold,
        resolve_threshold=rule.resolve_threshold,
        statuses=frozenset(rule.statuses),
        for_seconds=rule.for_seconds,
        renotify_interval_seconds=rule.renotify_interval_seconds,
        send_resolved=rule.send_resolved,
        severity=rule.severity,
        channel_ids=tuple(channel.pk for channel in rule.channels.all() if channel.enabled),
        all_teams=rule.all_teams,
    )


def silence_spec(silence: Silence) -> SilenceSpec:
    return SilenceSpec(
        id=silence.pk,
        team_id=silence.team_id,
        cluster_id=silence.cluster_id,
        group_pattern=silence.group_pattern,
        topic_pattern=silence.topic_pattern,
        rule_id=silence.rule_id,
        severity=silence.severity,
        starts_at=silence.starts_at,
        ends_at=silence.ends_at,
    )


@dataclass
class Evaluation:
    """The transitions of one evaluation of one cluster's rules of one family (lag, or cluster health)."""

    rules: dict[int, RuleSpec]
    loaded_states: dict[int, tuple]  # alert id -> its evaluated fields as loaded, to write only what changed
    transitions: list[tuple[RuleSpec, Transition]] = field(default_factory=list)


def load_rules(cluster: Cluster, metrics: tuple[str, ...]) -> dict[int, RuleSpec]:
    """The enabled rules of the cluster's organization on the given metrics that cover this cluster."""
    rules = (
        AlertRule.objects.filter(
            enabled=True, team__organization_id=cluster.organization_id, metric__in=metrics
        )
        .filter(Q(cluster__isnull=True) | Q(cluster_id=cluster.pk))
        .prefetch_related("channels")
    )
    return {rule.pk: rule_spec(rule) for rule in rules}


def load_silences(rules: dict[int, RuleSpec], cluster_id: int, at: datetime) -> list[SilenceSpec]:
    team_ids = {rule.team_id for rule in rules.values()}
    silences = Silence.objects.filter(team_id__in=team_ids, starts_at__lte=at, ends_at__gt=at).filter(
        Q(cluster__isnull=True) | Q(cluster_id=cluster_id)
    )
    return [silence_spec(silence) for silence in silences]


def active_alerts(cluster_id: int, metrics: tuple[str, ...]) -> dict[tuple[int, str], Alert]:
    alerts = Alert.objects.filter(cluster_id=cluster_id, state__in=ACTIVE_STATES, rule__metric__in=metrics)
    return {(alert.rule_id, alert.fingerprint): alert for alert in alerts}


def new_evaluation(rules: dict[int, RuleSpec], active: dict[tuple[int, str], Alert]) -> Evaluation:
    return Evaluation(rules=rules, loaded_states={alert.pk: _state_of(alert) for alert in active.values()})


def _evaluate(
    run: SamplingRun, rules: dict[int, RuleSpec], active: dict[tuple[int, str], Alert]
) -> Evaluation:
    silences = load_silences(rules, run.cluster_id, run.observed_at) if rules else []
    rules_by_team: dict[int, list[RuleSpec]] = defaultdict(list)
    every_team = [rule for rule in rules.values() if rule.all_teams]
    for rule in rules.values():
        if not rule.all_teams:
            rules_by_team[rule.team_id].append(rule)
    evaluation = new_evaluation(rules, active)
    seen: set[tuple[int, str]] = set()
    for group in run.groups:
        for rule in (*rules_by_team.get(group.team_id, ()), *every_team):
            if not rule.applies_to(group):
                continue
            for subject in subjects_of(rule, group):
                key = (rule.id, subject.fingerprint)
                seen.add(key)
                transition = advance(
                    rule, run.cluster_id, active.get(key), subject, run.observed_at, silences
                )
                if transition.alert is not None:
                    evaluation.transitions.append((rule, transition))
    for key, alert in active.items():
        if key not in seen:
            reason = (
                "The group is no longer observed."
                if key[0] in rules
                else "The rule is disabled or no longer applies."
            )
            evaluation.transitions.append((rules.get(key[0]), forget(alert, run.observed_at, reason)))
    return evaluation


def _notifications(
    evaluation: Evaluation, observed_at: datetime, cluster: Cluster, team_names: dict[int, str]
) -> list[Notification]:
    notifications = []
    for rule, transition in evaluation.transitions:
        if transition.notice is None or not rule.channel_ids:
            continue
        payload = alert_payload(
            kind=transition.notice,
            rule=rule,
            alert=transition.alert,
            cluster_name=cluster.name,
            team_name=team_names.get(rule.team_id, ""),
        )
        silence_id = transition.silence.id if transition.silence is not None else None
        status = NotificationStatus.SUPPRESSED if silence_id is not None else NotificationStatus.PENDING
        notifications.extend(
            Notification(
                alert=transition.alert,
                channel_id=channel_id,
                kind=transition.notice,
                status=status,
                silence_id=silence_id,
                payload=payload,
                created_at=observed_at,
            )
            for channel_id in rule.channel_ids
        )
    return notifications


def _state_of(alert: Alert) -> tuple:
    return tuple(
        getattr(alert, Alert._meta.get_field(name).attname) for name in ALERT_FIELDS_CHANGED_BY_EVALUATION
    )


def _update_rows(alerts: list[Alert]) -> None:
    """One prepared UPDATE executed for many rows: bulk_update's CASE expressions grow with the batch and
    made steady runs over thousands of firing alerts take minutes."""
    fields = [Alert._meta.get_field(name) for name in ALERT_FIELDS_CHANGED_BY_EVALUATION]
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    sql = f"UPDATE {quote(Alert._meta.db_table)} SET {assignments} WHERE {quote('id')} = %s"
    rows = [
        [field.get_db_prep_save(getattr(alert, field.attname), connection) for field in fields] + [alert.pk]
        for alert in alerts
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _save(evaluation: Evaluation, cluster_id: int, observed_at: datetime, metrics: tuple[str, ...]) -> None:
    created = [t.alert for _, t in evaluation.transitions if t.created and not t.discarded]
    discarded = [t.alert.pk for _, t in evaluation.transitions if t.discarded and t.alert.pk is not None]
    changed = [
        t.alert
        for _, t in evaluation.transitions
        if not t.created and not t.discarded and _state_of(t.alert) != evaluation.loaded_states[t.alert.pk]
    ]
    if discarded:
        Alert.objects.filter(pk__in=discarded).delete()
    # Every active alert was evaluated: one statement says so, before some of them resolve below.
    Alert.objects.filter(cluster_id=cluster_id, state__in=ACTIVE_STATES, rule__metric__in=metrics).update(
        last_evaluated_at=observed_at
    )
    if changed:
        _update_rows(changed)
    if created:
        Alert.objects.bulk_create(created, batch_size=BULK_BATCH)


def evaluate_alerts(run: SamplingRun) -> None:
    """Advances every lag alert of the run's cluster and records (and queues) the notifications it causes."""
    cluster = Cluster.objects.filter(pk=run.cluster_id).first()
    if cluster is None:
        return
    rules = load_rules(cluster, LAG_METRICS)
    active = active_alerts(cluster.pk, LAG_METRICS)
    if not rules and not active:
        return
    commit(_evaluate(run, rules, active), cluster, run.observed_at, LAG_METRICS)


def commit(evaluation: Evaluation, cluster: Cluster, observed_at: datetime, metrics: tuple[str, ...]) -> None:
    """Saves an evaluation's alerts and records its notifications in one transaction; queues them after."""
    team_names = dict(cluster.organization.teams.values_list("id", "name"))
    with transaction.atomic():
        _save(evaluation, cluster.pk, observed_at, metrics)
        # Payloads name the alert's id, which new alerts only have once saved.
        notifications = Notification.objects.bulk_create(
            _notifications(evaluation, observed_at, cluster, team_names), batch_size=BULK_BATCH
        )
        pending = [n.pk for n in notifications if n.status == NotificationStatus.PENDING]
        if pending:
            transaction.on_commit(lambda: enqueue_deliveries(pending))
    logger.debug("evaluated %d alert subjects on cluster %s", len(evaluation.transitions), cluster.pk)


def enqueue_deliveries(notification_ids: list[int]) -> None:
    """Sent by name (`tasks.deliver_notification`): the Celery entry points import evaluation, never back."""
    for notification_id in notification_ids:
        try:
            current_app.send_task("alerts.deliver_notification", args=[notification_id], ignore_result=True)
        except Exception:
            # The queue is down: the notification stays pending and the next sweep sends it.
            logger.exception("could not queue delivery of alert notification %s", notification_id)
            return
