"""Reading one offset range in an executor, as Arrow record batches in the shape of Spark's Kafka source."""

from __future__ import annotations

import bisect
import time
import uuid
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, Message, TopicPartition

from controlplane.spark.connection import connection_settings
from controlplane.spark.offset_range import OffsetRange
from controlplane.spark.planning import TopicReadError
from controlplane.spark.projection import HEADER_TYPE, TIMESTAMP_TYPE, Projection, full_projection
from controlplane.spark.raw_reading import native_decoder, read_range_raw

# Records per consume() call and so per Arrow batch: fewer, larger batches cost Spark less per record.
CONSUME_BATCH = 50_000
CONSUME_WAIT_S = 0.05

SCHEMA_DDL = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
HEADERS_DDL = ", headers array<struct<key: string, value: binary>>"


def arrow_schema(include_headers: bool) -> pa.Schema:
    return full_projection(include_headers).schema


def _reader_config(kafka_config: dict[str, str], fail_on_data_loss: bool) -> dict[str, object]:
    return {
        "group.id": f"spark-reader-{uuid.uuid4().hex[:12]}",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        # Offsets deleted between planning and reading: an error unless data loss is accepted.
        "auto.offset.reset": "error" if fail_on_data_loss else "earliest",
        "fetch.wait.max.ms": 100,
        # Keep fetching ahead while Python turns the previous batch into Arrow (larger fetch sizes and deeper
        # queues measured no faster: the per-message Python objects are the cost, not the fetching).
        "queued.min.messages": 200_000,
        **kafka_config,
    }


def _to_batch(messages: list[Message], offset_range: OffsetRange, projection: Projection) -> pa.RecordBatch:
    count = len(messages)
    stamps: np.ndarray | None = None

    def timestamps() -> np.ndarray:
        # (type, milliseconds) pairs as one array: column arithmetic in numpy instead of per-record Python.
        nonlocal stamps
        if stamps is None:
            stamps = np.array(list(map(Message.timestamp, messages)), dtype=np.int64).reshape(count, 2)
        return stamps

    # map() over the C methods instead of comprehensions: the per-record cost is the method call alone.
    builders = {
        "key": lambda: pa.array(list(map(Message.key, messages)), pa.binary()),
        "value": lambda: pa.array(list(map(Message.value, messages)), pa.binary()),
        "topic": lambda: pa.repeat(pa.scalar(offset_range.topic, pa.string()), count),
        "partition": lambda: pa.repeat(pa.scalar(offset_range.partition, pa.int32()), count),
        "offset": lambda: pa.array(np.fromiter(map(Message.offset, messages), np.int64, count)),
        "timestamp": lambda: pa.array(timestamps()[:, 1] * 1000).cast(TIMESTAMP_TYPE),
        # librdkafka numbers CreateTime 1 and LogAppendTime 2; Spark's column uses Kafka's 0 and 1.
        "timestampType": lambda: pa.array(np.maximum(timestamps()[:, 0] - 1, 0).astype(np.int32)),
        "headers": lambda: pa.array(list(map(_headers, messages)), HEADER_TYPE),
    }
    return pa.RecordBatch.from_arrays([builders[c]() for c in projection.columns], schema=projection.schema)


def _headers(message: Message) -> list[dict] | None:
    pairs = message.headers()
    return [{"key": k, "value": v} for k, v in pairs] if pairs else None


