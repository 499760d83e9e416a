"""Log compaction: keep the latest record per key in every segment but the active one.

Runs in a worker thread. It reads segments through their own file descriptors, writes the result to
`<base>.log.cleaned`, renames it to `.swap` once complete and durable, and only then, under the log's
lock, swaps it in for the old segments (which become `.deleted`). A crash at any point leaves either
the old segments or a complete `.swap` that recovery finishes installing.

Transactions, as Kafka's cleaner: only what lies below the last stable offset is cleaned; batches of
aborted transactions are removed (and never shadow a key); committed data is compacted like any
other; a commit/abort marker stays while any batch of its transaction does, and afterwards until
delete.retention.ms has passed (so a consumer that read the data also sees the marker). The cleaned
segment keeps its source segments' aborted-transaction entries.
"""

import itertools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from broker.log.checkpoint import read_number, write_number
from broker.log.partition_log import CLEANER_CHECKPOINT_FILE, PartitionLog
from broker.log.segment import CLEANED_SUFFIX, MAX_RELATIVE_OFFSET, SWAP_SUFFIX, LogSegment
from broker.wire.records.batch import HEADER, BatchView, read_batch_header
from broker.wire.records.records import Record, assemble_batch, decode_records, decode_records_with_spans

# Cleaned output is written in chunks of about this size.
WRITE_BUFFER_BYTES = 1 << 20


@dataclass(frozen=True)
class CleanerStats:
    first_dirty_offset: int
    end_offset: int  # the first offset not cleaned (next clean starts its dirty section here)
    segments_cleaned: int
    segments_written: int
    bytes_read: int
    bytes_written: int
    records_read: int
    records_retained: int
    tombstones_removed: int
    duration_ms: float


@dataclass
class _Counters:
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_retained: int = 0
    tombstones_removed: int = 0
    oldest_retained_tombstone_ms: int | None = None  # max timestamp of the oldest segment keeping one
    tombstone_retained_in_segment: bool = False


@dataclass
class _Transactions:
    """Aborted ranges per producer (from the aborted-transaction index), and which producers' open
    transactions (in cleaning order) still have a batch in the cleaned output."""

    aborted: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    data_retained: dict[int, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, log: PartitionLog, start_offset: int, end_offset: int) -> "_Transactions":
        tracker = cls()
        for txn in log.collect_aborted_transactions(start_offset, end_offset):
            tracker.aborted.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
        return tracker

    def is_aborted(self, batch: BatchView) -> bool:
        if not batch.is_transactional or batch.is_control:
            return False
        ranges = self.aborted.get(batch.producer_id)
        return ranges is not None and any(first <= batch.base_offset <= last for first, last in ranges)


class _CleanAborted(Exception):
    """The log changed under the cleaner (truncated, deleted); try again next time."""


def first_dirty_offset(log: PartitionLog) -> int:
    return max(read_number(log.directory / CLEANER_CHECKPOINT_FILE, 0), log.log_start_offset)


def _cleanable_segments(log: PartitionLog, now_ms: int) -> tuple[list[LogSegment], int]:
    """Closed segments every consumer can see and older than min.compaction.lag.ms, and where they end."""
    segments, _ = log.segments_snapshot()
    cleanable: list[LogSegment] = []
    end_offset = segments[0].base_offset
    # Below the last stable offset only: an open transaction's data may still be aborted.
    stable = log.last_stable_offset
    for segment, following in itertools.pairwise(segments):
        if following.base_offset > stable:
            break
        if segment.max_timestamp > now_ms - log.config.min_compaction_lag_ms:
            break
        cleanable.append(segment)
        end_offset = following.base_offset
    return cleanable, end_offset


def _must_clean_for_max_lag(dirty: Sequence[LogSegment], now_ms: int, max_lag_ms: int) -> bool:
    return any(0 <= segment.created_ms < now_ms - max_lag_ms for segment in dirty)


