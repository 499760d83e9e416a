"""The `topics` data source against a real broker on local[2]."""

from __future__ import annotations

import json

import pytest

from tests.integration.spark.conftest import create_topic, produce
from tests.integration.spark.query_waits import query_report, start_query

pytestmark = pytest.mark.integration


def read(spark, bootstrap: str, **options: str):
    reader = spark.read.format("topics").option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def test_it_reads_exactly_the_requested_offset_ranges(spark, broker, topic_name):
    create_topic(broker.bootstrap, topic_name, partitions=3)
    records = [(p, b"k%d" % i, b"p%d-%d" % (p, i)) for p in range(3) for i in range(50)]
    produce(broker.bootstrap, topic_name, records)
    frame = read(
        spark,
        broker.bootstrap,
        subscribe=topic_name,
        startingOffsets=json.dumps({topic_name: {"0": 10, "1": -2, "2": 49}}),
        endingOffsets=json.dumps({topic_name: {"0": 20, "1": 5, "2": -1}}),
    )
    rows = frame.select("partition", "offset", "key", "value", "topic").collect()
    got = sorted((r.partition, r.offset, bytes(r.key), bytes(r.value), r.topic) for r in rows)
    expected = sorted(
        [(0, i, b"k%d" % i, b"p0-%d" % i, topic_name) for i in range(10, 20)]
        + [(1, i, b"k%d" % i, b"p1-%d" % i, topic_name) for i in range(5)]
        + [(2, 49, b"k49", b"p2-49", topic_name)]
    )
    assert got == expected
    assert frame.rdd.getNumPartitions() == 3


def test_it_reads_with_the_connection_in_a_session_file(spark, broker, topic_name, tmp_path):
    """connectionFile in a classic session (the file added with addFile): the JVM reader hands the read to the
    Python source, whose driver-side planner and executors find the file among the session's files."""
    create_topic(broker.bootstrap, topic_name)
    produce(broker.bootstrap, topic_name, [(0, b"k%d" % i, b"v") for i in range(12)])
    name = f"connection-{topic_name}.json"
    (tmp_path / name).write_text(json.dumps({"bootstrap.servers": broker.bootstrap}))
    spark.sparkContext.addFile(str(tmp_path / name))
    frame = spark.read.format("topics").option("connectionFile", name).option("subscribe", topic_name).load()
    assert sorted(bytes(row.key) for row in frame.select("key").collect()) == sorted(
        b"k%d" % i for i in range(12)
    )
    missing = spark.read.format("topics").option("connectionFile", "no-such-file.json")
    with pytest.raises(Exception, match="not among this session's files"):
        missing.option("subscribe", topic_name).load().count()


def read_directly(bootstrap: str, topic: str) -> list[tuple[int, bytes, bytes]]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "probe", "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    survivors = []
    while True:
        message = consumer.poll(5)
        if message is None or message.error() is not None:
            break
        survivors.append((message.offset(), message.key(), message.value()))
    consumer.close()
    return survivors


def compacted_topic_with_gaps(broker_factory, topic_name: str):
    """A topic whose cleaner has removed older values of each key, leaving gaps in the offsets."""
    import time

    broker = broker_factory(log_cleaner_backoff_ms=100)
    config = {
        "cleanup.policy": "compact",
        "segment.bytes": "2048",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "0",
        "file.delete.delay.ms": "0",
    }
    create_topic(broker.bootstrap, topic_name, **config)
    # One flush per round: separate batches let segments roll, and only rolled segments are cleaned.
    for round_number in range(10):
        records = [(0, b"k%d" % key, b"r%d-" % round_number + b"y" * 100) for key in range(5)]
        produce(broker.bootstrap, topic_name, records, **{"linger.ms": 0})
    # Wait until the cleaner has compacted and then left the log alone for a while, so the read below and
    # this probe see the same records.
    deadline = time.monotonic() + 30
    previous: list = []
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        survivors = read_directly(broker.bootstrap, topic_name)
        if survivors != previous:
            previous, stable_since = survivors, time.monotonic()
        elif len(survivors) < 50 and time.monotonic() - stable_since > 1.5:
            return broker, survivors
        time.sleep(0.2)
    raise AssertionError("the cleaner never compacted the topic")


def test_it_reads_a_compacted_topic_with_gaps_in_its_offsets(spark, broker_factory, topic_name):
    broker, survivors = compacted_topic_with_gaps(broker_factory, topic_name)
    whole = read(spark, broker.bootstrap, subscribe=topic_name).select("offset", "key", "value").collect()
    assert sorted((r.offset, bytes(r.key), bytes(r.value)) for r in whole) == survivors
    assert {key: value for _, key, value in survivors} == {b"k%d" % k: b"r9-" + b"y" * 100 for k in range(5)}
    # A range whose both ends fall inside gaps reads the survivors between them and nothing else.
    offsets = [offset for offset, _, _ in survivors]
    gap_start = next(o for o in range(1, 50) if o not in offsets)
    frame = read(
        spark,
        broker.bootstrap,
        assign=json.dumps({topic_name: [0]}),
        startingOffsets=json.dumps({topic_name: {"0": gap_start}}),
        endingOffsets=json.dumps({topic_name: {"0": 49}}),
        minPartitions="4",
    )
    assert sorted(r.offset for r in frame.select("offset").collect()) == [
        o for o in offsets if gap_start <= o < 49
    ]


