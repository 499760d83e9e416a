"""The active controller's decisions, applied to a metadata image as the log would apply them."""

from __future__ import annotations

import uuid

from broker.controller.api import NO_LEADER, AlterPartitionRequest, Endpoint, PartitionAssignment
from broker.controller.decisions import ControllerSettings, Decider, Decision, TopicRequest
from broker.controller.image import MetadataDelta, MetadataImage

SETTINGS = ControllerSettings(session_timeout_s=6.0, default_partitions=3, default_replication_factor=3)


def commit(image: MetadataImage, decision: Decision) -> MetadataDelta:
    assert decision.error_code == 0, decision.message
    return image.apply_entry(image.offset + 1, decision.records)


def cluster(broker_count: int = 3, racks: tuple[str | None, ...] = ()) -> tuple[MetadataImage, Decider]:
    image = MetadataImage()
    decider = Decider(SETTINGS, now=0.0)
    for broker_id in range(1, broker_count + 1):
        rack = racks[broker_id - 1] if racks else None
        endpoint = Endpoint("PLAINTEXT", "127.0.0.1", 9090 + broker_id)
        commit(image, decider.register_broker(image, broker_id, uuid.uuid4(), [endpoint], rack, now=0.0))
        epoch = image.brokers[broker_id].epoch
        commit(image, decider.heartbeat(image, broker_id, epoch, image.offset, False, False, now=0.0))
    return image, decider


def only_partition(image: MetadataImage, topic: str = "orders") -> PartitionAssignment:
    found = image.topic_by_name(topic)
    assert found is not None
    return found.partitions[0]


def add_to_isr(image: MetadataImage, decider: Decider, p: PartitionAssignment, *joining: int) -> None:
    """The leader reports followers that caught up (the AlterPartition its replica manager sends)."""
    request = AlterPartitionRequest(
        p.leader,
        image.brokers[p.leader].epoch,
        p.topic_id,
        p.partition,
        p.leader_epoch,
        p.partition_epoch,
        (*p.isr, *joining),
    )
    commit(image, decider.alter_partition(image, request))


def fence(image: MetadataImage, decider: Decider, broker_id: int) -> None:
    epoch = image.brokers[broker_id].epoch
    commit(image, decider.heartbeat(image, broker_id, epoch, image.offset, True, False, now=1.0))


def test_a_registered_broker_is_unfenced_once_it_has_caught_up_with_its_registration() -> None:
    image = MetadataImage()
    decider = Decider(SETTINGS, now=0.0)
    commit(image, decider.register_broker(image, 1, uuid.uuid4(), [], None, now=0.0))
    broker = image.brokers[1]
    assert broker.fenced
    assert decider.heartbeat(image, 1, broker.epoch, broker.epoch - 1, False, False, 0.5).records == []
    commit(image, decider.heartbeat(image, 1, broker.epoch, broker.epoch, False, False, 1.0))
    assert not image.brokers[1].fenced
    assert decider.heartbeat(image, 1, broker.epoch - 1, 0, False, False, 1.0).error_code == 77  # stale epoch


def test_a_second_process_cannot_take_over_a_live_broker_id() -> None:
    image, decider = cluster(1)
    refused = decider.register_broker(image, 1, uuid.uuid4(), [], None, now=1.0)
    assert refused.error_code == 101  # DUPLICATE_BROKER_REGISTRATION
    later = decider.register_broker(image, 1, uuid.uuid4(), [], None, now=10.0)
    assert later.error_code == 0
    commit(image, later)
    assert image.brokers[1].fenced


def test_new_topics_get_distinct_replicas_with_leaders_spread_over_the_brokers() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=6)))
    topic = image.topic_by_name("orders")
    assert topic is not None
    partitions = list(topic.partitions.values())
    assert all(len(set(p.replicas)) == 3 and p.isr == p.replicas for p in partitions)
    assert sorted(p.leader for p in partitions) == [1, 1, 2, 2, 3, 3]
    assert decider.create_topic(image, TopicRequest("orders")).error_code == 36
    assert decider.create_topic(image, TopicRequest("big", replication_factor=4)).error_code == 38


