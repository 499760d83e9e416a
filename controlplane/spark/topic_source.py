"""The `topics` PySpark data source: batch and streaming reads of topics, and writes to a topic.

    register_topic_source(spark)
    spark.read.format("topics").option("kafka.bootstrap.servers", ...).option("subscribe", "orders").load()

Columns and options follow Spark's own Kafka source (see options.py); a user-supplied schema picks a subset of
the columns (projection.py). Each input partition is one offset range of one topic partition, read in the
executor (raw_reading.py, or confluent-kafka). Filters on partition, offset and timestamp narrow the ranges
(pushdown.py).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    Filter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

import controlplane
from controlplane.spark.offset_range import OffsetRange
from controlplane.spark.options import ReadOptions, kafka_client_config, lower_keys, parse_read_options
from controlplane.spark.planning import (
    limit_offsets,
    plan_batch,
    planning_consumer,
    resolve_spec,
    select_partitions,
    split_ranges,
    watermarks,
)
from controlplane.spark.projection import Projection, projection_for
from controlplane.spark.pushdown import RangeFilter, push_filters
from controlplane.spark.reading import HEADERS_DDL, SCHEMA_DDL, read_range
from controlplane.spark.writing import produce_batches

SOURCE_NAME = "topics"
# The Python source's name where the JVM reader owns SOURCE_NAME (TopicsProvider.java).
FALLBACK_NAME = "topics_python"
# PySpark refuses to plan a read with a reader that implements pushFilters unless this is on.
FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
# Read by the JVM reader's planner launcher (jvm/src/streamhub/spark/TopicPlanner.java).
PLANNER_PYTHON_CONF = "spark.streamhub.topics.python"
PLANNER_PATH_CONF = "spark.streamhub.topics.pythonPath"
# false: every read uses the Python source even where the JVM reader's jar is on the classpath.
JVM_READER_CONF = "spark.streamhub.topics.jvmReader"


def register_topic_source(spark: SparkSession) -> None:
    """Registers the `topics` source in a session, with the Python filter pushdown it relies on turned on.

    Where the JVM reader's jar is on the session's classpath (jvm.py) it owns the name `topics` and Spark refuses a
    Python source of that name: the Python source is then the JVM reader's fallback under `topics_python`
    (registered in every case). The JVM reader plans its reads with this interpreter, with the directory
    `controlplane` is imported from on its path (in a driver's own session; not over Spark Connect)."""
    spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
    if not type(spark).__module__.startswith("pyspark.sql.connect"):
        # A Connect client's interpreter is not on the server's host: there the Python source reads.
        spark.conf.set(PLANNER_PYTHON_CONF, sys.executable)
        spark.conf.set(PLANNER_PATH_CONF, str(Path(controlplane.__file__).resolve().parents[1]))
    try:
        spark.dataSource.register(TopicDataSource)
    except AnalysisException as error:
        if error.getCondition() != "DATA_SOURCE_ALREADY_EXISTS":
            raise
    spark.dataSource.register(FallbackTopicDataSource)


def add_connection_file(spark: SparkSession, kafka_config: Mapping[str, object]) -> str:
    """Hands a Spark Connect session the connection's librdkafka properties (credentials included) as a session
    file, and returns its name for the `connectionFile` option: the plan then names the file, never the secret.

    The name is random per call and says nothing; the copy sent is written 0600 into a directory only this user
    can read and removed once sent. On the server the file lives in the session's artifact directory, which the
    server deletes when the session is released (SparkSession.stop)."""
    name = f"streamhub-connection-{secrets.token_hex(16)}.json"
    directory = Path(tempfile.mkdtemp(prefix="streamhub-connection-"))  # mode 0700
    try:
        path = directory / name
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            json.dump({key: str(value) for key, value in kafka_config.items()}, handle)
        spark.addArtifacts(str(path), file=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return name


class RangePartition(InputPartition):
    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)
        self.offset_range = offset_range


def _read(
    partition: RangePartition, options: ReadOptions, projection: Projection
) -> Iterator[pa.RecordBatch]:
    return read_range(
        partition.offset_range,
        options.kafka_config,
        fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms,
        projection=projection,
    )


class TopicBatchReader(DataSourceReader):
    def __init__(self, options: ReadOptions, projection: Projection) -> None:
        self.read_options = options
        self.projection = projection
        self.range_filter = RangeFilter()

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        self.range_filter, remaining = push_filters(filters, self.projection.source_column)
        return remaining

    def partitions(self) -> Sequence[InputPartition]:
        return [RangePartition(r) for r in plan_batch(self.read_options, self.range_filter)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, RangePartition):
            # An empty plan (an empty topic, filters nothing passes): PySpark still reads one InputPartition(None).
            return iter(())
        return _read(partition, self.read_options, self.projection)


# Streaming offsets are JSON: {"topic": {"partition": next offset to read}}, as in Spark's checkpoints.
def to_json_offsets(offsets: dict[tuple[str, int], int]) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        result.setdefault(topic, {})[str(partition)] = offset
    return result


def from_json_offsets(offsets: dict) -> dict[tuple[str, int], int]:
    return {(topic, int(p)): int(o) for topic, parts in offsets.items() for p, o in parts.items()}


class TopicStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: ReadOptions, projection: Projection) -> None:
        self.read_options = options
        self.projection = projection
        self._target: dict[tuple[str, int], int] | None = None

    def _latest(self) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], tuple[int, int]]]:
        consumer = planning_consumer(self.read_options.kafka_config)
        try:
            marks = watermarks(consumer, select_partitions(consumer, self.read_options.selection))
        finally:
            consumer.close()
        return {key: high for key, (_, high) in marks.items()}, marks

    def initialOffset(self) -> dict:
        consumer = planning_consumer(self.read_options.kafka_config)
        try:
            marks = watermarks(consumer, select_partitions(consumer, self.read_options.selection))
            starts = resolve_spec(
                consumer,
                self.read_options.starting,
                marks,
                fail_on_data_loss=self.read_options.fail_on_data_loss,
            )
        finally:
            consumer.close()
        return to_json_offsets(starts)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target, _ = self._latest()

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.read_options.max_offsets_per_trigger:
            return ReadMaxRows(self.read_options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def reportLatestOffset(self) -> dict | None:
        return to_json_offsets(self._latest()[0])

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        latest = self._target if self._target is not None else self._latest()[0]
        begin = from_json_offsets(start)
        # Partitions added since the query started are read from their beginning, as Spark's source does.
        begin.update({key: 0 for key in latest if key not in begin})
        latest = {key: max(offset, begin[key]) for key, offset in latest.items()}
        if isinstance(limit, ReadMaxRows):
            latest = limit_offsets(begin, latest, limit.max_rows)
        return to_json_offsets(latest)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, finish = from_json_offsets(start), from_json_offsets(end)
        ranges = [
            OffsetRange(topic, partition, begin.get((topic, partition), 0), offset)
            for (topic, partition), offset in sorted(finish.items())
            if offset > begin.get((topic, partition), 0)
        ]
        return [RangePartition(r) for r in split_ranges(ranges, self.read_options.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangePartition)
        return _read(partition, self.read_options, self.projection)

    def commit(self, end: dict) -> None:
        """Nothing to do: Spark's checkpoint holds the offsets, the cluster keeps the records."""


@dataclass
class ProducedCount(WriterCommitMessage):
    records: int


class TopicWriter(DataSourceArrowWriter):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.kafka_config = kafka_client_config(options)
        self.topic = lower_keys(options).get("topic")
        if self.topic is None and "topic" not in schema.fieldNames():
            raise ValueError("writing needs a 'topic' option or a 'topic' column")
        self.produced = 0

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        return ProducedCount(produce_batches(iterator, self.kafka_config, default_topic=self.topic))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self.produced = sum(m.records for m in messages if isinstance(m, ProducedCount))


class TopicStreamWriter(DataSourceStreamArrowWriter):
    """Each micro-batch's rows are produced before Spark commits the batch, so a failed batch is retried
    (at least once per record; the idempotent producer removes duplicates within one producer session)."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.batch_writer = TopicWriter(options, schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        return self.batch_writer.write(iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self.batch_writer.commit(messages)


class TopicDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        include_headers = lower_keys(self.options).get("includeheaders", "false").lower() == "true"
        return SCHEMA_DDL + (HEADERS_DDL if include_headers else "")

    def reader(self, schema: StructType) -> DataSourceReader:
        options = parse_read_options(self.options)
        return TopicBatchReader(options, projection_for(schema, options.include_headers))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        options = parse_read_options(self.options, streaming=True)
        return TopicStreamReader(options, projection_for(schema, options.include_headers))

    def writer(self, schema: StructType, overwrite: bool) -> TopicWriter:
        return TopicWriter(dict(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> TopicStreamWriter:
        return TopicStreamWriter(dict(self.options), schema)


class FallbackTopicDataSource(TopicDataSource):
    """The Python source under the name the JVM reader hands streams, writes and unsupported reads to."""

    @classmethod
    def name(cls) -> str:
        return FALLBACK_NAME