def test_it_reads_from_a_timestamp_with_headers(spark, broker, topic_name):
    from confluent_kafka import Producer

    create_topic(broker.bootstrap, topic_name)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(10):
        producer.produce(
            topic_name, value=b"v%d" % i, timestamp=1_700_000_000_000 + i * 1000, headers=[("n", b"%d" % i)]
        )
    producer.flush(10)
    frame = read(
        spark,
        broker.bootstrap,
        subscribe=topic_name,
        startingTimestamp=str(1_700_000_000_000 + 6500),
        endingTimestamp=str(1_700_000_000_000 + 9000),
        includeHeaders="true",
    )
    rows = sorted(frame.collect(), key=lambda r: r.offset)
    assert [r.offset for r in rows] == [7, 8]
    assert [(h.key, bytes(h.value)) for h in rows[0].headers] == [("n", b"7")]
    assert rows[0].timestamp.timestamp() == 1_700_000_007
    assert rows[0].timestampType == 0


def test_it_refuses_an_unknown_topic_and_offsets_past_the_end(spark, broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    produce(broker.bootstrap, topic_name, [(0, None, b"only")])
    with pytest.raises(Exception, match="unknown topic"):
        read(spark, broker.bootstrap, subscribe=f"{topic_name}-missing").collect()
    past_end = json.dumps({topic_name: {"0": 5}})
    with pytest.raises(Exception, match="beyond the end of the log"):
        read(spark, broker.bootstrap, subscribe=topic_name, endingOffsets=past_end).collect()
    clamped = read(
        spark, broker.bootstrap, subscribe=topic_name, endingOffsets=past_end, failOnDataLoss="false"
    )
    assert [bytes(r.value) for r in clamped.collect()] == [b"only"]


def test_a_streaming_query_resumes_from_its_checkpoint_without_duplicates_or_gaps(
    spark, broker, topic_name, tmp_path
):
    create_topic(broker.bootstrap, topic_name, partitions=2)
    produce(broker.bootstrap, topic_name, [(i % 2, None, b"a%d" % i) for i in range(30)])

    def run_available_now() -> None:
        stream = (
            spark.readStream.format("topics")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic_name)
            .option("maxOffsetsPerTrigger", "20")
            .load()
            .selectExpr("partition", "offset", "cast(value as string) as value")
        )
        query = start_query(
            lambda: (
                stream.writeStream.format("parquet")
                .option("path", str(tmp_path / "out"))
                .option("checkpointLocation", str(tmp_path / "checkpoint"))
                .trigger(availableNow=True)
                .start()
            )
        )
        assert query.awaitTermination(60), query_report(query)
        assert query.exception() is None, query_report(query)

    run_available_now()
    produce(broker.bootstrap, topic_name, [(i % 2, None, b"b%d" % i) for i in range(20)])
    run_available_now()
    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    assert len(rows) == 50
    assert sorted(r.value for r in rows) == sorted(
        [f"a{i}" for i in range(30)] + [f"b{i}" for i in range(20)]
    )
    per_partition = {p: sorted(r.offset for r in rows if r.partition == p) for p in (0, 1)}
    assert per_partition == {0: list(range(25)), 1: list(range(25))}


def test_it_writes_rows_to_a_topic_with_the_idempotent_producer(spark, broker, topic_name):
    create_topic(broker.bootstrap, topic_name, partitions=2)
    source = spark.createDataFrame(
        [(f"k{i}", f"value-{i}", i % 2) for i in range(40)], "key string, value string, partition int"
    )
    source.write.format("topics").option("kafka.bootstrap.servers", broker.bootstrap).option(
        "topic", topic_name
    ).mode("append").save()
    rows = read(spark, broker.bootstrap, subscribe=topic_name).collect()
    assert sorted((r.partition, bytes(r.key), bytes(r.value)) for r in rows) == sorted(
        (i % 2, b"k%d" % i, b"value-%d" % i) for i in range(40)
    )


def test_a_streaming_query_copies_a_topic_into_another(spark, broker, topic_name, tmp_path):
    create_topic(broker.bootstrap, topic_name, partitions=2)
    target = create_topic(broker.bootstrap, f"{topic_name}-out")
    produce(broker.bootstrap, topic_name, [(i % 2, b"k%d" % i, b"v%d" % i) for i in range(25)])
    query = start_query(
        lambda: (
            spark.readStream.format("topics")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic_name)
            .load()
            .selectExpr("key", "upper(cast(value as string)) as value")
            .writeStream.format("topics")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("topic", target)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
    )
    assert query.awaitTermination(60), query_report(query)
    assert query.exception() is None, query_report(query)
    rows = read(spark, broker.bootstrap, subscribe=target).collect()
    assert sorted((bytes(r.key), bytes(r.value)) for r in rows) == sorted(
        (b"k%d" % i, b"V%d" % i) for i in range(25)
    )
