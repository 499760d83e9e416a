"""Sparse time index: (max timestamp so far: i64, relative offset of that batch: u32) entries.

Timestamps only grow in the index, so a bisect finds the last entry at or before a target time.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_right
from pathlib import Path

from broker.log.sparse_index import CorruptIndexError, SparseIndex


class TimeIndex(SparseIndex):
    ENTRY = struct.Struct(">qI")

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        super().__init__(path, base_offset, max_entries)
        self.timestamps = array("q")
        self.relative_offsets = array("I")

    @property
    def _columns(self) -> tuple[array[int], array[int]]:
        return self.timestamps, self.relative_offsets

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int, next_offset: int) -> TimeIndex:
        """Read an existing index; raises CorruptIndexError when it is inconsistent with the log."""
        index = cls(path, base_offset, max_entries)
        previous_timestamp = -(2**63)
        previous_offset = -1
        for timestamp, relative_offset in index._read_entries():
            if (
                timestamp <= previous_timestamp
                or relative_offset < previous_offset
                or base_offset + relative_offset >= next_offset
            ):
                raise CorruptIndexError(f"{path.name}: entries out of order or past the log end")
            index.timestamps.append(timestamp)
            index.relative_offsets.append(relative_offset)
            previous_timestamp, previous_offset = timestamp, relative_offset
        return index

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
        self._add_entry(timestamp, relative_offset)

    def lookup(self, timestamp: int) -> int:
        """Offset of the last entry whose timestamp is <= `timestamp`; the segment base when none."""
        slot = bisect_right(self.timestamps, timestamp) - 1
        if slot < 0:
            return self.base_offset
        return self.base_offset + self.relative_offsets[slot]

    def truncate_to_offset(self, next_offset: int) -> None:
        """Drop entries for offsets at or past `next_offset`."""
        self._keep_entries(bisect_right(self.relative_offsets, next_offset - 1 - self.base_offset))
