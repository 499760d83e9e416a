"""Durable Raft state: current term, vote, log entries and the latest snapshot.

`RaftNode` calls these methods before it returns the messages that depend on them, so a
write is on disk before any other node can act on it. `FileStorage` fsyncs every write.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from broker.raft.messages import EMPTY_SNAPSHOT, Entry, Snapshot, Voter


@dataclass(slots=True)
class PersistentState:
    term: int = 0
    voted_for: int | None = None
    snapshot: Snapshot = EMPTY_SNAPSHOT
    entries: list[Entry] = field(default_factory=list)


class RaftStorage(Protocol):
    def load(self) -> PersistentState: ...

    def save_term_and_vote(self, term: int, voted_for: int | None) -> None: ...

    def append(self, entries: Sequence[Entry]) -> None:
        """Append entries that directly follow the stored ones."""
        ...

    def truncate_from(self, index: int) -> None:
        """Drop the stored entries at `index` and after."""
        ...

    def save_snapshot(self, snapshot: Snapshot, remaining: Sequence[Entry]) -> None:
        """Replace the snapshot; `remaining` are the entries after it that are kept."""
        ...


class MemoryStorage:
    """Storage that survives a simulated crash (the simulation keeps the object, drops the node)."""

    def __init__(self) -> None:
        self.state = PersistentState()

    def load(self) -> PersistentState:
        return PersistentState(
            term=self.state.term,
            voted_for=self.state.voted_for,
            snapshot=self.state.snapshot,
            entries=list(self.state.entries),
        )

    def save_term_and_vote(self, term: int, voted_for: int | None) -> None:
        self.state.term = term
        self.state.voted_for = voted_for

    def append(self, entries: Sequence[Entry]) -> None:
        self.state.entries.extend(entries)

    def truncate_from(self, index: int) -> None:
        self.state.entries = [e for e in self.state.entries if e.index < index]

    def save_snapshot(self, snapshot: Snapshot, remaining: Sequence[Entry]) -> None:
        self.state.snapshot = snapshot
        self.state.entries = list(remaining)


# Log file frame: length (4 bytes), CRC-32 of the body (4 bytes), body = index, term (8 bytes each) + data.
_FRAME_HEADER = struct.Struct(">II")
_ENTRY_HEADER = struct.Struct(">qq")


class FileStorage:
    """A directory holding `state.json` (term, vote), `snapshot.json` and an append-only `log`.

    A torn or corrupt frame at the end of the log (a crash mid-write) is cut off on load: that
    entry was never acknowledged, because acknowledgement happens only after the fsync.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._log_path = self.directory / "log"
        # (index, byte offset) of each stored entry in the log file, for truncation.
        self._positions: list[tuple[int, int]] = []
        self._log_size = 0

    def load(self) -> PersistentState:
        state = PersistentState()
        state_path = self.directory / "state.json"
        if state_path.exists():
            data = json.loads(state_path.read_text(encoding="utf-8"))
            state.term = int(data["term"])
            state.voted_for = data["voted_for"]
        snapshot_path = self.directory / "snapshot.json"
        if snapshot_path.exists():
            data = json.loads(snapshot_path.read_text(encoding="utf-8"))
            state.snapshot = Snapshot(
                last_index=int(data["last_index"]),
                last_term=int(data["last_term"]),
                data=base64.b64decode(data["data"]),
                voters=tuple(Voter.from_json(v) for v in data["voters"]) if "voters" in data else None,
            )
        state.entries = self._read_log()
        return state

    def _read_log(self) -> list[Entry]:
        entries: list[Entry] = []
        self._positions = []
        self._log_size = 0
        if not self._log_path.exists():
            return entries
        raw = self._log_path.read_bytes()
        position = 0
        while position + _FRAME_HEADER.size <= len(raw):
            length, crc = _FRAME_HEADER.unpack_from(raw, position)
            start = position + _FRAME_HEADER.size
            body = raw[start : start + length]
            if len(body) != length or zlib.crc32(body) != crc or length < _ENTRY_HEADER.size:
                break
            index, term = _ENTRY_HEADER.unpack_from(body)
            entries.append(Entry(index=index, term=term, data=body[_ENTRY_HEADER.size :]))
            self._positions.append((index, position))
            position = start + length
        if position != len(raw):
            with self._log_path.open("r+b") as handle:
                handle.truncate(position)
                os.fsync(handle.fileno())
        self._log_size = position
        return entries

    def save_term_and_vote(self, term: int, voted_for: int | None) -> None:
        self._write_atomically("state.json", json.dumps({"term": term, "voted_for": voted_for}).encode())

    def append(self, entries: Sequence[Entry]) -> None:
        if not entries:
            return
        frames, positions = _encode_frames(entries, self._log_size)
        with self._log_path.open("ab") as handle:
            handle.write(frames)
            handle.flush()
            os.fsync(handle.fileno())
        self._positions.extend(positions)
        self._log_size += len(frames)

    def truncate_from(self, index: int) -> None:
        keep = [p for p in self._positions if p[0] < index]
        if len(keep) == len(self._positions):
            return
        cut = self._positions[len(keep)][1]
        with self._log_path.open("r+b") as handle:
            handle.truncate(cut)
            os.fsync(handle.fileno())
        self._positions = keep
        self._log_size = cut

    def save_snapshot(self, snapshot: Snapshot, remaining: Sequence[Entry]) -> None:
        document: dict[str, object] = {
            "last_index": snapshot.last_index,
            "last_term": snapshot.last_term,
            "data": base64.b64encode(snapshot.data).decode("ascii"),
        }
        if snapshot.voters is not None:
            document["voters"] = [v.to_json() for v in snapshot.voters]
        self._write_atomically("snapshot.json", json.dumps(document).encode())
        # The snapshot is durable before the log loses anything; a crash between the two writes
        # leaves entries the snapshot already covers, which loading skips.
        frames, positions = _encode_frames(remaining, 0)
        self._write_atomically("log", frames)
        self._positions = positions
        self._log_size = len(frames)

    def _write_atomically(self, name: str, payload: bytes) -> None:
        temporary = self.directory / f"{name}.tmp"
        with temporary.open("wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.directory / name)
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _encode_frames(entries: Sequence[Entry], start: int) -> tuple[bytes, list[tuple[int, int]]]:
    """Log frames for `entries` and each entry's byte position, the first written at `start`."""
    chunks = []
    positions = []
    position = start
    for entry in entries:
        body = _ENTRY_HEADER.pack(entry.index, entry.term) + entry.data
        frame = _FRAME_HEADER.pack(len(body), zlib.crc32(body)) + body
        positions.append((entry.index, position))
        position += len(frame)
        chunks.append(frame)
    return b"".join(chunks), positions
