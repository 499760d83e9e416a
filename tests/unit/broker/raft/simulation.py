"""A deterministic, randomized simulation of a Raft cluster that checks Raft's safety properties.

Virtual time, a network that loses, delays, reorders and duplicates messages, crashes with
restart from the persisted state (MemoryStorage outlives the node), partitions, and
snapshots taken at random. Every step checks election safety and state-machine safety;
`check_log_matching` and leader completeness are checked as the run goes. Used by
tests/unit/broker/raft and by bench/raft_soak.py.
"""

from __future__ import annotations

import heapq
import json
import random
from dataclasses import dataclass, field

from broker.raft.messages import AppendResponse, Entry, Envelope, Message, Snapshot, Voter
from broker.raft.node import MembershipChangePending, RaftNode, RaftTimings, Role
from broker.raft.storage import MemoryStorage

TIMINGS = RaftTimings(election_timeout_s=0.5, heartbeat_interval_s=0.05, max_entries_per_append=4)
STEP_S = 0.01


class SafetyViolation(AssertionError):
    pass


@dataclass
class Faults:
    loss: float = 0.1
    duplicate: float = 0.05
    max_delay_s: float = 0.08
    # Now and then a message is held back for long, so it arrives terms later.
    long_delay: float = 0.03
    long_delay_s: float = 3.0
    crash_per_s: float = 0.3
    leader_crash_per_s: float = 0.15
    restart_after_s: tuple[float, float] = (0.2, 2.0)
    partition_per_s: float = 0.25
    heal_after_s: tuple[float, float] = (0.5, 4.0)
    propose_per_s: float = 20.0
    compact_per_s: float = 0.2
    transfer_per_s: float = 0.1
    # A dynamic quorum (KIP-853): the leader adds a caught-up observer or removes a voter this often.
    membership_change_per_s: float = 0.5
    observer_pull_per_s: float = 20.0


@dataclass
class ReplicaState:
    """The replicated state machine: every applied entry as (index, term, data)."""

    applied: list[tuple[int, int, str]] = field(default_factory=list)

    def snapshot_bytes(self) -> bytes:
        return json.dumps(self.applied).encode()


