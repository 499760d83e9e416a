"""Reassignments (KIP-455), ElectLeaders and broker unregistration, decided against an image."""

from __future__ import annotations

from broker.controller.api import NO_LEADER, AlterPartitionRequest, PartitionAssignment
from broker.controller.decisions import ELECTION_PREFERRED, ELECTION_UNCLEAN, Decider, TopicRequest
from broker.controller.image import MetadataImage
from tests.unit.broker.controller.test_decisions import add_to_isr, cluster, commit, fence, only_partition


def orders(image: MetadataImage, decider: Decider, replicas: int = 2) -> PartitionAssignment:
    """A one-partition topic on brokers 1..`replicas` (the first brokers are the least loaded)."""
    commit(
        image, decider.create_topic(image, TopicRequest("orders", partitions=1, replication_factor=replicas))
    )
    p = only_partition(image)
    assert sorted(p.replicas) == list(range(1, replicas + 1))
    return p


def expand_isr(image: MetadataImage, decider: Decider, *joining: int) -> None:
    add_to_isr(image, decider, only_partition(image), *joining)


def reassign(image: MetadataImage, decider: Decider, target: list[int] | None) -> int:
    decision = decider.reassign_partitions(image, [("orders", 0, target)])
    [result] = decision.results
    if result.error_code == 0:
        commit(image, decision)
    return result.error_code


def test_a_reassignment_adds_the_target_replicas_and_ends_when_they_are_in_sync() -> None:
    image, decider = cluster(4)
    before = orders(image, decider)
    assert reassign(image, decider, [3, 4]) == 0
    moving = only_partition(image)
    assert moving.replicas == (3, 4, *before.replicas)
    assert (moving.adding_replicas, moving.removing_replicas) == ((3, 4), before.replicas)
    assert moving.isr == before.isr
    assert moving.leader == before.leader
    assert moving.leader_epoch == before.leader_epoch  # the leader keeps serving meanwhile
    assert decider.list_reassignments(image) == [moving]

    expand_isr(image, decider, 3)
    assert only_partition(image).is_reassigning  # 4 is still catching up
    expand_isr(image, decider, 4)
    done = only_partition(image)
    assert (done.replicas, done.isr, done.adding_replicas, done.removing_replicas) == ((3, 4), (3, 4), (), ())
    assert done.leader == 3
    assert done.leader_epoch == before.leader_epoch + 1
    assert decider.list_reassignments(image) == []


def test_the_leader_stays_when_it_is_kept_by_the_reassignment() -> None:
    image, decider = cluster(4)
    before = orders(image, decider)
    assert reassign(image, decider, [3, before.leader]) == 0
    expand_isr(image, decider, 3)
    done = only_partition(image)
    assert done.replicas == (3, before.leader)
    assert done.leader == before.leader
    assert done.leader_epoch == before.leader_epoch


def test_shrinking_the_replication_factor_completes_at_once() -> None:
    image, decider = cluster(4)
    before = orders(image, decider, replicas=3)
    assert reassign(image, decider, [2]) == 0
    done = only_partition(image)
    assert (done.replicas, done.isr, done.leader, done.is_reassigning) == ((2,), (2,), 2, False)
    assert done.leader_epoch == before.leader_epoch + 1


def test_growing_the_replication_factor_adds_a_replica() -> None:
    image, decider = cluster(4)
    orders(image, decider)
    assert reassign(image, decider, [1, 2, 3]) == 0
    assert only_partition(image).adding_replicas == (3,)
    expand_isr(image, decider, 3)
    assert only_partition(image).replicas == (1, 2, 3)
    assert not only_partition(image).is_reassigning


def test_cancelling_reverts_to_the_original_replicas() -> None:
    image, decider = cluster(4)
    before = orders(image, decider)
    assert reassign(image, decider, [3, 4]) == 0
    expand_isr(image, decider, 3)
    assert reassign(image, decider, None) == 0
    reverted = only_partition(image)
    assert (reverted.replicas, reverted.isr, reverted.is_reassigning) == (before.replicas, before.isr, False)
    assert reverted.leader == before.leader
    assert reassign(image, decider, None) == 85  # NO_REASSIGNMENT_IN_PROGRESS


def test_a_new_target_replaces_an_ongoing_reassignment_from_the_original_replicas() -> None:
    image, decider = cluster(4)
    orders(image, decider)
    assert reassign(image, decider, [3, 4]) == 0
    assert reassign(image, decider, [1, 4]) == 0
    p = only_partition(image)
    assert (p.replicas, p.adding_replicas, p.removing_replicas) == ((1, 4, 2), (4,), (2,))


def test_reassigning_to_the_current_replicas_changes_nothing() -> None:
    image, decider = cluster(3)
    before = orders(image, decider)
    decision = decider.reassign_partitions(image, [("orders", 0, list(before.replicas))])
    assert decision.records == []
    assert decision.results[0].error_code == 0


