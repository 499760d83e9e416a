"""Raft consensus for one node as a pure state machine: messages and clock ticks in, messages out.

No sockets, no clocks, no threads: the caller passes `now` (seconds, any monotonic origin) and
delivers the returned envelopes. Durable state goes through a `RaftStorage` before the
messages that depend on it are returned. Committed entries are handed out by `take_committed`.

Beyond the Raft paper: pre-vote (a returning node does not disturb a healthy leader), check
quorum (a leader that cannot reach a majority steps down, so clients look elsewhere), a
no-op entry at the start of each leader term (commits earlier terms' entries), optimistic
pipelining with the follower's hint on rejection, and snapshots (InstallSnapshot).

Membership (KIP-853, one voter at a time): in a dynamic quorum the voter set is itself an entry
of the log (`encode_voters`), in force as soon as it is appended, committed or not; a snapshot
carries the set in force at its last index. A leader proposes one change at a time, and only once
an entry of its own term is committed. A leader that is not in the set it replicates does not count
itself, and steps down once that set is committed. A node that is not a voter (an observer, a
removed voter, or a voter whose directory was wiped: voters are known by id *and* directory id)
does not campaign (except a voter of the set before an uncommitted removal: `may_campaign`) and
pulls the log from the leader (`should_pull`, `message_for_observer`); it may still grant votes, as
a voter whose addition has not reached it yet must. A static quorum (`controller.quorum.voters`)
is the same code with a voter set that never changes.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass

from broker.raft.messages import (
    VOTERS_ENTRY_PREFIX,
    AppendEntries,
    AppendResponse,
    Entry,
    Envelope,
    InstallSnapshot,
    Message,
    RequestVote,
    Snapshot,
    TimeoutNow,
    Voter,
    VoteResponse,
    VoterSet,
    decode_voters,
    encode_voters,
)
from broker.raft.storage import RaftStorage


class Role(enum.Enum):
    FOLLOWER = "follower"
    PRE_CANDIDATE = "pre-candidate"
    CANDIDATE = "candidate"
    LEADER = "leader"


class MembershipChangePending(Exception):
    """A voter change is not committed yet (or the leader has not committed an entry of its term):
    Kafka answers REQUEST_TIMED_OUT, the caller retries."""


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
        voters: Sequence[int] | Sequence[Voter],
        storage: RaftStorage,
        now: float,
        timings: RaftTimings | None = None,
        rng: random.Random | None = None,
        *,
        dynamic: bool = False,
        directory_id: str | None = None,
    ) -> None:
        """`voters`: a static quorum's voters, or with `dynamic` the bootstrap voter set
        (`--initial-controllers`; empty for a node that joins as an observer), which the log's and
        snapshot's voter sets replace. `directory_id`: this node's (a dynamic quorum's voters are
        known by id and directory id)."""
        initial = tuple(v if isinstance(v, Voter) else Voter(int(v)) for v in voters)
        if not dynamic and node_id not in {v.node_id for v in initial}:
            raise ValueError(f"node {node_id} is not one of the voters {[v.node_id for v in initial]}")
        self.node_id = node_id
        self.dynamic = dynamic
        self.directory_id = directory_id
        self.storage = storage
        self.timings = timings or RaftTimings()
        self.rng = rng or random.Random()

        persisted = storage.load()
        self.term = persisted.term
        self.voted_for = persisted.voted_for
        self.snapshot = persisted.snapshot
        # Entries after the snapshot; a crash during compaction may have left older ones behind.
        self.log: list[Entry] = [e for e in persisted.entries if e.index > self.snapshot.last_index]
        # Voter sets by the index they took effect at: first the snapshot's (or the bootstrap one at
        # 0, which a dynamic quorum's first leader writes into the log), then each voters entry.
        base = self.snapshot.voters if self.snapshot.voters is not None else initial
        self._voter_sets: list[tuple[int, VoterSet]] = [(self.snapshot.last_index, base)]
        self._bootstrap_in_log = self.snapshot.voters is not None
        self._note_voter_entries(self.log)
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
        self._term_start_index = 0
        self._leader_since = now
        self._apply_voter_set()
        self._reset_election_deadline(now)
        if self.may_campaign and {v.node_id for v in self.voter_set} == {node_id}:
            # The only voter (a single node's quorum): nobody else can lead, so it campaigns on its
            # first tick instead of after an election timeout, as KafkaRaftClient does.
            self._election_deadline = now

    # --- membership ----------------------------------------------------------------------------

    @property
    def voter_set(self) -> VoterSet:
        """The voter set in force: the last one in the log, committed or not."""
        return self._voter_sets[-1][1]

    @property
    def voter_set_index(self) -> int:
        """The log index the voter set in force took effect at (0: the static or bootstrap set)."""
        return self._voter_sets[-1][0]

    @property
    def is_voter(self) -> bool:
        return self._is_voter_in(self.voter_set)

    def _is_voter_in(self, voters: VoterSet) -> bool:
        return any(
            v.node_id == self.node_id
            and (v.directory_id is None or self.directory_id is None or v.directory_id == self.directory_id)
            for v in voters
        )

    @property
    def may_campaign(self) -> bool:
        """A voter; or a voter of the set before an uncommitted one that removes it (Raft thesis §4.2.2):
        a leader that appended its own removal and crashed may be the only one holding that entry, and
        the others, still counting it, can elect nobody else — it must be able to lead until it commits."""
        if self.is_voter:
            return True
        if self.voter_set_index <= self.commit_index or len(self._voter_sets) < 2:
            return False
        return self._is_voter_in(self._voter_sets[-2][1])

    def should_pull(self, now: float) -> bool:
        """Whether this node should fetch the log from the leader itself (dynamic quorums): an observer
        always; a voter that heard from no leader for an election timeout too, because the leader only
        pushes to the voters of its set — a voter removed while it was away learns it only this way."""
        if not self.dynamic or self.role is Role.LEADER:
            return False
        return not self.is_voter or now - self._last_leader_contact > self.timings.election_timeout_s

    @property
    def membership_change_pending(self) -> bool:
        """A voter change is appended but not committed, or this leader has not yet committed an
        entry of its term (before that, the set it inherited may not be committed)."""
        return self.voter_set_index > self.commit_index or self.commit_index < self._term_start_index

    def propose_voters(self, voters: Sequence[Voter], now: float) -> tuple[list[Envelope], Entry]:
        """The leader appends a new voter set (in force at once); one change at a time."""
        if self.role is not Role.LEADER:
            raise NotLeader(self.leader)
        if self.membership_change_pending:
            raise MembershipChangePending("a voter change is not committed yet")
        return self.propose(encode_voters(voters), now)

    def _note_voter_entries(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            voters = decode_voters(entry.data)
            if voters is not None:
                self._voter_sets.append((entry.index, voters))
                self._bootstrap_in_log = True

    def _apply_voter_set(self) -> None:
        """Recompute the voters and the peers to replicate to after the voter set changed."""
        self.voters = tuple(sorted({v.node_id for v in self.voter_set}))
        self.peers = tuple(v for v in self.voters if v != self.node_id)
        if self.role is Role.LEADER:
            for peer in self.peers:
                if peer not in self._next_index:
                    self._next_index[peer] = self.last_index + 1
                    self._match_index[peer] = 0
                    self._last_ack[peer] = self._leader_since
            for gone in [p for p in self._next_index if p not in self.peers]:
                for table in (self._next_index, self._match_index, self._last_ack, self._caught_up_at):
                    table.pop(gone, None)
                self._acked.discard(gone)

    def _voter_sets_changed_by(self, entries: Sequence[Entry]) -> bool:
        return any(e.data.startswith(VOTERS_ENTRY_PREFIX) for e in entries)

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
        if self._voter_sets[-1][0] >= index:
            # A voter set removed with its entry: the one before it is in force again.
            while len(self._voter_sets) > 1 and self._voter_sets[-1][0] >= index:
                self._voter_sets.pop()
            self._apply_voter_set()

    def _append(self, entries: Sequence[Entry]) -> None:
        self.log.extend(entries)
        self.storage.append(entries)
        if self._voter_sets_changed_by(entries):
            self._note_voter_entries(entries)
            self._apply_voter_set()

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
        if self.dynamic and self._bootstrap_in_log:
            snapshot = Snapshot(
                snapshot.last_index, snapshot.last_term, snapshot.data, self._voters_at(snapshot.last_index)
            )
        remaining = [e for e in self.log if e.index > snapshot.last_index]
        self.storage.save_snapshot(snapshot, remaining)
        self.snapshot = snapshot
        self.log = remaining
        self._voter_sets = [
            (snapshot.last_index, self._voters_at(snapshot.last_index)),
            *[(i, v) for i, v in self._voter_sets if i > snapshot.last_index],
        ]

    def _voters_at(self, index: int) -> VoterSet:
        return [v for i, v in self._voter_sets if i <= index][-1]

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

    def message_for_observer(self, next_index: int) -> AppendEntries | InstallSnapshot:
        """On the leader, what an observer that pulls the log from `next_index` on is sent (KRaft's
        observers fetch; they are not pushed to): entries, or the snapshot when those are gone."""
        if self.role is not Role.LEADER:
            raise NotLeader(self.leader)
        if next_index <= self.snapshot.last_index:
            return InstallSnapshot(self.term, self.node_id, self.snapshot)
        next_index = min(next_index, self.last_index + 1)
        prev_index = next_index - 1
        prev_term = self.term_at(prev_index)
        assert prev_term is not None
        entries = self.entries_from(next_index, self.timings.max_entries_per_append)
        return AppendEntries(self.term, self.node_id, prev_index, prev_term, entries, self.commit_index)

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
            if not self.is_voter and self.commit_index >= self.voter_set_index:
                # Removed, and the set without it is committed: hand over and step down (KIP-853).
                handover = self.transfer_leadership()
                self._become_follower(self.term, None, now)
                return handover
            if self._lost_quorum(now):
                self._become_follower(self.term, None, now)
                return []
            if now >= self._heartbeat_due:
                return self._replicate(now, heartbeat=True)
            return []
        if now >= self._election_deadline:
            if not self.may_campaign:
                # Observers and removed voters never campaign.
                self._reset_election_deadline(now)
                return []
            return self._start_pre_vote(now)
        return []

    def step(self, message: Message, now: float, *, pulled: bool = False) -> list[Envelope]:
        """`pulled`: the node fetched `message` from the leader itself (see `should_pull`); it does not
        count as the leader reaching it, so a voter the leader no longer pushes to keeps pulling."""
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
            return self._on_append_entries(message, now, pulled)
        if isinstance(message, AppendResponse):
            return self._on_append_response(message, now)
        if isinstance(message, TimeoutNow):
            if message.term == self.term and self.role is Role.FOLLOWER and self.may_campaign:
                return self._start_election(now)
            return []
        return self._on_install_snapshot(message, now, pulled)

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
        self._leader_since = now
        noop = Entry(index=self.last_index + 1, term=self.term, data=b"")
        self._append([noop])
        if self.dynamic and not self._bootstrap_in_log:
            # The bootstrap voter set (formatted into each initial controller) goes into the log, so
            # observers and later snapshots learn it, as Kafka's first leader writes its VotersRecord.
            self._append(
                [Entry(index=self.last_index + 1, term=self.term, data=encode_voters(self.voter_set))]
            )
        self._term_start_index = self.last_index
        self._match_index[self.node_id] = self.last_index
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

    def _on_append_entries(self, request: AppendEntries, now: float, pulled: bool = False) -> list[Envelope]:
        if request.term < self.term:
            return [Envelope(request.leader, AppendResponse(self.term, self.node_id, False, self.last_index))]
        self._follow(request.leader, now, pulled)
        reply = self._accept_entries(request)
        return [Envelope(request.leader, reply)]

    def _follow(self, leader: int, now: float, pulled: bool = False) -> None:
        if self.role is not Role.FOLLOWER or self.leader != leader:
            self.role = Role.FOLLOWER
            self.leader = leader
            self._votes = set()
        if not pulled:
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
        if peer not in self._next_index:
            return []  # not (or no longer) a voter: an observer's or a removed voter's late answer
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

    def _on_install_snapshot(
        self, request: InstallSnapshot, now: float, pulled: bool = False
    ) -> list[Envelope]:
        if request.term < self.term:
            return [Envelope(request.leader, AppendResponse(self.term, self.node_id, False, self.last_index))]
        self._follow(request.leader, now, pulled)
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
        if snapshot.voters is not None:
            self._voter_sets = [(snapshot.last_index, snapshot.voters)]
            self._bootstrap_in_log = True
        else:
            self._voter_sets = [(snapshot.last_index, self._voter_sets[0][1])]
        self._note_voter_entries(remaining)
        self._apply_voter_set()
        self.commit_index = snapshot.last_index
        self.applied_index = snapshot.last_index
        self._snapshot_to_load = snapshot
        return [Envelope(request.leader, AppendResponse(self.term, self.node_id, True, snapshot.last_index))]