def read_range(
    offset_range: OffsetRange,
    kafka_config: dict[str, str],
    *,
    include_headers: bool = False,
    fail_on_data_loss: bool = True,
    poll_timeout_ms: int = 10_000,
    projection: Projection | None = None,
) -> Iterator[pa.RecordBatch]:
    """Every record of the range that exists (compaction leaves gaps), in offset order, with the columns of
    `projection` (by default all of them, headers if `include_headers`).

    Raw fetches decoded in bulk where possible (raw_reading.py); confluent-kafka for headers, TLS and other
    settings that path does not implement, where no C compiler is available, and from wherever the raw path
    hands over (partition errors are reported by confluent-kafka, the same way in every case)."""
    if offset_range.size <= 0:
        return
    projection = projection or full_projection(include_headers)
    settings = connection_settings(kafka_config)
    if not projection.include_headers and settings is not None and native_decoder() is not None:
        handover = yield from read_range_raw(
            offset_range,
            settings,
            projection,
            fail_on_data_loss=fail_on_data_loss,
            poll_timeout_ms=poll_timeout_ms,
        )
        if handover is None:
            return
        offset_range = OffsetRange(offset_range.topic, offset_range.partition, handover, offset_range.end)
    yield from _consume_range(offset_range, kafka_config, fail_on_data_loss, poll_timeout_ms, projection)


def _consume_range(
    offset_range: OffsetRange,
    kafka_config: dict[str, str],
    fail_on_data_loss: bool,
    poll_timeout_ms: int,
    projection: Projection,
) -> Iterator[pa.RecordBatch]:
    consumer = Consumer(_reader_config(kafka_config, fail_on_data_loss))
    try:
        consumer.assign([TopicPartition(offset_range.topic, offset_range.partition, offset_range.start)])
        last_wanted = offset_range.end - 1
        idle_since = time.monotonic()
        while True:
            # consume() waits for a full batch or its timeout, so a short timeout keeps the tail of a range
            # from waiting; the poll timeout bounds how long no record at all may arrive.
            messages = consumer.consume(CONSUME_BATCH, CONSUME_WAIT_S)
            if not messages:
                if time.monotonic() - idle_since > poll_timeout_ms / 1000:
                    raise TopicReadError(
                        f"no records from {offset_range.topic}-{offset_range.partition} within {poll_timeout_ms} "
                        f"ms while reading [{offset_range.start}, {offset_range.end})"
                    )
                continue
            idle_since = time.monotonic()
            errors = list(map(Message.error, messages))
            # Errors (end of partition, mostly) are rare: the common batch is used as it is.
            records = (
                [m for m, e in zip(messages, errors, strict=True) if e is None] if any(errors) else messages
            )
            reached_end = len(records) != len(messages) and _at_end_of_log(
                messages, offset_range, fail_on_data_loss
            )
            if records and records[-1].offset() >= offset_range.end:
                records = records[: bisect.bisect_left(records, offset_range.end, key=lambda m: m.offset())]
                reached_end = True
            if records:
                yield _to_batch(records, offset_range, projection)
                if records[-1].offset() >= last_wanted:
                    return
            if reached_end:
                return
    finally:
        consumer.close()


def _at_end_of_log(messages: list, offset_range: OffsetRange, fail_on_data_loss: bool) -> bool:
    """True at the end of the log (the rest of the range was compacted away or are control records);
    raises on real errors."""
    for message in messages:
        error = message.error()
        if error is None:
            continue
        if error.code() == KafkaError._PARTITION_EOF:
            if message.offset() >= offset_range.end or fail_on_data_loss is False:
                return True
            if message.offset() < offset_range.end:
                # The log ends before the planned end: records were truncated away (data loss).
                raise TopicReadError(
                    f"{offset_range.topic}-{offset_range.partition} ends at {message.offset()}, before the "
                    f"planned end {offset_range.end}; set failOnDataLoss=false to accept this"
                )
        where = f"{offset_range.topic}-{offset_range.partition}"
        if error.code() == KafkaError._AUTO_OFFSET_RESET:  # OFFSET_OUT_OF_RANGE with auto.offset.reset=error
            raise TopicReadError(
                f"offset {message.offset()} of {where} is out of range (records deleted or truncated since the "
                f"read was planned [{offset_range.start}, {offset_range.end}): {error.str()}); "
                "set failOnDataLoss=false to read from the log start instead"
            )
        raise TopicReadError(f"reading {where}: {error.str()}")
    return False
