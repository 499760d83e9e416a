"""One partition's log: a directory of segments, with validation, offsets, recovery and retention.

Threading: everything runs on the event-loop thread except compaction (and possibly retention), which
run in a worker thread. The segment list is copy-on-write: readers take the current tuple without a
lock; every change to the list (roll, retention, truncation, a compaction swap) happens under `_lock`.
"""

import contextlib
import itertools
import os
import random
import shutil
import threading
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from broker.log.checkpoint import read_number, write_number
from broker.log.config import LogConfig, compression_level
from broker.log.errors import InvalidProducerEpochError, LogStorageError, OffsetOutOfRangeError
from broker.log.leader_epoch import LeaderEpochCache
from broker.log.producer_state import (
    PRODUCER_ID_EXPIRATION_MS,
    BatchMetadata,
    ProducerEntry,
    ProducerStateManager,
)
from broker.log.segment import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    F_ATTRIBUTES,
    F_BASE_OFFSET,
    F_BASE_SEQUENCE,
    F_LAST_OFFSET_DELTA,
    F_MAX_TIMESTAMP,
    F_PRODUCER_EPOCH,
    F_PRODUCER_ID,
    F_RECORD_COUNT,
    MAX_RELATIVE_OFFSET,
    SEGMENT_FILE_KINDS,
    SWAP_SUFFIX,
    HeaderFields,
    LogSegment,
)
from broker.log.transaction_index import AbortedTxn
from broker.wire.records.batch import (
    CONTROL_FLAG,
    HEADER,
    HEADER_SIZE,
    TRANSACTIONAL_FLAG,
    BatchView,
    increment_sequence,
    iter_batches,
    read_batch_header,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
    whole_batches_length,
    with_records,
)
from broker.wire.records.codecs import CODEC_BY_TOPIC_NAME, Codec, compress, decompress
from broker.wire.records.control import build_txn_marker, read_txn_marker
from broker.wire.records.errors import (
    DecompressedTooLargeError,
    InvalidRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
)
from broker.wire.records.records import Record, decode_records
from broker.wire.records.validation import RecordsShape, check_records

if TYPE_CHECKING:
    import numpy as np

CLEAN_SHUTDOWN_FILE = ".clean-shutdown"
CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
# Replicated partitions only: the high watermark survives a restart (a single replica's is its log end).
# Where a replica's high watermark was checkpointed before one checkpoint per log dir (LogManager reads it on
# upgrade).
LEGACY_HIGH_WATERMARK_FILE = "high-watermark-checkpoint"
LOG_START_OFFSET_FILE = "log-start-offset"
RECOVERY_POINT_FILE = "recovery-point"
# A producer's batch may not decompress to more than this (or max.message.bytes, if larger). Kafka has no
# such bound, but a batch is decompressed whole here to be checked: 1 MB of zstd can hold gigabytes of
# zeros. Producers stay far below it (librdkafka bounds a batch before compression by batch.size, 1 MB).
MAX_DECOMPRESSED_BATCH_BYTES = 32 * 1024 * 1024
# A refused batch's answer lists at most this many of its failed records (the message still counts them all).
# Kafka lists every one, and for a million of them answers UNKNOWN_SERVER_ERROR after seconds of work; a list
# this long is already more than any client shows, and a 1 MB batch of tiny records would otherwise make a
# 100 MB answer.
MAX_LISTED_RECORD_ERRORS = 10_000


@dataclass(frozen=True)
class AppendResult:
    base_offset: int
    last_offset: int
    log_append_time_ms: int  # -1 when the topic uses CreateTime
    log_start_offset: int
    record_count: int
    size_bytes: int
    max_timestamp: int


def _now_ms() -> int:
    return int(time.time() * 1000)


def _describe_record(offset: int, timestamp: int | None, record: Record) -> str:
    """A record as Kafka's DefaultRecord.toString() shows it in its error messages."""
    key = 0 if record.key is None else len(record.key)
    value = 0 if record.value is None else len(record.value)
    return f"DefaultRecord(offset={offset}, timestamp={timestamp}, key={key} bytes, value={value} bytes)"


