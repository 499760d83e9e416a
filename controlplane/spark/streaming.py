"""What the managed streaming jobs share: their source, the topic sink that does not duplicate on restart,
the progress file the supervisor reads, and the committed offsets it reads from the checkpoint.

The topic sink's guarantee (until the broker supports transactions): every record of a micro-batch reaches
the target topic once, across driver crashes and restarts, provided the batch's output is the same rows in
the same order when Spark replays it (true for filter/project queries, which read the same offset ranges
again; an aggregate's output is ordered by the job before it reaches the sink). How:

1. A batch id at or below the last committed one (sink state in the checkpoint directory) is skipped: Spark
   replays the last batch when it crashed between the sink's commit and its own.
2. Before producing batch N the sink records N and the target's log end offsets ("pending").
3. Each record carries a header `streamhub-seq: <stream>/<N>/<index in the batch>`, produced in order by the
   idempotent producer (no duplicates or reordering from its own retries).
4. Replaying a pending batch N, the sink first reads the target from the recorded offsets and leaves out the
   indexes already there, then marks N committed.

A record the dead driver sent but the broker appends after step 4's read (a request still in flight when
the process was killed) would be written twice; the restart takes seconds, which this relies on.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from controlplane.spark.planning import METADATA_TIMEOUT_S, TopicReadError, planning_consumer, watermarks
from controlplane.spark.writing import produce_batches

SEQUENCE_HEADER = "streamhub-seq"
STREAM_PROGRESS_FILE = "stream-progress.json"
SINK_STATE_FILE = "topic-sink.json"
READ_BACK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class StreamSource:
    """The topic a streaming job reads, from where, and how much per micro-batch."""

    topic: str
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int = 10_000
    fail_on_data_loss: bool = True

    def __post_init__(self) -> None:
        if (
            not isinstance(self.max_offsets_per_trigger, int)
            or not 1 <= self.max_offsets_per_trigger <= 10**7
        ):
            raise ValueError("source.max_offsets_per_trigger must be 1 to 10,000,000")


@dataclass(frozen=True)
class StreamContext:
    """Where a streaming job keeps its state: all of it under directories the control plane owns."""

    stream_id: str
    kafka_config: dict[str, str]
    checkpoint_dir: Path
    output_dir: Path

    def read_stream(self, spark: Any, source: StreamSource) -> Any:
        options = {f"kafka.{key}": str(value) for key, value in self.kafka_config.items()}
        options.update(
            subscribe=source.topic,
            startingOffsets=source.starting_offsets,
            maxOffsetsPerTrigger=str(source.max_offsets_per_trigger),
            failOnDataLoss=str(source.fail_on_data_loss).lower(),
        )
        return spark.readStream.format("topics").options(**options).load()

    @property
    def spark_checkpoint(self) -> Path:
        return self.checkpoint_dir / "spark"


def trigger_interval(seconds: float) -> str:
    if not 0.1 <= seconds <= 3600:
        raise ValueError("trigger_seconds must be 0.1 to 3600")
    return f"{int(seconds * 1000)} milliseconds"


def _write_json(path: Path, content: Any) -> None:
    """Atomically, and durably: the sink's state decides what a restarted driver produces again."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    with open(temporary, "w") as handle:
        json.dump(content, handle)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


@dataclass
class SinkState:
    """The topic sink's record of its batches, kept in the job's checkpoint directory."""

    path: Path
    committed: int = -1
    pending: dict[str, Any] | None = None  # {"batch": N, "log_end": {"partition": offset}}

    @classmethod
    def load(cls, path: Path) -> SinkState:
        try:
            content = json.loads(path.read_text())
        except FileNotFoundError:
            return cls(path)
        return cls(path, int(content["committed"]), content.get("pending"))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _write_json(self.path, {"committed": self.committed, "pending": self.pending})


