"""One log segment: `<base offset>.log` (batches exactly as appended) plus its two sparse indexes and
its aborted-transaction index (`.txnindex`, only written when a transaction aborts in the segment)."""

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crc32c import crc32c

from broker.log.config import LogConfig
from broker.log.errors import LogStorageError
from broker.log.offset_index import OffsetIndex
from broker.log.sparse_index import CorruptIndexError
from broker.log.time_index import TimeIndex
from broker.log.transaction_index import TransactionIndex
from broker.wire.records.batch import HEADER, HEADER_SIZE, LOG_OVERHEAD

NO_TIMESTAMP = -1
# Suffixes of segment files that belong to an unfinished operation (see cleaner.py).
DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
# Header walks read this much at a time: many small batches per syscall, little waste on big ones.
WALK_CHUNK = 16 * 1024
# Where the last batches appended to the active segment start, by base offset: a follower's or a keeping-up
# consumer's next fetch offset and a consumer's read limit (the high watermark) are usually one of them, found
# without walking the headers from the sparse index's entry on. Few, small entries: a node may lead 10,000s.
RECENT_BATCHES = 16
# Relative offsets are u32 in the index: a segment may not span more than this.
MAX_RELATIVE_OFFSET = 2**32 - 1

# The files of a segment, by kind (the suffix after the base offset).
SEGMENT_FILE_KINDS = ("log", "index", "timeindex", "txnindex")

# Field positions in a HEADER.unpack result.
F_BASE_OFFSET = 0
F_LENGTH = 1
F_MAGIC = 3
F_CRC = 4
F_ATTRIBUTES = 5
F_LAST_OFFSET_DELTA = 6
F_MAX_TIMESTAMP = 8
F_PRODUCER_ID = 9
F_PRODUCER_EPOCH = 10
F_BASE_SEQUENCE = 11
F_RECORD_COUNT = 12

HeaderFields = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]


def segment_file(directory: Path, base_offset: int, kind: str, suffix: str = "") -> Path:
    return directory / f"{base_offset:020d}.{kind}{suffix}"


@dataclass(slots=True)
class BatchLocation:
    position: int
    fields: HeaderFields

    @property
    def base_offset(self) -> int:
        return self.fields[F_BASE_OFFSET]

    @property
    def last_offset(self) -> int:
        return self.fields[F_BASE_OFFSET] + self.fields[F_LAST_OFFSET_DELTA]

    @property
    def size(self) -> int:
        return self.fields[F_LENGTH] + LOG_OVERHEAD

    @property
    def end(self) -> int:
        return self.position + self.fields[F_LENGTH] + LOG_OVERHEAD


