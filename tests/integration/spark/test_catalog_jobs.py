"""Each catalog job's `run` on the shared local[2] session against a real broker, checked against values
computed here from the records the test produced."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from controlplane.spark.jobs import (
    backlog_profile,
    data_quality,
    export_parquet,
    json_schema_inference,
    key_skew,
    topic_copy,
    windowed_aggregation,
)
from controlplane.spark.jobs.runtime import JobContext, TopicRange
from tests.integration.spark.conftest import create_topic

pytestmark = pytest.mark.integration

BASE_MS = 1_700_000_000_000


def produce_timed(
    bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes | None, int]]
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition, key, value, timestamp in records:
        producer.produce(topic, key=key, value=value, partition=partition, timestamp=timestamp)
    assert producer.flush(15) == 0


@pytest.fixture
def context(broker, tmp_path: Path) -> JobContext:
    return JobContext(kafka_config={"bootstrap.servers": broker.bootstrap}, output_dir=tmp_path)


@pytest.fixture
def orders(broker, topic_name):
    """120 JSON orders over 3 partitions, keys skewed towards 'hot', one record in 12 with no key."""
    create_topic(broker.bootstrap, topic_name, partitions=3)
    records = []
    for i in range(120):
        key = None if i % 12 == 0 else (b"hot" if i % 3 == 0 else b"c%d" % (i % 7))
        value = json.dumps({"id": i, "amount": i % 10, "customer": {"name": f"n{i % 4}"}}).encode()
        records.append((i % 3, key, value, BASE_MS + i * 1000))
    produce_timed(broker.bootstrap, topic_name, records)
    return topic_name, records


def test_key_skew_counts_keys_per_partition_and_the_top_keys(spark, context, orders):
    topic, records = orders
    result = key_skew.run(spark, key_skew.Parameters(TopicRange(topic), top=3), context)
    keys = collections.Counter(key for _, key, _, _ in records if key is not None)
    expected_top = sorted(keys.items(), key=lambda item: (-item[1], item[0]))[:3]
    assert result.tables["top_keys"].rows == [[key.decode(), count] for key, count in expected_top]
    for partition, records_, distinct, null_keys, _, size in result.tables["partitions"].rows:
        mine = [r for r in records if r[0] == partition]
        assert records_ == len(mine)
        assert null_keys == sum(1 for r in mine if r[1] is None)
        assert distinct == len({r[1] for r in mine if r[1] is not None})
        assert size == sum(len(r[1] or b"") + len(r[2]) for r in mine)
    assert result.metrics["distinct_keys"] == len(keys)


def test_windowed_aggregation_sums_a_field_per_window_and_counts_late_records(
    spark, context, broker, topic_name
):
    create_topic(broker.bootstrap, topic_name)
    # In order except 30 s (after 80 s) and 85 s (after 140 s): both older than the newest minus 30 s.
    stamps = [BASE_MS + s * 1000 for s in (0, 10, 20, 70, 80, 30, 130, 140, 85)]
    records = [(0, None, json.dumps({"amount": i + 1}).encode(), ts) for i, ts in enumerate(stamps)]
    produce_timed(broker.bootstrap, topic_name, records)
    parameters = windowed_aggregation.Parameters(
        TopicRange(topic_name), window_seconds=60, watermark_seconds=30, sum_field="amount"
    )
    result = windowed_aggregation.run(spark, parameters, context)
    expected: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0])
    for i, ts in enumerate(stamps):
        window = (ts // 60_000) * 60_000
        expected[window][0] += 1
        expected[window][1] += i + 1
    got = {row[0]: [row[2], int(row[4])] for row in result.tables["windows"].rows}
    assert list(got.values()) == [expected[w] for w in sorted(expected)]
    assert result.metrics["late_records"] == 2


def test_json_schema_inference_reports_presence_conflicts_and_a_schema(spark, context, broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    values = [
        *[json.dumps({"id": i, "name": f"n{i}", "tags": ["a"]}).encode() for i in range(6)],
        json.dumps({"id": "seven", "address": {"city": "Oslo"}}).encode(),
        b"not json",
    ]
    produce_timed(broker.bootstrap, topic_name, [(0, None, v, BASE_MS) for v in values])
    result = json_schema_inference.run(
        spark, json_schema_inference.Parameters(TopicRange(topic_name)), context
    )
    fields = {row[0]: row for row in result.tables["fields"].rows}
    assert fields["id"][1:] == [7, 1.0, "integer,string", True]
    assert fields["name"][1:] == [6, round(6 / 7, 4), "string", False]
    assert fields["address.city"][1:3] == [1, round(1 / 7, 4)]
    assert result.metrics["parse_errors"] == 1
    schema = result.documents["json_schema"]
    assert schema["required"] == ["id"]
    assert schema["properties"]["address"]["properties"]["city"]["type"] == "string"
    avro = {f["name"]: f for f in result.documents["avro_schema"]["fields"]}
    assert avro["id"]["type"] == "string"  # integer and string conflict: widened
    assert avro["name"]["type"] == ["null", "string"]


def test_topic_copy_writes_the_transformed_records_to_the_target(spark, context, broker, orders):
    topic, records = orders
    target = create_topic(broker.bootstrap, topic + "-copy")
    sql = (
        "SELECT CAST(get_json_object(CAST(value AS STRING), '$.customer.name') AS BINARY) AS key, "
        "CAST(regexp_replace(CAST(value AS STRING), '\"amount\": [0-9]+', '\"amount\": 0') AS BINARY) AS value "
        "FROM source WHERE get_json_object(CAST(value AS STRING), '$.amount') >= 5"
    )
    result = topic_copy.run(
        spark, topic_copy.Parameters(TopicRange(topic), target_topic=target, sql=sql), context
    )
    expected = sorted(
        (
            json.loads(v)["customer"]["name"].encode(),
            v.decode().replace(f'"amount": {json.loads(v)["amount"]}', '"amount": 0'),
        )
        for _, _, v, _ in records
        if json.loads(v)["amount"] >= 5
    )
    consumer = Consumer(
        {
            "bootstrap.servers": context.kafka_config["bootstrap.servers"],
            "group.id": "check",
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(target, 0, 0)])
    copied = []
    while True:
        message = consumer.poll(5)
        if message is None or message.error() is not None:
            break
        copied.append((message.key(), message.value().decode()))
    consumer.close()
    assert sorted(copied) == expected
    assert result.metrics["records_written"] == len(expected)
    assert result.metrics["records_read"] == len(records)


def test_topic_copy_refuses_anything_but_a_select(spark, context, orders):
    topic, _ = orders
    parameters = topic_copy.Parameters(TopicRange(topic), target_topic="x", sql="DROP TABLE source")
    with pytest.raises(ValueError, match="single SELECT"):
        topic_copy.run(spark, parameters, context)


def test_data_quality_counts_each_kind_of_bad_record(spark, context, broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    good = [(0, b"k%d" % i, json.dumps({"i": i}).encode(), BASE_MS + i) for i in range(40)]
    bad = [
        (0, None, b"{broken", BASE_MS + 100),
        (0, b"k1", json.dumps({"i": 1}).encode(), BASE_MS + 101),  # duplicate of good[1]
        (0, b"k2", None, BASE_MS + 102),
        (
            0,
            b"k3",
            json.dumps({"i": 3, "late": True}).encode(),
            BASE_MS - 3_600_000,
        ),  # an hour behind its predecessors
        (0, b"k4", json.dumps({"pad": "x" * 5000}).encode(), BASE_MS + 103),
    ]
    produce_timed(broker.bootstrap, topic_name, good + bad)
    result = data_quality.run(spark, data_quality.Parameters(TopicRange(topic_name)), context)
    checks = {row[0]: row[1] for row in result.tables["checks"].rows}
    assert checks == {
        "parse_failure": 1,
        "null_key": 1,
        "null_value": 1,
        "duplicates": 1,
        "timestamp_skew": 1,
        "size_outlier": 1,
    }
    assert result.metrics["passed"] is False


def test_export_parquet_writes_the_range_partitioned_by_date_and_partition(spark, context, orders):
    topic, records = orders
    source = TopicRange(topic, starting_offsets=json.dumps({topic: {"0": 5, "1": 0, "2": 0}}))
    result = export_parquet.run(spark, export_parquet.Parameters(source), context)
    per_partition = collections.Counter(p for p, _, _, _ in records)
    assert result.tables["partitions"].rows == [
        [0, per_partition[0] - 5, 5, per_partition[0] - 1],
        [1, per_partition[1], 0, per_partition[1] - 1],
        [2, per_partition[2], 0, per_partition[2] - 1],
    ]
    assert all(f.startswith("parquet/date=2023-11-14/partition=") for f in result.files)
    assert spark.read.parquet(str(context.output_dir / "parquet")).count() == len(records) - 5


def test_backlog_profile_ages_what_a_group_has_not_consumed(spark, context, broker, orders):
    topic, records = orders
    group = topic + "-group"
    committer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    committer.commit(offsets=[TopicPartition(topic, 0, 30), TopicPartition(topic, 1, 40)], asynchronous=False)
    committer.close()
    result = backlog_profile.run(
        spark, backlog_profile.Parameters(topic, group, bucket_seconds=[60]), context
    )
    per_partition = collections.Counter(p for p, _, _, _ in records)
    expected = (per_partition[0] - 30) + (per_partition[1] - 40) + per_partition[2]
    # The produced records are from 2023: all of them are older than a minute.
    assert result.tables["age_histogram"].rows == [["< 60s", 0], [">= 60s", expected]]
    assert [row[:3] for row in result.tables["partitions"].rows] == [
        [0, 30, per_partition[0] - 30],
        [1, 40, 0],
        [2, -2, per_partition[2]],
    ]
