"""The aborted-transaction index of one segment (`<base offset>.txnindex`, Kafka's `TransactionIndex`).

One 34-byte entry per transaction aborted by a marker in the segment: version (int16, 0), producer
id, first offset, last offset (the marker's) and the last stable offset when it was aborted (all
int64, big-endian, absolute). A read_committed Fetch returns the aborted transactions overlapping
what it read, so the consumer can drop their batches.

Most segments have no aborted transaction: the file only exists once one is written. The entries
are small and few, and are kept in memory; a torn last entry (a crash mid-write) is cut on load.
"""

from __future__ import annotations

import contextlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path

ENTRY = struct.Struct(">hqqqq")
ENTRY_VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    def __init__(self, path: Path, entries: list[AbortedTxn] | None = None) -> None:
        self.path = path
        self.entries: list[AbortedTxn] = entries or []
        self.unflushed = False

    @classmethod
    def load(cls, path: Path) -> TransactionIndex:
        """Read the file if there is one; a partial last entry or a foreign version ends the index."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls(path)
        entries: list[AbortedTxn] = []
        position = 0
        while position + ENTRY.size <= len(data):
            version, producer_id, first, last, stable = ENTRY.unpack_from(data, position)
            if version != ENTRY_VERSION or last < first:
                break
            entries.append(AbortedTxn(producer_id, first, last, stable))
            position += ENTRY.size
        index = cls(path, entries)
        if position != len(data):
            index._rewrite()
        return index

    def __len__(self) -> int:
        return len(self.entries)

    def contains(self, txn: AbortedTxn) -> bool:
        return any(
            e.producer_id == txn.producer_id and e.last_offset == txn.last_offset for e in self.entries
        )

    def append(self, txn: AbortedTxn) -> None:
        """Add an aborted transaction; one already there (recovery replaying its marker) is skipped."""
        if self.entries and txn.last_offset <= self.entries[-1].last_offset:
            if not self.contains(txn):  # a lost entry found again by recovery: keep marker order
                self.entries = sorted([*self.entries, txn], key=lambda e: e.last_offset)
                self._rewrite()
            return
        with open(self.path, "ab") as file:
            file.write(_pack(txn))
        self.entries.append(txn)
        self.unflushed = True

    def collect(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound)."""
        return [e for e in self.entries if e.last_offset >= fetch_offset and e.first_offset < upper_bound]

    def truncate_to(self, offset: int) -> None:
        """Forget transactions whose marker is at or after `offset` (the log was cut there)."""
        kept = [e for e in self.entries if e.last_offset < offset]
        if len(kept) != len(self.entries):
            self.entries = kept
            self._rewrite()

    def _rewrite(self) -> None:
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_bytes(b"".join(_pack(e) for e in self.entries))
        os.replace(temporary, self.path)

    def flush(self) -> None:
        if self.unflushed and self.entries:
            with contextlib.suppress(FileNotFoundError):
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        self.unflushed = False

    def rename(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.rename(self.path, path)
        self.path = path

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)


def _pack(txn: AbortedTxn) -> bytes:
    return ENTRY.pack(
        ENTRY_VERSION, txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset
    )