class LogSegment:
    """Appends go to the OS in one write; reads are `os.pread` of whole batches."""

    def __init__(self, directory: Path, base_offset: int, config: LogConfig, suffix: str = "") -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.suffix = suffix
        self.log_path = segment_file(directory, base_offset, "log", suffix)
        self._fd = -1
        self.size = 0
        self.next_offset = base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset
        self.created_ms = 0
        self.bytes_since_last_index_entry = 0
        self.index_interval_bytes = config.index_interval_bytes
        self.unflushed = False
        self.recovered_bytes = 0  # bytes cut off a torn tail when the segment was opened
        self._recent_batches: dict[int, int] = {}  # base offset -> position
        self.offset_index: OffsetIndex
        self.time_index: TimeIndex
        self.txn_index = TransactionIndex(segment_file(directory, base_offset, "txnindex", suffix))
        self._max_offset_entries = config.segment_index_bytes // OffsetIndex.ENTRY.size
        self._max_time_entries = config.segment_index_bytes // TimeIndex.ENTRY.size

    # ---- lifecycle -------------------------------------------------------------------------

    @classmethod
    def create(
        cls, directory: Path, base_offset: int, config: LogConfig, now_ms: int, suffix: str = ""
    ) -> "LogSegment":
        segment = cls(directory, base_offset, config, suffix)
        segment._fd = os.open(segment.log_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        segment._open_empty_indexes()
        segment.txn_index.delete()
        segment.created_ms = now_ms
        return segment

    @classmethod
    def open(
        cls, directory: Path, base_offset: int, config: LogConfig, *, recover: bool, suffix: str = ""
    ) -> "LogSegment":
        """Open an existing segment. `recover` checks every CRC, cuts a torn tail and rebuilds the indexes."""
        segment = cls(directory, base_offset, config, suffix)
        segment._fd = os.open(segment.log_path, os.O_RDWR | os.O_APPEND)
        segment.size = os.fstat(segment._fd).st_size
        try:
            segment.txn_index = TransactionIndex.load(segment.txn_index.path)
            if recover or suffix:
                segment.recovered_bytes = segment.recover()
            else:
                segment._load_indexes()
        except BaseException:
            segment.close()
            raise
        first = next(segment.walk(0), None)
        if first is not None and first.fields[F_MAX_TIMESTAMP] >= 0:
            segment.created_ms = first.fields[F_MAX_TIMESTAMP]
        else:
            segment.created_ms = int(os.fstat(segment._fd).st_mtime * 1000)
        return segment

    def _open_empty_indexes(self) -> None:
        for kind in ("index", "timeindex"):
            segment_file(self.directory, self.base_offset, kind, self.suffix).unlink(missing_ok=True)
        self.offset_index = OffsetIndex(
            segment_file(self.directory, self.base_offset, "index", self.suffix),
            self.base_offset,
            self._max_offset_entries,
        )
        self.time_index = TimeIndex(
            segment_file(self.directory, self.base_offset, "timeindex", self.suffix),
            self.base_offset,
            self._max_time_entries,
        )

    def _load_indexes(self) -> None:
        index_path = segment_file(self.directory, self.base_offset, "index")
        time_index_path = segment_file(self.directory, self.base_offset, "timeindex")
        if not index_path.exists() or not time_index_path.exists():
            self.recover(check_crc=False)
            return
        try:
            self.offset_index = OffsetIndex.load(
                index_path, self.base_offset, self._max_offset_entries, self.size
            )
        except CorruptIndexError:
            self.recover(check_crc=False)
            return
        try:
            self._scan_tail()
        except CorruptIndexError:
            self.offset_index.close()
            self.recover(check_crc=False)
            return
        try:
            self.time_index = TimeIndex.load(
                time_index_path, self.base_offset, self._max_time_entries, self.next_offset
            )
        except CorruptIndexError:
            self.offset_index.close()
            self.recover(check_crc=False)
            return
        if len(self.offset_index) and not len(self.time_index):
            self.offset_index.close()
            self.time_index.close()
            self.recover(check_crc=False)
            return
        last_time_entry = self.time_index.last_entry
        if last_time_entry is not None and last_time_entry[0] > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = last_time_entry

    def _scan_tail(self) -> None:
        """Find the next offset and the tail's max timestamp from the last indexed batch onwards."""
        start = self.offset_index.positions[-1] if len(self.offset_index) else 0
        expected_offset = self.offset_index.lookup(2**63)[0] if len(self.offset_index) else None
        end = start
        unindexed_bytes = 0  # bytes appended since the last index entry, as `_index_batch` counts them
        last_size = 0
        for location in self.walk(start):
            if expected_offset is not None and location.base_offset != expected_offset:
                raise CorruptIndexError(f"{self.log_path.name}: index points at the wrong batch")
            unindexed_bytes += location.size
            expected_offset = None
            self._note_batch(location.fields)
            end = location.end
            last_size = location.size
        if end != self.size:
            raise CorruptIndexError(f"{self.log_path.name}: log does not end on a batch boundary")
        if unindexed_bytes - last_size > self.index_interval_bytes:
            # Appends would have added an entry in there: the index lost entries (e.g. emptied).
            raise CorruptIndexError(f"{self.log_path.name}: index is missing entries")
        self.bytes_since_last_index_entry = self.size - start

    def _note_batch(self, fields: HeaderFields) -> None:
        self.next_offset = fields[F_BASE_OFFSET] + fields[F_LAST_OFFSET_DELTA] + 1
        if fields[F_MAX_TIMESTAMP] > self.max_timestamp:
            self.max_timestamp = fields[F_MAX_TIMESTAMP]
            self.offset_of_max_timestamp = fields[F_BASE_OFFSET]

    def recover(self, *, check_crc: bool = True) -> int:
        """Rebuild both indexes from the log, dropping everything after the last whole valid batch.

        Returns the number of bytes cut off the tail.
        """
        if hasattr(self, "offset_index"):
            self.offset_index.close()
        if hasattr(self, "time_index"):
            self.time_index.close()
        self._open_empty_indexes()
        self.next_offset = self.base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = self.base_offset
        self.bytes_since_last_index_entry = 0
        self._recent_batches.clear()
        valid_end = 0
        for location in self.walk(0, check_crc=check_crc):
            if location.base_offset < self.next_offset or location.last_offset < location.base_offset:
                break  # offsets must grow: anything else is garbage from a torn write
            if location.last_offset - self.base_offset > MAX_RELATIVE_OFFSET:
                break
            self._index_batch(location.position, location.fields)
            valid_end = location.end
        truncated = self.size - valid_end
        if truncated:
            os.ftruncate(self._fd, valid_end)
            self.size = valid_end
        # Aborts whose marker did not survive are not aborts here (recovery re-adds lost entries).
        self.txn_index.truncate_to(self.next_offset)
        return truncated

    def close(self) -> None:
        if self._fd >= 0:
            if self.max_timestamp >= 0 and hasattr(self, "time_index"):
                # Closed and rolled segments keep their max timestamp as the last time-index entry.
                self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            os.close(self._fd)
            self._fd = -1
        if hasattr(self, "offset_index"):
            self.offset_index.close()
        if hasattr(self, "time_index"):
            self.time_index.close()

    def on_become_inactive(self) -> None:
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
        # Closed segments keep only their log file open; the indexes reopen if ever written again.
        self._recent_batches.clear()
        self.offset_index.close()
        self.time_index.close()

    def rename_suffix(self, suffix: str) -> None:
        """Rename the three files to carry `suffix` (e.g. ".swap", ".deleted", "")."""
        new_log = segment_file(self.directory, self.base_offset, "log", suffix)
        os.rename(self.log_path, new_log)
        self.log_path = new_log
        self.offset_index.rename(segment_file(self.directory, self.base_offset, "index", suffix))
        self.time_index.rename(segment_file(self.directory, self.base_offset, "timeindex", suffix))
        self.txn_index.rename(segment_file(self.directory, self.base_offset, "txnindex", suffix))
        self.suffix = suffix

    def delete_files(self) -> None:
        self.close()
        for path in (self.log_path, self.offset_index.path, self.time_index.path, self.txn_index.path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def flush(self) -> None:
        if self._fd >= 0 and self.unflushed:
            os.fsync(self._fd)
            self.offset_index.flush()
            self.time_index.flush()
            self.txn_index.flush()
            self.unflushed = False

    # ---- appends -----------------------------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        return self.size == 0

    @property
    def indexes_full(self) -> bool:
        return self.offset_index.is_full or self.time_index.is_full

    def _index_batch(self, position: int, fields: HeaderFields) -> None:
        self._note_batch(fields)
        if self.bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(fields[F_BASE_OFFSET], position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += fields[F_LENGTH] + LOG_OVERHEAD

    def append(
        self,
        data: bytes | bytearray | memoryview,
        batches: list[tuple[int, HeaderFields]],
        now_ms: int | None = None,
    ) -> None:
        """Write already-validated batches (positions relative to `data`) in one write, then index them."""
        start = self.size
        if start == 0 and now_ms is not None:
            self.created_ms = now_ms  # segment.ms counts from the first append
        view = memoryview(data)
        try:
            written = os.write(self._fd, view)
            while written < len(view):  # regular files rarely write short, but never assume
                written += os.write(self._fd, view[written:])
        except OSError as exc:
            # Disk full or failing: cut what did get written so no half batch stays visible.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)
            raise LogStorageError(f"cannot append to {self.log_path}: {exc}") from exc
        self.size += len(view)
        self.unflushed = True
        recent = self._recent_batches
        for relative_position, fields in batches:
            self._index_batch(start + relative_position, fields)
            recent[fields[F_BASE_OFFSET]] = start + relative_position
        while len(recent) > RECENT_BATCHES:
            del recent[next(iter(recent))]

    # ---- reads --------------------------------------------------------------------------------

    def walk(
        self, start: int = 0, end: int | None = None, *, check_crc: bool = False
    ) -> Iterator[BatchLocation]:
        """Batch headers from `start` (a batch boundary) until `end`; stops quietly at a torn or bad batch."""
        end = self.size if end is None else min(end, self.size)
        position = start
        buffer = b""
        view = memoryview(buffer)
        buffer_start = position
        while position + HEADER_SIZE <= end:
            relative = position - buffer_start
            if relative + HEADER_SIZE > len(buffer):
                buffer = os.pread(self._fd, min(WALK_CHUNK, end - position), position)
                view = memoryview(buffer)
                buffer_start, relative = position, 0
                if len(buffer) < HEADER_SIZE:
                    return
            fields = HEADER.unpack_from(view, relative)
            length = fields[F_LENGTH]
            if length < HEADER_SIZE - LOG_OVERHEAD or fields[F_MAGIC] != 2:
                return
            size = length + LOG_OVERHEAD
            if position + size > end:
                return
            if check_crc:
                if relative + size > len(buffer):
                    buffer = os.pread(self._fd, max(WALK_CHUNK, size), position)
                    view = memoryview(buffer)
                    buffer_start, relative = position, 0
                    if len(buffer) < size:
                        return
                if crc32c(view[relative + 21 : relative + size]) != fields[F_CRC]:
                    return
            yield BatchLocation(position, fields)
            position += size

    def find_batch(self, offset: int) -> BatchLocation | None:
        """The first batch whose last offset is >= `offset`, or None when the segment ends before it."""
        if offset >= self.next_offset:
            return None
        recent = self._recent_batches.get(offset)
        if recent is not None:
            header = os.pread(self._fd, HEADER_SIZE, recent)
            if len(header) == HEADER_SIZE:
                return BatchLocation(recent, HEADER.unpack(header))
        indexed_offset, position = self.offset_index.lookup(offset)
        for start in (position, 0) if position else (0,):
            first = True
            for location in self.walk(start):
                if first and start and location.base_offset != indexed_offset:
                    break  # the index disagrees with the log: fall back to a scan from the start
                first = False
                if location.last_offset >= offset:
                    return location
            else:
                return None
        return None

    def end_of_batches_within(self, start: int, limit: int) -> int:
        """End of the last whole batch that ends at or before `limit`, walking from batch boundary `start`."""
        if limit >= self.size:
            return self.size
        walk_from = max(start, self.offset_index.floor_position(limit))
        end = walk_from
        for location in self.walk(walk_from, limit):
            end = location.end
        return end

    def read(self, start: int, end: int) -> bytes:
        return os.pread(self._fd, end - start, start)

    def read_batch(self, location: BatchLocation) -> bytes:
        return os.pread(self._fd, location.size, location.position)

    def truncate_to(self, offset: int) -> int:
        """Drop every batch whose last offset is >= `offset`; returns the bytes removed."""
        location = self.find_batch(offset)
        if location is None:
            return 0
        removed = self.size - location.position
        self._recent_batches.clear()
        os.ftruncate(self._fd, location.position)
        self.size = location.position
        self.offset_index.truncate_to_position(self.size)
        self.next_offset = self.base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = self.base_offset
        for batch in self.walk(0):
            self._note_batch(batch.fields)
        self.time_index.truncate_to_offset(self.next_offset)
        self.txn_index.truncate_to(self.next_offset)
        last_position = self.offset_index.positions[-1] if len(self.offset_index) else 0
        self.bytes_since_last_index_entry = self.size - last_position
        return removed

    def __repr__(self) -> str:
        return f"LogSegment({self.log_path.name}, size={self.size}, next_offset={self.next_offset})"
