"""A reassignment seen by the ReplicaManager: the leader tracks added replicas, a replica moved away
is stopped and its log deleted (and only then)."""

from __future__ import annotations

from tests.unit.broker.replication.test_manager import (
    TOPIC,
    Node,
    assignment,
    fetch_request,
    fetched,
    node,
    produce_request,
)

__all__ = ["node"]  # the fixture


def test_the_leader_accepts_fetches_from_an_added_replica_and_lets_it_join_the_isr(node: Node) -> None:
    node.manager.on_image_loaded([assignment(replicas=(1, 2), isr=(1, 2))], [])
    node.send(produce_request([b"a", b"b"], acks=1))
    assert fetched(node.send(fetch_request(0, 3))).error_code != 0  # not a replica yet
    moving = assignment(replicas=(1, 2, 3), isr=(1, 2), adding_replicas=(3,), partition_epoch=1)
    node.manager.on_partition_changed(None, moving)
    assert fetched(node.send(fetch_request(0, 3))).error_code == 0
    node.send(fetch_request(2, 2))
    node.send(fetch_request(2, 3))
    node.settle()
    assert node.manager.isr_of(TOPIC, 0) == (1, 2, 3)


def test_the_leader_forgets_a_replica_the_reassignment_removed(node: Node) -> None:
    node.manager.on_image_loaded([assignment(replicas=(1, 2, 3), isr=(1, 2, 3))], [])
    node.manager.on_partition_changed(None, assignment(replicas=(1, 2), isr=(1, 2), partition_epoch=1))
    assert fetched(node.send(fetch_request(0, 3))).error_code != 0
    assert fetched(node.send(fetch_request(0, 2))).error_code == 0


def started(node: Node) -> None:
    """The broker caught up with the metadata log: replication starts."""

    async def start() -> None:
        node.manager.start()

    node.loop.run_until_complete(start())


def test_a_replica_moved_away_is_stopped_and_its_log_deleted(node: Node) -> None:
    node.manager.on_image_loaded([assignment(replicas=(1, 2), isr=(1, 2))], [])
    started(node)
    node.send(produce_request([b"a"], acks=1))
    directory = node.log.directory
    node.manager.on_partition_changed(None, assignment(leader=3, leader_epoch=1, replicas=(3, 2), isr=(3, 2)))
    assert node.manager.partitions == {}
    assert node.state.logs.get(TOPIC, 0) is None
    assert not directory.exists()


def test_history_replayed_before_the_start_deletes_no_log_the_newest_assignment_keeps(node: Node) -> None:
    # A restarted broker replays the metadata log: the partition lived elsewhere, then moved here.
    node.manager.on_image_loaded([assignment(replicas=(1, 2), isr=(1, 2))], [])
    node.send(produce_request([b"a"], acks=1))
    node.manager.on_partition_changed(None, assignment(leader=2, leader_epoch=1, replicas=(2, 3), isr=(2, 3)))
    assert node.state.logs.get(TOPIC, 0) is not None
    node.manager.on_partition_changed(None, assignment(leader=1, leader_epoch=2, replicas=(1, 2), isr=(1,)))
    started(node)
    assert node.log.log_end_offset == 1


def test_at_the_start_logs_of_partitions_assigned_elsewhere_are_deleted(node: Node) -> None:
    node.manager.on_image_loaded([assignment(replicas=(1, 2), isr=(1, 2))], [])
    node.send(produce_request([b"a"], acks=1))
    directory = node.log.directory
    node.manager.on_partition_changed(None, assignment(leader=2, leader_epoch=1, replicas=(2, 3), isr=(2, 3)))
    assert directory.exists()
    started(node)
    assert not directory.exists()


def test_a_stale_assignment_without_this_broker_deletes_nothing(node: Node) -> None:
    node.manager.on_image_loaded([assignment(leader_epoch=3)], [])
    node.manager.on_partition_changed(None, assignment(leader=2, leader_epoch=2, replicas=(2, 3), isr=(2, 3)))
    assert node.state.logs.get(TOPIC, 0) is not None
    assert node.manager.leader_partition(TOPIC, 0)[0] is not None