def clean_log(log: PartitionLog, now_ms: int) -> CleanerStats | None:
    """Compact `log` if its policy says so and it is dirty enough; None when there was nothing to do."""
    if not log.config.compacted:
        return None
    started = time.monotonic()
    cleanable, end_offset = _cleanable_segments(log, now_ms)
    if not cleanable:
        return None
    start_dirty = min(first_dirty_offset(log), end_offset)
    dirty = [
        s
        for s, nxt in zip(cleanable, [*cleanable[1:], None], strict=True)
        if _ends_after(s, nxt, start_dirty)
    ]
    dirty_bytes = sum(s.size for s in dirty)
    total_bytes = sum(s.size for s in cleanable)
    ratio = dirty_bytes / total_bytes if total_bytes else 0.0
    due = (bool(dirty) and ratio >= log.config.min_cleanable_dirty_ratio) or _must_clean_for_max_lag(
        dirty, now_ms, log.config.max_compaction_lag_ms
    )
    # Like Kafka's delete horizon: a clean log is cleaned again once its tombstones may go.
    oldest_tombstone = log.oldest_retained_tombstone_ms
    tombstones_due = (
        oldest_tombstone is not None and oldest_tombstone < now_ms - log.config.delete_retention_ms
    )
    if not (due or tombstones_due):
        return None

    counters = _Counters()
    transactions = _Transactions.of(log, cleanable[0].base_offset, end_offset)
    latest_offsets = _build_offset_map(dirty, start_dirty, end_offset, transactions)
    tombstone_horizon = now_ms - log.config.delete_retention_ms
    groups = _group_segments(cleanable, log.config.segment_bytes, log.config.segment_index_bytes)
    written = 0
    try:
        for group in groups:
            written += _clean_group(
                log, group, latest_offsets, transactions, tombstone_horizon, now_ms, counters
            )
    except _CleanAborted:
        return None
    write_number(log.directory / CLEANER_CHECKPOINT_FILE, end_offset)
    log.oldest_retained_tombstone_ms = counters.oldest_retained_tombstone_ms
    return CleanerStats(
        first_dirty_offset=start_dirty,
        end_offset=end_offset,
        segments_cleaned=len(cleanable),
        segments_written=written,
        bytes_read=counters.bytes_read,
        bytes_written=counters.bytes_written,
        records_read=counters.records_read,
        records_retained=counters.records_retained,
        tombstones_removed=counters.tombstones_removed,
        duration_ms=(time.monotonic() - started) * 1000,
    )


def _ends_after(segment: LogSegment, following: LogSegment | None, offset: int) -> bool:
    end = following.base_offset if following is not None else segment.next_offset
    return end > offset


def _batches(segment: LogSegment, counters: _Counters) -> Iterator[tuple[bytes, BatchView]]:
    for location in segment.walk(0):
        raw = segment.read_batch(location)
        counters.bytes_read += len(raw)
        yield raw, read_batch_header(memoryview(raw), 0)


def _build_offset_map(
    dirty: Sequence[LogSegment], start_offset: int, end_offset: int, transactions: _Transactions
) -> dict[bytes, int]:
    latest: dict[bytes, int] = {}
    scratch = _Counters()
    for segment in dirty:
        for _, batch in _batches(segment, scratch):
            if batch.is_control or batch.last_offset < start_offset or batch.base_offset >= end_offset:
                continue
            if transactions.is_aborted(batch):
                continue  # aborted data never happened: it must not hide an older committed value
            for record in decode_records(batch):
                offset = batch.base_offset + (record.offset_delta or 0)
                if record.key is not None and start_offset <= offset < end_offset:
                    latest[record.key] = offset
    return latest


def _group_segments(
    segments: Sequence[LogSegment], max_bytes: int, max_index_bytes: int
) -> list[list[LogSegment]]:
    """Runs of neighbouring segments that fit in one segment once cleaned (judged by their current size)."""
    groups: list[list[LogSegment]] = []
    for segment in segments:
        if groups:
            group = groups[-1]
            size = sum(s.size for s in group) + segment.size
            index_bytes = sum(len(s.offset_index) for s in group) * 8 + len(segment.offset_index) * 8
            span = segment.next_offset - group[0].base_offset
            if size <= max_bytes and index_bytes < max_index_bytes and span <= MAX_RELATIVE_OFFSET:
                group.append(segment)
                continue
        groups.append([segment])
    return groups


def _retain(
    batch_records: list[Record],
    base_offset: int,
    latest_offsets: dict[bytes, int],
    drop_tombstones: bool,
    counters: _Counters,
) -> list[int]:
    """Indexes of the records that survive: the latest of their key, tombstones until their horizon."""
    retained = []
    for index, record in enumerate(batch_records):
        if record.key is None:
            continue  # a compacted log cannot place a record without a key
        offset = base_offset + (record.offset_delta or 0)
        latest = latest_offsets.get(record.key)
        if latest is not None and offset < latest:
            continue
        if record.value is None:
            if drop_tombstones:
                counters.tombstones_removed += 1
                continue
            counters.tombstone_retained_in_segment = True
        retained.append(index)
    return retained