def test_invalid_reassignments_get_kafkas_error_codes() -> None:
    image, decider = cluster(3)
    orders(image, decider)
    decision = decider.reassign_partitions(
        image,
        [
            ("orders", 0, []),
            ("orders", 7, [1]),
            ("missing", 0, [1]),
            ("orders", 0, [1, 1]),  # listed twice as well
        ],
    )
    assert [r.error_code for r in decision.results] == [42, 3, 3, 42]
    assert decision.records == []
    assert [r.error_code for r in decider.reassign_partitions(image, [("orders", 0, [])]).results] == [39]
    assert [r.error_code for r in decider.reassign_partitions(image, [("orders", 0, [1, 1])]).results] == [39]
    unknown = decider.reassign_partitions(image, [("orders", 0, [1, 9])]).results[0]
    assert unknown.error_code == 39
    assert "9" in unknown.message


def test_the_reassignment_waits_for_a_usable_target_leader() -> None:
    image, decider = cluster(4)
    orders(image, decider)
    assert reassign(image, decider, [3, 4]) == 0
    expand_isr(image, decider, 3)
    fence(image, decider, 3)
    fence(image, decider, 4)
    p = only_partition(image)
    assert p.is_reassigning
    assert 4 not in p.isr
    # 4 cannot join the ISR while fenced, so nothing completes and the old leader keeps leading.
    assert p.leader in (1, 2)


def test_a_snapshot_keeps_an_ongoing_reassignment() -> None:
    image, decider = cluster(4)
    orders(image, decider)
    assert reassign(image, decider, [3, 4]) == 0
    copy = MetadataImage.from_snapshot(image.to_snapshot())
    assert copy.partitions() == image.partitions()
    assert copy.to_snapshot() == image.to_snapshot()


def test_preferred_election_reports_each_partition() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=2, replication_factor=3)))
    p0 = image.topic_by_name("orders").partitions[0]  # type: ignore[union-attr]
    fence(image, decider, p0.replicas[0])
    wanted = [("orders", 0), ("orders", 1), ("orders", 9)]
    results = {
        r.partition: r.error_code for r in decider.elect_leaders(image, ELECTION_PREFERRED, wanted).results
    }
    assert results[0] == 80  # PREFERRED_LEADER_NOT_AVAILABLE: fenced and out of the ISR
    assert results[9] == 3
    # Asking for every partition leaves out those that need nothing.
    everything = decider.elect_leaders(image, ELECTION_PREFERRED, None)
    assert all(r.error_code != 84 for r in everything.results)


def test_unclean_election_elects_a_leader_only_for_leaderless_partitions() -> None:
    image, decider = cluster(2)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=1, replication_factor=2)))
    p = only_partition(image)
    assert decider.elect_leaders(image, ELECTION_UNCLEAN, [("orders", 0)]).results[0].error_code == 84
    follower = p.replicas[1]
    expand_isr_out = AlterPartitionRequest(
        p.leader, image.brokers[p.leader].epoch, p.topic_id, 0, p.leader_epoch, p.partition_epoch, (p.leader,)
    )
    commit(image, decider.alter_partition(image, expand_isr_out))
    fence(image, decider, p.leader)
    assert only_partition(image).leader == NO_LEADER
    decision = decider.elect_leaders(image, ELECTION_UNCLEAN, [("orders", 0)])
    assert decision.results[0].error_code == 0
    commit(image, decision)
    elected = only_partition(image)
    assert (elected.leader, elected.isr) == (follower, (follower,))
    fence(image, decider, follower)
    nobody = decider.elect_leaders(image, ELECTION_UNCLEAN, [("orders", 0)])
    assert nobody.results[0].error_code == 83  # ELIGIBLE_LEADERS_NOT_AVAILABLE


def test_only_a_stopped_broker_without_replicas_can_be_unregistered() -> None:
    image, decider = cluster(3)
    orders(image, decider)
    assert decider.unregister_broker(image, 9).error_code == 102
    assert decider.unregister_broker(image, 3).error_code == 42  # still running
    fence(image, decider, 1)
    refused = decider.unregister_broker(image, 1)
    assert refused.error_code == 42
    assert "orders-0" in refused.message
    fence(image, decider, 3)
    commit(image, decider.unregister_broker(image, 3))
    assert 3 not in image.brokers


def test_a_request_may_forbid_changing_the_replication_factor() -> None:
    image, decider = cluster(4)
    orders(image, decider)
    grow = decider.reassign_partitions(
        image, [("orders", 0, [1, 2, 3])], allow_replication_factor_change=False
    )
    assert grow.results[0].error_code == 38  # INVALID_REPLICATION_FACTOR
    move = decider.reassign_partitions(image, [("orders", 0, [3, 4])], allow_replication_factor_change=False)
    assert move.results[0].error_code == 0


def test_an_unclean_election_onto_the_added_replica_completes_the_move() -> None:
    image, decider = cluster(3)
    commit(
        image,
        decider.create_topic(
            image,
            TopicRequest(
                "orders",
                partitions=1,
                replication_factor=1,
                configs={"unclean.leader.election.enable": "true"},
            ),
        ),
    )
    before = only_partition(image)
    target = next(b for b in (1, 2, 3) if b != before.leader)
    assert reassign(image, decider, [target]) == 0
    fence(image, decider, before.leader)
    done = only_partition(image)
    assert (done.leader, done.replicas, done.isr, done.is_reassigning) == (
        target,
        (target,),
        (target,),
        False,
    )
