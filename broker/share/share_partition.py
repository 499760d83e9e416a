"""One share-partition (KIP-932): a share group's delivery state of one topic partition, kept by its leader.

Sans-IO: offsets and batch boundaries in, acquired ranges and errors out; the caller reads the log and
supplies the clock. Records below the share-partition start offset (SPSO) are done; records from the SPSO up
to `end_offset` are in flight, each Available, Acquired (by one member, until its lock expires),
Acknowledged or Archived. Every acquisition counts a delivery; a record whose lock expires or that is released
with its delivery count at the limit is archived instead of being offered again (Kafka's SharePartition).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kio.schema.errors import ErrorCode


class RecordState(enum.IntEnum):
    """Kafka's numbering (also what `__share_group_state` stores)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(enum.IntEnum):
    """The acknowledge types of ShareFetch / ShareAcknowledge."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


@dataclass(slots=True)
class InFlightRecord:
    state: RecordState
    delivery_count: int
    member_id: str = ""
    lock_deadline_ms: int = 0


@dataclass(frozen=True, slots=True)
class AcquiredRange:
    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True, slots=True)
class BatchBounds:
    """A record batch as read from the log: its offsets, and whether its records are never delivered (a
    control batch, or a batch of an aborted transaction read under read_committed)."""

    base_offset: int
    last_offset: int
    undeliverable: bool = False


@dataclass(frozen=True, slots=True)
class AcknowledgementBatch:
    first_offset: int
    last_offset: int
    # One type for the whole range, or one per offset.
    types: tuple[int, ...]


class SharePartition:
    """The in-flight window of one (group, topic partition)."""

    def __init__(self, start_offset: int, *, delivery_count_limit: int, max_in_flight: int) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.delivery_count_limit = delivery_count_limit
        self.max_in_flight = max_in_flight
        self.records: dict[int, InFlightRecord] = {}
        # Bumped on every change that must reach `__share_group_state` (its state epoch is separate).
        self.version = 0

    # --- reading ---------------------------------------------------------------------------------

    def next_fetch_offset(self, now_ms: int) -> int:
        """Where the next read starts: the first Available in-flight record, else the end of the window."""
        self.expire_locks(now_ms)
        for offset in range(self.start_offset, self.end_offset):
            record = self.records.get(offset)
            if record is None or record.state == RecordState.AVAILABLE:
                return offset
        return self.end_offset

    def acquired_count(self) -> int:
        return sum(1 for record in self.records.values() if record.state == RecordState.ACQUIRED)

    def in_flight(self) -> Iterator[tuple[int, InFlightRecord]]:
        return iter(sorted(self.records.items()))

    def move_start(self, log_start_offset: int) -> None:
        """Records removed from the log (retention, DeleteRecords) leave the window."""
        if log_start_offset > self.start_offset:
            for offset in range(self.start_offset, min(log_start_offset, self.end_offset)):
                self.records.pop(offset, None)
            self.start_offset = log_start_offset
            self.end_offset = max(self.end_offset, log_start_offset)
            self.version += 1

    def reset_to(self, offset: int) -> None:
        """AlterShareGroupOffsets: the window starts over at `offset` with nothing in flight."""
        self.records.clear()
        self.start_offset = self.end_offset = offset
        self.version += 1

    # --- acquisition ------------------------------------------------------------------------------

    def acquire(
        self,
        member_id: str,
        batches: Iterable[BatchBounds],
        max_records: int,
        lock_ms: int,
        now_ms: int,
        *,
        whole_batches: bool = False,
    ) -> list[AcquiredRange]:
        """Acquire for `member_id` the Available and new records of `batches` (read from the log at
        `next_fetch_offset`), at most `max_records` and within the in-flight limit; `whole_batches` (the
        batch-optimized acquire mode) finishes the batch in which the limit is reached."""
        self.expire_locks(now_ms)
        budget = min(max_records, self.max_in_flight - self.acquired_count())
        acquired: list[int] = []
        for batch in batches:
            if budget <= 0:
                break
            for offset in range(max(batch.base_offset, self.start_offset), batch.last_offset + 1):
                if offset >= self.end_offset:
                    # The log has no records between (compaction): nothing to deliver there.
                    for missing in range(self.end_offset, offset):
                        self.records[missing] = InFlightRecord(RecordState.ARCHIVED, 0)
                    state = RecordState.ARCHIVED if batch.undeliverable else RecordState.AVAILABLE
                    self.records[offset] = InFlightRecord(state, 0)
                    self.end_offset = offset + 1
                record = self.records.get(offset)
                if record is None or record.state != RecordState.AVAILABLE:
                    continue
                record.state = RecordState.ACQUIRED
                record.delivery_count += 1
                record.member_id = member_id
                record.lock_deadline_ms = now_ms + lock_ms
                acquired.append(offset)
                budget -= 1
                if budget <= 0 and not whole_batches:
                    break
        if acquired:
            self.version += 1
        self._advance_start()
        return self._ranges(acquired)

    def _ranges(self, offsets: list[int]) -> list[AcquiredRange]:
        ranges: list[AcquiredRange] = []
        for offset in offsets:
            count = self.records[offset].delivery_count
            if ranges and ranges[-1].last_offset == offset - 1 and ranges[-1].delivery_count == count:
                ranges[-1] = AcquiredRange(ranges[-1].first_offset, offset, count)
            else:
                ranges.append(AcquiredRange(offset, offset, count))
        return ranges

    # --- acknowledgement --------------------------------------------------------------------------

    def acknowledge(
        self, member_id: str, batches: Iterable[AcknowledgementBatch], lock_ms: int, now_ms: int
    ) -> ErrorCode:
        """Apply a member's acknowledgements; all or nothing. INVALID_RECORD_STATE when a record is not
        acquired by this member (its lock expired, or another member holds it)."""
        self.expire_locks(now_ms)
        changes: list[tuple[int, int]] = []
        for batch in batches:
            if batch.last_offset < batch.first_offset or not batch.types:
                return ErrorCode.invalid_request
            width = batch.last_offset - batch.first_offset + 1
            if len(batch.types) not in (1, width):
                return ErrorCode.invalid_request
            for index, offset in enumerate(range(batch.first_offset, batch.last_offset + 1)):
                kind = batch.types[0] if len(batch.types) == 1 else batch.types[index]
                if kind not in AcknowledgeType._value2member_map_:
                    return ErrorCode.invalid_request
                record = self.records.get(offset)
                if offset < self.start_offset or record is None:
                    return ErrorCode.invalid_record_state
                if kind == AcknowledgeType.GAP and record.state == RecordState.ARCHIVED:
                    continue
                if record.state != RecordState.ACQUIRED or record.member_id != member_id:
                    return ErrorCode.invalid_record_state
                changes.append((offset, kind))
        for offset, kind in changes:
            record = self.records[offset]
            if kind == AcknowledgeType.RENEW:
                record.lock_deadline_ms = now_ms + lock_ms
            elif kind == AcknowledgeType.ACCEPT:
                self._settle(record, RecordState.ACKNOWLEDGED)
            elif kind in (AcknowledgeType.REJECT, AcknowledgeType.GAP):
                self._settle(record, RecordState.ARCHIVED)
            else:
                self._make_available(record)
        if changes:
            self.version += 1
        self._advance_start()
        return ErrorCode.none

    def release_member(self, member_id: str) -> int:
        """A member left (or closed its share session): what it holds becomes Available again."""
        released = 0
        for record in self.records.values():
            if record.state == RecordState.ACQUIRED and record.member_id == member_id:
                self._make_available(record)
                released += 1
        if released:
            self.version += 1
            self._advance_start()
        return released

    def expire_locks(self, now_ms: int) -> int:
        """Acquisition locks that ran out release their records (or archive them at the limit)."""
        expired = 0
        for record in self.records.values():
            if record.state == RecordState.ACQUIRED and record.lock_deadline_ms <= now_ms:
                self._make_available(record)
                expired += 1
        if expired:
            self.version += 1
            self._advance_start()
        return expired

    def next_lock_deadline_ms(self) -> int | None:
        deadlines = [r.lock_deadline_ms for r in self.records.values() if r.state == RecordState.ACQUIRED]
        return min(deadlines) if deadlines else None

    def _make_available(self, record: InFlightRecord) -> None:
        if record.delivery_count >= self.delivery_count_limit:
            self._settle(record, RecordState.ARCHIVED)
        else:
            self._settle(record, RecordState.AVAILABLE)

    @staticmethod
    def _settle(record: InFlightRecord, state: RecordState) -> None:
        record.state = state
        record.member_id = ""
        record.lock_deadline_ms = 0

    def _advance_start(self) -> None:
        """The SPSO moves past records that are done (Acknowledged or Archived)."""
        while self.start_offset < self.end_offset:
            record = self.records.get(self.start_offset)
            if record is None or record.state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                break
            del self.records[self.start_offset]
            self.start_offset += 1
            self.version += 1

    # --- persisted form ---------------------------------------------------------------------------

    def state_batches(self) -> list[tuple[int, int, int, int]]:
        """(first offset, last offset, delivery state, delivery count) runs of the window, as
        `__share_group_state` keeps them: an Acquired record is stored as Available (its lock does not
        survive a restart)."""
        runs: list[tuple[int, int, int, int]] = []
        for offset, record in sorted(self.records.items()):
            state = RecordState.AVAILABLE if record.state == RecordState.ACQUIRED else record.state
            if runs and runs[-1][1] == offset - 1 and runs[-1][2:] == (state, record.delivery_count):
                runs[-1] = (runs[-1][0], offset, state, record.delivery_count)
            else:
                runs.append((offset, offset, int(state), record.delivery_count))
        return runs

    @classmethod
    def restored(
        cls,
        start_offset: int,
        batches: Iterable[tuple[int, int, int, int]],
        *,
        delivery_count_limit: int,
        max_in_flight: int,
    ) -> SharePartition:
        partition = cls(start_offset, delivery_count_limit=delivery_count_limit, max_in_flight=max_in_flight)
        for first, last, state, count in batches:
            for offset in range(max(first, start_offset), last + 1):
                partition.records[offset] = InFlightRecord(RecordState(state), count)
                partition.end_offset = max(partition.end_offset, offset + 1)
        # Offsets in between that were not stored were never delivered: Available.
        for offset in range(partition.start_offset, partition.end_offset):
            partition.records.setdefault(offset, InFlightRecord(RecordState.AVAILABLE, 0))
        partition._advance_start()
        return partition
