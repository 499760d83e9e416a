"""Which subjects a rule evaluates in a sampling run, and with which values."""

import math

from controlplane.alerts.conditions import RuleSpec, breaches, glob_matches, recovered, subjects_of
from controlplane.alerts.services import rule_problems
from controlplane.lag.observations import GroupObservation, PartitionObservation


def _partition(
    topic: str, partition: int, lag: int, seconds: float | None, status: str = "OK"
) -> PartitionObservation:
    return PartitionObservation(
        topic=topic,
        partition=partition,
        committed_offset=100,
        log_start_offset=0,
        log_end_offset=100 + lag,
        lag_messages=lag,
        lag_seconds=seconds,
        lag_seconds_is_lower_bound=False,
        consume_rate=None,
        produce_rate=None,
        time_to_catch_up_seconds=None,
        status=status,
        reason=f"{topic}-{partition} is {status}",
    )


GROUP = GroupObservation(
    cluster_id=1,
    group_id=10,
    group="payments-ledger",
    team_id=3,
    status="STALLED",
    reason="orders-1 is STALLED",
    member_count=2,
    lag_messages=60,
    lag_seconds=90.0,
    time_to_catch_up_seconds=None,
    partitions=(
        _partition("orders", 0, 10, 5.0),
        _partition("orders", 1, 20, 90.0, "STALLED"),
        _partition("refunds", 0, 30, None, "LAGGING"),
    ),
)


def _rule(**overrides) -> RuleSpec:
    values = {
        "id": 1, "name": "r", "team_id": 3, "cluster_id": None, "group_pattern": "payments-*",
        "topic_pattern": "*", "granularity": "group", "metric": "lag_messages", "comparison": "gt",
        "threshold": 25.0, "resolve_threshold": None, "statuses": frozenset(), "for_seconds": 0,
        "renotify_interval_seconds": None, "send_resolved": True, "severity": "warning",
    }  # fmt: skip
    return RuleSpec(**(values | overrides))


def test_globs_match_whole_names() -> None:
    assert glob_matches("payments-*", "payments-ledger")
    assert not glob_matches("payments", "payments-ledger")
    assert glob_matches("p?yments-[lx]*", "payments-ledger")
    assert not glob_matches("*ledger", "payments-ledger-v2")


def test_a_rule_applies_only_to_its_teams_groups_on_its_cluster() -> None:
    assert _rule().applies_to(GROUP)
    assert not _rule(team_id=4).applies_to(GROUP)
    assert not _rule(cluster_id=2).applies_to(GROUP)
    assert not _rule(group_pattern="orders-*").applies_to(GROUP)


def test_a_group_rule_over_all_topics_takes_the_groups_totals() -> None:
    [subject] = subjects_of(_rule(), GROUP)
    assert (subject.fingerprint, subject.value, subject.status) == ("payments-ledger", 60.0, "STALLED")
    [seconds] = subjects_of(_rule(metric="lag_seconds"), GROUP)
    assert seconds.value == 90.0


def test_a_group_rule_on_some_topics_aggregates_only_their_partitions() -> None:
    [subject] = subjects_of(_rule(topic_pattern="orders"), GROUP)
    assert subject.value == 30.0
    assert subject.status == "STALLED"
    assert subject.reason == "orders-1 is STALLED"
    [refunds] = subjects_of(_rule(topic_pattern="refunds", metric="lag_seconds"), GROUP)
    assert refunds.value is None  # unknown everywhere it looks
    assert subjects_of(_rule(topic_pattern="nothing-*"), GROUP) == []


def test_a_partition_rule_keeps_one_subject_per_partition() -> None:
    subjects = subjects_of(_rule(granularity="partition"), GROUP)
    assert [s.fingerprint for s in subjects] == [
        "payments-ledger/orders/0",
        "payments-ledger/orders/1",
        "payments-ledger/refunds/0",
    ]
    assert [breaches(_rule(), s) for s in subjects] == [False, False, True]


def test_time_to_catch_up_is_infinite_for_a_backlog_that_is_not_shrinking() -> None:
    [subject] = subjects_of(_rule(metric="time_to_catch_up", threshold=600.0), GROUP)
    assert math.isinf(subject.value)
    assert breaches(_rule(threshold=600.0), subject)


def test_unknown_values_neither_breach_nor_recover() -> None:
    [subject] = subjects_of(_rule(topic_pattern="refunds", metric="lag_seconds"), GROUP)
    assert breaches(_rule(), subject) is None
    assert recovered(_rule(), subject) is None


def test_status_rules_compare_the_status_not_a_number() -> None:
    rule = _rule(metric="status", threshold=None, statuses=frozenset({"STALLED", "STOPPED"}))
    [subject] = subjects_of(rule, GROUP)
    assert breaches(rule, subject)
    assert not recovered(rule, subject)


def test_rule_validation_names_the_fields_at_fault() -> None:
    assert (
        rule_problems({"metric": "lag_seconds", "comparison": "gt", "threshold": 30, "resolve_threshold": 10})
        == {}
    )
    assert rule_problems({"metric": "lag_seconds", "comparison": "gt", "threshold": None}) == {
        "threshold": ["A threshold is required for this metric."]
    }
    assert "resolve_threshold" in rule_problems(
        {"metric": "lag_seconds", "comparison": "gt", "threshold": 30, "resolve_threshold": 40}
    )
    assert "resolve_threshold" in rule_problems(
        {"metric": "lag_messages", "comparison": "lt", "threshold": 30, "resolve_threshold": 20}
    )
    assert rule_problems({"metric": "status", "statuses": []}) == {
        "statuses": ["Name at least one status that fires."]
    }
    assert "threshold" in rule_problems({"metric": "status", "statuses": ["STALLED"], "threshold": 3})
    assert "statuses" in rule_problems({"metric": "status", "statuses": ["SLEEPY"]})
