"""What a rule looks at in a sampling run: its scope compiled once, the values it compares, and whether they
breach. Pure functions over the observation types, so they are tested without a database."""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass
from functools import lru_cache

from controlplane.alerts.choices import Comparison, Granularity, Metric
from controlplane.lag.observations import (
    HEALTH_SEVERITY,
    GroupObservation,
    PartitionObservation,
    worst_health,
)

_COMPARE = {
    Comparison.GT: lambda value, limit: value > limit,
    Comparison.GTE: lambda value, limit: value >= limit,
    Comparison.LT: lambda value, limit: value < limit,
    Comparison.LTE: lambda value, limit: value <= limit,
}


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A shell-style pattern (`*`, `?`, `[…]`) matched against the whole name, case-sensitively."""
    return re.compile(fnmatch.translate(pattern or "*"))


@lru_cache(maxsize=65536)
def glob_matches(pattern: str, name: str) -> bool:
    # Remembered per (pattern, name): every run asks again about the same groups and topics.
    return compile_glob(pattern).match(name) is not None


@dataclass(frozen=True)
class RuleSpec:
    """An enabled rule as evaluation needs it, patterns compiled."""

    id: int
    name: str
    team_id: int
    cluster_id: int | None
    group_pattern: str
    topic_pattern: str
    granularity: str
    metric: str
    comparison: str
    threshold: float | None
    resolve_threshold: float | None
    statuses: frozenset[str]
    for_seconds: int
    renotify_interval_seconds: int | None
    send_resolved: bool
    severity: str
    channel_ids: tuple[int, ...] = ()
    all_teams: bool = False  # an org admin's rule over every team's groups

    @property
    def all_topics(self) -> bool:
        return self.topic_pattern in ("", "*")

    def applies_to(self, group: GroupObservation) -> bool:
        """The team's own groups (every team's for an all-teams rule), on the rule's cluster (if it names one),
        whose name matches."""
        return (
            (self.all_teams or group.team_id == self.team_id)
            and (self.cluster_id is None or self.cluster_id == group.cluster_id)
            and glob_matches(self.group_pattern, group.group)
        )


@dataclass(frozen=True)
class Subject:
    """One thing a rule keeps one alert for (a group, or one of its partitions), with the observed value."""

    fingerprint: str
    group: str
    topic: str
    partition: int | None
    value: float | None  # None: unknown in this run (e.g. lag in seconds without timestamps or history)
    status: str
    reason: str


def _time_to_catch_up(seconds: float | None, lag_messages: int) -> float:
    # The sampler reports None when the consumer is not catching up at all: with a backlog that is forever.
    if seconds is None:
        return math.inf if lag_messages > 0 else 0.0
    return seconds


def _value(
    metric: str, *, lag_messages: int, lag_seconds: float | None, catch_up: float | None, status: str
) -> float | None:
    if metric == Metric.LAG_MESSAGES:
        return float(lag_messages)
    if metric == Metric.LAG_SECONDS:
        return lag_seconds
    if metric == Metric.TIME_TO_CATCH_UP:
        return _time_to_catch_up(catch_up, lag_messages)
    return float(HEALTH_SEVERITY[status])


def _partition_subject(rule: RuleSpec, group: str, partition: PartitionObservation) -> Subject:
    return Subject(
        fingerprint=f"{group}/{partition.topic}/{partition.partition}",
        group=group,
        topic=partition.topic,
        partition=partition.partition,
        value=_value(
            rule.metric,
            lag_messages=partition.lag_messages,
            lag_seconds=partition.lag_seconds,
            catch_up=partition.time_to_catch_up_seconds,
            status=partition.status,
        ),
        status=partition.status,
        reason=partition.reason,
    )


def _max_known(values: list[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return max(known) if known else None


def _group_subject(rule: RuleSpec, group: GroupObservation) -> Subject | None:
    if rule.all_topics:
        lag_messages, lag_seconds = group.lag_messages, group.lag_seconds
        catch_up, status, reason = group.time_to_catch_up_seconds, group.status, group.reason
    else:
        # Only the matching topics count: totals and worst values are taken over their partitions.
        partitions = [p for p in group.partitions if glob_matches(rule.topic_pattern, p.topic)]
        if not partitions:
            return None
        # Like the group's total: partitions without a committed offset are left out.
        lag_messages = sum(p.lag_messages for p in partitions if p.committed_offset is not None)
        lag_seconds = _max_known([p.lag_seconds for p in partitions])
        catch_up = max(_time_to_catch_up(p.time_to_catch_up_seconds, p.lag_messages) for p in partitions)
        status = worst_health([p.status for p in partitions])
        reason = next(p.reason for p in partitions if p.status == status)
    return Subject(
        fingerprint=group.group,
        group=group.group,
        topic="",
        partition=None,
        value=_value(
            rule.metric, lag_messages=lag_messages, lag_seconds=lag_seconds, catch_up=catch_up, status=status
        ),
        status=status,
        reason=reason,
    )


def subjects_of(rule: RuleSpec, group: GroupObservation) -> list[Subject]:
    """What the rule evaluates in one observed group (assumed to be in the rule's scope: see applies_to)."""
    if rule.granularity == Granularity.PARTITION:
        return [
            _partition_subject(rule, group.group, partition)
            for partition in group.partitions
            if rule.all_topics or glob_matches(rule.topic_pattern, partition.topic)
        ]
    subject = _group_subject(rule, group)
    return [] if subject is None else [subject]


def breaches(rule: RuleSpec, subject: Subject) -> bool | None:
    """Whether the subject meets the firing condition; None when its value is unknown."""
    if rule.metric == Metric.STATUS:
        return subject.status in rule.statuses
    if subject.value is None or rule.threshold is None:
        return None
    return _COMPARE[rule.comparison](subject.value, rule.threshold)


def recovered(rule: RuleSpec, subject: Subject) -> bool | None:
    """Whether a firing alert may resolve: the value is back past the resolve threshold (hysteresis)."""
    if rule.metric == Metric.STATUS:
        return subject.status not in rule.statuses
    limit = rule.threshold if rule.resolve_threshold is None else rule.resolve_threshold
    if subject.value is None or limit is None:
        return None
    # Still past the resolve threshold in the firing direction means still firing.
    return not _COMPARE[rule.comparison](subject.value, limit)
