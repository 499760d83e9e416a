"""bench/versus_apache_kafka.py reads the summaries the measuring tools print (formats of librdkafka 2.15's
rdkafka_performance and Apache Kafka 4.2's perf tools); a changed format must stop the bench, not skew it."""

from __future__ import annotations

import pytest

from bench.versus_apache_kafka import (
    parse_consumer_perf,
    parse_end_to_end,
    parse_producer_perf,
    parse_rdkafka_consumed,
    parse_rdkafka_produced,
)


def test_rdkafka_performance_summaries_give_the_last_total() -> None:
    produced = (
        "% Sending 30000 messages of size 100 bytes\n"
        "% 10000 messages produced (1000000 bytes), 9000 delivered (offset 8999, 0 failed) in 500ms: "
        "18000 msgs/s and 1.80 MB/s, 0 produce failures, 1000 in queue, no compression\n"
        "% 30000 messages produced (3000000 bytes), 30000 delivered (offset 29999, 0 failed) in 1017ms: "
        "29490 msgs/s and 2.95 MB/s, 0 produce failures, 0 in queue, no compression\n"
    )
    assert parse_rdkafka_produced(produced) == {
        "msg_per_s": 29490.0,
        "mb_per_s": 2.95,
        "messages": 30000.0,
        "failed": 0.0,
    }
    consumed = "% 300000 messages (30000000 bytes) consumed in 150ms: 2000000 msgs/s (200.00 MB/s)\n"
    assert parse_rdkafka_consumed(consumed) == {
        "msg_per_s": 2000000.0,
        "mb_per_s": 200.0,
        "messages": 300000.0,
    }


def test_failed_deliveries_are_counted_and_a_changed_format_stops_the_bench() -> None:
    failed = (
        "% 30000 messages produced (3000000 bytes), 17095 delivered (offset -1001, 12905 failed) in 300992ms: "
        "56 msgs/s and 0.01 MB/s, 0 produce failures, 0 in queue, no compression\n"
    )
    assert parse_rdkafka_produced(failed)["failed"] == 12905.0
    with pytest.raises(RuntimeError, match="unexpected"):
        parse_rdkafka_consumed("% Consumer reached end of partition\n")


def test_kafka_perf_tools_summaries() -> None:
    producer = (
        "300000 records sent, 57284.7 records/sec (5.46 MB/sec), 336.00 ms avg latency, 900.00 ms max latency, "
        "336 ms 50th, 500 ms 95th, 572 ms 99th, 600 ms 99.9th.\n"
    )
    assert parse_producer_perf(producer) == {
        "msg_per_s": 57284.7,
        "mb_per_s": 5.46,
        "messages": 300000.0,
        "p50_ms": 336.0,
        "p99_ms": 572.0,
    }
    consumer = (
        "2026-12-04 18:40:01:123, 2026-12-04 18:40:03:456, 28.6102, 12.2600, 300000, 128534.0, 675, 1658, "
        "17.2558, 180940.8958\n"
    )
    # The fetch rate: the group join (675 ms here) is left out.
    assert parse_consumer_perf(consumer) == {
        "msg_per_s": 180940.8958,
        "mb_per_s": 17.2558,
        "messages": 300000.0,
        "rebalance_ms": 675.0,
    }
    latency = "Avg latency: 2.2000 ms\nPercentiles: 50th = 1, 99th = 21, 99.9th = 66\n"
    assert parse_end_to_end(latency) == {"avg_ms": 2.2, "p50_ms": 1.0, "p99_ms": 21.0, "p999_ms": 66.0}
