"""KIP-853 membership changes in the Raft state machine: the voter set in the log, observers, one change
at a time, a removed leader stepping down, snapshots carrying the set, directory ids."""

from __future__ import annotations

import random

import pytest

from broker.raft.messages import (
    AppendEntries,
    Entry,
    Envelope,
    Snapshot,
    Voter,
    decode_voters,
    encode_voters,
)
from broker.raft.node import MembershipChangePending, RaftNode, RaftTimings, Role
from broker.raft.storage import MemoryStorage

TIMINGS = RaftTimings(election_timeout_s=0.5, heartbeat_interval_s=0.05)
STEP_S = 0.01


def voter(node_id: int) -> Voter:
    return Voter(node_id, f"00000000-0000-0000-0000-00000000000{node_id}", "127.0.0.1", 9090 + node_id)


class Network:
    """Instant, lossless delivery between dynamic-quorum nodes; `down` nodes drop what they are sent."""

    def __init__(self, initial: list[int], observers: list[int] = ()) -> None:  # type: ignore[assignment]
        bootstrap = [voter(i) for i in initial]
        self.now = 0.0
        self.storages = {i: MemoryStorage() for i in [*initial, *observers]}
        self.nodes: dict[int, RaftNode] = {}
        self.down: set[int] = set()
        for i in initial:
            self.nodes[i] = self._node(i, bootstrap)
        for i in observers:
            self.nodes[i] = self._node(i, [])

    def _node(self, node_id: int, bootstrap: list[Voter]) -> RaftNode:
        return RaftNode(
            node_id,
            bootstrap,
            self.storages[node_id],
            self.now,
            TIMINGS,
            random.Random(node_id),
            dynamic=True,
            directory_id=voter(node_id).directory_id,
        )

    def deliver(self, envelopes: list[Envelope]) -> None:
        queue = list(envelopes)
        while queue:
            envelope = queue.pop(0)
            if envelope.to in self.down or envelope.to not in self.nodes:
                continue
            queue.extend(self.nodes[envelope.to].step(envelope.message, self.now))

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / STEP_S)):
            self.now += STEP_S
            for node_id, node in list(self.nodes.items()):
                if node_id not in self.down:
                    self.deliver(node.tick(self.now))

    def leader(self) -> RaftNode:
        leaders = [n for i, n in self.nodes.items() if n.is_leader and i not in self.down]
        assert len(leaders) == 1, [(i, n.role) for i, n in self.nodes.items()]
        return leaders[0]

    def observer_pull(self, node_id: int) -> None:
        """What the controller's observer loop does: fetch from the leader and apply the answer."""
        observer = self.nodes[node_id]
        message = self.leader().message_for_observer(observer.last_index + 1)
        observer.step(message, self.now)

    def propose(self, data: bytes) -> Entry:
        envelopes, entry = self.leader().propose(data, self.now)
        self.deliver(envelopes)
        return entry


def test_the_first_leader_writes_the_bootstrap_voter_set_into_the_log() -> None:
    network = Network([1, 2, 3])
    network.run(3)
    leader = network.leader()
    sets = [decode_voters(e.data) for e in leader.log if decode_voters(e.data) is not None]
    assert sets == [(voter(1), voter(2), voter(3))]
    assert not leader.membership_change_pending


def test_an_observer_catches_up_is_added_and_then_votes() -> None:
    network = Network([1, 2, 3], observers=[4])
    network.run(3)
    network.propose(b'["x"]')
    observer = network.nodes[4]
    assert not observer.is_voter
    for _ in range(5):
        network.observer_pull(4)
    assert observer.last_index == network.leader().last_index
    assert observer.voters == (1, 2, 3)

    leader = network.leader()
    envelopes, entry = leader.propose_voters([*leader.voter_set, voter(4)], network.now)
    # In force at once, on the leader, before it commits: it replicates to 4 and counts it.
    assert leader.voters == (1, 2, 3, 4)
    assert leader.commit_index < entry.index
    with pytest.raises(MembershipChangePending):
        leader.propose_voters([*leader.voter_set], network.now)
    network.deliver(envelopes)
    network.run(1)
    assert leader.commit_index >= entry.index
    assert observer.is_voter
    assert observer.voters == (1, 2, 3, 4)
    # With 4 voters a majority is 3: two nodes down stop commits, one does not.
    network.down = {next(i for i in (2, 3) if i != leader.node_id)}
    committed = network.propose(b'["y"]')
    network.run(0.5)
    assert leader.commit_index >= committed.index


