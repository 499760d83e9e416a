from controlplane.clusters.ownership import owner_in
from controlplane.reconcile.reconciler import Findings, _topic_drift
from controlplane.topics.models import Topic


def _topic(**fields) -> Topic:
    defaults = {"name": "payments.orders", "team_id": 7, "partitions": 3, "observed_partitions": 3}
    return Topic(**{**defaults, **fields})


def test_a_topic_whose_observed_configs_match_has_no_drift() -> None:
    findings = Findings()
    _topic_drift(
        _topic(configs={"retention.ms": "1000"}, observed_configs={"retention.ms": "1000"}), findings
    )

    assert findings.drifts == []


def test_changed_added_and_removed_configs_are_all_reported_with_desired_and_observed() -> None:
    findings = Findings()
    topic = _topic(
        configs={"retention.ms": "1000", "cleanup.policy": "compact"},
        observed_configs={"retention.ms": "5", "segment.ms": "10"},
    )
    _topic_drift(topic, findings)

    (drift,) = findings.drifts
    assert drift.kind == "topic_config_changed"
    assert drift.team_id == 7
    assert drift.details["configs"] == {
        "cleanup.policy": {"desired": "compact", "observed": None},
        "retention.ms": {"desired": "1000", "observed": "5"},
        "segment.ms": {"desired": None, "observed": "10"},
    }


def test_a_partition_count_changed_outside_is_drift() -> None:
    findings = Findings()
    _topic_drift(_topic(observed_partitions=6), findings)

    assert [(d.kind, d.details) for d in findings.drifts] == [
        ("topic_partitions_changed", {"desired": 3, "observed": 6})
    ]


def test_the_longest_matching_prefix_owns_a_name() -> None:
    table = [("payments.eu.", 2), ("payments.", 1)]

    assert owner_in(table, "payments.eu.orders") == 2
    assert owner_in(table, "payments.us.orders") == 1
    assert owner_in(table, "search.x") is None
