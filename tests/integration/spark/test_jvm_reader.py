"""The JVM reader of the `topics` source gives exactly the rows the Python source gives, on the same topics.

Every read runs twice in the session of conftest.py (the JVM reader's jar on its classpath): once on the JVM
reader, once with `spark.streamhub.topics.jvmReader=false` on the Python source; each run checks from Spark's
physical plan which reader ran it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from controlplane.spark.topic_source import JVM_READER_CONF, PLANNER_PYTHON_CONF
from tests.integration.spark.conftest import create_topic

pytestmark = pytest.mark.integration

JVM_PLAN = "topics (JVM reader)"


def normalized(value: object) -> object:
    """Rows as plain tuples: binary as bytes, header structs and arrays as tuples."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, list):
        return tuple(normalized(v) for v in value)
    if isinstance(value, tuple):  # a Row
        return tuple(normalized(v) for v in value)
    return value


def read_both(spark, build: Callable[[], object]) -> tuple[list, list]:
    """The rows of the same read on the JVM reader and on the Python source, sorted."""
    results = []
    try:
        for jvm in (True, False):
            spark.conf.set(JVM_READER_CONF, "true" if jvm else "false")
            frame = build()
            plan = frame._jdf.queryExecution().executedPlan().toString()
            assert (JVM_PLAN in plan) == jvm, plan
            results.append(sorted((normalized(row) for row in frame.collect()), key=repr))
    finally:
        spark.conf.set(JVM_READER_CONF, "true")
    return results[0], results[1]


def reader(spark, bootstrap: str, **options: str):
    frame_reader = spark.read.format("topics").option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        frame_reader = frame_reader.option(name, value)
    return frame_reader


def produced_records(count: int) -> list[tuple[int, bytes | None, bytes | None, list | None]]:
    """(partition, key, value, headers): null keys, null and empty values, headers on some, some with a null
    header value, sizes from 0 to a few kilobytes."""
    records = []
    for i in range(count):
        key = None if i % 3 == 0 else b"key-%d" % i
        value = (
            None if i % 5 == 0 else (b"" if i % 7 == 0 else b"v%d-" % i + bytes([i % 251]) * (i * 13 % 3000))
        )
        headers = [("h", b"x%d" % i), ("empty", None)] if i % 4 == 0 else None
        records.append((i % 2, key, value, headers))
    return records


def produce_with(bootstrap: str, topic: str, records: list, **config: object) -> None:
    # Small batches: ranges start and end inside batches, and minPartitions splits them inside batches too.
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 17, **config})
    for partition, key, value, headers in records:
        producer.produce(topic, key=key, value=value, partition=partition, headers=headers)
    assert producer.flush(15) == 0


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_reads_the_same_rows_as_the_python_source(spark, broker, topic_name, codec):
    create_topic(broker.bootstrap, topic_name, partitions=2)
    records = produced_records(300)
    produce_with(broker.bootstrap, topic_name, records, **{"compression.type": codec})
    offsets = json.dumps({topic_name: {"0": 5, "1": -2}})
    ends = json.dumps({topic_name: {"0": 140, "1": -1}})

    def build():
        return reader(
            spark,
            broker.bootstrap,
            subscribe=topic_name,
            includeHeaders="true",
            startingOffsets=offsets,
            endingOffsets=ends,
            minPartitions="7",
        ).load()

    jvm, python = read_both(spark, build)
    assert jvm == python
    # And they are the records produced: partition 0 from offset 5 to 139, all of partition 1.
    by_partition = {0: [r for r in records if r[0] == 0], 1: [r for r in records if r[0] == 1]}
    expected = sorted(
        (p, offset, key, value, tuple((k, v) for k, v in headers) if headers else None)
        for p, rows in by_partition.items()
        for offset, (_, key, value, headers) in enumerate(rows)
        if p == 1 or 5 <= offset < 140
    )
    # key, value, topic, partition, offset, timestamp, timestampType, headers
    assert sorted((r[3], r[4], r[0], r[1], r[7]) for r in jvm) == expected
    assert {r[2] for r in jvm} == {topic_name}
    assert {r[6] for r in jvm} == {0}


