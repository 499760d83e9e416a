"""Raft's log entries, snapshots and the messages nodes exchange (plain values, no I/O)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

# An entry whose data starts with this holds the voter set (KIP-853's VotersRecord). Metadata
# entries are JSON arrays (they start with "["), the leader's no-op is empty: neither can clash.
VOTERS_ENTRY_PREFIX = b"\x00voters:"


@dataclass(frozen=True, slots=True)
class Voter:
    """A voter of a dynamic quorum: its id, the directory id its metadata dir was formatted with
    (None in a static quorum, where voters are known by id only), and its controller endpoint."""

    node_id: int
    directory_id: str | None = None
    host: str = ""
    port: int = 0

    def to_json(self) -> dict[str, object]:
        return {"id": self.node_id, "dir": self.directory_id, "host": self.host, "port": self.port}

    @staticmethod
    def from_json(data: dict[str, object]) -> Voter:
        node_id, directory, host, port = (
            data["id"],
            data.get("dir"),
            data.get("host", ""),
            data.get("port", 0),
        )
        if type(node_id) is not int or type(port) is not int or not isinstance(host, str):
            raise ValueError(f"malformed voter {data!r}")
        if directory is not None and not isinstance(directory, str):
            raise ValueError(f"malformed voter directory id {directory!r}")
        return Voter(node_id, directory, host, port)


VoterSet = tuple[Voter, ...]


def encode_voters(voters: Sequence[Voter]) -> bytes:
    body = json.dumps([v.to_json() for v in sorted(voters, key=lambda v: v.node_id)], separators=(",", ":"))
    return VOTERS_ENTRY_PREFIX + body.encode()


def decode_voters(data: bytes) -> VoterSet | None:
    """The voter set of a voters entry; None for any other entry."""
    if not data.startswith(VOTERS_ENTRY_PREFIX):
        return None
    listed = json.loads(data[len(VOTERS_ENTRY_PREFIX) :])
    return tuple(Voter.from_json(item) for item in listed)


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
    # The voter set in force at `last_index` (a dynamic quorum's); None: the static voters.
    voters: VoterSet | None = None


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
