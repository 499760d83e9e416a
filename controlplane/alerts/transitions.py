"""The alert state machine: pending → firing → resolved, with `for` durations, hysteresis, re-notification
and silences. It changes unsaved-or-loaded Alert objects in memory and says which notice to send; the
caller (evaluation) saves in bulk. No database access here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from controlplane.alerts.choices import AlertState, NotificationKind
from controlplane.alerts.conditions import RuleSpec, Subject, breaches, glob_matches, recovered
from controlplane.alerts.models import Alert


@dataclass(frozen=True)
class SilenceSpec:
    id: int
    team_id: int
    cluster_id: int | None
    group_pattern: str
    topic_pattern: str
    rule_id: int | None
    severity: str
    starts_at: datetime
    ends_at: datetime

    def silences(self, rule: RuleSpec, alert: Alert, at: datetime) -> bool:
        """Every matcher given matches; a group-wide alert (no topic) matches only an any-topic matcher."""
        return (
            self.starts_at <= at < self.ends_at
            and self.team_id == rule.team_id
            and (self.cluster_id is None or self.cluster_id == alert.cluster_id)
            and (self.rule_id is None or self.rule_id == rule.id)
            and (not self.severity or self.severity == rule.severity)
            and glob_matches(self.group_pattern, alert.group_name)
            and (self.topic_pattern in ("", "*") or glob_matches(self.topic_pattern, alert.topic))
        )


def silence_for(
    silences: list[SilenceSpec], rule: RuleSpec, alert: Alert, at: datetime
) -> SilenceSpec | None:
    return next((silence for silence in silences if silence.silences(rule, alert, at)), None)


@dataclass
class Transition:
    alert: Alert | None  # None: nothing to keep (a clear subject without an alert)
    created: bool = False
    discarded: bool = False  # a pending alert whose condition cleared before its `for` elapsed
    notice: str | None = None  # a NotificationKind to send (or record as suppressed)
    silence: SilenceSpec | None = None  # set when the notice is suppressed


def open_alert(rule: RuleSpec, cluster_id: int, subject: Subject, at: datetime) -> Alert:
    return Alert(
        rule_id=rule.id,
        cluster_id=cluster_id,
        group_name=subject.group,
        topic=subject.topic,
        partition=subject.partition,
        fingerprint=subject.fingerprint,
        state=AlertState.PENDING,
        severity=rule.severity,
        pending_since=at,
        last_evaluated_at=at,
    )


def _notify(
    transition: Transition, rule: RuleSpec, kind: str, at: datetime, silences: list[SilenceSpec]
) -> None:
    alert = transition.alert
    silence = silence_for(silences, rule, alert, at)
    alert.silenced_by_id = silence.id if silence is not None else None
    transition.notice, transition.silence = kind, silence
    alert.last_notified_at = at
    if silence is None:
        alert.notification_count += 1


def _due_reminder(rule: RuleSpec, alert: Alert, at: datetime) -> bool:
    interval = rule.renotify_interval_seconds
    return (
        bool(interval)
        and alert.acknowledged_at is None  # acknowledging an alert stops its reminders
        and alert.last_notified_at is not None
        and at - alert.last_notified_at >= timedelta(seconds=interval)
    )


def advance(
    rule: RuleSpec,
    cluster_id: int,
    alert: Alert | None,
    subject: Subject,
    at: datetime,
    silences: list[SilenceSpec],
) -> Transition:
    """One evaluation of one subject against its active alert (or None)."""
    breach = breaches(rule, subject)
    if alert is None:
        if not breach:
            return Transition(alert=None)
        alert = open_alert(rule, cluster_id, subject, at)
        transition = Transition(alert=alert, created=True)
    else:
        transition = Transition(alert=alert)
    alert.last_evaluated_at = at
    if subject.value is not None or breach is not None:
        alert.value, alert.status, alert.reason = subject.value, subject.status, subject.reason

    if alert.state == AlertState.PENDING:
        if breach is False:
            transition.discarded = True
        elif breach and at - alert.pending_since >= timedelta(seconds=rule.for_seconds):
            alert.state, alert.fired_at = AlertState.FIRING, at
            _notify(transition, rule, NotificationKind.FIRING, at, silences)
        return transition

    # Firing.
    if recovered(rule, subject):
        return resolve(transition, rule, at, silences)
    silence = silence_for(silences, rule, alert, at)
    if silence is None and alert.notification_count == 0:
        # Every notice so far was suppressed and the silence is over: people hear of it now.
        _notify(transition, rule, NotificationKind.FIRING, at, silences)
    elif _due_reminder(rule, alert, at):
        _notify(transition, rule, NotificationKind.REMINDER, at, silences)
    else:
        alert.silenced_by_id = silence.id if silence is not None else None
    return transition


def resolve(transition: Transition, rule: RuleSpec, at: datetime, silences: list[SilenceSpec]) -> Transition:
    """Ends a firing alert; the resolved notice goes only to those who heard that it fired."""
    alert = transition.alert
    alert.state, alert.resolved_at = AlertState.RESOLVED, at
    if rule.send_resolved and alert.notification_count > 0:
        _notify(transition, rule, NotificationKind.RESOLVED, at, silences)
    return transition


def forget(alert: Alert, at: datetime, reason: str) -> Transition:
    """An active alert whose subject was not evaluated in this run (the group is gone, or the rule was
    disabled or narrowed): a pending one is dropped, a firing one resolves without a notice."""
    transition = Transition(alert=alert)
    alert.last_evaluated_at = at
    if alert.state == AlertState.PENDING:
        transition.discarded = True
        return transition
    alert.state, alert.resolved_at, alert.reason = AlertState.RESOLVED, at, reason
    return transition
