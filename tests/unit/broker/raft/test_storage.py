"""FileStorage keeps term, vote, entries and snapshots across reopen, and survives a torn tail."""

from __future__ import annotations

from pathlib import Path

from broker.raft.messages import Entry, Snapshot
from broker.raft.storage import FileStorage


def test_it_reloads_term_vote_and_entries(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    storage.save_term_and_vote(4, 2)
    storage.append([Entry(1, 1, b"a"), Entry(2, 4, b"\x00binary\xff")])
    state = FileStorage(tmp_path).load()
    assert (state.term, state.voted_for) == (4, 2)
    assert state.entries == [Entry(1, 1, b"a"), Entry(2, 4, b"\x00binary\xff")]


def test_it_truncates_and_keeps_appending_after_the_cut(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    storage.load()
    storage.append([Entry(i, 1, f"e{i}".encode()) for i in range(1, 6)])
    storage.truncate_from(3)
    storage.append([Entry(3, 2, b"new")])
    assert [(e.index, e.term) for e in FileStorage(tmp_path).load().entries] == [(1, 1), (2, 1), (3, 2)]


def test_it_drops_a_torn_last_frame(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    storage.load()
    storage.append([Entry(1, 1, b"kept"), Entry(2, 1, b"torn-by-a-crash")])
    log = tmp_path / "log"
    log.write_bytes(log.read_bytes()[:-3])
    reopened = FileStorage(tmp_path)
    assert reopened.load().entries == [Entry(1, 1, b"kept")]
    reopened.append([Entry(2, 2, b"after")])
    assert FileStorage(tmp_path).load().entries == [Entry(1, 1, b"kept"), Entry(2, 2, b"after")]


def test_a_snapshot_replaces_the_entries_it_covers(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    storage.load()
    storage.append([Entry(i, 1, b"x") for i in range(1, 5)])
    storage.save_snapshot(Snapshot(3, 1, b"state"), [Entry(4, 1, b"x")])
    storage.append([Entry(5, 2, b"y")])
    state = FileStorage(tmp_path).load()
    assert state.snapshot == Snapshot(3, 1, b"state")
    assert [e.index for e in state.entries] == [4, 5]