@dataclass
class TopicBatchSink:
    """A foreachBatch function producing each micro-batch to `topic` once (see the module's docstring)."""

    stream_id: str
    topic: str
    kafka_config: dict[str, str]
    state_path: Path
    # Columns the batch is ordered by before it is numbered: for queries whose replay may order rows anew.
    sort_columns: list[str] = field(default_factory=list)
    batches_skipped: int = 0
    records_skipped: int = 0
    _state: SinkState | None = field(default=None, repr=False)

    def __call__(self, batch: Any, batch_id: int) -> None:
        state = self._state or SinkState.load(self.state_path)
        self._state = state
        if batch_id <= state.committed:
            self.batches_skipped += 1
            return
        table = (batch.sort(*self.sort_columns) if self.sort_columns else batch).toArrow()
        if "value" not in table.column_names:
            raise ValueError("the query must produce a 'value' column")
        prefix = f"{self.stream_id}/{batch_id}/"
        replayed = state.pending is not None and state.pending.get("batch") == batch_id
        if replayed:
            written = sequences_written(self.kafka_config, self.topic, state.pending["log_end"], prefix)
        else:
            written = set()
            state.pending = {"batch": batch_id, "log_end": log_end_offsets(self.kafka_config, self.topic)}
            state.save()
        wanted = [index for index in range(table.num_rows) if index not in written]
        self.records_skipped += table.num_rows - len(wanted)
        if replayed:
            # Into the driver's log: a replay after a crash, and how much of it had landed.
            print(
                f"streamhub: batch {batch_id} replayed, {len(written)} of {table.num_rows} records were already in {self.topic}",
                flush=True,
            )
        if wanted:
            produce_batches(
                iter(with_sequence_headers(table, prefix, wanted).to_batches()),
                self.kafka_config,
                default_topic=self.topic,
            )
        state.committed, state.pending = batch_id, None
        state.save()


def with_sequence_headers(table: pa.Table, prefix: str, indexes: list[int]) -> pa.Table:
    """The rows at `indexes`, each with the header naming its place in the batch appended to its headers."""
    chosen = table.take(pa.array(indexes, pa.int64()))
    existing = (
        chosen.column("headers").to_pylist() if "headers" in chosen.column_names else [None] * len(indexes)
    )
    headers = [
        [*(own or []), {"key": SEQUENCE_HEADER, "value": f"{prefix}{index}".encode()}]
        for own, index in zip(existing, indexes, strict=True)
    ]
    header_type = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
    column = pa.array(headers, header_type)
    if "headers" in chosen.column_names:
        return chosen.set_column(chosen.column_names.index("headers"), "headers", column)
    return chosen.append_column("headers", column)


def log_end_offsets(kafka_config: dict[str, str], topic: str) -> dict[str, int]:
    """Every partition's high watermark of a topic, by partition number as a string (JSON keys)."""
    consumer = planning_consumer(kafka_config)
    try:
        metadata = consumer.list_topics(topic, timeout=METADATA_TIMEOUT_S)
        described = metadata.topics.get(topic)
        if described is None or described.error is not None:
            raise TopicReadError(f"unknown target topic {topic}{consumer.cause()}")
        marks = watermarks(consumer, [(topic, p) for p in sorted(described.partitions)])
    except KafkaException as error:
        raise TopicReadError(f"cannot read the offsets of {topic}: {error}") from None
    finally:
        consumer.close()
    return {str(partition): high for (_, partition), (_, high) in marks.items()}


