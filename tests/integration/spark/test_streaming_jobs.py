"""The streaming catalog jobs and their topic sink, in the test session's local Spark against a real broker."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from controlplane.spark.jobs import stream_to_parquet, stream_topic_sql
from controlplane.spark.jobs.runtime import parameters_from_json
from controlplane.spark.streaming import (
    IDEMPOTENT,
    MARKER_PREFIX,
    SEQUENCE_HEADER,
    SINK_STATE_FILE,
    TRANSACTIONAL,
    SinkState,
    StreamContext,
    TopicBatchSink,
    committed_offsets,
    read_progress,
    stream_transactional_id,
    write_progress,
)
from tests.fixtures.engines import STREAMHUB, engine_params
from tests.integration.spark.conftest import create_topic, produce
from tests.integration.spark.query_waits import start_query, wait_for_query

pytestmark = pytest.mark.integration


def read_topic(
    bootstrap: str, topic: str, partitions: int = 1, isolation: str = "read_committed"
) -> list[tuple[int, bytes, bytes, list]]:
    """Every record of the topic as (partition, key, value, headers), in partition and offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{time.monotonic_ns()}",
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    records, ended, deadline = [], set(), time.monotonic() + 30
    while len(ended) < partitions and time.monotonic() < deadline:
        for message in consumer.consume(1000, 0.2):
            if message.error():
                ended.add(message.partition())
            else:
                records.append((message.partition(), message.key(), message.value(), message.headers() or []))
    consumer.close()
    return sorted(records, key=lambda r: r[0])


@pytest.fixture
def stream_id() -> str:
    """Each test's own: the stream's transactional id and marker group live as long as the session's broker,
    and a later test of the same id would fence an earlier one's producer and read its markers."""
    return uuid.uuid4().hex[:10]


def context(broker, tmp_path: Path, stream_id: str) -> StreamContext:
    return StreamContext(
        stream_id=stream_id,
        kafka_config={"bootstrap.servers": broker.bootstrap},
        checkpoint_dir=tmp_path / "checkpoint",
        output_dir=tmp_path / "output",
    )


