"""What the offset and time indexes share: fixed-size entries in two parallel columns.

Entries live in memory (arrays, so lookups are a bisect) and are appended to the index file as
they are added; the file is only read back when a segment is opened.
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar


class CorruptIndexError(Exception):
    """The file on disk cannot be trusted; the caller rebuilds the index from the log."""


class SparseIndex:
    ENTRY: ClassVar[struct.Struct]

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_entries)
        # Opened on the first write: closed segments keep no index file descriptors.
        self._fd = -1
        self._dirty = False  # written since the last fsync
        # Exists from the start (Path.touch would also try utime first: a third system call per
        # file, and 10,000 new partitions create 20,000 index files).
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))

    @property
    def _columns(self) -> tuple[array[int], array[int]]:
        """The two in-memory columns, in the order their fields appear in an entry."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._columns[0])

    @property
    def is_full(self) -> bool:
        return len(self) >= self.max_entries

    def _read_entries(self) -> Iterator[tuple[int, int]]:
        data = self.path.read_bytes()
        if len(data) % self.ENTRY.size:
            raise CorruptIndexError(
                f"{self.path.name}: size {len(data)} is not a multiple of {self.ENTRY.size}"
            )
        return self.ENTRY.iter_unpack(data)

    def _add_entry(self, first: int, second: int) -> None:
        self._columns[0].append(first)
        self._columns[1].append(second)
        os.write(self._file(), self.ENTRY.pack(first, second))

    def _keep_entries(self, keep: int) -> None:
        """Drop every entry from slot `keep` on, in memory and on disk."""
        if keep == len(self):
            return
        for column in self._columns:
            del column[keep:]
        os.ftruncate(self._file(), keep * self.ENTRY.size)

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