def sequences_written(
    kafka_config: dict[str, str], topic: str, since: dict[str, int], prefix: str
) -> set[int]:
    """The batch indexes (headers starting with `prefix`) in `topic` from the offsets `since` to its end."""
    ends = log_end_offsets(kafka_config, topic)
    wanted = {int(p): (start, ends.get(p, start)) for p, start in since.items() if ends.get(p, start) > start}
    found: set[int] = set()
    if not wanted:
        return found
    consumer = Consumer(
        {
            **kafka_config,
            "group.id": f"spark-sink-check-{uuid.uuid4().hex[:12]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, start) for p, (start, _) in wanted.items()])
        remaining = set(wanted)
        deadline = time.monotonic() + READ_BACK_TIMEOUT_S
        while remaining:
            if time.monotonic() > deadline:
                raise TopicReadError(f"reading back {topic} took longer than {READ_BACK_TIMEOUT_S} s")
            for message in consumer.consume(10_000, 0.2):
                error = message.error()
                if error is not None and error.code() != KafkaError._PARTITION_EOF:
                    raise TopicReadError(f"reading back {topic}: {error.str()}")
                if error is None:
                    for key, value in message.headers() or []:
                        if key == SEQUENCE_HEADER and value and value.decode().startswith(prefix):
                            found.add(int(value.decode()[len(prefix) :]))
                partition = message.partition()
                if partition in remaining and message.offset() >= wanted[partition][1] - 1:
                    remaining.discard(partition)
    finally:
        consumer.close()
    return found


def progress_summary(progress: dict[str, Any]) -> dict[str, Any]:
    """What the control plane keeps of a StreamingQueryProgress: rates, the batch and its duration."""
    sources = progress.get("sources") or [{}]
    return {
        "batch_id": progress.get("batchId"),
        "timestamp": progress.get("timestamp"),
        "num_input_rows": progress.get("numInputRows", 0),
        "input_rows_per_second": round(float(progress.get("inputRowsPerSecond") or 0.0), 3),
        "processed_rows_per_second": round(float(progress.get("processedRowsPerSecond") or 0.0), 3),
        "batch_duration_ms": (progress.get("durationMs") or {}).get("triggerExecution", 0),
        "end_offsets": _as_offsets(sources[0].get("endOffset")),
    }


def _as_offsets(value: Any) -> dict[str, dict[str, int]] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def write_progress(directory: Path, progress: Any) -> None:
    content = json.loads(progress.json) if hasattr(progress, "json") else dict(progress)
    _write_json(directory / STREAM_PROGRESS_FILE, progress_summary(content))


def read_progress(directory: Path) -> dict[str, Any] | None:
    try:
        return json.loads((directory / STREAM_PROGRESS_FILE).read_text())
    except (OSError, ValueError):
        return None


def committed_offsets(spark_checkpoint: Path) -> tuple[int, dict[tuple[str, int], int]] | None:
    """The last batch Spark committed and the source offsets it ended at (next offset to read, per
    partition), from the checkpoint's commit and offset logs; None before the first commit."""
    try:
        batches = [int(p.name) for p in (spark_checkpoint / "commits").iterdir() if p.name.isdigit()]
    except FileNotFoundError:
        return None
    for batch in sorted(batches, reverse=True):
        try:
            lines = (spark_checkpoint / "offsets" / str(batch)).read_text().splitlines()
            offsets = json.loads(lines[2])  # "v1", the batch's metadata, then one line per source
        except (OSError, IndexError, ValueError):
            continue
        return batch, {(t, int(p)): int(o) for t, parts in offsets.items() for p, o in parts.items()}
    return None


def commit_group_offsets(
    kafka_config: dict[str, str], group_id: str, offsets: dict[tuple[str, int], int]
) -> None:
    """Commits a stream's committed positions as a consumer group's offsets (without joining the group), so
    the cluster's lag sampling, alerts and group pages see the stream like any consumer."""
    consumer = Consumer({**kafka_config, "group.id": group_id, "enable.auto.commit": False})
    try:
        positions = [
            TopicPartition(topic, partition, offset) for (topic, partition), offset in sorted(offsets.items())
        ]
        for answer in consumer.commit(offsets=positions, asynchronous=False) or []:
            if answer.error is not None:
                raise TopicReadError(
                    f"committing {group_id} on {answer.topic}-{answer.partition}: {answer.error.str()}"
                )
    except KafkaException as error:
        raise TopicReadError(f"committing {group_id}: {error}") from None
    finally:
        consumer.close()
