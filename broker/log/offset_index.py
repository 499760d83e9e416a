"""Sparse offset index: (offset relative to the segment base: u32, file position: u32) entries.

Entries live in memory (two arrays, so lookups are a bisect) and are appended to the
`.index` file as they are added; the file is only read back when a segment is opened.
"""

import os
import struct
from array import array
from bisect import bisect_right
from pathlib import Path

ENTRY = struct.Struct(">II")


class CorruptIndexError(Exception):
    """The file on disk cannot be trusted; the caller rebuilds the index from the log."""


class OffsetIndex:
    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_entries)
        self.relative_offsets = array("I")
        self.positions = array("I")
        # Opened on the first write: closed segments keep no index file descriptors.
        self._fd = -1
        self._dirty = False  # written since the last fsync
        path.touch()

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int, log_size: int) -> "OffsetIndex":
        """Read an existing index; raises CorruptIndexError when it is inconsistent with the log."""
        index = cls(path, base_offset, max_entries)
        try:
            data = path.read_bytes()
            if len(data) % ENTRY.size:
                raise CorruptIndexError(f"{path.name}: size {len(data)} is not a multiple of {ENTRY.size}")
            previous_offset = -1
            previous_position = -1
            for relative_offset, position in ENTRY.iter_unpack(data):
                if (
                    relative_offset <= previous_offset
                    or position <= previous_position
                    or position >= log_size
                ):
                    raise CorruptIndexError(f"{path.name}: entries out of order or past the log end")
                index.relative_offsets.append(relative_offset)
                index.positions.append(position)
                previous_offset, previous_position = relative_offset, position
        except BaseException:
            index.close()
            raise
        return index

    def __len__(self) -> int:
        return len(self.positions)

    @property
    def is_full(self) -> bool:
        return len(self.positions) >= self.max_entries

    def append(self, offset: int, position: int) -> None:
        relative_offset = offset - self.base_offset
        if self.positions and (
            relative_offset <= self.relative_offsets[-1] or position <= self.positions[-1]
        ):
            return
        self.relative_offsets.append(relative_offset)
        self.positions.append(position)
        os.write(self._file(), ENTRY.pack(relative_offset, position))

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
        keep = bisect_right(self.positions, size - 1) if size > 0 else 0
        if keep == len(self.positions):
            return
        del self.positions[keep:]
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
