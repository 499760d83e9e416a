"""Cluster-health rules as evaluation sees them: subjects per broker or per cluster, words for values."""

from datetime import UTC, datetime

from controlplane.alerts.choices import (
    CLUSTER_METRICS,
    CONNECTOR_METRICS,
    LAG_METRICS,
    REPLICATION_METRICS,
    Metric,
)
from controlplane.alerts.cluster_health import HealthObservation, subjects_of
from controlplane.alerts.conditions import RuleSpec, breaches, recovered
from controlplane.alerts.notices import describe_value

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _rule(metric: str, threshold: float = 0, group_pattern: str = "*") -> RuleSpec:
    return RuleSpec(
        id=1, name="health", team_id=1, cluster_id=None, group_pattern=group_pattern, topic_pattern="*",
        granularity="group", metric=metric, comparison="gt", threshold=threshold, resolve_threshold=None,
        statuses=frozenset(), for_seconds=0, renotify_interval_seconds=None, send_resolved=True, severity="critical",
    )  # fmt: skip


OBSERVATION = HealthObservation(
    cluster_id=7,
    observed_at=AT,
    cluster_values={Metric.UNDER_REPLICATED_PARTITIONS: 4.0, Metric.CLUSTER_UNREACHABLE: 0.0},
    broker_values={
        Metric.BROKER_DOWN: {1: 0.0, 2: 1.0, 3: None},
        Metric.DISK_USAGE_PERCENT: {1: 40.0, 2: None, 3: 91.5},
    },
    reasons={f"{Metric.BROKER_DOWN}:2": "Broker 2 is not listed."},
)


def test_the_metric_families_split_every_metric() -> None:
    families = (set(LAG_METRICS), set(CLUSTER_METRICS), set(CONNECTOR_METRICS), set(REPLICATION_METRICS))
    assert set().union(*families) == set(Metric)
    assert sum(len(family) for family in families) == len(Metric)


def test_broker_down_has_one_subject_per_broker_and_unknown_neither_fires_nor_resolves() -> None:
    rule = _rule(Metric.BROKER_DOWN)
    subjects = subjects_of(rule, OBSERVATION)
    assert [s.group for s in subjects] == ["broker 1", "broker 2", "broker 3"]
    assert [breaches(rule, s) for s in subjects] == [False, True, None]
    assert [recovered(rule, s) for s in subjects] == [True, False, None]
    assert subjects[1].reason == "Broker 2 is not listed."
    assert subjects[1].fingerprint == "broker:2"


def test_a_group_pattern_narrows_per_broker_rules() -> None:
    assert [s.group for s in subjects_of(_rule(Metric.DISK_USAGE_PERCENT, 85, "broker 3"), OBSERVATION)] == [
        "broker 3"
    ]


def test_cluster_wide_metrics_have_one_subject() -> None:
    rule = _rule(Metric.UNDER_REPLICATED_PARTITIONS)
    [subject] = subjects_of(rule, OBSERVATION)
    assert (subject.fingerprint, subject.value, breaches(rule, subject)) == ("cluster", 4.0, True)
    [unknown] = subjects_of(_rule(Metric.OFFLINE_PARTITIONS), OBSERVATION)
    assert unknown.value is None


def test_values_are_described_in_words() -> None:
    assert describe_value(Metric.BROKER_DOWN, 1.0, "") == "down"
    assert describe_value(Metric.BROKER_DOWN, 0.0, "") == "up"
    assert describe_value(Metric.CLUSTER_UNREACHABLE, 1.0, "") == "unreachable"
    assert describe_value(Metric.OFFLINE_PARTITIONS, 12.0, "") == "12 partitions"
    assert describe_value(Metric.CONTROLLER_CHANGES_PER_HOUR, 4.0, "") == "4 changes in the last hour"
    assert describe_value(Metric.DISK_USAGE_PERCENT, 91.54, "") == "91.5 % used"
