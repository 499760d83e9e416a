"""Sparse offset index: (offset relative to the segment base: u32, file position: u32) entries."""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_right
from pathlib import Path

from broker.log.sparse_index import CorruptIndexError, SparseIndex


class OffsetIndex(SparseIndex):
    ENTRY = struct.Struct(">II")

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        super().__init__(path, base_offset, max_entries)
        self.relative_offsets = array("I")
        self.positions = array("I")

    @property
    def _columns(self) -> tuple[array[int], array[int]]:
        return self.relative_offsets, self.positions

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int, log_size: int) -> OffsetIndex:
        """Read an existing index; raises CorruptIndexError when it is inconsistent with the log."""
        index = cls(path, base_offset, max_entries)
        previous_offset = -1
        previous_position = -1
        for relative_offset, position in index._read_entries():
            if relative_offset <= previous_offset or position <= previous_position or position >= log_size:
                raise CorruptIndexError(f"{path.name}: entries out of order or past the log end")
            index.relative_offsets.append(relative_offset)
            index.positions.append(position)
            previous_offset, previous_position = relative_offset, position
        return index

    def append(self, offset: int, position: int) -> None:
        relative_offset = offset - self.base_offset
        if self.positions and (
            relative_offset <= self.relative_offsets[-1] or position <= self.positions[-1]
        ):
            return
        self._add_entry(relative_offset, position)

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry at or before `offset`; (base, 0) when there is none."""
        slot = bisect_right(self.relative_offsets, offset - self.base_offset) - 1
        if slot < 0:
            return self.base_offset, 0
        return self.base_offset + self.relative_offsets[slot], self.positions[slot]

    def floor_position(self, position: int) -> int:
        """The largest indexed batch position at or before `position` (0 when none)."""
        slot = bisect_right(self.positions, position) - 1
        return self.positions[slot] if slot >= 0 else 0

    def truncate_to_position(self, size: int) -> None:
        """Drop entries that point at or past `size` (the log was truncated there)."""
        self._keep_entries(bisect_right(self.positions, size - 1) if size > 0 else 0)