class PartitionLog:
    def __init__(self, directory: Path, config: LogConfig, *, topic: str, partition: int) -> None:
        self.directory = directory
        self.config = config
        self.topic = topic
        self.partition = partition
        self.log_start_offset = 0
        self.high_watermark = 0
        self._lock = threading.RLock()
        self._segments: tuple[LogSegment, ...] = ()
        self._bases: tuple[int, ...] = ()
        self._pending_deletes: list[tuple[int, LogSegment]] = []
        self._listeners: list[Callable[[], None]] = []
        self._unflushed_messages = 0
        self._last_flush_ms = _now_ms()
        self._roll_jitter_ms = 0
        self._closed = False
        # Set by the cleaner: when its tombstones may be dropped, a clean log is worth cleaning again.
        self.oldest_retained_tombstone_ms: int | None = None
        self.producer_state = ProducerStateManager(directory)
        # Whether any segment may hold an aborted transaction: read_committed fetches of logs that
        # never saw one skip the per-segment search (a stale True only costs that search).
        self._may_have_aborts = False
        self.leader_epochs: LeaderEpochCache
        # Bumped by every truncation: a copy of this log (a replica moving to another log dir) made
        # across one may hold batches the log no longer has, and starts over.
        self.truncations = 0
        # Told when a write fails (the log manager takes the directory offline, as Kafka does).
        self.on_storage_error: Callable[[PartitionLog, LogStorageError], None] | None = None

    # ---- opening and recovery -----------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path, config: LogConfig, *, topic: str, partition: int) -> "PartitionLog":
        """Create the partition directory, or recover an existing one (see module docstring)."""
        directory.mkdir(parents=True, exist_ok=True)
        log = cls(directory, config, topic=topic, partition=partition)
        log._roll_jitter_ms = random.randint(0, config.segment_jitter_ms) if config.segment_jitter_ms else 0
        marker = directory / CLEAN_SHUTDOWN_FILE
        clean_shutdown = marker.exists()
        marker.unlink(missing_ok=True)
        log._finish_interrupted_operations()
        log._load_segments(clean_shutdown)
        # Compaction may empty the head segment without moving the log start: trust the stored value.
        stored_start = read_number(directory / LOG_START_OFFSET_FILE, log._segments[0].base_offset)
        log.log_start_offset = min(stored_start, log.log_end_offset)
        log.leader_epochs = LeaderEpochCache(directory)
        log.leader_epochs.truncate_from_end(log.log_end_offset)
        log.leader_epochs.truncate_from_start(log.log_start_offset)
        log._rebuild_producer_state()
        log._may_have_aborts = any(segment.txn_index.entries for segment in log._segments)
        log.high_watermark = log.log_end_offset
        return log

    @classmethod
    def create_new(cls, directory: Path, config: LogConfig, *, topic: str, partition: int) -> "PartitionLog":
        """A partition that has no directory yet (FileExistsError if it has one): the directory and
        one empty segment, and nothing to read or recover. `open` reads a dozen paths to find out
        the same; thousands of new partitions at once make the difference."""
        os.mkdir(directory)
        log = cls(directory, config, topic=topic, partition=partition)
        log._roll_jitter_ms = random.randint(0, config.segment_jitter_ms) if config.segment_jitter_ms else 0
        log._set_segments([LogSegment.create(directory, 0, config, _now_ms())])
        log.leader_epochs = LeaderEpochCache(directory, load=False)
        return log

    def _finish_interrupted_operations(self) -> None:
        """Undo half-done work: drop `.cleaned` and `.deleted` files, complete `.swap` replacements."""
        for path in list(self.directory.iterdir()):
            if path.name.endswith((DELETED_SUFFIX, CLEANED_SUFFIX, ".tmp")):
                path.unlink(missing_ok=True)
        for swap_log in sorted(self.directory.glob(f"{'[0-9]' * 20}.log{SWAP_SUFFIX}")):
            base_offset = int(swap_log.name.split(".")[0])
            swapped = LogSegment.open(
                self.directory, base_offset, self.config, recover=True, suffix=SWAP_SUFFIX
            )
            try:
                next_offset = swapped.next_offset
            finally:
                swapped.close()
            # The swap file replaces every old segment whose base offset falls in its range.
            for old_base in self._segment_bases():
                if base_offset <= old_base < max(next_offset, base_offset + 1):
                    for kind in SEGMENT_FILE_KINDS:
                        (self.directory / f"{old_base:020d}.{kind}").unlink(missing_ok=True)
            for kind in SEGMENT_FILE_KINDS:
                swap_path = self.directory / f"{base_offset:020d}.{kind}{SWAP_SUFFIX}"
                if swap_path.exists():
                    os.rename(swap_path, self.directory / f"{base_offset:020d}.{kind}")

    def _segment_bases(self) -> list[int]:
        """Base offsets of the `<20 digits>.log` files (anything else in the directory is not ours)."""
        return sorted(int(path.name[:20]) for path in self.directory.glob(f"{'[0-9]' * 20}.log"))

    def _load_segments(self, clean_shutdown: bool) -> None:
        bases = self._segment_bases()
        recovery_point = read_number(self.directory / RECOVERY_POINT_FILE, 0)
        segments: list[LogSegment] = []
        for i, base in enumerate(bases):
            next_base = bases[i + 1] if i + 1 < len(bases) else None
            needs_recovery = not clean_shutdown and (next_base is None or next_base > recovery_point)
            segment = LogSegment.open(self.directory, base, self.config, recover=needs_recovery)
            segments.append(segment)
            torn = needs_recovery and next_base is not None and segment.next_offset > next_base
            if segment.recovered_bytes or torn:
                # Everything after a damaged segment was written later than the damage: drop it.
                for later in bases[i + 1 :]:
                    for kind in SEGMENT_FILE_KINDS:
                        (self.directory / f"{later:020d}.{kind}").unlink(missing_ok=True)
                break
        if not segments:
            start = read_number(self.directory / LOG_START_OFFSET_FILE, 0)
            segments.append(LogSegment.create(self.directory, start, self.config, _now_ms()))
        self._set_segments(segments)

    def _rebuild_producer_state(self) -> None:
        """Latest usable snapshot, then replay the batches written after it: open transactions,
        and the aborted-transaction index entries of markers whose entry was lost."""
        end = self.log_end_offset
        snapshot_offset = self.producer_state.load_latest_snapshot(end)
        replay_from = snapshot_offset if snapshot_offset is not None else self._segments[0].base_offset
        segments, _ = self._view
        for segment in segments:
            if segment.next_offset <= replay_from:
                continue
            location = segment.find_batch(replay_from)
            if location is None:
                continue
            for batch in segment.walk(location.position):
                self._replay_producer_batch(batch.fields, segment, lambda s=segment, b=batch: s.read_batch(b))

    def _replay_producer_batch(
        self, fields: HeaderFields, segment: LogSegment, raw: Callable[[], bytes | memoryview]
    ) -> None:
        """Apply a batch already in the log (recovery, or a follower's append) to the producer state."""
        producer_id = fields[F_PRODUCER_ID]
        if producer_id < 0:
            return
        if fields[F_ATTRIBUTES] & CONTROL_FLAG:
            marker = read_txn_marker(read_batch_header(memoryview(raw()), 0))
            if marker is not None:
                commit, coordinator_epoch = marker
                self._complete_txn(
                    segment,
                    producer_id,
                    fields[F_PRODUCER_EPOCH],
                    coordinator_epoch,
                    fields[F_BASE_OFFSET],
                    commit,
                    fields[F_MAX_TIMESTAMP],
                )
            return
        first_sequence = fields[F_BASE_SEQUENCE]
        last_sequence = (
            increment_sequence(first_sequence, fields[F_LAST_OFFSET_DELTA]) if first_sequence >= 0 else -1
        )
        base_offset = fields[F_BASE_OFFSET]
        self.producer_state.replay_batch(
            producer_id,
            fields[F_PRODUCER_EPOCH],
            BatchMetadata(
                first_sequence,
                last_sequence,
                base_offset,
                base_offset + fields[F_LAST_OFFSET_DELTA],
                fields[F_MAX_TIMESTAMP],
            ),
            transactional=bool(fields[F_ATTRIBUTES] & TRANSACTIONAL_FLAG),
        )

    def _complete_txn(
        self,
        segment: LogSegment,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        marker_offset: int,
        commit: bool,
        timestamp: int,
    ) -> None:
        """A marker was appended to `segment`: close the transaction; an abort goes in the index."""
        state = self.producer_state
        completed = state.complete_txn(
            producer_id, producer_epoch, coordinator_epoch, marker_offset, commit, timestamp
        )
        # As Kafka: a marker that closes no data (no open transaction) leaves nothing to abort, so nothing to index
        # (read_committed consumers would be told of an aborted transaction that has no records).
        if completed.aborted and completed.first_offset < marker_offset:
            self._may_have_aborts = True
            segment.txn_index.append(
                AbortedTxn(
                    producer_id, completed.first_offset, marker_offset, state.stable_offset_after(completed)
                )
            )

    # ---- segment list -------------------------------------------------------------------------

    def _set_segments(self, segments: list[LogSegment]) -> None:
        ordered = tuple(sorted(segments, key=lambda s: s.base_offset))
        # One assignment per attribute; readers use `segments_snapshot` which reads both consistently.
        self._view = (ordered, tuple(s.base_offset for s in ordered))
        self._segments, self._bases = self._view

    def segments_snapshot(self) -> tuple[tuple[LogSegment, ...], tuple[int, ...]]:
        return self._view

    @property
    def active_segment(self) -> LogSegment:
        return self._view[0][-1]

    @property
    def log_end_offset(self) -> int:
        return self._view[0][-1].next_offset

    def _schedule_delete(self, segment: LogSegment, now_ms: int) -> None:
        """Rename now, unlink later: a reader may still hold the segment from an older snapshot."""
        with contextlib.suppress(FileNotFoundError):
            segment.rename_suffix(DELETED_SUFFIX)
        self._pending_deletes.append((now_ms + self.config.file_delete_delay_ms, segment))

    def _delete_expired_files(self, now_ms: int, *, everything: bool = False) -> None:
        keep = []
        for deadline, segment in self._pending_deletes:
            if everything or deadline <= now_ms:
                segment.delete_files()
            else:
                keep.append((deadline, segment))
        self._pending_deletes = keep

    def _should_roll(self, segment: LogSegment, incoming_bytes: int, last_offset: int, now_ms: int) -> bool:
        if segment.is_empty:
            return False
        return (
            segment.size + incoming_bytes > self.config.segment_bytes
            or now_ms - segment.created_ms > self.config.segment_ms - self._roll_jitter_ms
            or segment.indexes_full
            or last_offset - segment.base_offset > MAX_RELATIVE_OFFSET
        )

    def roll(self, now_ms: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset."""
        now_ms = _now_ms() if now_ms is None else now_ms
        with self._lock:
            current = self.active_segment
            if current.is_empty:
                return current
            current.on_become_inactive()
            new_segment = LogSegment.create(self.directory, current.next_offset, self.config, now_ms)
            self._set_segments([*self._segments, new_segment])
            self.producer_state.write_snapshot(new_segment.base_offset)
            if self.config.segment_jitter_ms:
                self._roll_jitter_ms = random.randint(0, self.config.segment_jitter_ms)
            return new_segment

    # ---- appends ------------------------------------------------------------------------------

    def _validate_client_batch(
        self, batch: BatchView, data: bytearray, now_ms: int, from_coordinator: bool = False
    ) -> memoryview | None:
        """Kafka's checks of a producer's batch (UnifiedLog.analyzeAndValidateRecords, LogValidator), in
        its order and with its error codes; `data` is the request's bytes, this batch their end. Returns
        the batch's records section, uncompressed, when the topic's compression.type recompresses it."""
        batch.check_crc()
        if batch.size > self.config.max_message_bytes:
            raise RecordTooLargeError(
                f"batch of {batch.size} bytes exceeds max.message.bytes={self.config.max_message_bytes}"
            )
        if batch.record_count <= 0 or batch.record_count != batch.last_offset_delta + 1:
            raise InvalidRecordError(
                f"record count {batch.record_count} does not match lastOffsetDelta {batch.last_offset_delta}"
            )
        if batch.is_control:
            raise InvalidRecordError("clients may not write control batches")
        if batch.has_producer_id and batch.base_sequence < 0 and not from_coordinator:
            raise InvalidRecordError("an idempotent batch needs a base sequence")
        if batch.is_transactional and not batch.has_producer_id:
            raise InvalidRecordError("a transactional batch needs a producer id")
        codec = batch.codec
        section: bytes | bytearray = data  # the records, read in place when not compressed
        records_at = batch.position + HEADER_SIZE
        if codec != Codec.NONE:
            limit = max(MAX_DECOMPRESSED_BATCH_BYTES, self.config.max_message_bytes)
            try:
                section = decompress(codec, batch.records_payload(), limit)
            except DecompressedTooLargeError as exc:
                raise RecordTooLargeError(str(exc)) from None
            records_at = 0
        compacted = self.config.compacted
        shape = check_records(section, batch.record_count, start=records_at, collect_keyless=compacted)
        out_of_range = self._timestamps_out_of_range(batch, shape, now_ms)
        if out_of_range and not self.config.log_append_time and shape.timestamp_deltas is not None:
            # Many records: which ones fail is read from their timestamps at once, none decoded.
            self._refuse_timestamps(batch, shape.timestamp_deltas, now_ms, shape.keyless)
            out_of_range = False
        if compacted and shape.keyless and not out_of_range:
            where = f"{self.topic}-{self.partition}"
            message = f"Compacted topic cannot accept message without key in topic partition {where}"
            self._raise_record_errors([(index, message) for index in shape.keyless])
        if out_of_range:
            self._refuse_records(batch, decode_records(batch), now_ms)
        target = CODEC_BY_TOPIC_NAME.get(self.config.compression_type)
        if target is None or target == codec:
            return None
        # The records as they are, recompressed whole: no record is decoded (a small batch of a million tiny
        # records would otherwise cost seconds of CPU here).
        return memoryview(section)[records_at : batch.end if codec == Codec.NONE else len(section)]

    def _timestamps_out_of_range(self, batch: BatchView, shape: RecordsShape, now_ms: int) -> bool:
        """Whether some record may break message.timestamp.before/after.max.ms (or, on a LogAppendTime
        topic, the batch claims LogAppendTime itself): then each record is looked at."""
        if self.config.log_append_time:
            return batch.is_log_append_time
        if batch.is_log_append_time:
            lowest = highest = batch.max_timestamp
        else:
            lowest = batch.base_timestamp + shape.min_timestamp_delta
            highest = batch.base_timestamp + shape.max_timestamp_delta
        return (
            now_ms - lowest > self.config.message_timestamp_before_max_ms
            or highest - now_ms > self.config.message_timestamp_after_max_ms
        )

    def _refuse_records(self, batch: BatchView, records: list[Record], now_ms: int) -> None:
        """LogValidator.validateRecord for each record, then processRecordErrors: a missing key on a
        compacted topic before the timestamp; INVALID_TIMESTAMP if any timestamp failed, else
        INVALID_RECORD, naming every failed record (Kafka's messages, word for word)."""
        where = f"{self.topic}-{self.partition}"
        before = self.config.message_timestamp_before_max_ms
        after = self.config.message_timestamp_after_max_ms
        errors: list[tuple[int, str]] = []
        timestamp_failed = False
        for index, record in enumerate(records):
            offset = batch.base_offset + (record.offset_delta or 0)
            timestamp = batch.max_timestamp if batch.is_log_append_time else record.timestamp
            if self.config.compacted and record.key is None:
                errors.append(
                    (index, f"Compacted topic cannot accept message without key in topic partition {where}")
                )
            elif self.config.log_append_time:
                timestamp_failed = True
                errors.append(
                    (
                        index,
                        f"Invalid timestamp type in message {_describe_record(offset, timestamp, record)}. "
                        "Producer should not set timestamp type to LogAppendTime.",
                    )
                )
            elif timestamp != -1 and (now_ms - timestamp > before or timestamp - now_ms > after):
                timestamp_failed = True
                errors.append(
                    (
                        index,
                        f"Timestamp {timestamp} of message with offset {offset} is out of range. The "
                        f"timestamp should be within [{now_ms - before}, {now_ms + after}]",
                    )
                )
        if timestamp_failed:
            raise InvalidTimestampError(
                "One or more records have been rejected due to invalid timestamp",
                record_errors=errors[:MAX_LISTED_RECORD_ERRORS],
            )
        if errors:
            self._raise_record_errors(errors)

    @staticmethod
    def _raise_record_errors(errors: list[tuple[int, str]]) -> None:
        shown = ", ".join(f"RecordError(batchIndex={index}, message='{text}')" for index, text in errors[:3])
        raise InvalidRecordError(
            f"One or more records have been rejected due to {len(errors)} record errors in total, "
            f"and only showing the first three errors at most: [{shown}]",
            record_errors=errors[:MAX_LISTED_RECORD_ERRORS],
        )

    def _refuse_timestamps(
        self, batch: BatchView, deltas: "np.ndarray", now_ms: int, keyless: list[int]
    ) -> None:
        """`_refuse_records` for a CreateTime topic from every record's timestamp delta: INVALID_TIMESTAMP
        naming the records out of range (and, on a compacted topic, those without a key, whose missing key
        is what is named), if a record with a key is out of range."""
        # Imported where first used, as broker.wire.records.validation does: not when the broker starts.
        import numpy as np

        before = self.config.message_timestamp_before_max_ms
        after = self.config.message_timestamp_after_max_ms
        timestamps = batch.base_timestamp + deltas
        out_of_range = (timestamps != -1) & ((now_ms - timestamps > before) | (timestamps - now_ms > after))
        without_key = np.zeros(len(deltas), dtype=bool)
        without_key[keyless] = True
        if not (out_of_range & ~without_key).any():
            return
        where = f"{self.topic}-{self.partition}"
        errors = [
            (index, f"Compacted topic cannot accept message without key in topic partition {where}")
            if without_key[index]
            else (
                index,
                f"Timestamp {int(timestamps[index])} of message with offset {batch.base_offset + index} is "
                f"out of range. The timestamp should be within [{now_ms - before}, {now_ms + after}]",
            )
            for index in np.flatnonzero(out_of_range | without_key)[:MAX_LISTED_RECORD_ERRORS].tolist()
        ]
        raise InvalidTimestampError(
            "One or more records have been rejected due to invalid timestamp", record_errors=errors
        )

    def _recompress(self, batch: BatchView, section: memoryview, codec: Codec) -> bytes:
        level = compression_level(self.config, self.config.compression_type)
        rebuilt = with_records(batch, int(codec), compress(codec, section, level))
        if len(rebuilt) > self.config.max_message_bytes:
            raise RecordTooLargeError(f"recompressed batch of {len(rebuilt)} bytes exceeds max.message.bytes")
        return rebuilt

    def _check_coordinator_epoch(
        self, pending: dict[int, ProducerEntry], producer_id: int, epoch: int
    ) -> None:
        """A coordinator's write for a producer (TxnOffsetCommit) is not checked for sequence, but a
        fenced producer's epoch is still refused, as Kafka does for AppendOrigin.COORDINATOR."""
        entry = pending.get(producer_id) or self.producer_state.producers.get(producer_id)
        if entry is not None and epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"producer {producer_id} epoch {epoch} is older than {entry.epoch}"
            )

    def append_as_leader(
        self, records: bytes | memoryview, *, leader_epoch: int, now_ms: int, from_coordinator: bool = False
    ) -> AppendResult:
        """Validate, assign offsets and append a produce request's batches (all or nothing).

        `from_coordinator`: the group coordinator's transactional offset commit (Kafka's
        AppendOrigin.COORDINATOR): its batches carry the producer's id and epoch but no sequence,
        and are not checked against the producer's sequence (the transaction coordinator checked
        the producer); they still open the producer's transaction here."""
        if not records:
            return AppendResult(-1, -1, -1, self.log_start_offset, 0, 0, -1)
        data = bytearray(records)
        del data[whole_batches_length(data) :]
        batches = list(iter_batches(data))
        if not batches:
            raise InvalidRecordError("Record batch has no batches at all")
        if len(batches) > 1:
            # LogValidator: a v2 append is one batch (clients send one per partition and request).
            raise InvalidRecordError(f"{len(batches)} record batches in one append; a producer sends one")
        target_codec = CODEC_BY_TOPIC_NAME.get(self.config.compression_type)
        rebuilt: list[bytes | None] = []
        transactional = batches[0].is_transactional
        for batch in batches:
            section = self._validate_client_batch(batch, data, now_ms, from_coordinator)
            if target_codec is not None and section is not None:
                rebuilt.append(self._recompress(batch, section, target_codec))
            else:
                rebuilt.append(None)
        if any(part is not None for part in rebuilt):
            data = bytearray().join(
                part if part is not None else batch.raw()
                for part, batch in zip(rebuilt, batches, strict=True)
            )
            batches = list(iter_batches(data))
        del rebuilt

        with self._lock:
            log_append_time = self.config.log_append_time
            next_offset = self.log_end_offset
            first_offset = next_offset
            pending: dict[int, ProducerEntry] = {}
            placed: list[tuple[int, HeaderFields]] = []
            record_count = 0
            max_timestamp = -1
            for batch in batches:
                base_offset = next_offset
                last_offset = base_offset + batch.last_offset_delta
                if batch.has_producer_id:
                    last_sequence = batch.last_sequence
                    if from_coordinator:
                        self._check_coordinator_epoch(pending, batch.producer_id, batch.producer_epoch)
                        duplicate = None
                    else:
                        duplicate = self.producer_state.check(
                            pending,
                            batch.producer_id,
                            batch.producer_epoch,
                            batch.base_sequence,
                            last_sequence,
                            transactional,
                        )
                    if duplicate is not None:
                        return AppendResult(
                            duplicate.first_offset,
                            duplicate.last_offset,
                            -1,
                            self.log_start_offset,
                            duplicate.last_offset - duplicate.first_offset + 1,
                            0,
                            duplicate.max_timestamp,
                        )
                    ProducerStateManager.record(
                        pending,
                        self.producer_state.producers,
                        batch.producer_id,
                        batch.producer_epoch,
                        BatchMetadata(
                            batch.base_sequence,
                            last_sequence,
                            base_offset,
                            last_offset,
                            now_ms if log_append_time else batch.max_timestamp,
                        ),
                        transactional,
                    )
                set_base_offset(data, batch.position, base_offset)
                set_partition_leader_epoch(data, batch.position, leader_epoch)
                if log_append_time:
                    set_log_append_time(data, batch.position, now_ms)
                placed.append((batch.position, HEADER.unpack_from(data, batch.position)))
                record_count += batch.record_count
                max_timestamp = max(max_timestamp, now_ms if log_append_time else batch.max_timestamp)
                next_offset = last_offset + 1

            segment = self.active_segment
            if self._should_roll(segment, len(data), next_offset - 1, now_ms):
                segment = self.roll(now_ms)
            self._append_to(segment, data, placed, now_ms)
            self.leader_epochs.assign(leader_epoch, first_offset)
            self.producer_state.commit(pending)
        self._after_append(record_count)
        return AppendResult(
            first_offset,
            next_offset - 1,
            now_ms if log_append_time else -1,
            self.log_start_offset,
            record_count,
            len(data),
            max_timestamp,
        )

    def _append_to(
        self,
        segment: LogSegment,
        data: bytes | bytearray,
        placed: list[tuple[int, HeaderFields]],
        now_ms: int,
    ) -> None:
        try:
            segment.append(data, placed, now_ms)
        except LogStorageError as error:
            if self.on_storage_error is not None:
                self.on_storage_error(self, error)
            raise

    def append_as_follower(self, records: bytes | memoryview) -> None:
        """Append batches that already carry their offsets (replication); offsets must follow the log end."""
        data = bytes(records)
        batches = list(iter_batches(data))
        if not batches:
            return
        with self._lock:
            expected = self.log_end_offset
            placed: list[tuple[int, HeaderFields]] = []
            for batch in batches:
                batch.check_crc()
                if batch.base_offset < expected:
                    raise InvalidRecordError(
                        f"follower batch at offset {batch.base_offset} is below the log end {expected}"
                    )
                expected = batch.next_offset
                placed.append((batch.position, HEADER.unpack_from(data, batch.position)))
            now_ms = _now_ms()
            segment = self.active_segment
            if self._should_roll(segment, len(data), expected - 1, now_ms):
                segment = self.roll(now_ms)
            self._append_to(segment, data, placed, now_ms)
            for batch in batches:
                self.leader_epochs.assign(batch.partition_leader_epoch, batch.base_offset)
            for batch in batches:
                self._replay_producer_batch(
                    HEADER.unpack_from(data, batch.position), segment, lambda b=batch: b.raw()
                )
        self._after_append(sum(batch.record_count for batch in batches))

    def append_txn_marker(
        self,
        *,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        leader_epoch: int,
        now_ms: int,
    ) -> int:
        """Append a coordinator's commit/abort marker as leader; returns its offset.

        Raises InvalidProducerEpochError for a stale producer epoch and
        TransactionCoordinatorFencedError for a stale coordinator epoch (nothing is written)."""
        with self._lock:
            self.producer_state.check_marker(producer_id, producer_epoch, coordinator_epoch)
            offset = self.log_end_offset
            data = bytearray(
                build_txn_marker(
                    producer_id=producer_id,
                    producer_epoch=producer_epoch,
                    commit=commit,
                    coordinator_epoch=coordinator_epoch,
                    timestamp_ms=now_ms,
                    base_offset=offset,
                    partition_leader_epoch=leader_epoch,
                )
            )
            if self.config.log_append_time:
                set_log_append_time(data, 0, now_ms)
            segment = self.active_segment
            if self._should_roll(segment, len(data), offset, now_ms):
                segment = self.roll(now_ms)
            self._append_to(segment, data, [(0, HEADER.unpack_from(data, 0))], now_ms)
            self.leader_epochs.assign(leader_epoch, offset)
            self._complete_txn(
                segment, producer_id, producer_epoch, coordinator_epoch, offset, commit, now_ms
            )
        self._after_append(1)
        return offset

    # ---- transactions: the last stable offset and aborted transactions ------------------------

    @property
    def last_stable_offset(self) -> int:
        """min(first offset of every transaction not yet both closed and replicated, high watermark)."""
        high_watermark = self.high_watermark
        first_unstable = self.producer_state.first_unstable_offset(high_watermark)
        if first_unstable is None or first_unstable > high_watermark:
            return high_watermark
        return max(first_unstable, self.log_start_offset)

    def collect_aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound), for a read_committed Fetch.

        Markers follow their data, so only segments from the one holding `fetch_offset` can list
        them; as in Kafka, the search ends at an entry stored with a last stable offset beyond
        `upper_bound` (every transaction overlapping the range had closed by then)."""
        if not self._may_have_aborts:
            return []
        segments, bases = self._view
        found: list[AbortedTxn] = []
        for segment in segments[max(0, bisect_right(bases, fetch_offset) - 1) :]:
            entries = segment.txn_index.entries
            if not entries:
                continue
            found.extend(segment.txn_index.collect(fetch_offset, upper_bound))
            if entries[-1].last_stable_offset > upper_bound:
                break
        return found

    # ---- high watermark (replicated partitions) --------------------------------------------------

    def advance_high_watermark(self, offset: int) -> bool:
        """Move the high watermark forward to `offset` (never past the log end, never back).

        Wakes long-polling fetches: with replicas, consumers can only read what the watermark covers.
        """
        offset = min(offset, self.log_end_offset)
        if offset <= self.high_watermark:
            return False
        self.high_watermark = offset
        if self.producer_state.unreplicated:
            self.producer_state.retire_replicated(offset)
        for listener in list(self._listeners):
            listener()
        return True

    def restore_high_watermark(self, stored: int | None) -> None:
        """Adopt the checkpointed high watermark, `stored` (None: never checkpointed): a replica must not
        expose its uncommitted tail."""
        stored = self.log_start_offset if stored is None else stored
        self.high_watermark = max(self.log_start_offset, min(stored, self.log_end_offset))

    def _after_append(self, record_count: int) -> None:
        self._unflushed_messages += record_count
        if self._unflushed_messages >= self.config.flush_messages:
            self.flush()
        for listener in list(self._listeners):
            listener()

    def add_append_listener(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def remove_append_listener(self, callback: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(callback)

    # ---- reads --------------------------------------------------------------------------------

    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_message: bool = True,
    ) -> bytes:
        """Whole batches from the one holding `fetch_offset`, up to `max_bytes`, below `max_offset`."""
        segments, bases = self._view
        log_end_offset = segments[-1].next_offset
        if fetch_offset < self.log_start_offset or fetch_offset > log_end_offset:
            raise OffsetOutOfRangeError(
                f"offset {fetch_offset} is outside [{self.log_start_offset}, {log_end_offset}]"
            )
        limit = log_end_offset if max_offset is None else min(max_offset, log_end_offset)
        if fetch_offset >= limit:
            return b""
        slot = max(0, bisect_right(bases, fetch_offset) - 1)
        parts: list[bytes] = []
        remaining = max_bytes
        while slot < len(segments):
            segment = segments[slot]
            location = segment.find_batch(fetch_offset)
            if location is None:
                slot += 1
                continue
            if location.base_offset >= limit:
                break
            start = location.position
            if limit >= segment.next_offset:
                hard_end = segment.size
            else:
                limit_location = segment.find_batch(limit)
                hard_end = limit_location.position if limit_location is not None else segment.size
                if hard_end <= start:
                    break
            if hard_end - start <= remaining:
                end = hard_end
            else:
                end = segment.end_of_batches_within(start, start + remaining)
                if end == start:
                    if min_one_message and not parts:
                        end = location.end
                    else:
                        break
            parts.append(segment.read(start, end))
            remaining -= end - start
            if end < segment.size or remaining <= 0:
                break
            fetch_offset = segment.next_offset
            slot += 1
        if len(parts) == 1:
            return parts[0]
        return b"".join(parts)

    def _first_record_at_or_after(
        self, segment: LogSegment, start_offset: int, timestamp_ms: int
    ) -> tuple[int, int] | None:
        location = segment.find_batch(start_offset)
        if location is None:
            return None
        for candidate in segment.walk(location.position):
            fields = candidate.fields
            if fields[F_MAX_TIMESTAMP] < timestamp_ms or fields[F_RECORD_COUNT] == 0:
                continue
            batch = read_batch_header(memoryview(segment.read_batch(candidate)), 0)
            for record in decode_records(batch):
                offset = batch.base_offset + (record.offset_delta or 0)
                if offset < start_offset:
                    continue
                record_timestamp = batch.max_timestamp if batch.is_log_append_time else record.timestamp
                if record_timestamp is not None and record_timestamp >= timestamp_ms:
                    return offset, record_timestamp
        return None

    def legacy_offsets_before(self, timestamp_ms: int, max_num_offsets: int, now_ms: int) -> list[int]:
        """ListOffsets v0 as Kafka answered it (`Log.legacyFetchOffsetsBefore`), newest first: the
        segments' base offsets (the log start for the first) and, when the active segment holds
        records, the log end offset. -1 (latest) starts from the newest, -2 (earliest) from the
        oldest, a timestamp from the newest whose file was last modified at or before it (the log
        end counting as modified now); at most `max_num_offsets` (all when negative)."""
        segments, _ = self._view
        entries = [max(segment.base_offset, self.log_start_offset) for segment in segments]
        if segments[-1].size > 0:
            entries.append(segments[-1].next_offset)
        if timestamp_ms == -1:
            start = len(entries) - 1
        elif timestamp_ms == -2:
            start = 0
        else:

            def modified_ms(index: int) -> int:
                return now_ms if index == len(segments) else _last_modified_ms(segments[index])

            start = len(entries) - 1
            while start >= 0 and modified_ms(start) > timestamp_ms:
                start -= 1
        wanted = start + 1 if max_num_offsets < 0 else min(max_num_offsets, start + 1)
        return sorted(entries[start - wanted + 1 : start + 1], reverse=True)

    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record whose timestamp is >= `timestamp_ms`."""
        segments, _ = self._view
        for segment in segments:
            if segment.max_timestamp < timestamp_ms or segment.next_offset <= self.log_start_offset:
                continue
            start = max(segment.time_index.lookup(timestamp_ms), self.log_start_offset, segment.base_offset)
            found = self._first_record_at_or_after(segment, start, timestamp_ms)
            if found is not None:
                return found
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record carrying the partition's largest timestamp."""
        segments, _ = self._view
        best: LogSegment | None = None
        for segment in segments:
            if segment.is_empty or segment.next_offset <= self.log_start_offset:
                continue
            if best is None or segment.max_timestamp > best.max_timestamp:
                best = segment
        if best is None:
            return None
        start = max(best.offset_of_max_timestamp, self.log_start_offset)
        found = self._first_record_at_or_after(best, start, best.max_timestamp)
        if found is None:
            return start, best.max_timestamp
        return found

    def end_offset_for_leader_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """(epoch, end offset) with Kafka's OffsetForLeaderEpoch semantics."""
        return self.leader_epochs.end_offset_for(leader_epoch, self.log_end_offset)

    def size_bytes(self) -> int:
        return sum(segment.size for segment in self._view[0])

    # ---- deletion, truncation, retention ------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: move the log start forward (-1 means the high watermark); returns the new start."""
        if offset == -1:
            offset = self.high_watermark
        if offset < 0 or offset > self.high_watermark:
            raise OffsetOutOfRangeError(
                f"cannot delete records before {offset}: high watermark is {self.high_watermark}"
            )
        with self._lock:
            if offset > self.log_start_offset:
                self._set_log_start_offset(offset)
                self._delete_segments_below_log_start(_now_ms())
        return self.log_start_offset

    def _set_log_start_offset(self, offset: int) -> None:
        self.log_start_offset = offset
        write_number(self.directory / LOG_START_OFFSET_FILE, offset)
        self.leader_epochs.truncate_from_start(offset)

    def _delete_segments_below_log_start(self, now_ms: int) -> int:
        segments = list(self._segments)
        doomed = [
            segment
            for segment, following in itertools.pairwise(segments)
            if following.base_offset <= self.log_start_offset
        ]
        if doomed:
            self._set_segments(segments[len(doomed) :])
            for segment in doomed:
                self._schedule_delete(segment, now_ms)
        return len(doomed)

    def truncate_to(self, offset: int) -> None:
        """Remove every batch from the one holding `offset` to the end (a diverged follower)."""
        with self._lock:
            if offset >= self.log_end_offset:
                return
            self.truncations += 1
            now_ms = _now_ms()
            keep = [s for s in self._segments if s.base_offset < offset]
            drop = [s for s in self._segments if s.base_offset >= offset]
            # Rename the dropped files first: a new segment may reuse the first one's name.
            for segment in drop:
                self._schedule_delete(segment, now_ms)
            if keep:
                keep[-1].truncate_to(offset)
                self._set_segments(keep)
                if self.log_end_offset < self.log_start_offset:
                    self._set_log_start_offset(self.log_end_offset)
            else:
                # Nothing below the offset survives: start over there, as Kafka's truncateFullyAndStartAt.
                self._set_segments([LogSegment.create(self.directory, offset, self.config, now_ms)])
                self._set_log_start_offset(offset)
            end = self.log_end_offset
            self.high_watermark = min(self.high_watermark, end)
            self.leader_epochs.truncate_from_end(end)
            self.producer_state.truncate_snapshots_after(end)
            self._rebuild_producer_state()
            cleaner_checkpoint = self.directory / CLEANER_CHECKPOINT_FILE
            if read_number(cleaner_checkpoint, 0) > end:
                write_number(cleaner_checkpoint, end)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Drop every batch and restart the log at `offset` (a follower behind the leader's log start)."""
        with self._lock:
            self.truncations += 1
            now_ms = _now_ms()
            for segment in self._segments:
                self._schedule_delete(segment, now_ms)
            self._set_segments([LogSegment.create(self.directory, offset, self.config, now_ms)])
            self._set_log_start_offset(offset)
            self.high_watermark = offset
            # Nothing before `offset` is ours any more: forget every epoch and producer snapshot.
            self.leader_epochs.truncate_from_end(-1)
            self.producer_state.truncate_snapshots_after(-1)
            self._rebuild_producer_state()
            write_number(self.directory / CLEANER_CHECKPOINT_FILE, offset)

    def apply_retention(self, now_ms: int, producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> int:
        """Delete whole segments past retention.ms / retention.bytes or below the log start, and forget the
        producers idle longer than producer.id.expiration.ms; returns the segments deleted."""
        with self._lock:
            deleted = self._delete_segments_below_log_start(now_ms)
            if self.config.deletes:
                deleted += self._delete_retained_segments(now_ms)
            self._delete_expired_files(now_ms)
            self.producer_state.remove_expired(now_ms, producer_id_expiration_ms)
        return deleted

    def _delete_retained_segments(self, now_ms: int) -> int:
        segments = list(self._segments)
        retention_ms = self.config.retention_ms
        retention_bytes = self.config.retention_bytes
        excess_bytes = sum(s.size for s in segments) - retention_bytes if retention_bytes >= 0 else 0
        doomed: list[LogSegment] = []
        for i, segment in enumerate(segments):
            if segment.is_empty:
                break
            end_offset = segments[i + 1].base_offset if i + 1 < len(segments) else segment.next_offset
            if end_offset > self.high_watermark:
                break  # never delete what consumers cannot see yet
            too_old = retention_ms >= 0 and now_ms - segment.max_timestamp > retention_ms
            too_big = retention_bytes >= 0 and excess_bytes - segment.size >= 0
            if not (too_old or too_big):
                break
            doomed.append(segment)
            excess_bytes -= segment.size
        if not doomed:
            return 0
        if len(doomed) == len(segments):
            self.roll(now_ms)
            segments = list(self._segments)
        self._set_segments(segments[len(doomed) :])
        for segment in doomed:
            self._schedule_delete(segment, now_ms)
        new_start = self._segments[0].base_offset
        if new_start > self.log_start_offset:
            self._set_log_start_offset(new_start)
        return len(doomed)

    def replace_segments(self, old: list[LogSegment], new: LogSegment | None, now_ms: int) -> bool:
        """Swap a run of segments for their compacted replacement (a `.swap` segment), atomically.

        Returns False, changing nothing, when the run is no longer in the log (retention or a
        truncation got there first).
        """
        with self._lock:
            current = list(self._segments)
            positions = [i for i, segment in enumerate(current) if any(segment is o for o in old)]
            if len(positions) != len(old) or positions != list(range(positions[0], positions[0] + len(old))):
                return False
            replacement = [] if new is None else [new]
            self._set_segments(current[: positions[0]] + replacement + current[positions[-1] + 1 :])
            # Old files become ".deleted" before the swap file takes the first one's name.
            for segment in old:
                self._schedule_delete(segment, now_ms)
            if new is not None:
                new.rename_suffix("")
            return True

    # ---- config, durability, lifecycle --------------------------------------------------------

    def update_config(self, config: LogConfig) -> None:
        self.config = config
        for segment in self._segments:
            segment.index_interval_bytes = config.index_interval_bytes

    def flush(self) -> None:
        """fsync every segment with unwritten data, then advance the recovery point."""
        with self._lock:
            end = self.log_end_offset
            for segment in self._segments:
                segment.flush()
            write_number(self.directory / RECOVERY_POINT_FILE, end)
            self._unflushed_messages = 0
            self._last_flush_ms = _now_ms()

    def flush_if_due(self, now_ms: int) -> None:
        if self._unflushed_messages and now_ms - self._last_flush_ms >= self.config.flush_ms:
            self.flush()

    def close(self, *, discard: bool = False) -> None:
        """Close the files; unless `discard` (the log is about to be deleted), first make the next
        open quick: flushed data, a producer snapshot, the log start and the clean-shutdown marker."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if not discard:
                self.flush()
                self.producer_state.write_snapshot(self.log_end_offset)
                write_number(self.directory / LOG_START_OFFSET_FILE, self.log_start_offset)
            for segment in self._segments:
                segment.close()
            self._delete_expired_files(0, everything=True)
            if not discard:
                (self.directory / CLEAN_SHUTDOWN_FILE).touch()

    @property
    def append_lock(self) -> threading.RLock:
        """Held by every append and truncation: holding it keeps the log as it is."""
        return self._lock

    def match_start_of(self, other: "PartitionLog") -> None:
        """Give this copy `other`'s log start and high watermark (a future log about to replace it)."""
        with self._lock:
            if other.log_start_offset > self.log_start_offset:
                self._set_log_start_offset(other.log_start_offset)
                self._delete_segments_below_log_start(_now_ms())
            self.high_watermark = min(other.high_watermark, self.log_end_offset)

    def release_files(self) -> None:
        """Close every file (its directory is about to be renamed away); `take_over` must follow."""
        with self._lock:
            for segment in self._segments:
                segment.close()
            self._delete_expired_files(0, everything=True)

    def take_over(self, replacement: "PartitionLog") -> None:
        """Become `replacement` (the same partition, opened from another directory) after
        `release_files`: its files, segments and state replace this log's. The object stays, so every
        holder of it (the replica, fetch waiters' listeners) serves from the new directory at once."""
        with self._lock:
            self.directory = replacement.directory
            self.log_start_offset = replacement.log_start_offset
            self.high_watermark = min(self.high_watermark, replacement.log_end_offset)
            self._pending_deletes = []
            self._set_segments(list(replacement._segments))
            self.producer_state = replacement.producer_state
            # Ours, not the reopened copy's: opening drops an epoch no batch carries yet (a new leader's).
            replacement.leader_epochs.copy_from(self.leader_epochs)
            self.leader_epochs = replacement.leader_epochs
            self._may_have_aborts = replacement._may_have_aborts
            self._unflushed_messages = 0

    def delete(self) -> None:
        with self._lock:
            self._closed = True
            for segment in self._segments:
                segment.close()
            self._delete_expired_files(0, everything=True)
            shutil.rmtree(self.directory, ignore_errors=True)

    def __repr__(self) -> str:
        return (
            f"PartitionLog({self.topic}-{self.partition}, start={self.log_start_offset}, "
            f"end={self.log_end_offset}, segments={len(self._segments)})"
        )


def _last_modified_ms(segment: LogSegment) -> int:
    """When the segment's file was last written (a segment deleted meanwhile counts as never)."""
    try:
        return int(os.stat(segment.log_path).st_mtime * 1000)
    except FileNotFoundError:
        return -1