class Simulation:
    def __init__(self, size: int, seed: int, faults: Faults | None = None, *, spare_nodes: int = 0) -> None:
        """`spare_nodes` > 0 makes a dynamic quorum: nodes 1..size are the bootstrap voters, the spares
        start as observers, and voters are added and removed one at a time while faults happen."""
        self.rng = random.Random(seed)
        self.seed = seed
        self.faults = faults or Faults()
        self.now = 0.0
        self.dynamic = spare_nodes > 0
        self.bootstrap = [Voter(i, f"dir-{i}") for i in range(1, size + 1)]
        self.membership_changes = 0
        self.pull_from: dict[int, int] = {}
        self.ids = list(range(1, size + spare_nodes + 1))
        self.storages = {i: MemoryStorage() for i in self.ids}
        self.nodes: dict[int, RaftNode | None] = {}
        self.states: dict[int, ReplicaState] = {}
        self.restart_at: dict[int, float] = {}
        self.queue: list[tuple[float, int, int, int, Message]] = []
        self._sequence = 0
        self.groups: list[set[int]] | None = None  # a partition: nodes talk only inside their group
        self.heal_at = 0.0
        self.leader_of_term: dict[int, int] = {}
        self.committed: dict[int, tuple[int, str]] = {}  # index -> (term, data) seen applied anywhere
        self.proposed = 0
        self.elections = 0
        for node_id in self.ids:
            self._start(node_id)

    # --- nodes -------------------------------------------------------------------------------

    def _start(self, node_id: int) -> None:
        node_rng = random.Random(self.rng.random())
        if self.dynamic:
            bootstrap = self.bootstrap if any(v.node_id == node_id for v in self.bootstrap) else []
            self.nodes[node_id] = RaftNode(
                node_id,
                bootstrap,
                self.storages[node_id],
                self.now,
                TIMINGS,
                node_rng,
                dynamic=True,
                directory_id=f"dir-{node_id}",
            )
        else:
            self.nodes[node_id] = RaftNode(
                node_id, self.ids, self.storages[node_id], self.now, TIMINGS, node_rng
            )
        self.states[node_id] = ReplicaState()

    def crash(self, node_id: int) -> None:
        self.nodes[node_id] = None
        low, high = self.faults.restart_after_s
        self.restart_at[node_id] = self.now + self.rng.uniform(low, high)

    def live(self) -> list[RaftNode]:
        return [n for n in self.nodes.values() if n is not None]

    def leaders(self) -> list[RaftNode]:
        return [n for n in self.live() if n.role is Role.LEADER]

    # --- network -----------------------------------------------------------------------------

    def can_talk(self, a: int, b: int) -> bool:
        if self.groups is None:
            return True
        return any(a in group and b in group for group in self.groups)

    def send(self, sender: int, envelopes: list[Envelope]) -> None:
        for envelope in envelopes:
            copies = 2 if self.rng.random() < self.faults.duplicate else 1
            for _ in range(copies):
                if self.rng.random() < self.faults.loss:
                    continue
                delay = self.rng.uniform(0.001, self.faults.max_delay_s)
                if self.rng.random() < self.faults.long_delay:
                    delay = self.rng.uniform(0.001, self.faults.long_delay_s)
                deliver_at = self.now + delay
                self._sequence += 1
                heapq.heappush(
                    self.queue, (deliver_at, self._sequence, sender, envelope.to, envelope.message)
                )

    def _deliver_due(self) -> None:
        while self.queue and self.queue[0][0] <= self.now:
            _, _, sender, receiver, message = heapq.heappop(self.queue)
            node = self.nodes.get(receiver)
            if node is None or not self.can_talk(sender, receiver):
                continue
            was_leader = node.role is Role.LEADER
            self.send(receiver, node.step(message, self.now))
            self._after_activity(node, was_leader)

    # --- the run -----------------------------------------------------------------------------

    def run(self, seconds: float, faults_on: bool = True) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now = round(self.now + STEP_S, 6)
            if faults_on:
                self._inject_faults()
            self._restart_due()
            self._deliver_due()
            for node in self.live():
                was_leader = node.role is Role.LEADER
                self.send(node.node_id, node.tick(self.now))
                self._after_activity(node, was_leader)
            self._maybe_propose()
            self._maybe_compact()
            if self.dynamic:
                self._observers_pull()
                self._maybe_change_membership()

    def heal(self) -> None:
        """Stop faults: restart crashed nodes, remove partitions, deliver reliably from now on."""
        self.groups = None
        for node_id, node in self.nodes.items():
            if node is None:
                self._start(node_id)
        self.restart_at.clear()
        self.faults = Faults(
            loss=0.0,
            duplicate=0.0,
            max_delay_s=self.faults.max_delay_s,
            long_delay=0.0,
            crash_per_s=0.0,
            leader_crash_per_s=0.0,
            partition_per_s=0.0,
            propose_per_s=self.faults.propose_per_s,
            compact_per_s=self.faults.compact_per_s,
            transfer_per_s=0.0,
            membership_change_per_s=0.0,
            observer_pull_per_s=self.faults.observer_pull_per_s,
        )

    def _inject_faults(self) -> None:
        if self.rng.random() < self.faults.crash_per_s * STEP_S:
            running = [i for i in self.ids if self.nodes[i] is not None]
            if running:
                self.crash(self.rng.choice(running))
        leaders = self.leaders()
        if leaders and self.rng.random() < self.faults.leader_crash_per_s * STEP_S:
            self.crash(self.rng.choice(leaders).node_id)
        elif leaders and self.rng.random() < self.faults.transfer_per_s * STEP_S:
            leader = self.rng.choice(leaders)
            self.send(leader.node_id, leader.transfer_leadership())
        if self.groups is None and self.rng.random() < self.faults.partition_per_s * STEP_S:
            shuffled = self.ids[:]
            self.rng.shuffle(shuffled)
            cut = self.rng.randint(1, len(shuffled) - 1)
            self.groups = [set(shuffled[:cut]), set(shuffled[cut:])]
            low, high = self.faults.heal_after_s
            self.heal_at = self.now + self.rng.uniform(low, high)
        elif self.groups is not None and self.now >= self.heal_at:
            self.groups = None

    def _restart_due(self) -> None:
        for node_id, at in list(self.restart_at.items()):
            if self.now >= at:
                del self.restart_at[node_id]
                self._start(node_id)

    def _maybe_propose(self) -> None:
        if self.rng.random() >= self.faults.propose_per_s * STEP_S:
            return
        leaders = self.leaders()
        if not leaders:
            return
        leader = self.rng.choice(leaders)
        self.proposed += 1
        envelopes, _ = leader.propose(f"v{self.proposed}".encode(), self.now)
        self.send(leader.node_id, envelopes)
        self._after_activity(leader, True)

    def _observers_pull(self) -> None:
        """Non-voters fetch from the newest leader (the controller's observer loop), over the faulty network."""
        leaders = self.leaders()
        if not leaders:
            return
        leader = max(leaders, key=lambda n: n.term)
        for node in self.live():
            if (
                not node.should_pull(self.now)
                or self.rng.random() >= self.faults.observer_pull_per_s * STEP_S
            ):
                continue
            if not self.can_talk(node.node_id, leader.node_id) or self.rng.random() < self.faults.loss:
                continue
            # Like the controller's observer loop: from its log end, or from where its last answer
            # said the logs match (a removed voter may hold entries the leader's log replaced).
            next_index = self.pull_from.pop(node.node_id, node.last_index + 1)
            was_leader = node.role is Role.LEADER
            for answer in node.step(leader.message_for_observer(next_index), self.now, pulled=True):
                if isinstance(answer.message, AppendResponse) and not answer.message.success:
                    self.pull_from[node.node_id] = answer.message.match_index + 1
            self._after_activity(node, was_leader)

    def _maybe_change_membership(self) -> None:
        if self.rng.random() >= self.faults.membership_change_per_s * STEP_S:
            return
        leaders = self.leaders()
        if not leaders:
            return
        leader = max(leaders, key=lambda n: n.term)
        voters = list(leader.voter_set)
        candidates = [
            n for n in self.live() if n.node_id not in leader.voters and n.last_index >= leader.commit_index
        ]
        if candidates and (len(voters) < 3 or self.rng.random() < 0.5):
            added = self.rng.choice(candidates)
            new_set = [*voters, Voter(added.node_id, added.directory_id)]
        elif len(voters) > 1:
            removed = self.rng.choice(voters)
            new_set = [v for v in voters if v != removed]
        else:
            return
        try:
            envelopes, _ = leader.propose_voters(new_set, self.now)
        except MembershipChangePending:
            return
        self.membership_changes += 1
        self.send(leader.node_id, envelopes)
        self._after_activity(leader, True)

    def propose_on_leader(self, value: str) -> Entry | None:
        leaders = self.leaders()
        if not leaders:
            return None
        leader = max(leaders, key=lambda n: n.term)
        envelopes, entry = leader.propose(value.encode(), self.now)
        self.send(leader.node_id, envelopes)
        self._after_activity(leader, True)
        return entry

    def _maybe_compact(self) -> None:
        for node in self.live():
            if self.rng.random() < self.faults.compact_per_s * STEP_S and node.applied_index > 0:
                state = self.states[node.node_id]
                last_index, last_term, _ = state.applied[-1]
                if last_index > node.snapshot.last_index:
                    node.compact(Snapshot(last_index, last_term, state.snapshot_bytes()))

    # --- checks ------------------------------------------------------------------------------

    def _after_activity(self, node: RaftNode, was_leader: bool) -> None:
        self._apply_committed(node)
        if node.role is Role.LEADER:
            holder = self.leader_of_term.setdefault(node.term, node.node_id)
            if holder != node.node_id:
                raise SafetyViolation(
                    f"seed {self.seed}: nodes {holder} and {node.node_id} lead term {node.term}"
                )
            if not was_leader:
                self.elections += 1
                self._check_leader_completeness(node)

    def _apply_committed(self, node: RaftNode) -> None:
        state = self.states[node.node_id]
        for item in node.take_committed():
            if isinstance(item, Snapshot):
                state.applied = [tuple(e) for e in json.loads(item.data)]  # type: ignore[misc]
                if state.applied and state.applied[-1][0] != item.last_index:
                    raise SafetyViolation(f"seed {self.seed}: snapshot content does not end at its index")
                for index, term, data in state.applied:
                    self._record_committed(node.node_id, index, term, data)
                continue
            expected_index = state.applied[-1][0] + 1 if state.applied else 1
            if item.index != expected_index:
                raise SafetyViolation(
                    f"seed {self.seed}: node {node.node_id} applied {item.index}, not {expected_index}"
                )
            data = item.data.decode()
            state.applied.append((item.index, item.term, data))
            self._record_committed(node.node_id, item.index, item.term, data)

    def _record_committed(self, node_id: int, index: int, term: int, data: str) -> None:
        known = self.committed.setdefault(index, (term, data))
        if known != (term, data):
            raise SafetyViolation(
                f"seed {self.seed}: node {node_id} applied {(term, data)} at {index}, another applied {known}"
            )

    def _check_leader_completeness(self, leader: RaftNode) -> None:
        for index, (term, _) in self.committed.items():
            if index > leader.last_index:
                raise SafetyViolation(
                    f"seed {self.seed}: leader {leader.node_id} lacks committed index {index}"
                )
            if index > leader.snapshot.last_index and leader.term_at(index) != term:
                raise SafetyViolation(
                    f"seed {self.seed}: leader {leader.node_id} has another entry at {index}"
                )

    def check_log_matching(self) -> None:
        """Two logs with an entry of the same index and term are identical up to that entry."""
        live = self.live()
        for position, a in enumerate(live):
            for b in live[position + 1 :]:
                low = max(a.snapshot.last_index, b.snapshot.last_index) + 1
                high = min(a.last_index, b.last_index)
                matched = False
                for index in range(high, low - 1, -1):
                    ea = a.log[index - a.snapshot.last_index - 1]
                    eb = b.log[index - b.snapshot.last_index - 1]
                    if matched and ea != eb:
                        raise SafetyViolation(
                            f"seed {self.seed}: logs of {a.node_id} and {b.node_id} differ at {index}"
                        )
                    if ea.term == eb.term:
                        matched = True
                        if ea.data != eb.data:
                            raise SafetyViolation(
                                f"seed {self.seed}: same index and term, other data at {index}"
                            )


def run_chaos_then_heal(size: int, seed: int, chaos_s: float, spare_nodes: int = 0) -> Simulation:
    """`chaos_s` virtual seconds of faults (log matching checked every 2 s), then heal and settle."""
    simulation = Simulation(size, seed, spare_nodes=spare_nodes)
    elapsed = 0.0
    while elapsed < chaos_s:
        simulation.run(2.0)
        simulation.check_log_matching()
        elapsed += 2.0
    simulation.heal()
    simulation.run(6.0, faults_on=False)
    return simulation


def check_live_after_heal(simulation: Simulation) -> None:
    """Liveness: one leader, and an entry it accepts is applied by every node."""
    leaders = simulation.leaders()
    if len(leaders) != 1:
        raise AssertionError(f"seed {simulation.seed}: {len(leaders)} leaders after healing")
    entry = simulation.propose_on_leader("after-heal")
    assert entry is not None
    simulation.run(3.0, faults_on=False)
    for node in simulation.live():
        if (entry.index, entry.term, "after-heal") not in simulation.states[node.node_id].applied:
            raise AssertionError(f"seed {simulation.seed}: node {node.node_id} did not apply the entry")
    simulation.check_log_matching()