def test_the_full_schema_without_headers_and_a_projection_with_filters_read_the_same(
    spark, broker, topic_name
):
    create_topic(broker.bootstrap, topic_name, partitions=2)
    produce_with(broker.bootstrap, topic_name, produced_records(400), **{"compression.type": "lz4"})
    whole, whole_python = read_both(
        spark, lambda: reader(spark, broker.bootstrap, subscribe=topic_name).load()
    )
    assert whole == whole_python
    assert len(whole) == 400

    def projected():
        frame = reader(spark, broker.bootstrap, subscribe=topic_name)
        return (
            frame.schema("OFFSET bigint, value binary, partition int, timestamp timestamp")
            .load()
            .where("partition = 1 AND offset >= 17 AND offset < 150")
        )

    narrowed, narrowed_python = read_both(spark, projected)
    assert narrowed == narrowed_python
    assert sorted(row[0] for row in narrowed) == list(range(17, 150))
    # Spark prunes the JVM reader's columns itself: only `partition` is read, batches are counted.
    counted, counted_python = read_both(
        spark,
        lambda: reader(spark, broker.bootstrap, subscribe=topic_name).load().groupBy("partition").count(),
    )
    assert counted == counted_python == [(0, 200), (1, 200)]


def test_log_append_time_topics_read_the_brokers_time_on_both(spark, broker, topic_name):
    create_topic(broker.bootstrap, topic_name, **{"message.timestamp.type": "LogAppendTime"})
    produce_with(broker.bootstrap, topic_name, [(0, b"k", b"v%d" % i, None) for i in range(50)])
    jvm, python = read_both(spark, lambda: reader(spark, broker.bootstrap, subscribe=topic_name).load())
    assert jvm == python
    assert {row[6] for row in jvm} == {1}


def test_transactions_read_the_same_committed_records_and_markers_are_skipped_on_both(
    spark, broker, topic_name
):
    """A real transactional producer commits one transaction and aborts another between plain records:
    read_committed (the default) drops the aborted one, read_uncommitted shows it; neither shows a marker."""
    create_topic(broker.bootstrap, topic_name)
    plain = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    transactional = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"{topic_name}-tx"})
    transactional.init_transactions(20)

    def plain_record(value: bytes) -> None:
        plain.produce(topic_name, value, partition=0)
        plain.flush(10)

    def transaction(values: list[bytes], commit: bool) -> None:
        transactional.begin_transaction()
        for value in values:
            transactional.produce(topic_name, value, partition=0)
        transactional.flush(10)
        if commit:
            transactional.commit_transaction(20)
        else:
            transactional.abort_transaction(20)

    plain_record(b"p1")
    transaction([b"c1", b"c2"], commit=True)
    transaction([b"a1", b"a2", b"a3"], commit=False)
    plain_record(b"p2")
    transaction([b"c3"], commit=True)

    def values(isolation: str) -> list[bytes]:
        options = {"subscribe": topic_name, "kafka.isolation.level": isolation}
        jvm, python = read_both(spark, lambda: reader(spark, broker.bootstrap, **options).load())
        assert jvm == python
        return [row[1] for row in sorted(jvm, key=lambda r: r[4])]

    assert values("read_committed") == [b"p1", b"c1", b"c2", b"p2", b"c3"]
    assert values("read_uncommitted") == [b"p1", b"c1", b"c2", b"a1", b"a2", b"a3", b"p2", b"c3"]


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_credentials_read_the_same_rows(spark, secure_broker, topic_name, mechanism):
    from confluent_kafka.admin import AdminClient, NewTopic

    config = secure_broker.client_config(mechanism=mechanism)
    admin = AdminClient(config)
    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    producer = Producer({**config, "compression.type": "zstd"})
    for i in range(120):
        producer.produce(topic_name, key=b"k%d" % i, value=b"v%d" % i)
    assert producer.flush(15) == 0

    def build():
        frame_reader = reader(spark, config["bootstrap.servers"], subscribe=topic_name)
        module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
        jaas = (
            f"org.apache.kafka.common.security.{module} required "
            f'username="{config["sasl.username"]}" password="{config["sasl.password"]}";'
        )
        return (
            frame_reader.option("kafka.security.protocol", "SASL_PLAINTEXT")
            .option("kafka.sasl.mechanism", mechanism)
            .option("kafka.sasl.jaas.config", jaas)
            .load()
        )

    jvm, python = read_both(spark, build)
    assert jvm == python
    assert len(jvm) == 120


