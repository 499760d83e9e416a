"""Throughput from the sampler's log-end points: totals, per topic, and no spikes from partitions that come,
go or restart."""

import pytest

from controlplane.clusters.throughput import throughput


def test_it_divides_the_summed_log_end_growth_by_the_time_between_runs() -> None:
    rates = throughput(
        {
            "orders/0": [(100.0, 0), (110.0, 100), (130.0, 100)],
            "orders/1": [(100.0, 50), (110.0, 150), (130.0, 250)],
            "audit/0": [(100.0, 7), (110.0, 17), (130.0, 37)],
        }
    )
    assert rates.times == [110.0, 130.0]
    assert rates.messages_per_second == pytest.approx([21.0, 6.0])
    assert [(t.topic, t.messages_per_second) for t in rates.by_topic] == [
        ("orders", pytest.approx([20.0, 5.0])),
        ("audit", pytest.approx([1.0, 1.0])),
    ]


def test_it_has_no_rate_before_a_second_run() -> None:
    assert throughput({}).times == []
    single = throughput({"orders/0": [(100.0, 5)]})
    assert single.times == []
    assert single.messages_per_second == []
    assert [(t.topic, t.messages_per_second) for t in single.by_topic] == [("orders", [])]


def test_a_partition_appearing_between_runs_does_not_count_its_whole_log_as_new() -> None:
    rates = throughput(
        {
            "orders/0": [(0.0, 10), (10.0, 20), (20.0, 30)],
            # Added at 10 s with a million records already (e.g. a topic the sampler had not seen yet).
            "orders/1": [(10.0, 1_000_000), (20.0, 1_000_100)],
        }
    )
    assert rates.messages_per_second == pytest.approx([1.0, 11.0])


def test_a_partition_disappearing_is_skipped_rather_than_counted_negative() -> None:
    rates = throughput({"orders/0": [(0.0, 10), (10.0, 20), (20.0, 30)], "gone/0": [(0.0, 500), (10.0, 600)]})
    assert rates.messages_per_second == pytest.approx([11.0, 1.0])
    assert all(rate >= 0 for topic in rates.by_topic for rate in topic.messages_per_second)


def test_a_recreated_topic_whose_offsets_went_backwards_makes_no_negative_spike() -> None:
    rates = throughput({"orders/0": [(0.0, 5_000), (10.0, 5_100), (20.0, 3), (30.0, 53)]})
    assert rates.messages_per_second == pytest.approx([10.0, 0.0, 5.0])
