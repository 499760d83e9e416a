"""Share sessions (broker.share.share_state), without sockets."""

from __future__ import annotations

import uuid

from broker.share.share_partition import AcquiredRange, BatchBounds, SharePartition
from broker.share.share_state import ShareSession, ShareState

TOPIC_ID = uuid.uuid4()
KEY = ("g", TOPIC_ID, 0)


def _state_with_records() -> tuple[ShareState, SharePartition]:
    state = ShareState(lambda: {"orders": (TOPIC_ID, 1)})
    share = state.partition(KEY, lambda: SharePartition(0, delivery_count_limit=5, max_in_flight=100))
    return state, share


def test_a_closed_connection_ends_the_sessions_it_opened_and_their_records_come_back() -> None:
    """A consumer killed without closing its share session (kgo's TestShareGroupETL kills some): its records
    are offered again when its connection closes, as Kafka 4.2 does, not after their 15 s locks."""
    state, share = _state_with_records()
    connection = object()
    assert isinstance(state.open_session("g", "a", 10, connection=connection), ShareSession)
    share.acquire("a", [BatchBounds(0, 9)], 10, lock_ms=15_000, now_ms=0)
    state.connection_closed(connection, {("g", "a")})
    assert ("g", "a") not in state.sessions
    assert share.acquire("b", [BatchBounds(0, 9)], 10, lock_ms=15_000, now_ms=1) == [AcquiredRange(0, 9, 2)]


def test_a_session_the_member_reopened_on_another_connection_survives_the_old_one_closing() -> None:
    state, share = _state_with_records()
    old, new = object(), object()
    state.open_session("g", "a", 10, connection=old)
    state.open_session("g", "a", 10, connection=new)
    share.acquire("a", [BatchBounds(0, 9)], 10, lock_ms=15_000, now_ms=0)
    state.connection_closed(old, {("g", "a")})
    assert state.sessions[("g", "a")].connection is new
    assert share.acquire("b", [BatchBounds(0, 9)], 10, lock_ms=15_000, now_ms=1) == []