def test_fencing_a_leader_elects_the_next_in_sync_replica_and_bumps_the_epochs() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=1)))
    before = only_partition(image)
    fence(image, decider, before.leader)
    after = only_partition(image)
    assert after.leader not in (before.leader, NO_LEADER)
    assert after.leader == before.replicas[1]
    assert before.leader not in after.isr
    assert after.leader_epoch == before.leader_epoch + 1
    assert after.partition_epoch == before.partition_epoch + 1


def test_without_unclean_election_the_last_in_sync_replica_waits_to_lead_again() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=1)))
    p = only_partition(image)
    leader = p.leader
    epoch = image.brokers[leader].epoch
    request = AlterPartitionRequest(
        leader, epoch, p.topic_id, 0, p.leader_epoch, p.partition_epoch, (leader,)
    )
    commit(image, decider.alter_partition(image, request))
    assert only_partition(image).isr == (leader,)
    fence(image, decider, leader)
    assert only_partition(image).leader == NO_LEADER
    assert only_partition(image).isr == (leader,)  # kept: it holds every committed record
    returning = image.brokers[leader]
    commit(image, decider.heartbeat(image, leader, returning.epoch, image.offset, False, False, 2.0))
    assert only_partition(image).leader == leader


def test_unclean_election_picks_an_out_of_sync_replica_when_the_topic_allows_it() -> None:
    image, decider = cluster(3)
    request = TopicRequest("orders", partitions=1, configs={"unclean.leader.election.enable": "true"})
    commit(image, decider.create_topic(image, request))
    p = only_partition(image)
    leader = p.leader
    shrink = AlterPartitionRequest(
        leader, image.brokers[leader].epoch, p.topic_id, 0, p.leader_epoch, p.partition_epoch, (leader,)
    )
    commit(image, decider.alter_partition(image, shrink))
    fence(image, decider, leader)
    after = only_partition(image)
    assert after.leader == p.replicas[1]
    assert after.isr == (p.replicas[1],)


def test_the_cluster_wide_dynamic_default_allows_unclean_election_for_topics_without_their_own() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=1)))
    commit(image, decider.alter_configs(image, "broker", "", {"unclean.leader.election.enable": "true"}))
    p = only_partition(image)
    leader = p.leader
    shrink = AlterPartitionRequest(
        leader, image.brokers[leader].epoch, p.topic_id, 0, p.leader_epoch, p.partition_epoch, (leader,)
    )
    commit(image, decider.alter_partition(image, shrink))
    fence(image, decider, leader)
    assert only_partition(image).leader == p.replicas[1]


def test_group_configs_are_kept_in_the_image_and_its_snapshot() -> None:
    image, decider = cluster(1)
    commit(image, decider.alter_configs(image, "group", "g1", {"consumer.session.timeout.ms": "50000"}))
    assert image.group_configs == {"g1": {"consumer.session.timeout.ms": "50000"}}
    restored = MetadataImage.from_snapshot(image.to_snapshot())
    assert restored.group_configs == image.group_configs
    commit(image, decider.alter_configs(image, "group", "g1", {"consumer.session.timeout.ms": None}))
    assert image.group_configs == {}


def test_client_metrics_subscriptions_are_kept_in_the_image_and_its_snapshot() -> None:
    image, decider = cluster(1)
    commit(
        image, decider.alter_configs(image, "client_metrics", "s", {"metrics": "*", "interval.ms": "1000"})
    )
    commit(image, decider.alter_configs(image, "group", "g1", {"consumer.session.timeout.ms": "50000"}))
    assert image.client_metrics_configs == {"s": {"metrics": "*", "interval.ms": "1000"}}
    restored = MetadataImage.from_snapshot(image.to_snapshot())
    assert restored.client_metrics_configs == image.client_metrics_configs
    assert restored.group_configs == image.group_configs
    commit(image, decider.alter_configs(image, "client_metrics", "s", {"metrics": None, "interval.ms": None}))
    assert image.client_metrics_configs == {}
    assert image.group_configs == {"g1": {"consumer.session.timeout.ms": "50000"}}


