"""One share-partition (KIP-932): a share group's delivery state of one topic partition, kept by its leader.

Sans-IO: offsets and batch boundaries in, acquired ranges and errors out; the caller reads the log and
supplies the clock. Records below the share-partition start offset (SPSO) are done; records from the SPSO up
to `end_offset` are in flight, each Available, Acquired (by one member, until its lock expires),
Acknowledged or Archived. Every acquisition counts a delivery; a record whose lock expires or that is released
with its delivery count at the limit is archived instead of being offered again (Kafka's SharePartition).
"""

from __future__ import annotations

import bisect
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
class InFlightRun:
    """Consecutive in-flight offsets in one state, with one delivery count and (when Acquired) one holder and
    lock: the window is kept as such runs, as Kafka's SharePartition keeps in-flight batches, so a fetch or an
    acknowledgement costs per run, not per record."""

    first: int
    last: int
    state: RecordState
    delivery_count: int
    member_id: str = ""
    lock_deadline_ms: int = 0

    def same_as(self, other: InFlightRun) -> bool:
        return (
            self.state == other.state
            and self.delivery_count == other.delivery_count
            and self.member_id == other.member_id
            and self.lock_deadline_ms == other.lock_deadline_ms
        )


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
    """The in-flight window of one (group, topic partition): runs covering `start_offset` up to `end_offset`
    without gaps, in offset order."""

    def __init__(self, start_offset: int, *, delivery_count_limit: int, max_in_flight: int) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.delivery_count_limit = delivery_count_limit
        self.max_in_flight = max_in_flight
        self.runs: list[InFlightRun] = []
        # Bumped on every change that must reach `__share_group_state` (its state epoch is separate).
        self.version = 0

    # --- reading ---------------------------------------------------------------------------------

    def next_fetch_offset(self, now_ms: int) -> int:
        """Where the next read starts: the first Available in-flight record, else the end of the window."""
        self.expire_locks(now_ms)
        for run in self.runs:
            if run.state == RecordState.AVAILABLE:
                return run.first
        return self.end_offset

    def acquired_count(self) -> int:
        return sum(run.last - run.first + 1 for run in self.runs if run.state == RecordState.ACQUIRED)

    def done_count(self) -> int:
        """Records inside the window delivered to completion (Acknowledged or Archived)."""
        return sum(
            run.last - run.first + 1
            for run in self.runs
            if run.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
        )

    def move_start(self, log_start_offset: int) -> None:
        """Records removed from the log (retention, DeleteRecords) leave the window."""
        if log_start_offset > self.start_offset:
            del self.runs[: self._split(min(log_start_offset, self.end_offset))]
            self.start_offset = log_start_offset
            self.end_offset = max(self.end_offset, log_start_offset)
            self.version += 1

    def reset_to(self, offset: int) -> None:
        """AlterShareGroupOffsets: the window starts over at `offset` with nothing in flight."""
        self.runs.clear()
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
        deadline = now_ms + lock_ms
        acquired: list[InFlightRun] = []
        for batch in batches:
            if budget <= 0:
                break
            first, last = max(batch.base_offset, self.start_offset), batch.last_offset
            # Records already in the window: their Available runs, in order.
            offset = first
            while offset <= min(last, self.end_offset - 1) and (budget > 0 or whole_batches):
                run = self.runs[self._index_of(offset)]
                upto = min(run.last, last)
                if run.state == RecordState.AVAILABLE:
                    if not whole_batches:
                        upto = min(upto, offset + budget - 1)
                    (taken,) = self._runs_between(offset, upto)
                    taken.state = RecordState.ACQUIRED
                    taken.delivery_count += 1
                    taken.member_id = member_id
                    taken.lock_deadline_ms = deadline
                    acquired.append(taken)
                    budget -= upto - offset + 1
                offset = upto + 1
            if last < self.end_offset or (budget <= 0 and not whole_batches):
                continue
            # Records new to the window; the log has none between its end and the batch (compaction).
            new_first = max(first, self.end_offset)
            if new_first > self.end_offset:
                self.runs.append(InFlightRun(self.end_offset, new_first - 1, RecordState.ARCHIVED, 0))
            if batch.undeliverable:
                self.runs.append(InFlightRun(new_first, last, RecordState.ARCHIVED, 0))
                self.end_offset = last + 1
                continue
            upto = last if whole_batches else min(last, new_first + budget - 1)
            taken = InFlightRun(new_first, upto, RecordState.ACQUIRED, 1, member_id, deadline)
            self.runs.append(taken)
            acquired.append(taken)
            self.end_offset = upto + 1
            budget -= upto - new_first + 1
        ranges = self._ranges(acquired)
        if acquired:
            self.version += 1
        self._advance_start()
        self._coalesce()
        return ranges

    @staticmethod
    def _ranges(runs: list[InFlightRun]) -> list[AcquiredRange]:
        ranges: list[AcquiredRange] = []
        for run in runs:
            if (
                ranges
                and ranges[-1].last_offset == run.first - 1
                and ranges[-1].delivery_count == run.delivery_count
            ):
                ranges[-1] = AcquiredRange(ranges[-1].first_offset, run.last, run.delivery_count)
            else:
                ranges.append(AcquiredRange(run.first, run.last, run.delivery_count))
        return ranges

    # --- acknowledgement --------------------------------------------------------------------------

    def acknowledge(
        self, member_id: str, batches: Iterable[AcknowledgementBatch], lock_ms: int, now_ms: int
    ) -> ErrorCode:
        """Apply a member's acknowledgements; all or nothing. INVALID_RECORD_STATE when a record is not
        acquired by this member (its lock expired, or another member holds it)."""
        self.expire_locks(now_ms)
        changes: list[tuple[int, int, int]] = []
        for batch in batches:
            if batch.last_offset < batch.first_offset or not batch.types:
                return ErrorCode.invalid_request
            width = batch.last_offset - batch.first_offset + 1
            if len(batch.types) not in (1, width):
                return ErrorCode.invalid_request
            for first, last, kind in _same_type_spans(batch):
                if kind not in AcknowledgeType._value2member_map_:
                    return ErrorCode.invalid_request
                error = self._check_held(member_id, first, last, kind, changes)
                if error != ErrorCode.none:
                    return error
        for first, last, kind in changes:
            for run in self._runs_between(first, last):
                if kind == AcknowledgeType.RENEW:
                    run.lock_deadline_ms = now_ms + lock_ms
                elif kind == AcknowledgeType.ACCEPT:
                    self._settle(run, RecordState.ACKNOWLEDGED)
                elif kind in (AcknowledgeType.REJECT, AcknowledgeType.GAP):
                    self._settle(run, RecordState.ARCHIVED)
                else:
                    self._make_available(run)
        if changes:
            self.version += 1
        self._advance_start()
        self._coalesce()
        return ErrorCode.none

    def _check_held(
        self, member_id: str, first: int, last: int, kind: int, changes: list[tuple[int, int, int]]
    ) -> ErrorCode:
        """Whether `member_id` holds every record of first..last (a GAP may also name Archived records,
        which it leaves as they are); the spans to change are added to `changes`."""
        if first < self.start_offset:
            return ErrorCode.invalid_record_state
        offset = first
        while offset <= last:
            if offset >= self.end_offset:
                return ErrorCode.invalid_record_state
            run = self.runs[self._index_of(offset)]
            upto = min(run.last, last)
            if not (kind == AcknowledgeType.GAP and run.state == RecordState.ARCHIVED):
                if run.state != RecordState.ACQUIRED or run.member_id != member_id:
                    return ErrorCode.invalid_record_state
                changes.append((offset, upto, kind))
            offset = upto + 1
        return ErrorCode.none

    def release_member(self, member_id: str) -> int:
        """A member left (or closed its share session): what it holds becomes Available again."""
        released = 0
        for run in self.runs:
            if run.state == RecordState.ACQUIRED and run.member_id == member_id:
                released += run.last - run.first + 1
                self._make_available(run)
        if released:
            self.version += 1
            self._advance_start()
            self._coalesce()
        return released

    def expire_locks(self, now_ms: int) -> int:
        """Acquisition locks that ran out release their records (or archive them at the limit)."""
        expired = 0
        for run in self.runs:
            if run.state == RecordState.ACQUIRED and run.lock_deadline_ms <= now_ms:
                expired += run.last - run.first + 1
                self._make_available(run)
        if expired:
            self.version += 1
            self._advance_start()
            self._coalesce()
        return expired

    def next_lock_deadline_ms(self) -> int | None:
        deadlines = [run.lock_deadline_ms for run in self.runs if run.state == RecordState.ACQUIRED]
        return min(deadlines) if deadlines else None

    def _make_available(self, run: InFlightRun) -> None:
        if run.delivery_count >= self.delivery_count_limit:
            self._settle(run, RecordState.ARCHIVED)
        else:
            self._settle(run, RecordState.AVAILABLE)

    @staticmethod
    def _settle(run: InFlightRun, state: RecordState) -> None:
        run.state = state
        run.member_id = ""
        run.lock_deadline_ms = 0

    def _advance_start(self) -> None:
        """The SPSO moves past records that are done (Acknowledged or Archived)."""
        done = 0
        while done < len(self.runs) and self.runs[done].state in (
            RecordState.ACKNOWLEDGED,
            RecordState.ARCHIVED,
        ):
            done += 1
        if done:
            self.start_offset = self.runs[done - 1].last + 1
            del self.runs[:done]
            self.version += 1

    # --- runs -------------------------------------------------------------------------------------

    def _index_of(self, offset: int) -> int:
        """The index of the run holding `offset` (which must be inside the window)."""
        return bisect.bisect_right(self.runs, offset, key=_first_offset) - 1

    def _split(self, offset: int) -> int:
        """Make a run start at `offset` (inside the window, or its end); the index of that run."""
        if offset >= self.end_offset:
            return len(self.runs)
        index = self._index_of(offset)
        run = self.runs[index]
        if run.first == offset:
            return index
        tail = InFlightRun(
            offset, run.last, run.state, run.delivery_count, run.member_id, run.lock_deadline_ms
        )
        run.last = offset - 1
        self.runs.insert(index + 1, tail)
        return index + 1

    def _runs_between(self, first: int, last: int) -> list[InFlightRun]:
        """The runs covering exactly first..last (inside the window), split where needed."""
        begin = self._split(first)
        return self.runs[begin : self._split(last + 1)]

    def _coalesce(self) -> None:
        """Neighbouring runs that no longer differ become one (a fetch and its acknowledgement split them)."""
        merged: list[InFlightRun] = []
        for run in self.runs:
            if merged and merged[-1].same_as(run):
                merged[-1].last = run.last
            else:
                merged.append(run)
        self.runs = merged

    # --- persisted form ---------------------------------------------------------------------------

    def state_batches(self) -> list[tuple[int, int, int, int]]:
        """(first offset, last offset, delivery state, delivery count) runs of the window, as
        `__share_group_state` keeps them: an Acquired record is stored as Available (its lock does not
        survive a restart)."""
        batches: list[tuple[int, int, int, int]] = []
        for run in self.runs:
            state = RecordState.AVAILABLE if run.state == RecordState.ACQUIRED else run.state
            if batches and batches[-1][2:] == (state, run.delivery_count):
                batches[-1] = (batches[-1][0], run.last, state, run.delivery_count)
            else:
                batches.append((run.first, run.last, int(state), run.delivery_count))
        return batches

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
        for first, last, state, count in sorted(batches):
            first = max(first, partition.end_offset)
            if first > last:
                continue
            # Offsets in between that were not stored were never delivered: Available.
            if first > partition.end_offset:
                partition.runs.append(InFlightRun(partition.end_offset, first - 1, RecordState.AVAILABLE, 0))
            partition.runs.append(InFlightRun(first, last, RecordState(state), count))
            partition.end_offset = last + 1
        partition._advance_start()
        partition._coalesce()
        return partition


def _first_offset(run: InFlightRun) -> int:
    return run.first


def _same_type_spans(batch: AcknowledgementBatch) -> Iterator[tuple[int, int, int]]:
    """(first, last, type) of each stretch of an acknowledgement batch that has one type."""
    if len(batch.types) == 1:
        yield batch.first_offset, batch.last_offset, batch.types[0]
        return
    begin = 0
    for index in range(1, len(batch.types) + 1):
        if index == len(batch.types) or batch.types[index] != batch.types[begin]:
            yield batch.first_offset + begin, batch.first_offset + index - 1, batch.types[begin]
            begin = index