def test_a_filter_and_project_stream_writes_each_record_once_and_reports_progress(
    spark, broker, topic_name, tmp_path, stream_id
):
    create_topic(broker.bootstrap, topic_name, partitions=2)
    target = create_topic(broker.bootstrap, f"{topic_name}-out", partitions=2)
    produce(broker.bootstrap, topic_name, [(i % 2, b"k%d" % (i % 2), b"v%d" % i) for i in range(40)])
    parameters = parameters_from_json(
        stream_topic_sql.Parameters,
        {
            "source": {"topic": topic_name, "max_offsets_per_trigger": 15},
            "target_topic": target,
            "sql": "SELECT key, upper(cast(value AS string)) AS value FROM source WHERE offset % 2 = 0",
            "trigger_seconds": 0.5,
        },
    )
    job_context = context(broker, tmp_path, stream_id)
    query = start_query(lambda: stream_topic_sql.start(spark, parameters, job_context))
    try:
        wait_for_query(
            query,
            lambda: len(read_topic(broker.bootstrap, target, 2)) >= 20,
            90,
            "the stream's output",
            job_context.sink_status,
        )
        query.processAllAvailable()
        write_progress(job_context.output_dir.parent, query.lastProgress, job_context.sink_status)
    finally:
        query.stop()
    records = read_topic(broker.bootstrap, target, 2)
    expected = {(b"k%d" % (i % 2), b"V%d" % i) for i in range(40) if (i // 2) % 2 == 0}
    assert sorted((k, v) for _, k, v, _ in records) == sorted(expected)
    # Per key (one source partition each) the output keeps the source's order.
    for key in (b"k0", b"k1"):
        values = [int(v[1:]) for _, k, v, _ in records if k == key]
        assert values == sorted(values)
    # Transactional: no sequence headers, no sink state file; the marker group holds the source's end offsets.
    assert not any(headers for *_, headers in records)
    assert not (job_context.checkpoint_dir / SINK_STATE_FILE).exists()
    batch, offsets = committed_offsets(job_context.spark_checkpoint)
    assert batch >= 2  # 40 records at 15 a batch
    assert offsets == {(topic_name, 0): 20, (topic_name, 1): 20}
    progress = read_progress(tmp_path)
    assert progress["batch_id"] >= 2
    assert progress["end_offsets"] == {topic_name: {"0": 20, "1": 20}}
    assert progress["sink"]["mode"] == TRANSACTIONAL
    assert progress["sink"]["transactional_id"] == f"streamhub-stream-{stream_id}"
    assert progress["sink"]["last_committed_batch"] >= 2
    marker = marker_offsets(broker.bootstrap, stream_id, [(topic_name, 0), (topic_name, 1)])
    assert {(t, p): o for t, p, o, _ in marker} == {(topic_name, 0): 20, (topic_name, 1): 20}
    assert {m for *_, m in marker} == {f"{MARKER_PREFIX}{progress['sink']['last_committed_batch']}"}


def marker_offsets(bootstrap: str, stream_id: str, partitions: list[tuple[str, int]]) -> list[tuple]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": stream_transactional_id(stream_id)})
    try:
        answers = consumer.committed([TopicPartition(t, p) for t, p in partitions], timeout=10)
    finally:
        consumer.close()
    return [(a.topic, a.partition, a.offset, a.metadata) for a in answers]


def spark_offset_log(checkpoint_dir: Path, batches: dict[int, dict]) -> None:
    """Spark's offset log for the batches, as Spark writes it before running each one."""
    offsets = checkpoint_dir / "spark" / "offsets"
    offsets.mkdir(parents=True, exist_ok=True)
    for batch, positions in batches.items():
        (offsets / str(batch)).write_text('v1\n{"batchWatermarkMs":0}\n' + json.dumps(positions))


@pytest.fixture(params=engine_params())
def either_broker(request: pytest.FixtureRequest):
    """The session's PLAINTEXT broker of each engine (Apache Kafka's clients there are its super user)."""
    return request.getfixturevalue("broker" if request.param == STREAMHUB else "apache_kafka")


def test_the_transactional_sink_skips_committed_batches_and_fences_a_dead_drivers_open_transaction(
    spark, either_broker, topic_name, tmp_path, stream_id
):
    broker = either_broker
    target = create_topic(broker.bootstrap, topic_name, partitions=1)
    source = create_topic(broker.bootstrap, f"{topic_name}-in", partitions=2)
    config = {"bootstrap.servers": broker.bootstrap}
    spark_offset_log(tmp_path, {0: {source: {"0": 5, "1": 5}}, 1: {source: {"0": 10, "1": 7}}})
    first = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(10)], "key string, value string")
    second = spark.createDataFrame([(f"k{i}", f"w{i}") for i in range(10)], "key string, value string")

    transactional_id = stream_transactional_id(stream_id)
    sink = TopicBatchSink(stream_id, target, config, tmp_path)
    sink(first, 0)
    assert sink.mode == TRANSACTIONAL
    assert sink.status == {
        "mode": TRANSACTIONAL,
        "transactional_id": transactional_id,
        "last_committed_batch": 0,
        "batches_skipped": 0,
        "records_skipped": 0,
    }

    # The driver dies in batch 1 after producing part of it, before its commit: a producer of the same
    # transactional id left with an open transaction (the "zombie" of a driver cut off, not yet dead).
    zombie = Producer({**config, "transactional.id": transactional_id})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    for i in range(4):
        zombie.produce(target, key=b"k%d" % i, value=b"w%d" % i)
    assert zombie.flush(10) == 0

    # The restarted driver: Spark replays batch 0 (committed: skipped), then batch 1, whole.
    restarted = TopicBatchSink(stream_id, target, config, tmp_path)
    restarted(first, 0)
    assert restarted.batches_skipped == 1
    restarted(second, 1)
    with pytest.raises(KafkaException) as fenced:
        zombie.commit_transaction(10)
    assert fenced.value.args[0].code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED)
    for done in (sink, restarted):
        done.close()

    committed = [v for _, _, v, _ in read_topic(broker.bootstrap, target)]
    assert committed == [b"v%d" % i for i in range(10)] + [b"w%d" % i for i in range(10)]
    # The zombie's records are in the log, aborted: only read_uncommitted shows them.
    uncommitted = [v for _, _, v, _ in read_topic(broker.bootstrap, target, isolation="read_uncommitted")]
    assert sorted(uncommitted) == sorted(committed + [b"w%d" % i for i in range(4)])
    marker = marker_offsets(broker.bootstrap, stream_id, [(source, 0), (source, 1)])
    assert marker == [(source, 0, 10, f"{MARKER_PREFIX}1"), (source, 1, 7, f"{MARKER_PREFIX}1")]


