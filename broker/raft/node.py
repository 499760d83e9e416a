"""Raft consensus for one node as a pure state machine: messages and clock ticks in, messages out.

No sockets, no clocks, no threads: the caller passes `now` (seconds, any monotonic origin) and
delivers the returned envelopes. Durable state goes through a `RaftStorage` before the
messages that depend on it are returned. Committed entries are handed out by `take_committed`.

Beyond the Raft paper: pre-vote (a returning node does not disturb a healthy leader), check
quorum (a leader that cannot reach a majority steps down, so clients look elsewhere), a
no-op entry at the start of each leader term (commits earlier terms' entries), optimistic
pipelining with the follower's hint on rejection, and snapshots (InstallSnapshot).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass

from broker.raft.messages import (
    AppendEntries,
    AppendResponse,
    Entry,
    Envelope,
    InstallSnapshot,
    Message,
    RequestVote,
    Snapshot,
    TimeoutNow,
    VoteResponse,
)
from broker.raft.storage import RaftStorage


class Role(enum.Enum):
    FOLLOWER = "follower"
    PRE_CANDIDATE = "pre-candidate"
    CANDIDATE = "candidate"
    LEADER = "leader"


class NotLeader(Exception):
    """Only the leader accepts proposals; `leader` is who the node believes leads, if anyone."""

    def __init__(self, leader: int | None) -> None:
        super().__init__(f"not the leader (leader is {leader})")
        self.leader = leader


@dataclass(frozen=True, slots=True)
class RaftTimings:
    election_timeout_s: float = 1.0
    heartbeat_interval_s: float = 0.1
    max_entries_per_append: int = 256


@dataclass(frozen=True, slots=True)
class VoterProgress:
    """A voter's replication progress as the leader knows it (times on the caller's clock)."""

    node_id: int
    log_end: int  # its last log index the leader knows matches the leader's log
    last_contact: float | None  # when it last answered the leader in this term (None: not yet)
    last_caught_up: float | None  # when it last held the leader's whole log (None: not in this term)


class RaftNode:
    def __init__(
        self,
        node_id: int,
        voters: Sequence[int],
        storage: RaftStorage,
        now: float,
        timings: RaftTimings | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if node_id not in voters:
            raise ValueError(f"node {node_id} is not one of the voters {list(voters)}")
        self.node_id = node_id
        self.voters = tuple(sorted(set(voters)))
        self.peers = tuple(v for v in self.voters if v != node_id)
        self.storage = storage
        self.timings = timings or RaftTimings()
        self.rng = rng or random.Random()

        persisted = storage.load()
        self.term = persisted.term
        self.voted_for = persisted.voted_for
        self.snapshot = persisted.snapshot
        # Entries after the snapshot; a crash during compaction may have left older ones behind.
        self.log: list[Entry] = [e for e in persisted.entries if e.index > self.snapshot.last_index]
        self.commit_index = self.snapshot.last_index
        self.applied_index = 0  # raised by take_committed, which hands out the snapshot first
        self._snapshot_to_load: Snapshot | None = self.snapshot if self.snapshot.last_index else None

        self.role = Role.FOLLOWER
        self.leader: int | None = None
        self._votes: set[int] = set()
        self._next_index: dict[int, int] = {}
        self._match_index: dict[int, int] = {}
        self._last_ack: dict[int, float] = {}
        # On the leader: when each peer last acknowledged the leader's whole log (this term only).
        self._caught_up_at: dict[int, float] = {}
        # On the leader: the peers that answered it in this term (_last_ack starts at the election).
        self._acked: set[int] = set()
        self._last_leader_contact = -float("inf")
        self._heartbeat_due = now
        self._reset_election_deadline(now)

    # --- log helpers -----------------------------------------------------------------------

    @property
    def last_index(self) -> int:
        return self.log[-1].index if self.log else self.snapshot.last_index

    @property
    def last_term(self) -> int:
        return self.log[-1].term if self.log else self.snapshot.last_term

    def term_at(self, index: int) -> int | None:
        """The term of the entry at `index`, or None when it is not in the log or snapshot."""
        if index == self.snapshot.last_index:
            return self.snapshot.last_term
        if index < self.snapshot.last_index or index > self.last_index:
            return None
        return self.log[index - self.snapshot.last_index - 1].term

    def entries_from(self, index: int, limit: int) -> tuple[Entry, ...]:
        start = index - self.snapshot.last_index - 1
        return tuple(self.log[start : start + limit])

    def _truncate_from(self, index: int) -> None:
        assert index > self.commit_index, "a committed entry must never be removed"
        del self.log[index - self.snapshot.last_index - 1 :]
        self.storage.truncate_from(index)

    def _append(self, entries: Sequence[Entry]) -> None:
        self.log.extend(entries)
        self.storage.append(entries)

    # --- public API ---------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.role is Role.LEADER

    def propose(self, data: bytes, now: float) -> tuple[list[Envelope], Entry]:
        """Append `data` to the leader's log; returns messages to send and the new entry."""
        if self.role is not Role.LEADER:
            raise NotLeader(self.leader)
        entry = Entry(index=self.last_index + 1, term=self.term, data=data)
        self._append([entry])
        self._match_index[self.node_id] = entry.index
        self._advance_commit()
        return self._replicate(now, heartbeat=False), entry

    def take_committed(self) -> list[Entry | Snapshot]:
        """Committed entries not yet handed out, in order; a `Snapshot` means "replace your state"."""
        out: list[Entry | Snapshot] = []
        if self._snapshot_to_load is not None:
            out.append(self._snapshot_to_load)
            self.applied_index = self._snapshot_to_load.last_index
            self._snapshot_to_load = None
        if self.commit_index > self.applied_index:
            start = self.applied_index - self.snapshot.last_index
            out.extend(self.log[start : self.commit_index - self.snapshot.last_index])
            self.applied_index = self.commit_index
        return out

    def compact(self, snapshot: Snapshot) -> None:
        """Replace the log prefix up to `snapshot.last_index` (which must be applied) by `snapshot`."""
        if snapshot.last_index <= self.snapshot.last_index:
            return
        if snapshot.last_index > self.applied_index:
            raise ValueError("a snapshot must only cover applied entries")
        if self.term_at(snapshot.last_index) != snapshot.last_term:
            raise ValueError("the snapshot's last term does not match the log")
        remaining = [e for e in self.log if e.index > snapshot.last_index]
        self.storage.save_snapshot(snapshot, remaining)
        self.snapshot = snapshot
        self.log = remaining

    def transfer_leadership(self) -> list[Envelope]:
        """A stopping leader asks its most up-to-date peer to take over at once. Only a peer
        holding the whole log qualifies (it will win the vote); otherwise nothing is sent and
        the cluster elects a leader after the usual timeout."""
        if self.role is not Role.LEADER or not self.peers:
            return []
        successor = max(self.peers, key=lambda p: self._match_index.get(p, 0))
        if self._match_index.get(successor, 0) < self.last_index:
            return []
        return [Envelope(successor, TimeoutNow(self.term, self.node_id))]

    def voter_progress(self, now: float) -> list[VoterProgress]:
        """On the leader, every voter's progress (the leader itself: its log end, now); [] elsewhere."""
        if self.role is not Role.LEADER:
            return []
        progress = []
        for voter in self.voters:
            if voter == self.node_id:
                progress.append(VoterProgress(voter, self.last_index, now, now))
                continue
            acked = voter in self._acked
            progress.append(
                VoterProgress(
                    voter,
                    self._match_index.get(voter, 0),
                    self._last_ack[voter] if acked else None,
                    self._caught_up_at.get(voter),
                )
            )
        return progress

    def tick(self, now: float) -> list[Envelope]:
        if self.role is Role.LEADER:
            if self._lost_quorum(now):
                self._become_follower(self.term, None, now)
                return []
            if now >= self._heartbeat_due:
                return self._replicate(now, heartbeat=True)
            return []
        if now >= self._election_deadline:
            return self._start_pre_vote(now)
        return []

    def step(self, message: Message, now: float) -> list[Envelope]:
        if isinstance(message, RequestVote):
            return self._on_request_vote(message, now)
        granted_pre_vote = isinstance(message, VoteResponse) and message.pre_vote and message.granted
        if message.term > self.term and not granted_pre_vote:
            # A newer term exists: whoever we were, we follow now (the sender may not lead).
            leader = (
                message.leader if isinstance(message, AppendEntries | InstallSnapshot | TimeoutNow) else None
            )
            self._become_follower(message.term, leader, now)
        if isinstance(message, VoteResponse):
            return self._on_vote_response(message, now)
        if isinstance(message, AppendEntries):
            return self._on_append_entries(message, now)
        if isinstance(message, AppendResponse):
            return self._on_append_response(message, now)
        if isinstance(message, TimeoutNow):
            if message.term == self.term and self.role is Role.FOLLOWER:
                return self._start_election(now)
            return []
        return self._on_install_snapshot(message, now)

    # --- elections ---------------------------------------------------------------------------

    def _reset_election_deadline(self, now: float) -> None:
        timeout = self.timings.election_timeout_s
        self._election_deadline = now + timeout + self.rng.random() * timeout

    def _become_follower(self, term: int, leader: int | None, now: float) -> None:
        if term != self.term:
            self.term = term
            self.voted_for = None
            self.storage.save_term_and_vote(term, None)
        self.role = Role.FOLLOWER
        self.leader = leader
        self._votes = set()
        self._reset_election_deadline(now)

    def _start_pre_vote(self, now: float) -> list[Envelope]:
        self.role = Role.PRE_CANDIDATE
        self.leader = None
        self._votes = {self.node_id}
        self._reset_election_deadline(now)
        if self._has_majority(self._votes):
            return self._start_election(now)
        request = RequestVote(self.term + 1, self.node_id, self.last_index, self.last_term, pre_vote=True)
        return [Envelope(peer, request) for peer in self.peers]

    def _start_election(self, now: float) -> list[Envelope]:
        self.role = Role.CANDIDATE
        self.term += 1
        self.voted_for = self.node_id
        self.storage.save_term_and_vote(self.term, self.node_id)
        self._votes = {self.node_id}
        self._reset_election_deadline(now)
        if self._has_majority(self._votes):
            return self._become_leader(now)
        request = RequestVote(self.term, self.node_id, self.last_index, self.last_term)
        return [Envelope(peer, request) for peer in self.peers]

    def _log_is_at_least_as_recent(self, last_index: int, last_term: int) -> bool:
        return (last_term, last_index) >= (self.last_term, self.last_index)

    def _on_request_vote(self, request: RequestVote, now: float) -> list[Envelope]:
        up_to_date = self._log_is_at_least_as_recent(request.last_log_index, request.last_log_term)
        if request.pre_vote:
            # Refuse while a leader is alive (it keeps the cluster stable); never change state.
            leader_alive = self.role is Role.LEADER or (
                now - self._last_leader_contact < self.timings.election_timeout_s
            )
            granted = request.term > self.term and up_to_date and not leader_alive
            # A granted pre-vote carries the proposed term, which is not (yet) a real term.
            reply = VoteResponse(request.term if granted else self.term, self.node_id, granted, True)
            return [Envelope(request.candidate, reply)]
        if request.term > self.term:
            self._become_follower(request.term, None, now)
        granted = request.term == self.term and up_to_date and self.voted_for in (None, request.candidate)
        if granted:
            self.voted_for = request.candidate
            self.storage.save_term_and_vote(self.term, request.candidate)
            self._reset_election_deadline(now)
        return [Envelope(request.candidate, VoteResponse(self.term, self.node_id, granted))]

    def _on_vote_response(self, response: VoteResponse, now: float) -> list[Envelope]:
        if response.pre_vote:
            if self.role is Role.PRE_CANDIDATE and response.granted and response.term == self.term + 1:
                self._votes.add(response.voter)
                if self._has_majority(self._votes):
                    return self._start_election(now)
            return []
        if self.role is Role.CANDIDATE and response.granted and response.term == self.term:
            self._votes.add(response.voter)
            if self._has_majority(self._votes):
                return self._become_leader(now)
        return []

    def _has_majority(self, nodes: set[int]) -> bool:
        return len(nodes & set(self.voters)) * 2 > len(self.voters)

    def _become_leader(self, now: float) -> list[Envelope]:
        self.role = Role.LEADER
        self.leader = self.node_id
        self._next_index = dict.fromkeys(self.peers, self.last_index + 1)
        self._match_index = dict.fromkeys(self.peers, 0)
        self._last_ack = dict.fromkeys(self.peers, now)
        self._acked = set()
        self._caught_up_at = {}
        noop = Entry(index=self.last_index + 1, term=self.term, data=b"")
        self._append([noop])
        self._match_index[self.node_id] = noop.index
        self._advance_commit()
        return self._replicate(now, heartbeat=True)

    def _lost_quorum(self, now: float) -> bool:
        window = 2 * self.timings.election_timeout_s
        reachable = {self.node_id} | {p for p in self.peers if now - self._last_ack.get(p, now) < window}
        return not self._has_majority(reachable)

    # --- replication ---------------------------------------------------------------------------

    def _replicate(self, now: float, heartbeat: bool) -> list[Envelope]:
        """AppendEntries (or InstallSnapshot) to each peer; without `heartbeat`, only to peers
        that have entries to receive."""
        self._heartbeat_due = now + self.timings.heartbeat_interval_s
        out = []
        for peer in self.peers:
            next_index = self._next_index[peer]
            if not heartbeat and next_index > self.last_index:
                continue
            out.append(self._append_for(peer, next_index))
        return out

    def _append_for(self, peer: int, next_index: int) -> Envelope:
        if next_index <= self.snapshot.last_index:
            self._next_index[peer] = self.snapshot.last_index + 1
            return Envelope(peer, InstallSnapshot(self.term, self.node_id, self.snapshot))
        prev_index = next_index - 1
        entries = self.entries_from(next_index, self.timings.max_entries_per_append)
        # Pipelining: assume delivery; a rejection's hint moves next_index back.
        self._next_index[peer] = next_index + len(entries)
        prev_term = self.term_at(prev_index)
        assert prev_term is not None
        message = AppendEntries(self.term, self.node_id, prev_index, prev_term, entries, self.commit_index)
        return Envelope(peer, message)

    def _on_append_entries(self, request: AppendEntries, now: float) -> list[Envelope]:
        if request.term < self.term:
            return [Envelope(request.leader, AppendResponse(self.term, self.node_id, False, self.last_index))]
        self._follow(request.leader, now)
        reply = self._accept_entries(request)
        return [Envelope(request.leader, reply)]

    def _follow(self, leader: int, now: float) -> None:
        if self.role is not Role.FOLLOWER or self.leader != leader:
            self.role = Role.FOLLOWER
            self.leader = leader
            self._votes = set()
        self._last_leader_contact = now
        self._reset_election_deadline(now)

    def _accept_entries(self, request: AppendEntries) -> AppendResponse:
        prev_index = request.prev_index
        entries = request.entries
        if prev_index < self.snapshot.last_index:
            # The snapshot holds committed entries, which match the leader's by definition.
            entries = tuple(e for e in entries if e.index > self.snapshot.last_index)
            prev_index = self.snapshot.last_index
        elif self.term_at(prev_index) != request.prev_term:
            if prev_index > self.last_index:
                hint = self.last_index
            else:
                # Skip back over the whole conflicting term in one round trip.
                conflict_term = self.term_at(prev_index)
                hint = prev_index - 1
                while hint > self.commit_index and self.term_at(hint) == conflict_term:
                    hint -= 1
            return AppendResponse(self.term, self.node_id, False, hint)
        new: list[Entry] = []
        for entry in entries:
            existing = self.term_at(entry.index)
            if new or existing is None:
                new.append(entry)
            elif existing != entry.term:
                self._truncate_from(entry.index)
                new.append(entry)
        if new:
            self._append(new)
        last_new = prev_index + len(entries)
        if request.leader_commit > self.commit_index:
            self.commit_index = max(self.commit_index, min(request.leader_commit, last_new))
        return AppendResponse(self.term, self.node_id, True, last_new)

    def _on_append_response(self, response: AppendResponse, now: float) -> list[Envelope]:
        if self.role is not Role.LEADER or response.term != self.term:
            return []
        peer = response.follower
        self._last_ack[peer] = now
        self._acked.add(peer)
        if response.success:
            if response.match_index > self._match_index[peer]:
                self._match_index[peer] = response.match_index
                self._advance_commit()
            if response.match_index >= self.last_index:
                self._caught_up_at[peer] = now
            self._next_index[peer] = max(self._next_index[peer], self._match_index[peer] + 1)
            if (
                self._next_index[peer] <= self.last_index
                and response.match_index + 1 == self._next_index[peer]
            ):
                return [self._append_for(peer, self._next_index[peer])]
            return []
        next_index = max(self._match_index[peer] + 1, min(response.match_index + 1, self.last_index + 1))
        self._next_index[peer] = next_index
        return [self._append_for(peer, next_index)]

    def _advance_commit(self) -> None:
        matches = sorted((self._match_index.get(v, 0) for v in self.voters), reverse=True)
        majority_index = matches[len(self.voters) // 2]
        # Only entries of the current term commit by counting replicas (Raft §5.4.2).
        if majority_index > self.commit_index and self.term_at(majority_index) == self.term:
            self.commit_index = majority_index

    def _on_install_snapshot(self, request: InstallSnapshot, now: float) -> list[Envelope]:
        if request.term < self.term:
            return [Envelope(request.leader, AppendResponse(self.term, self.node_id, False, self.last_index))]
        self._follow(request.leader, now)
        snapshot = request.snapshot
        if snapshot.last_index <= self.commit_index:
            return [
                Envelope(request.leader, AppendResponse(self.term, self.node_id, True, self.commit_index))
            ]
        if self.term_at(snapshot.last_index) == snapshot.last_term:
            remaining = [e for e in self.log if e.index > snapshot.last_index]
        else:
            remaining = []
        self.storage.save_snapshot(snapshot, remaining)
        self.snapshot = snapshot
        self.log = remaining
        self.commit_index = snapshot.last_index
        self.applied_index = snapshot.last_index
        self._snapshot_to_load = snapshot
        return [Envelope(request.leader, AppendResponse(self.term, self.node_id, True, snapshot.last_index))]
