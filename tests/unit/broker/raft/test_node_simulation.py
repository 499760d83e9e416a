"""Raft under a hostile simulated network, many seeds: safety always, liveness once healed."""

from __future__ import annotations

import pytest

from tests.unit.broker.raft.simulation import Faults, Simulation, check_live_after_heal, run_chaos_then_heal

CALM = Faults(
    loss=0,
    duplicate=0,
    long_delay=0,
    crash_per_s=0,
    leader_crash_per_s=0,
    partition_per_s=0,
    transfer_per_s=0,
)


@pytest.mark.parametrize("seed", range(25))
def test_three_nodes_stay_safe_under_loss_crashes_and_partitions_and_recover(seed: int) -> None:
    simulation = run_chaos_then_heal(3, seed, chaos_s=20.0)
    assert simulation.committed, "nothing was ever committed"
    check_live_after_heal(simulation)


@pytest.mark.parametrize("seed", range(100, 110))
def test_five_nodes_stay_safe_under_loss_crashes_and_partitions_and_recover(seed: int) -> None:
    simulation = run_chaos_then_heal(5, seed, chaos_s=20.0)
    assert simulation.committed
    check_live_after_heal(simulation)


@pytest.mark.parametrize("seed", range(200, 215))
def test_a_dynamic_quorum_stays_safe_while_voters_are_added_and_removed_under_faults(seed: int) -> None:
    # Three bootstrap voters and two observers; the leader adds and removes voters one at a time
    # (itself too) while messages are lost, delayed, reordered and nodes crash and restart.
    simulation = run_chaos_then_heal(3, seed, chaos_s=20.0, spare_nodes=2)
    assert simulation.committed, "nothing was ever committed"
    assert simulation.membership_changes > 0
    check_live_after_heal(simulation)


def test_a_healthy_cluster_elects_one_leader_and_commits_everything_it_accepts() -> None:
    simulation = Simulation(3, seed=7, faults=CALM)
    simulation.run(5.0)
    assert len(simulation.leaders()) == 1
    assert simulation.elections == 1
    proposed = simulation.proposed
    simulation.run(2.0)
    assert simulation.proposed > proposed
    for node in simulation.live():
        values = [row[2] for row in simulation.states[node.node_id].applied if row[2]]
        assert values[: simulation.proposed - 5] == [f"v{i}" for i in range(1, simulation.proposed - 4)]


def test_a_returning_node_does_not_disturb_a_stable_leader() -> None:
    simulation = Simulation(3, seed=11, faults=CALM)
    simulation.run(4.0)
    (leader,) = simulation.leaders()
    term = leader.term
    follower = next(i for i in simulation.ids if i != leader.node_id)
    simulation.groups = [{follower}, {i for i in simulation.ids if i != follower}]
    simulation.heal_at = float("inf")
    simulation.run(8.0)
    simulation.groups = None
    simulation.run(4.0)
    # Pre-vote: the isolated node never raised its term, so the leader kept its term.
    assert simulation.leaders()[0].node_id == leader.node_id
    assert simulation.leaders()[0].term == term


def test_a_stopping_leader_hands_over_without_waiting_for_an_election_timeout() -> None:
    simulation = Simulation(3, seed=5, faults=CALM)
    simulation.run(4.0)
    (leader,) = simulation.leaders()
    term_before = leader.term
    simulation.run(0.5)  # let the followers acknowledge everything
    handover = leader.transfer_leadership()
    assert len(handover) == 1
    simulation.send(leader.node_id, handover)
    simulation.run(0.2)  # well under the 0.5 s election timeout
    (successor,) = simulation.leaders()
    assert successor.node_id == handover[0].to
    assert successor.term == term_before + 1
    assert not leader.is_leader
