"""Raft's log entries, snapshots and the messages nodes exchange (plain values, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Entry:
    """One log entry. An empty `data` is the no-op a new leader appends to commit earlier terms."""

    index: int
    term: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state machine's state after applying every entry up to `last_index`."""

    last_index: int
    last_term: int
    data: bytes


EMPTY_SNAPSHOT = Snapshot(last_index=0, last_term=0, data=b"")


@dataclass(frozen=True, slots=True)
class RequestVote:
    """`pre_vote` asks "would you vote for me in `term`?" without anyone changing state, so a
    node cut off from the leader cannot force elections (and term inflation) when it returns."""

    term: int
    candidate: int
    last_log_index: int
    last_log_term: int
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class VoteResponse:
    term: int
    voter: int
    granted: bool
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class AppendEntries:
    term: int
    leader: int
    prev_index: int
    prev_term: int
    entries: tuple[Entry, ...]
    leader_commit: int


@dataclass(frozen=True, slots=True)
class AppendResponse:
    """On failure `match_index` is the follower's hint: the leader retries from `match_index + 1`."""

    term: int
    follower: int
    success: bool
    match_index: int


@dataclass(frozen=True, slots=True)
class InstallSnapshot:
    term: int
    leader: int
    snapshot: Snapshot


@dataclass(frozen=True, slots=True)
class TimeoutNow:
    """From a leader handing over (it is stopping): start an election now, skipping pre-vote."""

    term: int
    leader: int


Message = RequestVote | VoteResponse | AppendEntries | AppendResponse | InstallSnapshot | TimeoutNow


@dataclass(frozen=True, slots=True)
class Envelope:
    """A message and the node it is addressed to."""

    to: int
    message: Message
