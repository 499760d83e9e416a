"""The quorum driver: how often the controller ticks its Raft node. A lone leader (a single node's one-voter
quorum) has nothing to time, any other node does."""

from __future__ import annotations

import random

from broker.controller.quorum_driver import LONE_LEADER_TICK_S, TICK_INTERVAL_S, tick_interval
from broker.raft.messages import VoteResponse
from broker.raft.node import RaftNode, RaftTimings, Role
from broker.raft.storage import MemoryStorage

TIMINGS = RaftTimings(election_timeout_s=1.0, heartbeat_interval_s=0.1)


def raft_node(voters: list[int]) -> RaftNode:
    return RaftNode(1, voters, MemoryStorage(), now=0.0, timings=TIMINGS, rng=random.Random(1))


def test_a_lone_voter_ticks_often_until_it_leads_then_rarely() -> None:
    node = raft_node([1])
    assert tick_interval(node) == TICK_INTERVAL_S  # its first ticks elect it
    node.tick(5.0)
    node.tick(5.0)
    assert node.role is Role.LEADER
    assert tick_interval(node) == LONE_LEADER_TICK_S
    # Its heartbeats go to nobody and its quorum is itself: a late tick changes nothing.
    assert node.tick(5.0 + LONE_LEADER_TICK_S) == []
    assert node.role is Role.LEADER


def test_a_leader_with_other_voters_ticks_in_time_for_its_heartbeats() -> None:
    node = raft_node([1, 2, 3])
    node.tick(5.0)
    node.step(VoteResponse(node.term + 1, 2, True, pre_vote=True), 5.0)
    node.step(VoteResponse(node.term, 2, True), 5.0)
    assert node.role is Role.LEADER
    assert tick_interval(node) == TICK_INTERVAL_S < TIMINGS.heartbeat_interval_s
