"""The share-partition delivery rules (KIP-932), without sockets."""

from __future__ import annotations

import uuid

from kio.schema.errors import ErrorCode

from broker.share.share_groups import ShareMember, simple_assignment
from broker.share.share_partition import (
    AcknowledgementBatch,
    AcknowledgeType,
    AcquiredRange,
    BatchBounds,
    RecordState,
    SharePartition,
)

LOCK_MS = 1000


def _partition(limit: int = 3, max_in_flight: int = 100) -> SharePartition:
    return SharePartition(0, delivery_count_limit=limit, max_in_flight=max_in_flight)


def _batch(first: int, last: int, undeliverable: bool = False) -> list[BatchBounds]:
    return [BatchBounds(first, last, undeliverable)]


def _ack(first: int, last: int, kind: AcknowledgeType) -> list[AcknowledgementBatch]:
    return [AcknowledgementBatch(first, last, (int(kind),))]


def test_it_acquires_new_records_once_until_their_lock_expires() -> None:
    share = _partition()
    assert share.acquire("a", _batch(0, 4), 10, LOCK_MS, now_ms=0) == [AcquiredRange(0, 4, 1)]
    assert share.next_fetch_offset(now_ms=500) == 5
    assert share.acquire("b", _batch(0, 4), 10, LOCK_MS, now_ms=500) == []
    # The lock ran out: the records are offered again, with their second delivery.
    assert share.next_fetch_offset(now_ms=1000) == 0
    assert share.acquire("b", _batch(0, 4), 10, LOCK_MS, now_ms=1000) == [AcquiredRange(0, 4, 2)]


def test_accepted_records_move_the_start_offset_and_are_not_redelivered() -> None:
    share = _partition()
    share.acquire("a", _batch(0, 9), 10, LOCK_MS, now_ms=0)
    assert share.acknowledge("a", _ack(0, 4, AcknowledgeType.ACCEPT), LOCK_MS, now_ms=1) == ErrorCode.none
    assert share.start_offset == 5
    assert share.acquire("b", _batch(0, 9), 10, LOCK_MS, now_ms=5000) == [AcquiredRange(5, 9, 2)]


def test_released_records_come_back_and_rejected_ones_are_archived() -> None:
    share = _partition()
    share.acquire("a", _batch(0, 3), 10, LOCK_MS, now_ms=0)
    batches = [AcknowledgementBatch(0, 3, (int(AcknowledgeType.REJECT), 2, 2, int(AcknowledgeType.ACCEPT)))]
    assert share.acknowledge("a", batches, LOCK_MS, now_ms=1) == ErrorCode.none
    assert share.start_offset == 1
    assert share.acquire("b", _batch(0, 3), 10, LOCK_MS, now_ms=2) == [AcquiredRange(1, 2, 2)]


def test_a_record_is_archived_at_the_delivery_count_limit() -> None:
    share = _partition(limit=2)
    share.acquire("a", _batch(0, 0), 10, LOCK_MS, now_ms=0)
    share.acknowledge("a", _ack(0, 0, AcknowledgeType.RELEASE), LOCK_MS, now_ms=1)
    assert share.acquire("a", _batch(0, 0), 10, LOCK_MS, now_ms=2) == [AcquiredRange(0, 0, 2)]
    share.acknowledge("a", _ack(0, 0, AcknowledgeType.RELEASE), LOCK_MS, now_ms=3)
    assert share.start_offset == 1
    assert share.acquire("a", _batch(0, 0), 10, LOCK_MS, now_ms=4) == []


def test_it_refuses_acknowledgements_of_records_the_member_does_not_hold() -> None:
    share = _partition()
    share.acquire("a", _batch(0, 1), 10, LOCK_MS, now_ms=0)
    assert (
        share.acknowledge("b", _ack(0, 1, AcknowledgeType.ACCEPT), LOCK_MS, 1)
        == ErrorCode.invalid_record_state
    )
    # All or nothing: the good half of a refused acknowledgement is not applied either.
    mixed = [*_ack(0, 0, AcknowledgeType.ACCEPT), *_ack(5, 5, AcknowledgeType.ACCEPT)]
    assert share.acknowledge("a", mixed, LOCK_MS, 1) == ErrorCode.invalid_record_state
    assert share.records[0].state == RecordState.ACQUIRED
    # After its lock expired the member holds nothing.
    assert (
        share.acknowledge("a", _ack(0, 1, AcknowledgeType.ACCEPT), LOCK_MS, 5000)
        == ErrorCode.invalid_record_state
    )
    bad_types = [AcknowledgementBatch(0, 1, (1, 1, 1))]
    assert share.acknowledge("a", bad_types, LOCK_MS, 1) == ErrorCode.invalid_request


def test_max_records_and_the_in_flight_limit_bound_an_acquisition() -> None:
    share = _partition(max_in_flight=4)
    assert share.acquire("a", _batch(0, 9), 3, LOCK_MS, now_ms=0) == [AcquiredRange(0, 2, 1)]
    assert share.acquire("a", _batch(3, 9), 10, LOCK_MS, now_ms=0) == [AcquiredRange(3, 3, 1)]
    assert share.end_offset == 4
    # The batch-optimized mode finishes the batch it stopped in, past max_records.
    share = _partition()
    assert share.acquire("a", [*_batch(0, 4), *_batch(5, 9)], 3, LOCK_MS, 0, whole_batches=True) == [
        AcquiredRange(0, 4, 1)
    ]


def test_control_batches_are_skipped_and_a_leaving_member_gives_its_records_back() -> None:
    share = _partition()
    acquired = share.acquire(
        "a", [*_batch(0, 1), *_batch(2, 2, undeliverable=True), *_batch(3, 4)], 10, LOCK_MS, 0
    )
    assert acquired == [AcquiredRange(0, 1, 1), AcquiredRange(3, 4, 1)]
    assert share.release_member("a") == 4
    assert share.acquire("b", _batch(0, 4), 10, LOCK_MS, 1) == [
        AcquiredRange(0, 1, 2),
        AcquiredRange(3, 4, 2),
    ]


def test_the_persisted_state_restores_the_window() -> None:
    share = _partition()
    share.acquire("a", _batch(0, 5), 10, LOCK_MS, 0)
    share.acknowledge("a", _ack(1, 1, AcknowledgeType.ACCEPT), LOCK_MS, 1)
    restored = SharePartition.restored(
        share.start_offset, share.state_batches(), delivery_count_limit=3, max_in_flight=100
    )
    # Acquired records come back Available (their locks do not survive), keeping their delivery counts.
    assert restored.acquire("b", _batch(0, 5), 10, LOCK_MS, 0) == [
        AcquiredRange(0, 0, 2),
        AcquiredRange(2, 5, 2),
    ]


def _member(member_id: str, *topics: str) -> ShareMember:
    return ShareMember(member_id, 0, "c", "/h", None, topics)


def test_the_simple_assignor_gives_every_partition_to_some_member() -> None:
    orders = uuid.uuid4()
    catalog = {"orders": (orders, 3)}
    two = simple_assignment([_member("a", "orders"), _member("b", "orders")], catalog)
    assert two == {"a": {orders: frozenset({0, 2})}, "b": {orders: frozenset({1})}}
    # More members than partitions: partitions are shared.
    five = simple_assignment([_member(m, "orders") for m in "abcde"], catalog)
    assert [sorted(five[m][orders]) for m in "abcde"] == [[0], [1], [2], [0], [1]]
    assert simple_assignment([_member("a", "missing")], catalog) == {"a": {}}
