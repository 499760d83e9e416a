from broker.runtime.metrics import BrokerMetrics, count_records
from broker.wire.records.records import Record, build_batch


def test_it_counts_records_from_batch_headers():
    batches = build_batch([Record(b"a", b"1"), Record(b"b", b"2")]) + build_batch([Record(b"c", b"3")])
    assert count_records(batches) == 3
    assert count_records(b"") == 0


def test_it_renders_counters_histograms_and_gauges_in_prometheus_text():
    metrics = BrokerMetrics()
    metrics.record_produce('weird"topic', 100, 4)
    metrics.record_request(0, 9, 0.003)
    metrics.record_request(0, 9, 20.0)
    metrics.add_gauge("kafka_broker_groups", "Groups.", lambda: [({}, 2.0)])
    text = metrics.render()
    assert 'kafka_broker_topic_messages_in_total{topic="weird\\"topic"} 4' in text
    assert 'kafka_broker_request_duration_seconds_bucket{api="produce",le="0.005"} 1' in text
    assert 'kafka_broker_request_duration_seconds_bucket{api="produce",le="+Inf"} 2' in text
    assert 'kafka_broker_request_duration_seconds_count{api="produce"} 2' in text
    assert "kafka_broker_groups 2.0" in text
    assert text.endswith("\n")


def test_a_failing_gauge_does_not_break_the_scrape():
    metrics = BrokerMetrics()

    def broken() -> list:
        raise RuntimeError("boom")

    metrics.add_gauge("kafka_broken", "Broken.", broken)
    assert "kafka_broker_connections 0" in metrics.render()
