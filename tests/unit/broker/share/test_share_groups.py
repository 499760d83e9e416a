"""ShareGroupHeartbeat's rules (broker.share.share_groups), without sockets."""

from __future__ import annotations

import uuid

from kio.schema.errors import ErrorCode

from broker.share.share_groups import HeartbeatAnswer, ShareGroupCoordinator

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
    alone = _beat(groups, "a", 0)
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
