"""What the managed streaming jobs share: their source, the topic sink that writes each micro-batch once, the
progress file the supervisor reads, and the committed offsets it reads from the checkpoint.

The topic sink (`TopicBatchSink`, a foreachBatch function run in the driver) has two paths; the stream's
progress names the one it uses (`sink.mode`).

**Transactional (exactly-once; every cluster whose brokers support transactions).** Micro-batch N is produced
in ONE Kafka transaction of the stream's own transactional id `streamhub-stream-<stream>`, and the same
transaction commits a marker: the source offsets batch N ends at (from Spark's offset log, which Spark writes
before it runs the batch) as the offsets of the consumer group `streamhub-stream-<stream>`, each with the
metadata `streamhub-batch <N>` (send_offsets_to_transaction). Records and marker are committed or aborted
together. Why that is exactly-once with read_committed consumers of the target topic:

- *Restart (zombie fencing):* a starting driver calls init_transactions with the same transactional id. The
  coordinator bumps the producer epoch, so a previous driver still alive (a zombie, e.g. one cut off from
  the cluster) is fenced: its produce and commit fail with PRODUCER_FENCED and its open transaction is
  aborted. init_transactions returns only once that transaction is resolved, so the marker read next (an
  OffsetFetch with require_stable, read_committed) is final.
- *A driver killed between produce and commit:* its transaction is open; the next driver's init_transactions
  aborts it (the records stay in the log, marked aborted, invisible to read_committed readers), the marker
  still names N-1, so Spark's replay of N produces all of it again in a new transaction.
- *A driver killed after the commit, before Spark's own commit log:* Spark replays N; the marker names N, so
  the sink skips it. The replay's rows need not be the same rows in the same order (an aggregate's may not):
  only one of the attempts is ever committed.
- *Retries of a batch:* librdkafka's transactional producer is idempotent, so its own retries neither
  duplicate nor reorder; a batch that fails (a record not acknowledged, a commit refused) is aborted and the
  query fails; the supervisor's restart replays it as above.

The transaction must end within `transaction.timeout.ms` (60 s here; the broker aborts it after that): bound
a batch with `max_offsets_per_trigger`. The control plane grants the stream's service account WRITE and
DESCRIBE on the transactional id and READ on the group (controlplane.jobs.streams).

**Idempotent (at-least-once made effectively once; clusters without transactions, detected when
init_transactions answers that the brokers lack them).** Every record of a micro-batch reaches the target topic
once, across driver crashes and restarts, provided the batch's output is the same rows in the same order when
Spark replays it (true for filter/project queries, which read the same offset ranges again; an aggregate's
output is ordered by the job before it reaches the sink). How:

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

import contextlib
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from controlplane.spark.jobs.runtime import connection_options, job_line
from controlplane.spark.planning import METADATA_TIMEOUT_S, TopicReadError, planning_consumer, watermarks
from controlplane.spark.writing import ProduceFailed, produce_batches, produce_with

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
    # What the job's sink reports into each progress report (a topic sink: its mode and last batch).
    sink_status: dict[str, Any] = field(default_factory=dict)
    # Spark Connect: the name of the session file with kafka_config (topic_source.add_connection_file).
    connection_file: str | None = None

    def read_stream(self, spark: Any, source: StreamSource) -> Any:
        options = connection_options(self.kafka_config, self.connection_file)
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


TRANSACTIONAL = "transactional"
IDEMPOTENT = "idempotent"
# What init_transactions answers when the brokers lack transactions (librdkafka checks their ApiVersions for
# InitProducerId, AddPartitionsToTxn, EndTxn, ... and FindCoordinator of transaction coordinators).
TRANSACTIONS_UNSUPPORTED = frozenset(
    {KafkaError._UNSUPPORTED_FEATURE, KafkaError.UNSUPPORTED_VERSION, KafkaError.INVALID_REQUEST}
)
TRANSACTION_TIMEOUT_MS = 60_000
TRANSACTION_CALL_TIMEOUT_S = 60.0
COORDINATOR_NOT_READY = frozenset(
    {
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
    }
)
MARKER_PREFIX = "streamhub-batch "
# Test hook (the supervision test kills the driver here): seconds to wait between producing a batch and
# committing its transaction, announced in the driver's log.
PAUSE_BEFORE_COMMIT_ENV = "STREAMHUB_SINK_TEST_PAUSE_BEFORE_COMMIT_S"


def stream_transactional_id(stream_id: str) -> str:
    """The stream's transactional id, and its marker group's name: stable across the stream's restarts."""
    return f"streamhub-stream-{stream_id}"


