"""The `topics` source with a user-supplied schema (projection) and filters pushed into its plan, on local[2]
against a real broker: the results must be exactly those of the full read filtered by Spark."""

from __future__ import annotations

import datetime
import json

import pytest
from pyspark.sql import functions as F

from tests.integration.spark.conftest import create_topic, produce

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000


def reader(spark, bootstrap: str, topic: str, schema: str | None = None, **options: str):
    read = spark.read.format("topics").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    for name, value in options.items():
        read = read.option(name, value)
    return (read.schema(schema) if schema else read).load()


@pytest.fixture
def three_partitions(broker, topic_name) -> str:
    create_topic(broker.bootstrap, topic_name, partitions=3)
    # Two produce calls per partition, so ranges cross record batches.
    for half in (range(25), range(25, 50)):
        produce(
            broker.bootstrap,
            topic_name,
            [(p, b"k%d" % i, b"p%d-%d" % (p, i)) for p in range(3) for i in half],
        )
    return topic_name


def test_a_user_schema_reads_only_its_columns_with_the_same_values(spark, broker, three_partitions):
    full = reader(spark, broker.bootstrap, three_partitions).collect()
    projected = reader(spark, broker.bootstrap, three_partitions, "value BINARY, offset BIGINT")
    assert projected.columns == ["value", "offset"]
    assert sorted((bytes(r.value), r.offset) for r in projected.collect()) == sorted(
        (bytes(r.value), r.offset) for r in full
    )
    by_partition = (
        reader(spark, broker.bootstrap, three_partitions, "partition INT").groupBy("partition").count()
    )
    assert sorted((r.partition, r["count"]) for r in by_partition.collect()) == [(0, 50), (1, 50), (2, 50)]
    # A range starting and ending inside record batches is counted exactly too.
    cut = reader(
        spark,
        broker.bootstrap,
        three_partitions,
        "topic STRING, partition INT",
        startingOffsets=json.dumps({three_partitions: {"0": 3, "1": 30, "2": -2}}),
        endingOffsets=json.dumps({three_partitions: {"0": 27, "1": 31, "2": 49}}),
    )
    assert sorted((r.partition, r["count"]) for r in cut.groupBy("partition").count().collect()) == [
        (0, 24),
        (1, 1),
        (2, 49),
    ]


def test_a_projection_with_headers_reads_them(spark, broker, topic_name):
    from confluent_kafka import Producer

    create_topic(broker.bootstrap, topic_name)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(3):
        producer.produce(topic_name, value=b"v%d" % i, headers=[("n", b"%d" % i)])
    producer.flush(10)
    frame = reader(
        spark,
        broker.bootstrap,
        topic_name,
        "offset BIGINT, headers ARRAY<STRUCT<key: STRING, value: BINARY>>",
    )
    rows = sorted(frame.collect(), key=lambda r: r.offset)
    assert [(r.offset, [(h.key, bytes(h.value)) for h in r.headers]) for r in rows] == [
        (i, [("n", b"%d" % i)]) for i in range(3)
    ]


def test_a_schema_naming_a_column_the_source_lacks_is_refused_by_name(spark, broker, three_partitions):
    with pytest.raises(Exception, match="column 'payload' is not a column of the topics source"):
        reader(spark, broker.bootstrap, three_partitions, "partition INT, payload BINARY").collect()
    with pytest.raises(Exception, match="column 'offset' must have type bigint, not int"):
        reader(spark, broker.bootstrap, three_partitions, "offset INT").collect()


def test_partition_and_offset_filters_narrow_the_plan_and_the_result_stays_exact(
    spark, broker, three_partitions
):
    frame = reader(spark, broker.bootstrap, three_partitions).where(
        F.col("partition").isin(0, 2) & (F.col("offset") >= 10) & (F.col("offset") < 40)
    )
    assert frame.rdd.getNumPartitions() == 2
    assert sorted((r.partition, r.offset, bytes(r.value)) for r in frame.collect()) == [
        (p, i, b"p%d-%d" % (p, i)) for p in (0, 2) for i in range(10, 40)
    ]
    # With a filter it cannot push (on the key) and one on a projected schema's offset.
    mixed = reader(
        spark, broker.bootstrap, three_partitions, "key BINARY, partition INT, offset BIGINT"
    ).where((F.col("partition") == 1) & (F.col("offset") <= 5) & F.col("key").isin(b"k1", b"k4", b"k9"))
    assert sorted((r.partition, r.offset) for r in mixed.collect()) == [(1, 1), (1, 4)]
    assert mixed.rdd.getNumPartitions() == 1
    nothing = reader(spark, broker.bootstrap, three_partitions).where(F.col("offset") > 1_000)
    assert nothing.count() == 0


def test_a_timestamp_lower_bound_skips_older_records_and_keeps_every_newer_one(spark, broker, topic_name):
    from confluent_kafka import Producer

    create_topic(broker.bootstrap, topic_name, partitions=2)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(20):
        # Partition 0 holds only old records; partition 1 runs past the bound, one record out of order.
        producer.produce(topic_name, value=b"old%d" % i, partition=0, timestamp=T0 + i)
        stamp = T0 + 1000 * i if i != 15 else T0
        producer.produce(topic_name, value=b"v%d" % i, partition=1, timestamp=stamp)
    producer.flush(10)
    bound = datetime.datetime.fromtimestamp((T0 + 10_000) / 1000, tz=datetime.UTC)
    frame = reader(spark, broker.bootstrap, topic_name).where(F.col("timestamp") >= F.lit(bound))
    assert sorted(bytes(r.value) for r in frame.collect()) == sorted(
        b"v%d" % i for i in range(10, 20) if i != 15
    )
    # Partition 0 has no record that late, so its range is gone from the plan.
    assert frame.rdd.getNumPartitions() == 1
