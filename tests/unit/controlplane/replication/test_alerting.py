"""A flow's lag alert as evaluation judges it: the flow's threshold over the rule's, the worst partition's
lag as the value, an unknown lag neither firing nor resolving."""

from datetime import UTC, datetime

from controlplane.alerts.choices import Metric
from controlplane.alerts.conditions import RuleSpec, breaches, recovered
from controlplane.alerts.notices import describe_value
from controlplane.replication.alerting import flow_rule, flow_subject
from controlplane.replication.models import ReplicationFlow, ReplicationLagSample

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _rule(threshold: float = 0) -> RuleSpec:
    return RuleSpec(
        id=1, name="replica behind", team_id=1, cluster_id=None, group_pattern="*", topic_pattern="*",
        granularity="group", metric=Metric.REPLICATION_LAG_RECORDS, comparison="gte", threshold=threshold,
        resolve_threshold=threshold / 2, statuses=frozenset(), for_seconds=60, renotify_interval_seconds=None,
        send_resolved=True, severity="warning",
    )  # fmt: skip


def _sample(partitions: list[int] | None, error: str = "") -> ReplicationLagSample:
    if partitions is None:
        return ReplicationLagSample(observed_at=AT, error=error)
    return ReplicationLagSample(
        observed_at=AT,
        lag_records=sum(partitions),
        max_partition_lag_records=max(partitions),
        partitions=[{"topic": "t", "partition": p, "lag_records": lag} for p, lag in enumerate(partitions)],
    )


def test_the_flows_threshold_wins_and_the_rules_covers_flows_without_one() -> None:
    flow = ReplicationFlow(pk=3, name="dr", lag_alert_records=10, state="paused")
    judged = flow_rule(_rule(threshold=1000), flow)
    assert (judged.threshold, judged.comparison, judged.resolve_threshold) == (10.0, "gt", None)
    assert judged.for_seconds == 60  # the rule keeps its duration, severity and channels
    assert flow_rule(_rule(threshold=1000), ReplicationFlow(lag_alert_records=0)).threshold == 1000.0
    assert flow_rule(_rule(threshold=0), ReplicationFlow(lag_alert_records=0)) is None


def test_the_worst_partition_fires_above_the_threshold_and_resolves_at_or_below() -> None:
    flow = ReplicationFlow(pk=3, name="dr", lag_alert_records=10, state="paused")
    rule = flow_rule(_rule(), flow)
    behind = flow_subject(flow, _sample([2, 11]))
    assert (behind.fingerprint, behind.group, behind.value) == ("replication_flow:3", "dr", 11.0)
    assert "13 records not replicated yet, 11 on the worst partition (worst: t[1])" in behind.reason
    assert (breaches(rule, behind), recovered(rule, behind)) == (True, False)
    at_limit = flow_subject(flow, _sample([10, 0]))
    assert (breaches(rule, at_limit), recovered(rule, at_limit)) == (False, True)
    unknown = flow_subject(flow, _sample(None, error="timed out"))
    assert (unknown.value, breaches(rule, unknown), recovered(rule, unknown)) == (None, None, None)
    assert "timed out" in unknown.reason
    assert describe_value(Metric.REPLICATION_LAG_RECORDS, 1234.0, "") == "1,234 records behind"
