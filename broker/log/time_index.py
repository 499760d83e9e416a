"""Sparse time index: (max timestamp so far: i64, relative offset of that batch: u32) entries.

Timestamps only grow in the index, so a bisect finds the last entry at or before a target time.
"""

import os
import struct
from array import array
from bisect import bisect_right
from pathlib import Path

from broker.log.offset_index import CorruptIndexError

ENTRY = struct.Struct(">qI")


class TimeIndex:
    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_entries)
        self.timestamps = array("q")
        self.relative_offsets = array("I")
        # Opened on the first write: closed segments keep no index file descriptors.
        self._fd = -1
        self._dirty = False  # written since the last fsync
        path.touch()

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int, next_offset: int) -> "TimeIndex":
        index = cls(path, base_offset, max_entries)
        try:
            data = path.read_bytes()
            if len(data) % ENTRY.size:
                raise CorruptIndexError(f"{path.name}: size {len(data)} is not a multiple of {ENTRY.size}")
            previous_timestamp = -(2**63)
            previous_offset = -1
            for timestamp, relative_offset in ENTRY.iter_unpack(data):
                if (
                    timestamp <= previous_timestamp
                    or relative_offset < previous_offset
                    or base_offset + relative_offset >= next_offset
                ):
                    raise CorruptIndexError(f"{path.name}: entries out of order or past the log end")
                index.timestamps.append(timestamp)
                index.relative_offsets.append(relative_offset)
                previous_timestamp, previous_offset = timestamp, relative_offset
        except BaseException:
            index.close()
            raise
        return index

    def __len__(self) -> int:
        return len(self.timestamps)

    @property
    def is_full(self) -> bool:
        return len(self.timestamps) >= self.max_entries

    @property
    def last_entry(self) -> tuple[int, int] | None:
        if not self.timestamps:
            return None
        return self.timestamps[-1], self.base_offset + self.relative_offsets[-1]

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Add an entry only when it raises the max timestamp (the index stays monotonic)."""
        if self.timestamps and timestamp <= self.timestamps[-1]:
            return
        relative_offset = offset - self.base_offset
        if self.relative_offsets and relative_offset < self.relative_offsets[-1]:
            return
        self.timestamps.append(timestamp)
        self.relative_offsets.append(relative_offset)
        os.write(self._file(), ENTRY.pack(timestamp, relative_offset))

    def lookup(self, timestamp: int) -> int:
        """Offset of the last entry whose timestamp is <= `timestamp`; the segment base when none."""
        slot = bisect_right(self.timestamps, timestamp) - 1
        if slot < 0:
            return self.base_offset
        return self.base_offset + self.relative_offsets[slot]

    def truncate_to_offset(self, next_offset: int) -> None:
        """Drop entries for offsets at or past `next_offset`."""
        keep = bisect_right(self.relative_offsets, next_offset - 1 - self.base_offset)
        if keep == len(self.timestamps):
            return
        del self.timestamps[keep:]
        del self.relative_offsets[keep:]
        os.ftruncate(self._file(), keep * ENTRY.size)

    def _file(self) -> int:
        self._dirty = True
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        return self._fd

    def flush(self) -> None:
        if not self._dirty:
            return
        was_closed = self._fd < 0
        os.fsync(self._file())  # fsync reaches the file's pages whichever descriptor wrote them
        self._dirty = False
        if was_closed:
            self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def rename(self, path: Path) -> None:
        os.rename(self.path, path)
        self.path = path
