"""Where replicas go when a broker leaves or joins, and how a move's progress is computed."""

import pytest

from controlplane.clusters.placement import (
    PlacementRefused,
    check_target,
    plan_drain,
    plan_move_onto,
    reassignment_progress,
)
from controlplane.kafka.reassignments import OngoingReassignment
from controlplane.kafka.topics import PartitionInfo


def _partitions(*replica_lists: list[int], topic: str = "orders") -> dict[tuple[str, int], PartitionInfo]:
    return {
        (topic, index): PartitionInfo(partition=index, leader=replicas[0], replicas=replicas, isr=replicas)
        for index, replicas in enumerate(replica_lists)
    }


def test_draining_a_broker_keeps_each_partitions_replication_factor_on_distinct_brokers() -> None:
    partitions = _partitions([1, 2, 4], [4, 3, 1], [2, 3, 1])

    targets = plan_drain(partitions, 4, brokers=[1, 2, 3, 4])

    assert targets == {("orders", 0): [1, 2, 3], ("orders", 1): [2, 3, 1]}
    assert all(len(set(replicas)) == 3 and 4 not in replicas for replicas in targets.values())


def test_draining_spreads_the_replicas_over_the_least_loaded_brokers() -> None:
    partitions = _partitions([5, 1], [5, 2], [5, 3], [1, 2], [1, 3])

    targets = plan_drain(partitions, 5, brokers=[1, 2, 3, 4, 5])

    newcomers = [replicas[0] for replicas in targets.values()]
    assert 4 in newcomers
    assert len(set(newcomers)) >= 2


def test_draining_is_refused_when_the_remaining_brokers_cannot_hold_every_replica() -> None:
    with pytest.raises(PlacementRefused, match="only 2 brokers would remain"):
        plan_drain(_partitions([1, 2, 3]), 3, brokers=[1, 2, 3])


def test_a_broker_without_replicas_drains_with_nothing_to_move() -> None:
    assert plan_drain(_partitions([1, 2, 3]), 4, brokers=[1, 2, 3, 4]) == {}


def test_moving_onto_a_new_broker_replaces_a_follower_and_keeps_the_leader() -> None:
    partitions = _partitions([1, 2, 3], [2, 3, 1], [4, 1, 2])

    targets = plan_move_onto(partitions, 4)

    assert set(targets) == {("orders", 0), ("orders", 1)}
    for key, replicas in targets.items():
        assert 4 in replicas
        assert len(replicas) == 3
        assert replicas[0] == partitions[key].leader


@pytest.mark.parametrize(
    ("replicas", "message"),
    [([1, 1, 2], "at most once"), ([1, 2, 9], "no broker 9"), ([], "at least one")],
)
def test_a_target_is_refused_with_repeated_unknown_or_no_brokers(replicas: list[int], message: str) -> None:
    info = _partitions([1, 2, 3])[("orders", 0)]

    with pytest.raises(PlacementRefused, match=message):
        check_target(info, ("orders", 0), replicas, brokers={1, 2, 3, 4})


def test_progress_is_the_adding_replicas_bytes_against_the_leaders() -> None:
    ongoing = [
        OngoingReassignment(topic="orders", partition=0, replicas=[1, 2, 3, 4], adding=[4], removing=[3]),
        OngoingReassignment(topic="orders", partition=1, replicas=[2, 3, 4], adding=[4], removing=[]),
    ]
    leaders = {("orders", 0): 1, ("orders", 1): 2}
    sizes = {("orders", 0, 1): 1000, ("orders", 0, 4): 250, ("orders", 1, 2): 3000, ("orders", 1, 4): 3000}

    rows, overall = reassignment_progress(ongoing, leaders, sizes)

    assert [row.percent for row in rows] == [25.0, 100.0]
    assert rows[0].target == [1, 2, 4]
    assert rows[0].adding_bytes[0].bytes == 250
    assert rows[0].leader_bytes == 1000
    assert overall == round(100 * 3250 / 4000, 1)


def test_progress_of_an_empty_leader_or_of_nothing_moving_is_complete() -> None:
    ongoing = [OngoingReassignment(topic="t", partition=0, replicas=[1, 2], adding=[2], removing=[])]

    rows, overall = reassignment_progress(ongoing, {("t", 0): 1}, {})

    assert rows[0].percent == 100.0
    assert overall == 100.0
    assert reassignment_progress([], {}, {}) == ([], 100.0)