def test_alter_partition_refuses_stale_versions_and_fenced_replicas() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=1)))
    p = only_partition(image)
    leader, a, b = p.replicas
    epoch = image.brokers[leader].epoch

    def ask(**changes: object) -> int:
        fields = {
            "broker_id": leader,
            "broker_epoch": epoch,
            "topic_id": p.topic_id,
            "partition": 0,
            "leader_epoch": p.leader_epoch,
            "partition_epoch": p.partition_epoch,
            "new_isr": (leader, a),
        } | changes
        return decider.alter_partition(image, AlterPartitionRequest(**fields)).error_code  # type: ignore[arg-type]

    assert ask(broker_epoch=epoch - 1) == 77
    assert ask(broker_id=a, broker_epoch=image.brokers[a].epoch) == 6
    assert ask(leader_epoch=p.leader_epoch - 1) == 74
    assert ask(partition_epoch=p.partition_epoch + 1) == 95
    assert ask(topic_id=uuid.uuid4()) == 100
    assert ask(new_isr=(a, b)) == 42
    assert ask() == 0
    commit(
        image,
        decider.alter_partition(image, AlterPartitionRequest(leader, epoch, p.topic_id, 0, 0, 0, (leader,))),
    )
    fence(image, decider, a)
    shrunk = only_partition(image)
    expand = AlterPartitionRequest(
        leader, epoch, p.topic_id, 0, shrunk.leader_epoch, shrunk.partition_epoch, (leader, a)
    )
    assert decider.alter_partition(image, expand).error_code == 107  # INELIGIBLE_REPLICA


def test_a_broker_that_stops_heartbeating_is_fenced_after_its_session_timeout() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=3)))
    for broker_id in (1, 2):
        epoch = image.brokers[broker_id].epoch
        decider.heartbeat(image, broker_id, epoch, image.offset, False, False, now=5.0)
    assert decider.fence_expired_broker(image, now=5.5).records == []
    commit(image, decider.fence_expired_broker(image, now=6.5))
    assert image.brokers[3].fenced
    assert decider.fence_expired_broker(image, now=6.6).records == []
    assert all(p.leader != 3 and 3 not in p.isr for p in image.partitions())


def test_a_new_active_controller_gives_every_broker_a_whole_session_to_find_it() -> None:
    # Kafka's KRaft: brokers may still be waiting on the previous controller when this one becomes
    # active; none is fenced before a whole session has passed since then.
    image, previous = cluster(3)
    commit(image, previous.create_topic(image, TopicRequest("orders", partitions=3)))
    decider = Decider(SETTINGS, now=100.0)
    decider.heartbeat(image, 1, image.brokers[1].epoch, image.offset, False, False, now=101.0)
    assert decider.fence_expired_broker(image, now=105.9).records == []
    commit(image, decider.fence_expired_broker(image, now=106.1))
    fenced = [b for b in image.brokers.values() if b.fenced]
    assert len(fenced) == 1
    assert fenced[0].broker_id in (2, 3)
    decider.heartbeat(image, 1, image.brokers[1].epoch, image.offset, False, False, now=106.5)
    commit(image, decider.fence_expired_broker(image, now=106.6))
    assert {b.broker_id for b in image.brokers.values() if b.fenced} == {2, 3}