def test_a_removed_leader_steps_down_once_the_removal_is_committed() -> None:
    network = Network([1, 2, 3])
    network.run(3)
    old = network.leader()
    envelopes, _entry = old.propose_voters(
        [v for v in old.voter_set if v.node_id != old.node_id], network.now
    )
    assert not old.is_voter
    assert old.is_leader  # it still replicates the set that removes it until that commits
    network.deliver(envelopes)
    network.run(3)
    assert not old.is_leader
    new = network.leader()
    assert new.node_id != old.node_id
    assert new.voters == tuple(sorted({1, 2, 3} - {old.node_id}))
    # The removed node never campaigns again (it would disturb the quorum with higher terms).
    term = new.term
    network.run(5)
    assert network.leader() is new
    assert new.term == term
    assert old.role is Role.FOLLOWER


def test_a_voter_set_removed_with_its_uncommitted_entry_is_no_longer_in_force() -> None:
    network = Network([1, 2, 3])
    network.run(3)
    follower = next(n for n in network.nodes.values() if not n.is_leader)
    leader = network.leader()
    last = follower.last_index
    data = encode_voters([*leader.voter_set, voter(5)])
    follower.step(
        AppendEntries(
            leader.term,
            leader.node_id,
            last,
            follower.term_at(last) or 0,
            (Entry(last + 1, leader.term, data),),
            0,
        ),
        network.now,
    )
    assert follower.voters == (1, 2, 3, 5)
    # A new leader of a later term overwrites the uncommitted entry: the previous set is back.
    follower.step(
        AppendEntries(
            leader.term + 1,
            leader.node_id,
            last,
            follower.term_at(last) or 0,
            (Entry(last + 1, leader.term + 1, b""),),
            0,
        ),
        network.now,
    )
    assert follower.voters == (1, 2, 3)


def test_a_snapshot_carries_the_voter_set_and_a_restart_keeps_it() -> None:
    network = Network([1, 2, 3], observers=[4])
    network.run(3)
    for _ in range(5):
        network.observer_pull(4)
    leader = network.leader()
    envelopes, _entry = leader.propose_voters([*leader.voter_set, voter(4)], network.now)
    network.deliver(envelopes)
    network.run(1)
    network.propose(b'["after"]')
    network.run(0.5)
    leader.take_committed()
    leader.compact(Snapshot(leader.applied_index, leader.term_at(leader.applied_index) or 0, b"state"))
    assert leader.snapshot.voters == (voter(1), voter(2), voter(3), voter(4))
    restarted = RaftNode(
        leader.node_id,
        [voter(1), voter(2), voter(3)],  # the bootstrap set it was formatted with
        network.storages[leader.node_id],
        network.now,
        TIMINGS,
        dynamic=True,
        directory_id=leader.directory_id,
    )
    assert restarted.voters == (1, 2, 3, 4)
    # A node that pulls from scratch gets the snapshot and, with it, the voter set.
    newcomer = RaftNode(9, [], MemoryStorage(), network.now, TIMINGS, dynamic=True, directory_id="x")
    newcomer.step(network.leader().message_for_observer(1), network.now)
    assert newcomer.voters == (1, 2, 3, 4)
    assert not newcomer.is_voter


def test_a_node_with_another_directory_id_is_not_the_voter() -> None:
    # Voter 2 was wiped and formatted again: same id, new directory. It must not campaign as 2.
    storage = MemoryStorage()
    wiped = RaftNode(
        2, [voter(1), voter(2), voter(3)], storage, 0.0, TIMINGS, dynamic=True, directory_id="new-directory"
    )
    assert not wiped.is_voter
    assert wiped.tick(10.0) == []
    assert wiped.role is Role.FOLLOWER


def test_a_static_quorum_is_unchanged() -> None:
    node = RaftNode(1, [1, 2, 3], MemoryStorage(), 0.0, TIMINGS)
    assert node.voter_set == (Voter(1), Voter(2), Voter(3))
    assert node.is_voter
    with pytest.raises(ValueError, match="not one of the voters"):
        RaftNode(4, [1, 2, 3], MemoryStorage(), 0.0, TIMINGS)