def test_a_wrong_password_fails_the_jvm_read_without_naming_it(spark, secure_broker, topic_name):
    config = secure_broker.client_config(mechanism="PLAIN")
    frame = (
        reader(spark, config["bootstrap.servers"], subscribe=topic_name)
        .option("kafka.security.protocol", "SASL_PLAINTEXT")
        .option("kafka.sasl.mechanism", "PLAIN")
        .option("kafka.sasl.username", config["sasl.username"])
        .option("kafka.sasl.password", "not-the-password-42")
        .load()
    )
    with pytest.raises(Exception, match=r"(?i)authenticat") as failure:
        frame.collect()
    assert "not-the-password-42" not in str(failure.value)


def test_tls_reads_go_to_the_python_source(spark, secure_broker, topic_name):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(secure_broker.client_config())
    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    producer = Producer(secure_broker.client_config())
    producer.produce(topic_name, value=b"over tls")
    assert producer.flush(15) == 0
    config = secure_broker.client_config(tls=True)
    frame_reader = reader(spark, config["bootstrap.servers"], subscribe=topic_name)
    for name, value in config.items():
        if name != "bootstrap.servers":
            frame_reader = frame_reader.option(f"kafka.{name}", value)
    frame = frame_reader.load()
    plan = frame._jdf.queryExecution().executedPlan().toString()
    assert JVM_PLAN not in plan
    assert "(Python)" in plan
    assert [bytes(row.value) for row in frame.collect()] == [b"over tls"]


def test_without_a_planner_named_reads_go_to_the_python_source(spark, broker, topic_name):
    """As on a Spark Connect server, where register_topic_source cannot name the server's interpreter."""
    create_topic(broker.bootstrap, topic_name)
    produce_with(broker.bootstrap, topic_name, [(0, None, b"v", None)])
    python = spark.conf.get(PLANNER_PYTHON_CONF)
    spark.conf.unset(PLANNER_PYTHON_CONF)
    try:
        frame = reader(spark, broker.bootstrap, subscribe=topic_name).load()
        assert "(Python)" in frame._jdf.queryExecution().executedPlan().toString()
        assert [bytes(row.value) for row in frame.collect()] == [b"v"]
    finally:
        spark.conf.set(PLANNER_PYTHON_CONF, python)


@pytest.mark.parametrize("jvm", [True, False], ids=["jvm", "python"])
def test_records_deleted_between_planning_and_reading_are_skipped_or_an_error_naming_them(
    spark, broker, topic_name, jvm
):
    """OFFSET_OUT_OF_RANGE during the read (retention deleted the start of a planned range): with
    failOnDataLoss=false the read goes on from the log start, as Spark's Kafka source does; with true it fails
    naming the partition and the offsets."""
    create_topic(broker.bootstrap, topic_name)
    produce_with(broker.bootstrap, topic_name, [(0, None, b"v%d" % i, None) for i in range(40)])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})

    def planned(fail_on_data_loss: str):
        """The read's RDD: Spark has planned its offset ranges (from the log as it is now), read nothing."""
        frame = reader(spark, broker.bootstrap, subscribe=topic_name, failOnDataLoss=fail_on_data_loss).load()
        plan = frame._jdf.queryExecution().executedPlan().toString()
        assert (JVM_PLAN in plan) == jvm, plan
        return frame.select("offset", "value").rdd

    def delete_before(offset: int) -> None:
        deleted = admin.delete_records([TopicPartition(topic_name, 0, offset)], request_timeout=10)
        assert next(iter(deleted.values())).result(10).low_watermark == offset

    try:
        spark.conf.set(JVM_READER_CONF, "true" if jvm else "false")
        lenient = planned("false")
        delete_before(15)
        rows = sorted(lenient.collect())
        assert [(r.offset, bytes(r.value)) for r in rows] == [(i, b"v%d" % i) for i in range(15, 40)]

        strict = planned("true")
        delete_before(25)
        with pytest.raises(Exception, match="set failOnDataLoss=false to read from the log start") as failed:
            strict.collect()
        assert f"{topic_name}-0" in str(failed.value)
        assert "[15, 40)" in str(failed.value)
    finally:
        spark.conf.set(JVM_READER_CONF, "true")