def test_a_broker_that_died_with_its_controller_is_fenced_a_session_after_its_raft_went_quiet() -> None:
    # Combined nodes: broker 3 shares its process with voter 3, the previous active controller, which
    # this controller last heard from over Raft at 99.0. Voter 2 is alive (heard from just now).
    image, previous = cluster(3)
    commit(image, previous.create_topic(image, TopicRequest("orders", partitions=3)))
    voter_contact = {2: 100.9, 3: 99.0}
    decider = Decider(SETTINGS, now=100.5, voter_contact=voter_contact)
    assert decider.fence_expired_broker(image, now=104.9).records == []
    commit(image, decider.fence_expired_broker(image, now=105.1))
    assert image.brokers[3].fenced
    assert all(p.leader != 3 and 3 not in p.isr for p in image.partitions())
    # Broker 2 (its voter alive) and broker 1 (this controller's own) still have their whole session.
    assert decider.fence_expired_broker(image, now=106.4).records == []
    assert not image.brokers[1].fenced
    assert not image.brokers[2].fenced


def test_a_live_voter_silent_before_the_election_gets_a_raft_round_to_answer() -> None:
    # Voter 2 followed the previous leader and last wrote to this node in an election long ago.
    image, _ = cluster(3)
    voter_contact = {2: 10.0}
    decider = Decider(SETTINGS, now=100.0, voter_contact=voter_contact, raft_round_s=1.0)
    assert decider.fence_expired_broker(image, now=100.9).records == []
    voter_contact[2] = 100.1  # it answered the new leader's first appends
    assert decider.fence_expired_broker(image, now=105.9).records == []
    assert decider.fence_expired_broker(image, now=106.1).records != []


def test_a_heartbeat_that_arrived_keeps_the_session_though_its_answer_waits() -> None:
    image, _ = cluster(3)
    decider = Decider(SETTINGS, now=100.0)
    decider.touch(image, 2, image.brokers[2].epoch, now=105.0)
    decider.touch(image, 3, image.brokers[3].epoch + 1, now=105.0)  # not its registration: ignored
    for broker_id in (1, 3):
        decider.heartbeat(image, broker_id, image.brokers[broker_id].epoch, image.offset, False, False, 108.0)
    assert decider.fence_expired_broker(image, now=110.9).records == []
    commit(image, decider.fence_expired_broker(image, now=111.1))
    assert [b.broker_id for b in image.brokers.values() if b.fenced] == [2]


def test_controlled_shutdown_moves_leadership_before_the_broker_may_stop() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=3)))
    epoch = image.brokers[2].epoch
    assert not decider.should_shut_down(image, 2)
    commit(image, decider.heartbeat(image, 2, epoch, image.offset, False, True, now=1.0))
    assert all(p.leader != 2 for p in image.partitions())
    assert decider.should_shut_down(image, 2)
    commit(image, decider.heartbeat(image, 2, epoch, image.offset, False, True, now=1.2))
    assert image.brokers[2].fenced
    # The stopped broker's next life registers at once instead of waiting out the old session.
    assert decider.register_broker(image, 2, uuid.uuid4(), [], None, now=1.5).error_code == 0


def test_topic_configs_are_validated_before_they_reach_the_log() -> None:
    image, decider = cluster(1)
    bad_name = decider.create_topic(image, TopicRequest("t", 1, 1, configs={"retention.days": "1"}))
    assert bad_name.error_code == 40  # INVALID_CONFIG
    bad_value = decider.create_topic(image, TopicRequest("t", 1, 1, configs={"retention.ms": "soon"}))
    assert bad_value.error_code == 40
    commit(image, decider.create_topic(image, TopicRequest("t", 1, 1, configs={"retention.ms": "1000"})))
    assert decider.alter_configs(image, "topic", "t", {"cleanup.policy": "sometimes"}).error_code == 40
    commit(
        image, decider.alter_configs(image, "topic", "t", {"retention.ms": None, "cleanup.policy": "compact"})
    )
    assert image.topic_by_name("t").configs == {"cleanup.policy": "compact"}  # type: ignore[union-attr]


