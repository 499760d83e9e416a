"""Single-node behaviours of the Raft state machine, driven message by message."""

from __future__ import annotations

import random

import pytest

from broker.raft.messages import AppendEntries, AppendResponse, Entry, RequestVote, Snapshot, VoteResponse
from broker.raft.node import NotLeader, RaftNode, RaftTimings, Role, VoterProgress
from broker.raft.storage import MemoryStorage

TIMINGS = RaftTimings(election_timeout_s=1.0, heartbeat_interval_s=0.1)


def node_with_log(node_id: int, term: int, entries: list[Entry]) -> RaftNode:
    storage = MemoryStorage()
    storage.save_term_and_vote(term, None)
    storage.append(entries)
    return RaftNode(node_id, [1, 2, 3], storage, now=0.0, timings=TIMINGS, rng=random.Random(node_id))


def elect(node: RaftNode, now: float = 5.0) -> None:
    """Make `node` leader of the next term with votes from nodes 2 and 3."""
    node.tick(now)  # election timeout -> pre-vote
    assert node.role is Role.PRE_CANDIDATE
    node.step(VoteResponse(node.term + 1, 2, True, pre_vote=True), now)
    assert node.role is Role.CANDIDATE
    node.step(VoteResponse(node.term, 2, True), now)
    assert node.role is Role.LEADER


def test_it_only_commits_an_earlier_terms_entry_together_with_one_of_its_own_term() -> None:
    # Raft §5.4.2 (the "figure 8" case): a majority holding an old-term entry does not commit it.
    leader = node_with_log(1, 2, [Entry(1, 1, b"a"), Entry(2, 2, b"b")])
    elect(leader)
    assert leader.term == 3
    assert leader.last_index == 3
    leader.step(AppendResponse(3, 2, True, match_index=2), 5.1)
    assert leader.commit_index == 0
    leader.step(AppendResponse(3, 2, True, match_index=3), 5.2)
    assert leader.commit_index == 3
    assert [e.data for e in leader.take_committed() if isinstance(e, Entry)] == [b"a", b"b", b""]


def test_it_refuses_to_vote_for_a_candidate_with_an_older_log() -> None:
    voter = node_with_log(2, 3, [Entry(1, 1, b"a"), Entry(2, 3, b"b")])
    (reply,) = voter.step(RequestVote(term=4, candidate=1, last_log_index=5, last_log_term=2), 0.1)
    assert reply.message == VoteResponse(4, 2, False)
    (reply,) = voter.step(RequestVote(term=4, candidate=3, last_log_index=2, last_log_term=3), 0.2)
    assert reply.message == VoteResponse(4, 2, True)
    # One vote per term, remembered across a restart.
    restarted = RaftNode(2, [1, 2, 3], voter.storage, now=0.0, timings=TIMINGS)
    (reply,) = restarted.step(RequestVote(term=4, candidate=1, last_log_index=9, last_log_term=3), 0.3)
    assert reply.message.granted is False


def test_a_follower_truncates_a_conflicting_tail_and_reports_where_to_resume() -> None:
    follower = node_with_log(2, 2, [Entry(1, 1, b"a"), Entry(2, 2, b"x"), Entry(3, 2, b"y")])
    (reply,) = follower.step(AppendEntries(3, 1, prev_index=3, prev_term=3, entries=(), leader_commit=1), 0.1)
    assert reply.message == AppendResponse(3, 2, False, match_index=1)  # skipped all of term 2
    append = AppendEntries(3, 1, prev_index=1, prev_term=1, entries=(Entry(2, 3, b"b"),), leader_commit=2)
    (reply,) = follower.step(append, 0.2)
    assert reply.message == AppendResponse(3, 2, True, match_index=2)
    assert [e.data for e in follower.log] == [b"a", b"b"]
    assert follower.storage.load().entries == follower.log
    assert follower.commit_index == 2


def test_a_stale_append_does_not_cut_entries_it_does_not_mention() -> None:
    follower = node_with_log(2, 1, [Entry(1, 1, b"a"), Entry(2, 1, b"b")])
    (reply,) = follower.step(AppendEntries(1, 1, 0, 0, (Entry(1, 1, b"a"),), leader_commit=0), 0.1)
    assert reply.message.success
    assert reply.message.match_index == 1
    assert len(follower.log) == 2


def test_only_the_leader_accepts_proposals() -> None:
    follower = node_with_log(2, 1, [])
    follower.step(AppendEntries(1, 3, 0, 0, (), 0), 0.1)
    with pytest.raises(NotLeader) as raised:
        follower.propose(b"x", 0.2)
    assert raised.value.leader == 3


def test_a_leader_that_hears_from_no_majority_steps_down() -> None:
    leader = node_with_log(1, 0, [])
    elect(leader, now=5.0)
    leader.tick(5.5)
    assert leader.is_leader
    leader.tick(5.0 + 2 * TIMINGS.election_timeout_s + 0.01)
    assert leader.role is Role.FOLLOWER


def test_a_compacted_node_restarts_from_its_snapshot_then_its_remaining_entries() -> None:
    storage = MemoryStorage()
    node = RaftNode(1, [1], storage, now=0.0, timings=TIMINGS)
    node.tick(5.0)  # a single voter elects itself
    assert node.is_leader
    for value in (b"a", b"b", b"c"):
        node.propose(value, 5.0)
    applied = node.take_committed()
    assert [e.data for e in applied if isinstance(e, Entry)] == [b"", b"a", b"b", b"c"]
    node.compact(Snapshot(last_index=3, last_term=1, data=b"state-after-b"))
    restarted = RaftNode(1, [1], storage, now=0.0, timings=TIMINGS)
    replay = restarted.take_committed()
    assert replay == [Snapshot(3, 1, b"state-after-b")]
    restarted.tick(10.0)
    assert restarted.is_leader
    assert restarted.term == 2
    assert [e.data for e in restarted.take_committed() if isinstance(e, Entry)] == [b"c", b""]


def test_the_leader_reports_each_voters_progress_for_describe_quorum() -> None:
    leader = node_with_log(1, 1, [Entry(1, 1, b"a")])
    assert leader.voter_progress(1.0) == []  # only the leader knows
    elect(leader)
    assert leader.last_index == 2  # the no-op of its term
    leader.step(AppendResponse(leader.term, 2, True, match_index=1), 5.1)  # behind
    leader.step(AppendResponse(leader.term, 2, True, match_index=2), 5.2)  # caught up
    leader.step(AppendResponse(leader.term, 2, True, match_index=2), 5.3)
    leader.propose(b"b", 5.35)
    leader.step(AppendResponse(leader.term, 2, True, match_index=2), 5.4)  # behind again
    assert leader.voter_progress(6.0) == [
        VoterProgress(1, 3, 6.0, 6.0),
        VoterProgress(2, 2, 5.4, 5.3),
        VoterProgress(3, 0, None, None),  # never answered in this term
    ]