def _rewrite_batch(
    log: PartitionLog,
    batch: BatchView,
    records: list[Record],
    encoded: bytes,
    spans: list[tuple[int, int]],
    retained: list[int],
) -> bytes | None:
    """The batch with only the `retained` records, keeping offsets, timestamps and producer fields.

    The kept records are copied as encoded: their deltas stay valid because the batch keeps its base
    offset and base timestamp.
    """
    if not retained:
        entry = log.producer_state.producers.get(batch.producer_id) if batch.has_producer_id else None
        is_last_for_producer = (
            entry is not None and entry.batches and entry.batches[-1].last_offset == batch.last_offset
        )
        if not is_last_for_producer:
            return None
        # An empty batch keeps the producer's last sequence visible after its records are gone.
    if batch.is_log_append_time or not retained:
        max_timestamp = batch.max_timestamp
    else:
        max_timestamp = max(records[i].timestamp or 0 for i in retained)
    return assemble_batch(
        b"".join(encoded[spans[i][0] : spans[i][1]] for i in retained),
        len(retained),
        attributes=batch.attributes,
        base_offset=batch.base_offset,
        last_offset_delta=batch.last_offset_delta,
        base_timestamp=batch.base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        partition_leader_epoch=batch.partition_leader_epoch,
    )


def _keep_marker(
    batch: BatchView, raw: bytes, transactions: _Transactions, past_horizon: bool, counters: _Counters
) -> bytes | None:
    """A marker stays while its transaction has data left, then until delete.retention.ms passed."""
    had_data = transactions.data_retained.pop(batch.producer_id, False)
    if had_data or not past_horizon:
        if not had_data:
            counters.tombstone_retained_in_segment = True  # clean again once it may go
        return raw
    return None


def _clean_group(
    log: PartitionLog,
    group: list[LogSegment],
    latest_offsets: dict[bytes, int],
    transactions: _Transactions,
    tombstone_horizon: int,
    now_ms: int,
    counters: _Counters,
) -> int:
    base_offset = group[0].base_offset
    cleaned = LogSegment.create(log.directory, base_offset, log.config, now_ms, suffix=CLEANED_SUFFIX)
    try:
        pending = bytearray()
        pending_batches: list[tuple[int, tuple]] = []
        for segment in group:
            drop_tombstones = segment.max_timestamp < tombstone_horizon
            counters.tombstone_retained_in_segment = False
            for raw, batch in _batches(segment, counters):
                if batch.is_control:
                    output: bytes | None = _keep_marker(batch, raw, transactions, drop_tombstones, counters)
                elif transactions.is_aborted(batch):
                    counters.records_read += batch.record_count
                    output = _rewrite_batch(log, batch, [], b"", [], [])
                else:
                    spans: list[tuple[int, int]] = []
                    records, encoded = decode_records_with_spans(batch, spans)
                    counters.records_read += len(records)
                    retained = _retain(records, batch.base_offset, latest_offsets, drop_tombstones, counters)
                    counters.records_retained += len(retained)
                    if len(retained) == len(records):
                        output = raw
                    else:
                        output = _rewrite_batch(log, batch, records, encoded, spans, retained)
                if output is None:
                    continue
                if batch.is_transactional and not batch.is_control and not transactions.is_aborted(batch):
                    transactions.data_retained[batch.producer_id] = True
                pending_batches.append((len(pending), HEADER.unpack_from(output, 0)))
                pending += output
                if len(pending) >= WRITE_BUFFER_BYTES:
                    cleaned.append(pending, pending_batches)
                    counters.bytes_written += len(pending)
                    pending, pending_batches = bytearray(), []
            if counters.tombstone_retained_in_segment:
                oldest = counters.oldest_retained_tombstone_ms
                counters.oldest_retained_tombstone_ms = (
                    segment.max_timestamp if oldest is None else min(oldest, segment.max_timestamp)
                )
        if pending:
            cleaned.append(pending, pending_batches)
            counters.bytes_written += len(pending)
        for segment in group:
            for txn in segment.txn_index.entries:
                cleaned.txn_index.append(txn)
        cleaned.on_become_inactive()
        cleaned.created_ms = group[0].created_ms
        cleaned.flush()
        cleaned.rename_suffix(SWAP_SUFFIX)
        if not log.replace_segments(group, None if cleaned.is_empty else cleaned, now_ms):
            raise _CleanAborted
        if cleaned.is_empty:
            cleaned.delete_files()
    except BaseException:
        cleaned.delete_files()
        raise
    return 0 if cleaned.is_empty else 1