def test_preferred_leader_election_moves_leadership_back_to_the_first_in_sync_replica() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=3)))
    preferred = {p.partition: p.replicas[0] for p in image.partitions()}
    fence(image, decider, 1)
    assert all(p.leader != 1 for p in image.partitions())
    assert decider.elect_preferred_leaders(image).records == []  # 1 is fenced and out of the ISR
    returning = image.brokers[1]
    commit(image, decider.heartbeat(image, 1, returning.epoch, image.offset, False, False, 2.0))
    for p in image.partitions():  # the replica fetcher caught up: the leaders add 1 back
        add_to_isr(image, decider, p, 1)
    commit(image, decider.elect_preferred_leaders(image, [("orders", 0), ("orders", 1), ("orders", 2)]))
    assert {p.partition: p.leader for p in image.partitions()} == preferred


def test_automatic_rebalancing_only_moves_leaders_of_brokers_above_the_imbalance_threshold() -> None:
    image, decider = cluster(3)
    commit(image, decider.create_topic(image, TopicRequest("orders", partitions=12, replication_factor=2)))
    # Broker 1 restarts: controlled shutdown moved all 4 leaderships it prefers to other brokers.
    led_by_1 = [p for p in image.partitions() if p.leader == 1]
    moved = led_by_1[0]
    epoch = image.brokers[1].epoch
    commit(
        image, decider.heartbeat(image, 1, epoch, image.offset, False, True, now=1.0)
    )  # controlled shutdown
    commit(image, decider.heartbeat(image, 1, epoch, image.offset, False, True, now=1.1))  # fenced
    commit(image, decider.register_broker(image, 1, uuid.uuid4(), [], None, now=1.2))
    commit(image, decider.heartbeat(image, 1, image.brokers[1].epoch, image.offset, False, False, now=1.3))
    for p in image.partitions():
        if 1 in p.replicas and 1 not in p.isr:
            add_to_isr(image, decider, p, 1)
    assert image.topic_by_name("orders").partitions[moved.partition].leader != 1  # type: ignore[union-attr]
    assert decider.rebalance_leaders(image, imbalance_percentage=100).records == []
    commit(image, decider.rebalance_leaders(image, imbalance_percentage=10))
    assert all(p.leader == p.replicas[0] for p in image.partitions())


def test_explicit_replica_assignments_place_partitions_where_asked_led_by_the_first_live_replica() -> None:
    image, decider = cluster(3)
    fence(image, decider, 2)
    request = TopicRequest("placed", partitions=2, assignments=((2, 3), (3, 1)))
    commit(image, decider.create_topic(image, request))

    topic = image.topic_by_name("placed")
    assert topic is not None
    first, second = topic.partitions[0], topic.partitions[1]
    assert (first.replicas, first.leader, first.isr) == ((2, 3), 3, (3,))  # broker 2 is fenced
    assert (second.replicas, second.leader, second.isr) == ((3, 1), 3, (3, 1))

    commit(image, decider.create_partitions(image, "placed", 3, ((1, 2),)))
    assert topic.partitions[2].replicas == (1, 2)


def test_explicit_replica_assignments_are_refused_with_unknown_duplicate_or_uneven_brokers() -> None:
    image, decider = cluster(3)
    for assignments, reason in (
        (((1, 9),), "unknown broker ids [9]"),
        (((1, 1),), "duplicate brokers"),
        (((1, 2), (3,)), "same, non-zero number"),
    ):
        decision = decider.create_topic(
            image, TopicRequest("bad", partitions=len(assignments), assignments=assignments)
        )
        assert decision.error_code == 39
        assert reason in decision.message
    commit(image, decider.create_topic(image, TopicRequest("two", partitions=1, replication_factor=2)))
    refused = decider.create_partitions(image, "two", 2, ((1, 2, 3),))
    assert refused.error_code == 39
    assert "replication factor is 2" in refused.message
