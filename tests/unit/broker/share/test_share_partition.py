"""The share-partition delivery rules (KIP-932), without sockets."""

from __future__ import annotations

import random

from kio.schema.errors import ErrorCode

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
    assert share.acknowledge("a", _ack(0, 0, AcknowledgeType.RENEW), LOCK_MS, 1) == ErrorCode.none
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


class _PerRecordModel:
    """The delivery rules stated one offset at a time, the simplest way: the share-partition keeps runs of
    offsets instead, and must answer every operation exactly as this does."""

    def __init__(self, limit: int, max_in_flight: int) -> None:
        self.start = self.end = 0
        self.limit, self.max_in_flight = limit, max_in_flight
        # offset -> [state, delivery count, member, lock deadline]
        self.records: dict[int, list] = {}

    def expire(self, now: int) -> None:
        for record in self.records.values():
            if record[0] == RecordState.ACQUIRED and record[3] <= now:
                self._release(record)
        self._advance()

    def _release(self, record: list) -> None:
        record[:] = [
            RecordState.ARCHIVED if record[1] >= self.limit else RecordState.AVAILABLE,
            record[1],
            "",
            0,
        ]

    def _advance(self) -> None:
        while self.start < self.end and self.records[self.start][0] in (
            RecordState.ACKNOWLEDGED,
            RecordState.ARCHIVED,
        ):
            del self.records[self.start]
            self.start += 1

    def next_fetch_offset(self, now: int) -> int:
        self.expire(now)
        return next(
            (o for o in range(self.start, self.end) if self.records[o][0] == RecordState.AVAILABLE), self.end
        )

    def acquire(
        self, member: str, batches: list[BatchBounds], max_records: int, now: int, whole: bool
    ) -> list:
        self.expire(now)
        held = sum(1 for r in self.records.values() if r[0] == RecordState.ACQUIRED)
        budget = min(max_records, self.max_in_flight - held)
        taken = []
        for batch in batches:
            if budget <= 0:
                break
            for offset in range(max(batch.base_offset, self.start), batch.last_offset + 1):
                if offset >= self.end:
                    for missing in range(self.end, offset):
                        self.records[missing] = [RecordState.ARCHIVED, 0, "", 0]
                    state = RecordState.ARCHIVED if batch.undeliverable else RecordState.AVAILABLE
                    self.records[offset] = [state, 0, "", 0]
                    self.end = offset + 1
                record = self.records[offset]
                if record[0] != RecordState.AVAILABLE:
                    continue
                record[:] = [RecordState.ACQUIRED, record[1] + 1, member, now + LOCK_MS]
                taken.append((offset, record[1]))
                budget -= 1
                if budget <= 0 and not whole:
                    break
        self._advance()
        ranges: list[AcquiredRange] = []
        for offset, count in taken:
            if ranges and ranges[-1].last_offset == offset - 1 and ranges[-1].delivery_count == count:
                ranges[-1] = AcquiredRange(ranges[-1].first_offset, offset, count)
            else:
                ranges.append(AcquiredRange(offset, offset, count))
        return ranges

    def acknowledge(self, member: str, batches: list[AcknowledgementBatch], now: int) -> ErrorCode:
        self.expire(now)
        changes = []
        for batch in batches:
            for index, offset in enumerate(range(batch.first_offset, batch.last_offset + 1)):
                kind = batch.types[0] if len(batch.types) == 1 else batch.types[index]
                record = self.records.get(offset)
                if offset < self.start or record is None:
                    return ErrorCode.invalid_record_state
                if kind == AcknowledgeType.GAP and record[0] == RecordState.ARCHIVED:
                    continue
                if record[0] != RecordState.ACQUIRED or record[2] != member:
                    return ErrorCode.invalid_record_state
                changes.append((record, kind))
        for record, kind in changes:
            if kind == AcknowledgeType.RENEW:
                record[3] = now + LOCK_MS
            elif kind == AcknowledgeType.ACCEPT:
                record[:] = [RecordState.ACKNOWLEDGED, record[1], "", 0]
            elif kind in (AcknowledgeType.REJECT, AcknowledgeType.GAP):
                record[:] = [RecordState.ARCHIVED, record[1], "", 0]
            else:
                self._release(record)
        self._advance()
        return ErrorCode.none

    def release_member(self, member: str) -> int:
        held = [r for r in self.records.values() if r[0] == RecordState.ACQUIRED and r[2] == member]
        for record in held:
            self._release(record)
        self._advance()
        return len(held)

    def state_batches(self) -> list[tuple[int, int, int, int]]:
        runs: list[tuple[int, int, int, int]] = []
        for offset in range(self.start, self.end):
            state, count = self.records[offset][:2]
            state = RecordState.AVAILABLE if state == RecordState.ACQUIRED else state
            if runs and runs[-1][2:] == (state, count):
                runs[-1] = (runs[-1][0], offset, state, count)
            else:
                runs.append((offset, offset, int(state), count))
        return runs