@dataclass
class TopicBatchSink:
    """A foreachBatch function producing each micro-batch to `topic` once (see the module's docstring)."""

    stream_id: str
    topic: str
    kafka_config: dict[str, str]
    # The stream's: Spark's checkpoint is its `spark/` (the offset log the marker comes from), the idempotent
    # path's state is beside it.
    checkpoint_dir: Path
    # Idempotent path: columns the batch is ordered by before it is numbered, for queries whose replay may
    # order rows anew.
    sort_columns: list[str] = field(default_factory=list)
    mode: str | None = None  # TRANSACTIONAL or IDEMPOTENT; None: transactional where the cluster supports it
    # What the stream's progress reports about the sink (the same dict as StreamContext.sink_status).
    status: dict[str, Any] = field(default_factory=dict)
    batches_skipped: int = 0
    records_skipped: int = 0
    _state: SinkState | None = field(default=None, repr=False)
    _producer: Producer | None = field(default=None, repr=False)
    _marker_group: Consumer | None = field(default=None, repr=False)
    _committed: int | None = field(default=None, repr=False)

    def __call__(self, batch: Any, batch_id: int) -> None:
        if self.mode is None:
            self.mode = TRANSACTIONAL if self._start_transactions() else IDEMPOTENT
        elif self.mode == TRANSACTIONAL and self._producer is None and not self._start_transactions():
            raise ProduceFailed("the cluster does not support transactions")
        self.status["mode"] = self.mode
        if self.mode == TRANSACTIONAL:
            self._produce_in_transaction(batch, batch_id)
        else:
            self._produce_idempotently(batch, batch_id)
        self.status.update(batches_skipped=self.batches_skipped, records_skipped=self.records_skipped)

    def close(self) -> None:
        """Lets go of the transactional producer and the marker group's client (a sink used again starts
        its transactions anew)."""
        if self._marker_group is not None:
            self._marker_group.close()
        if self._producer is not None:
            self._producer.flush(0)
        self._producer = self._marker_group = self._committed = None

    # --- the transactional path --------------------------------------------------------------------------

    @property
    def transactional_id(self) -> str:
        return stream_transactional_id(self.stream_id)

    def _start_transactions(self) -> bool:
        """Registers the stream's transactional id (fencing any earlier driver and resolving its open
        transaction); False when the cluster does not support transactions."""
        producer = Producer(
            {
                "linger.ms": 20,
                # librdkafka 2.16 can wait without end in send_offsets_to_transaction once the group
                # coordinator's broker is gone (librdkafka issues 5511 and 5456: the call's timeout is not
                # checked); closing idle connections wakes it within seconds, as tests/integration/cluster/
                # eos_checker.py found.
                "connections.max.idle.ms": 10_000,
                **self.kafka_config,
                "transactional.id": self.transactional_id,
                "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
                "enable.idempotence": True,
                "acks": "all",
            }
        )
        try:
            producer.init_transactions(TRANSACTION_CALL_TIMEOUT_S)
        except KafkaException as error:
            code = error.args[0].code()
            if code in TRANSACTIONS_UNSUPPORTED:
                job_line(
                    f"the cluster does not support transactions ({error.args[0].str()}); "
                    "the topic sink uses the idempotent producer"
                )
                return False
            raise ProduceFailed(
                f"starting transactions as {self.transactional_id}: {error.args[0].str()}"
            ) from None
        self._producer = producer
        self._marker_group = Consumer(
            {
                **self.kafka_config,
                "group.id": self.transactional_id,
                "enable.auto.commit": False,
                "isolation.level": "read_committed",  # OffsetFetch with require_stable
            }
        )
        self.status["transactional_id"] = self.transactional_id
        return True

    def _committed_batch(self, positions: dict[tuple[str, int], int]) -> int:
        """The last batch whose transaction committed, from the marker group's offsets (-1: none yet)."""
        assert self._marker_group is not None
        partitions = [TopicPartition(topic, partition) for topic, partition in sorted(positions)]
        deadline = time.monotonic() + TRANSACTION_CALL_TIMEOUT_S
        while True:
            try:
                answers = self._marker_group.committed(partitions, timeout=TRANSACTION_CALL_TIMEOUT_S)
                break
            except KafkaException as error:
                # UNSTABLE_OFFSET_COMMIT while a resolved transaction's marker is still being written; a
                # coordinator that moved or is still loading (Apache Kafka answers NOT_COORDINATOR to the first
                # OffsetFetch after __consumer_offsets is created, which librdkafka reports as not retriable).
                code = error.args[0].code()
                if (
                    not (error.args[0].retriable() or code in COORDINATOR_NOT_READY)
                    or time.monotonic() > deadline
                ):
                    raise TopicReadError(
                        f"reading the marker of {self.transactional_id}: {error.args[0].str()}"
                    ) from None
                time.sleep(0.2)
        batches = [
            int(answer.metadata[len(MARKER_PREFIX) :])
            for answer in answers
            if answer.metadata and answer.metadata.startswith(MARKER_PREFIX)
        ]
        return max(batches, default=-1)

    def _produce_in_transaction(self, batch: Any, batch_id: int) -> None:
        producer, marker_group = self._producer, self._marker_group
        assert producer is not None
        assert marker_group is not None
        positions = batch_end_offsets(self.checkpoint_dir / "spark", batch_id)
        if positions is None:
            raise ProduceFailed(f"batch {batch_id} has no offsets in the checkpoint")
        if self._committed is None:  # once per driver, after init_transactions resolved the previous one
            self._committed = self._committed_batch(positions)
            self.status["last_committed_batch"] = self._committed
        if batch_id <= self._committed:
            self.batches_skipped += 1
            job_line(f"batch {batch_id} was committed before the restart; skipped")
            return
        table = batch.toArrow()
        if "value" not in table.column_names:
            raise ValueError("the query must produce a 'value' column")
        marker = [
            TopicPartition(topic, partition, offset, metadata=f"{MARKER_PREFIX}{batch_id}")
            for (topic, partition), offset in sorted(positions.items())
        ]
        producer.begin_transaction()
        try:
            produced = produce_with(producer, iter(table.to_batches()), default_topic=self.topic)
            producer.send_offsets_to_transaction(
                marker, marker_group.consumer_group_metadata(), TRANSACTION_CALL_TIMEOUT_S
            )
            pause = float(os.environ.get(PAUSE_BEFORE_COMMIT_ENV) or 0)
            if pause > 0:
                job_line(f"batch {batch_id} produced ({produced} records), committing in {pause} s")
                time.sleep(pause)
            producer.commit_transaction(TRANSACTION_CALL_TIMEOUT_S)
        except (KafkaException, ProduceFailed) as error:
            with contextlib.suppress(KafkaException):
                producer.abort_transaction(TRANSACTION_CALL_TIMEOUT_S)
            detail = error.args[0].str() if isinstance(error, KafkaException) else str(error)
            raise ProduceFailed(f"batch {batch_id} into {self.topic} aborted: {detail}") from None
        self._committed = batch_id
        self.status["last_committed_batch"] = batch_id
        job_line(f"batch {batch_id}: {produced} records into {self.topic}, committed in one transaction")

    # --- the idempotent path -----------------------------------------------------------------------------

    def _produce_idempotently(self, batch: Any, batch_id: int) -> None:
        state = self._state or SinkState.load(self.checkpoint_dir / SINK_STATE_FILE)
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
            # Into the job's log: a replay after a crash, and how much of it had landed.
            job_line(
                f"batch {batch_id} replayed, {len(written)} of {table.num_rows} records were already in {self.topic}"
            )
        if wanted:
            produce_batches(
                iter(with_sequence_headers(table, prefix, wanted).to_batches()),
                self.kafka_config,
                default_topic=self.topic,
            )
        state.committed, state.pending = batch_id, None
        state.save()
        job_line(f"batch {batch_id}: {len(wanted)} records into {self.topic} (idempotent producer)")
        self.status["last_committed_batch"] = batch_id


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


def write_progress(directory: Path, progress: Any, sink: dict[str, Any] | None = None) -> None:
    content = json.loads(progress.json) if hasattr(progress, "json") else dict(progress)
    summary = progress_summary(content)
    if sink:
        summary["sink"] = dict(sink)
    _write_json(directory / STREAM_PROGRESS_FILE, summary)


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
        positions = batch_end_offsets(spark_checkpoint, batch)
        if positions is not None:
            return batch, positions
    return None


def batch_end_offsets(spark_checkpoint: Path, batch: int) -> dict[tuple[str, int], int] | None:
    """The source offsets micro-batch `batch` ends at, from Spark's offset log (written before the batch
    runs); None when the log has no such batch."""
    try:
        lines = (spark_checkpoint / "offsets" / str(batch)).read_text().splitlines()
        offsets = json.loads(lines[2])  # "v1", the batch's metadata, then one line per source
    except (OSError, IndexError, ValueError):
        return None
    return {(t, int(p)): int(o) for t, parts in offsets.items() for p, o in parts.items()}


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
