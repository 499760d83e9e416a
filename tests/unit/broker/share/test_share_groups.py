"""ShareGroupHeartbeat's rules (broker.share.share_groups), without sockets."""

from __future__ import annotations

import uuid

from kio.schema.errors import ErrorCode

from broker.share.share_groups import (
    INITIALIZE_RETRY_MS,
    HeartbeatAnswer,
    ShareGroupCoordinator,
    ShareMember,
    simple_assignment,
)

TOPIC_ID = uuid.uuid4()


def _beat(groups: ShareGroupCoordinator, member_id: str, epoch: int, now_ms: int = 0) -> HeartbeatAnswer:
    answer = groups.heartbeat(
        group_id="g",
        member_id=member_id,
        member_epoch=epoch,
        rack_id=None,
        subscribed_topic_names=("orders",) if epoch == 0 else None,
        client_id="c",
        client_host="/h",
        now_ms=now_ms,
        session_timeout_ms=45_000,
    )
    assert answer.error_code == ErrorCode.none
    return answer


def test_a_member_hears_the_assignment_another_members_arrival_or_departure_changed() -> None:
    """franz-go's TestShareGroupETL stalled: a partition moved to a member when another member joined or was
    killed, but that member's next heartbeat answer did not carry its new assignment, so it never fetched the
    partition (Kafka answers the assignment whenever it differs from what the member last heard)."""
    groups = ShareGroupCoordinator(lambda: {"orders": (TOPIC_ID, 2)})
    _beat(groups, "a", 0)
    groups.initialized("g", {TOPIC_ID: frozenset({0, 1})})
    alone = _beat(groups, "a", 1)
    assert alone.assignment == {TOPIC_ID: frozenset({0, 1})}
    assert _beat(groups, "a", alone.member_epoch).assignment is None
    joined = _beat(groups, "b", 0)
    assert joined.assignment == {TOPIC_ID: frozenset({1})}
    # b's arrival took partition 1 from a: a's next answer says so, once.
    shrunk = _beat(groups, "a", alone.member_epoch)
    assert shrunk.assignment == {TOPIC_ID: frozenset({0})}
    assert _beat(groups, "a", shrunk.member_epoch, now_ms=40_000).assignment is None
    # b expires (killed, never heard from again): a gets partition 1 back on its next heartbeat.
    grown = _beat(groups, "a", shrunk.member_epoch, now_ms=60_000)
    assert grown.assignment == {TOPIC_ID: frozenset({0, 1})}


def test_a_new_member_hears_an_empty_assignment_until_the_group_initialized_its_partitions() -> None:
    """Kafka 4.2 answers a member joining on a new topic with epoch 1 and an empty assignment, hands the
    partitions to the share coordinator to initialize, and assigns them on a heartbeat after that (probe of
    both brokers). librdkafka's share consumer closed right after that first answer hung when ours assigned
    at once (0170 poll-empty-topic, 0176 no_pending_acks)."""
    groups = ShareGroupCoordinator(lambda: {"orders": (TOPIC_ID, 2)})
    joined = _beat(groups, "a", 0)
    assert (joined.member_epoch, joined.assignment) == (1, {})
    assert (joined.initialize, joined.state_epoch) == ({TOPIC_ID: frozenset({0, 1})}, 1)
    # Handed out once: a heartbeat while the initialization runs neither assigns nor hands it out again.
    waiting = _beat(groups, "a", 1, now_ms=1_000)
    assert (waiting.member_epoch, waiting.assignment, waiting.initialize) == (1, None, {})
    groups.initialized("g", {TOPIC_ID: frozenset({0, 1})})
    assigned = _beat(groups, "a", 1, now_ms=2_000)
    assert (assigned.member_epoch, assigned.assignment) == (2, {TOPIC_ID: frozenset({0, 1})})
    assert assigned.initialize == {}
    # The partitions are initialized now: a member joining later hears its share in its first answer.
    second = _beat(groups, "b", 0, now_ms=3_000)
    assert (second.member_epoch, second.assignment, second.initialize) == (3, {TOPIC_ID: frozenset({1})}, {})


def test_an_initialization_that_failed_or_never_answered_is_handed_out_again() -> None:
    groups = ShareGroupCoordinator(lambda: {"orders": (TOPIC_ID, 3)})
    assert _beat(groups, "a", 0).initialize == {TOPIC_ID: frozenset({0, 1, 2})}
    groups.initialized("g", {TOPIC_ID: frozenset({0})})
    groups.initialization_failed("g", {TOPIC_ID: frozenset({1})})
    # Partition 1 failed: handed out again at once; 2 is still in flight.
    again = _beat(groups, "a", 1, now_ms=1_000)
    assert again.initialize == {TOPIC_ID: frozenset({1})}
    assert again.assignment == {TOPIC_ID: frozenset({0})}
    # Nothing heard of either for the retry interval: both handed out again.
    late = _beat(groups, "a", again.member_epoch, now_ms=1_000 + INITIALIZE_RETRY_MS)
    assert late.initialize == {TOPIC_ID: frozenset({1, 2})}


def test_a_partition_added_to_a_subscribed_topic_is_assigned_once_initialized() -> None:
    partitions = {"count": 1}
    groups = ShareGroupCoordinator(lambda: {"orders": (TOPIC_ID, partitions["count"])})
    _beat(groups, "a", 0)
    groups.initialized("g", {TOPIC_ID: frozenset({0})})
    epoch = _beat(groups, "a", 1).member_epoch
    partitions["count"] = 2
    grown = _beat(groups, "a", epoch)
    assert grown.initialize == {TOPIC_ID: frozenset({1})}
    assert grown.assignment is None
    groups.initialized("g", {TOPIC_ID: frozenset({1})})
    assert _beat(groups, "a", grown.member_epoch).assignment == {TOPIC_ID: frozenset({0, 1})}


def test_deleted_share_state_is_initialized_again_before_it_is_assigned() -> None:
    groups = ShareGroupCoordinator(lambda: {"orders": (TOPIC_ID, 1)})
    _beat(groups, "a", 0)
    groups.initialized("g", {TOPIC_ID: frozenset({0})})
    _beat(groups, "a", 1, now_ms=1)
    _beat(groups, "a", -1, now_ms=2)
    groups.uninitialized("g", TOPIC_ID)
    rejoined = _beat(groups, "a", 0, now_ms=3)
    assert (rejoined.assignment, rejoined.initialize) == ({}, {TOPIC_ID: frozenset({0})})


def _member(member_id: str, *topics: str) -> ShareMember:
    return ShareMember(member_id, 0, "c", "/h", None, topics)


def test_the_simple_assignor_gives_every_partition_to_some_member() -> None:
    orders = uuid.uuid4()
    catalog = {"orders": (orders, 3)}
    every = {orders: frozenset({0, 1, 2})}
    two = simple_assignment([_member("a", "orders"), _member("b", "orders")], catalog, every)
    assert two == {"a": {orders: frozenset({0, 2})}, "b": {orders: frozenset({1})}}
    # More members than partitions: partitions are shared.
    five = simple_assignment([_member(m, "orders") for m in "abcde"], catalog, every)
    assert [sorted(five[m][orders]) for m in "abcde"] == [[0], [1], [2], [0], [1]]
    assert simple_assignment([_member("a", "missing")], catalog, every) == {"a": {}}
    # Only the assignable (initialized) partitions are dealt.
    some = simple_assignment(
        [_member("a", "orders"), _member("b", "orders")], catalog, {orders: frozenset({2})}
    )
    assert some == {"a": {orders: frozenset({2})}, "b": {orders: frozenset({2})}}