def test_the_runs_answer_as_a_record_by_record_window_would() -> None:
    """Random fetches, acknowledgements (every type, per offset or per range), lock expiries and members
    leaving, on both; every answer and the persisted state must agree."""
    rng = random.Random(932)
    for _round in range(60):
        limit, max_in_flight = rng.randint(1, 4), rng.randint(1, 40)
        share = SharePartition(0, delivery_count_limit=limit, max_in_flight=max_in_flight)
        model = _PerRecordModel(limit, max_in_flight)
        log: list[BatchBounds] = []
        now = 0
        for _step in range(150):
            now += rng.choice((0, 1, 10, LOCK_MS // 2, LOCK_MS))
            member = rng.choice("abc")
            action = rng.random()
            if action < 0.4:
                # The log grows by whole batches, a compacted gap now and then; a read starts at the batch
                # holding the next fetch offset (records before it come along) and takes a few batches.
                for _ in range(rng.randint(0, 3)):
                    base = (log[-1].last_offset + 1 if log else 0) + (rng.random() < 0.1)
                    log.append(BatchBounds(base, base + rng.randint(0, 5), rng.random() < 0.1))
                start = model.next_fetch_offset(now)
                assert share.next_fetch_offset(now) == start
                batches = [batch for batch in log if batch.last_offset >= start][: rng.randint(1, 4)]
                max_records, whole = rng.randint(1, 15), rng.random() < 0.5
                expected = model.acquire(member, batches, max_records, now, whole)
                assert (
                    share.acquire(member, batches, max_records, LOCK_MS, now, whole_batches=whole) == expected
                )
            elif action < 0.85:
                acks = []
                for _ in range(rng.randint(1, 3)):
                    first = rng.randint(max(0, model.start - 2), model.end + 1)
                    last = first + rng.randint(0, 6)
                    width = last - first + 1
                    types = rng.choice(
                        ((rng.randint(0, 4),), tuple(rng.choice((0, 1, 1, 2, 3, 4)) for _ in range(width)))
                    )
                    acks.append(AcknowledgementBatch(first, last, types))
                expected_error = model.acknowledge(member, acks, now)
                assert share.acknowledge(member, acks, LOCK_MS, now) == expected_error
            else:
                assert share.release_member(member) == model.release_member(member)
            assert (share.start_offset, share.end_offset) == (model.start, model.end)
            assert share.state_batches() == model.state_batches()


def test_records_removed_from_the_log_leave_the_window() -> None:
    share = _partition()
    share.acquire("a", _batch(0, 9), 10, LOCK_MS, now_ms=0)
    share.move_start(4)
    assert (share.start_offset, share.end_offset) == (4, 10)
    assert share.state_batches() == [(4, 9, int(RecordState.AVAILABLE), 1)]
    assert (
        share.acknowledge("a", _ack(0, 4, AcknowledgeType.ACCEPT), LOCK_MS, 1)
        == ErrorCode.invalid_record_state
    )
    assert share.acknowledge("a", _ack(4, 9, AcknowledgeType.ACCEPT), LOCK_MS, 1) == ErrorCode.none
    # Past the window's end (DeleteRecords beyond what was fetched): nothing is left in flight.
    share.acquire("a", _batch(10, 14), 10, LOCK_MS, now_ms=2)
    share.move_start(20)
    assert (share.start_offset, share.end_offset, share.state_batches()) == (20, 20, [])
    assert share.next_fetch_offset(now_ms=3) == 20
