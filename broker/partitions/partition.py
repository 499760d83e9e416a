"""Partition: one partition this broker leads, as the request handlers see it (Kafka's `Partition`).

Everything a handler may do to a led partition goes through here: append as leader, read up to the
bound its isolation level allows, answer offset questions, delete records. The high watermark, the
ISR and the leader epoch are read here and written only by the partition layer (`PartitionManager`
and the replication machinery it drives); handlers never see the log itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.log.partition_log import AppendResult, PartitionLog
from broker.log.producer_state import ProducerEntry
from broker.log.transaction_index import AbortedTxn
from broker.replication.manager import ReplicaManager
from broker.replication.replica import Replica
from broker.wire.records.errors import StorageError

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
# How long a transaction marker waits for the ISR (Kafka: the WriteTxnMarkers request timeout).
MARKER_TIMEOUT_S = 30.0


class PartitionError(StorageError):
    """A partition-level refusal carrying the Kafka error code to answer with."""

    def __init__(self, error: ErrorCode, message: str = "") -> None:
        super().__init__(message or error.name)
        self.error_code = error.value


@dataclass(frozen=True, slots=True)
class AppendOutcome:
    """What a leader append did: the log's result, or the error to answer with.

    `acks_pending` (acks=all only) completes with the final error code once the ISR has every
    appended batch; None when the high watermark already covers them."""

    error: ErrorCode
    message: str | None = None
    result: AppendResult | None = None
    record_errors: tuple[int, ...] = ()
    acks_pending: asyncio.Future[ErrorCode] | None = None


class Partition:
    """A led partition: its log and the replica state that decides what it may expose."""

    __slots__ = ("_log", "_replica", "_replication")

    def __init__(self, replica: Replica, replication: ReplicaManager) -> None:
        self._log: PartitionLog = replica.log
        self._replica = replica
        self._replication = replication

    # ---- state ---------------------------------------------------------------------------------

    @property
    def replica(self) -> Replica:
        return self._replica

    @property
    def topic(self) -> str:
        return self._log.topic

    @property
    def index(self) -> int:
        return self._log.partition

    @property
    def leader_epoch(self) -> int:
        return self._replica.assignment.leader_epoch

    @property
    def high_watermark(self) -> int:
        return self._log.high_watermark

    @property
    def last_stable_offset(self) -> int:
        """What read_committed consumers may read: the high watermark, held back by the first
        offset of any transaction still open (or closed by a marker not yet replicated)."""
        return self._log.last_stable_offset

    @property
    def log_start_offset(self) -> int:
        return self._log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log.log_end_offset

    def in_sync(self, broker_id: int) -> bool:
        leader = self._replica.leader
        return leader is not None and broker_id in leader.isr

    def add_append_listener(self, listener: Callable[[], None]) -> None:
        self._log.add_append_listener(listener)

    def remove_append_listener(self, listener: Callable[[], None]) -> None:
        self._log.remove_append_listener(listener)

    # ---- produce -------------------------------------------------------------------------------

    def append(
        self, records: bytes, acks: int, now_ms: int | None = None, *, from_coordinator: bool = False
    ) -> AppendOutcome:
        """Append batches as leader (acks 0, 1 or -1): min.insync.replicas is checked first for
        acks=all, the high watermark moves by the ISR rule, and acks=all gets a future for the ISR.
        `from_coordinator`: a coordinator's own write (see PartitionLog.append_as_leader)."""
        if acks == -1:
            error, message = self._replication.check_enough_replicas(self._replica)
            if error != ErrorCode.none:
                return AppendOutcome(error, message)
        try:
            result = self._log.append_as_leader(
                records,
                leader_epoch=self.leader_epoch,
                now_ms=int(time.time() * 1000) if now_ms is None else now_ms,
                from_coordinator=from_coordinator,
            )
        except StorageError as exc:
            return AppendOutcome(
                ErrorCode(exc.error_code), str(exc), record_errors=tuple(getattr(exc, "record_errors", ()))
            )
        self._replication.after_leader_append(self._replica)
        pending = None
        if acks == -1 and result.last_offset >= 0:
            pending = self._replication.wait_for_isr(self._replica, result.last_offset + 1)
        return AppendOutcome(ErrorCode.none, result=result, acks_pending=pending)

    async def write_txn_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        timeout_s: float = MARKER_TIMEOUT_S,
    ) -> int:
        """Append a commit/abort marker as leader and wait until the ISR has it (as acks=all);
        returns its offset.

        Raises PartitionError / StorageError with the code to answer: NOT_LEADER_OR_FOLLOWER,
        NOT_ENOUGH_REPLICAS(_AFTER_APPEND), INVALID_PRODUCER_EPOCH (a stale producer epoch),
        TRANSACTION_COORDINATOR_FENCED (a stale coordinator epoch), REQUEST_TIMED_OUT.
        """
        if not self._replica.is_leader:
            raise PartitionError(ErrorCode.not_leader_or_follower)
        error, message = self._replication.check_enough_replicas(self._replica)
        if error != ErrorCode.none:
            raise PartitionError(error, message or "")
        offset = self._log.append_txn_marker(
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            commit=commit,
            coordinator_epoch=coordinator_epoch,
            leader_epoch=self.leader_epoch,
            now_ms=int(time.time() * 1000),
        )
        self._replication.after_leader_append(self._replica)
        pending = self._replication.wait_for_isr(self._replica, offset + 1)
        if pending is not None:
            try:
                error = await asyncio.wait_for(pending, timeout_s)  # cancelled (dropped) on timeout
            except TimeoutError:
                raise PartitionError(
                    ErrorCode.request_timed_out, "the ISR did not get the marker in time"
                ) from None
            if error != ErrorCode.none:
                raise PartitionError(error)
        return offset

    def in_open_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether the producer, at this epoch, has an open transaction here: its earlier batches
        were verified with the coordinator, so KIP-890 need not ask again until the marker."""
        entry = self._log.producer_state.producers.get(producer_id)
        return entry is not None and entry.epoch == producer_epoch and entry.current_txn_first_offset >= 0

    def producers(self) -> list[ProducerEntry]:
        """The producers this partition remembers (DescribeProducers), each a private copy."""
        return [entry.copy() for entry in self._log.producer_state.producers.values()]

    def wait_until_committed(self) -> asyncio.Future[ErrorCode] | None:
        """A future for the high watermark to reach today's log end (None: it already has)."""
        return self._replication.wait_for_isr(self._replica, self._log.log_end_offset)

    # ---- fetch ---------------------------------------------------------------------------------

    def fetch_bound(self, isolation_level: int, follower: bool) -> int:
        """The offset a read stops before: the log end for followers, else the high watermark (or
        the last stable offset under read_committed)."""
        if follower:
            return self._log.log_end_offset
        return self.last_stable_offset if isolation_level == READ_COMMITTED else self._log.high_watermark

    def record_follower_fetch(self, follower: int, fetch_offset: int) -> bool:
        """A follower's fetch position (moves the high watermark and the ISR); False when `follower`
        is not a replica of this partition."""
        log = self._log
        if not log.log_start_offset <= fetch_offset <= log.log_end_offset:
            return True  # answered OFFSET_OUT_OF_RANGE by the read; progress is not recorded
        return self._replication.record_follower_fetch(self._replica, follower, fetch_offset)

    def follower_limit(self, follower: int, limit: int, first: bool) -> tuple[int, bool]:
        """leader.replication.throttled.rate: a follower outside the ISR gets what the rate allows."""
        throttle = self._replication.leader_throttle
        if not throttle.enabled or self.in_sync(follower):
            return limit, first
        # Whole batches within the allowance only: the rate must hold even for the first batch.
        return min(limit, throttle.allowance(time.monotonic())), False

    def note_follower_read(self, follower: int, size: int) -> None:
        if not self.in_sync(follower):  # only catching-up replicas count against the throttle
            self._replication.leader_throttle.record(size, time.monotonic())

    def read(self, fetch_offset: int, max_bytes: int, max_offset: int, min_one_message: bool) -> bytes:
        """Whole batches from `fetch_offset` below `max_offset` (StorageError when out of range)."""
        return self._log.read(fetch_offset, max_bytes, max_offset=max_offset, min_one_message=min_one_message)

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound): a read_committed Fetch
        returns them so the consumer drops those producers' batches in that range."""
        return self._log.collect_aborted_transactions(fetch_offset, upper_bound)

    # ---- offsets -------------------------------------------------------------------------------

    def max_timestamp(self) -> tuple[int, int] | None:
        return self._log.max_timestamp()

    def offset_for_timestamp(
        self, timestamp_ms: int, isolation_level: int = READ_UNCOMMITTED
    ) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after `timestamp_ms` that a consumer of
        `isolation_level` may read (below the high watermark, or the last stable offset)."""
        hit = self._log.offset_for_timestamp(timestamp_ms)
        return None if hit is None or hit[0] >= self.fetch_bound(isolation_level, follower=False) else hit

    def legacy_offsets_before(self, timestamp_ms: int, max_num_offsets: int) -> list[int]:
        """ListOffsets v0 from a consumer (`PartitionLog.legacy_offsets_before`), as Kafka's
        `Partition.legacyFetchOffsetsForTimestamp`: offsets past the high watermark give way to it."""
        offsets = self._log.legacy_offsets_before(timestamp_ms, max_num_offsets, int(time.time() * 1000))
        high_watermark = self._log.high_watermark
        if any(offset > high_watermark for offset in offsets):
            return [high_watermark, *(offset for offset in offsets if offset <= high_watermark)]
        return offsets

    def end_offset_for_leader_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """(epoch, end offset) with Kafka's OffsetForLeaderEpoch semantics."""
        return self._log.end_offset_for_leader_epoch(leader_epoch)

    def delete_records_before(self, offset: int) -> tuple[ErrorCode, int]:
        """DeleteRecords (-1: up to the high watermark): (error, new low watermark or -1)."""
        if "delete" not in self._log.config.cleanup_policy:
            # As Kafka, before anything else: a compacted topic's records go only by compaction.
            return ErrorCode.policy_violation, -1
        high_watermark = self._log.high_watermark
        if offset == -1:
            offset = high_watermark
        if offset < 0 or offset > high_watermark:
            return ErrorCode.offset_out_of_range, -1
        try:
            self._log.delete_records_before(offset)
        except StorageError as exc:
            return ErrorCode(exc.error_code), -1
        return ErrorCode.none, self._log.log_start_offset