def test_the_idempotent_sink_produces_a_replayed_batch_only_where_it_did_not_reach_the_topic(
    spark, broker, topic_name, tmp_path
):
    target = create_topic(broker.bootstrap, topic_name, partitions=1)
    state_path = tmp_path / SINK_STATE_FILE
    config = {"bootstrap.servers": broker.bootstrap}
    batch = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(10)], "key string, value string")

    # Batch 0 produced and committed; a replay of it (Spark crashed before its own commit) is skipped.
    TopicBatchSink("s", target, config, tmp_path, mode=IDEMPOTENT)(batch, 0)
    TopicBatchSink("s", target, config, tmp_path, mode=IDEMPOTENT)(batch, 0)
    assert [v for _, _, v, _ in read_topic(broker.bootstrap, target)] == [b"v%d" % i for i in range(10)]

    # Batch 1: the driver dies after 4 of its 10 records reached the topic, before the sink's commit.
    log_end = {"0": 10}
    produce(
        broker.bootstrap,
        target,
        [(0, b"k%d" % i, b"v%d" % i) for i in range(4)],
    )
    producer = Producer(config)
    for i in range(4):
        producer.produce(target, key=b"k%d" % i, value=b"w%d" % i, headers=[(SEQUENCE_HEADER, b"s/1/%d" % i)])
    producer.flush(10)
    state = SinkState.load(state_path)
    state.pending = {"batch": 1, "log_end": log_end}
    state.save()
    second = spark.createDataFrame([(f"k{i}", f"w{i}") for i in range(10)], "key string, value string")
    sink = TopicBatchSink("s", target, config, tmp_path, mode=IDEMPOTENT)
    sink(second, 1)
    assert sink.records_skipped == 4
    values = [v for _, _, v, _ in read_topic(broker.bootstrap, target)]
    # The 4 unrelated records without the header do not count as written.
    assert values == [b"v%d" % i for i in range(10)] + [b"v%d" % i for i in range(4)] + [
        b"w%d" % i for i in range(10)
    ]
    assert json.loads(state_path.read_text()) == {"committed": 1, "pending": None}


def test_an_aggregate_with_a_watermark_writes_each_closed_window_once(
    spark, broker, topic_name, tmp_path, stream_id
):
    create_topic(broker.bootstrap, topic_name, partitions=1)
    target = create_topic(broker.bootstrap, f"{topic_name}-out", partitions=1)
    base = 1_700_000_000_000  # window starts on a 10 s boundary
    records = [(0, b"a" if i % 3 else b"b", b"x", base + i * 1000) for i in range(20)]
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for partition, key, value, stamp in records:
        producer.produce(topic_name, key=key, value=value, partition=partition, timestamp=stamp)
    # A later record moves the watermark (delay 5 s) past the first two windows.
    producer.produce(topic_name, key=b"a", value=b"x", partition=0, timestamp=base + 60_000)
    assert producer.flush(10) == 0
    parameters = parameters_from_json(
        stream_topic_sql.Parameters,
        {
            "source": {"topic": topic_name},
            "target_topic": target,
            "sql": "SELECT key, to_json(named_struct('start', cast(window.start AS long), 'records', count(*))) "
            "AS value FROM source GROUP BY window(timestamp, '10 seconds'), key",
            "watermark_delay": "5 seconds",
            "trigger_seconds": 0.5,
        },
    )
    job_context = context(broker, tmp_path, stream_id)
    query = start_query(lambda: stream_topic_sql.start(spark, parameters, job_context))
    try:
        # The watermark moves after the batch that saw the late record: the next batch emits the windows.
        wait_for_query(
            query,
            lambda: len(read_topic(broker.bootstrap, target)) >= 4,
            120,
            "the closed windows",
            job_context.sink_status,
        )
        time.sleep(2)  # a further batch would show a window twice
    finally:
        query.stop()
    windows = sorted(
        (k, json.loads(v)["start"], json.loads(v)["records"])
        for _, k, v, _ in read_topic(broker.bootstrap, target)
    )
    start = base // 1000
    expected = sorted(
        (key, start + w * 10, sum(1 for i in range(w * 10, w * 10 + 10) if (b"a" if i % 3 else b"b") == key))
        for w in (0, 1)
        for key in (b"a", b"b")
    )
    assert windows == expected


def test_a_stream_into_parquet_files_writes_every_record(spark, broker, topic_name, tmp_path, stream_id):
    create_topic(broker.bootstrap, topic_name, partitions=2)
    produce(broker.bootstrap, topic_name, [(i % 2, None, b"r%d" % i) for i in range(30)])
    parameters = parameters_from_json(
        stream_to_parquet.Parameters,
        {"source": {"topic": topic_name}, "trigger_seconds": 0.5},
    )
    job_context = context(broker, tmp_path, stream_id)
    query = start_query(lambda: stream_to_parquet.start(spark, parameters, job_context))
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    rows = spark.read.parquet(str(job_context.output_dir / "parquet")).collect()
    assert sorted(bytes(r.value) for r in rows) == sorted(b"r%d" % i for i in range(30))
    assert {r.date.isoformat() for r in rows} == {rows[0].timestamp.date().isoformat()}
