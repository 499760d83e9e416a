"""Partition: one partition this broker hosts, leader or follower (Kafka's `cluster.Partition`).

Everything about one partition lives here and nowhere else: its log, its assignment and leader epoch, and

- as leader: the ISR (with an ISR proposed to the controller and not yet answered), each follower's
  progress, the high watermark (advanced only here), the acks=all waiters (`PendingAcks`);
- as follower: its fetch state (`FollowerFetch`: truncating, backing off), driven by the replica fetcher
  of its leader (`broker.replication.fetcher`).

Its methods are the operations on one partition: append and read as leader, record a follower's position,
shrink or expand the ISR, become leader or follower from an assignment. The cross-partition work — applying
the metadata image, the fetcher pool, the periodic ISR sweeps, sending AlterPartition, checkpoints, lookups
for handlers — is `ReplicaManager`'s (manager.py), which this module never imports: a partition reaches it
through `PartitionHost`.

A leader's rules:

- a follower's log end offset is the offset of its latest Fetch (it has everything below it);
- a follower is *caught up* at a fetch that reaches the leader's log end, and Kafka's refinement:
  a fetch that reaches what the leader's log end was at the previous fetch proves it was caught up
  at that previous fetch;
- it is *out of sync* when it has not been caught up for `replica.lag.time.max.ms`;
- it may rejoin the ISR once its log end reaches the high watermark and the start of the leader's
  current epoch (so a rejoining replica has nothing from an older leader beyond that point);
- the high watermark is the smallest log end offset in the ISR (and a pending proposal) and never
  moves back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from kio.schema.errors import ErrorCode

from broker.controller.api import PartitionAssignment
from broker.log.partition_log import AppendResult, PartitionLog
from broker.log.producer_state import ProducerEntry
from broker.log.transaction_index import AbortedTxn
from broker.replication.delayed_produce import PendingAcks
from broker.replication.throttle import ReplicationThrottle
from broker.wire.records.errors import StorageError

log = logging.getLogger(__name__)

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
# How long a transaction marker waits for the ISR (Kafka: the WriteTxnMarkers request timeout).
MARKER_TIMEOUT_S = 30.0
UNKNOWN_OFFSET = -1
# After a refused or failed AlterPartition, no new proposal for this long (every follower fetch could
# propose again: wait a little instead of hammering the controller).
ALTER_PARTITION_RETRY_S = 1.0


def now_ms() -> int:
    return int(time.time() * 1000)


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
    record_errors: tuple[tuple[int, str], ...] = ()  # (batch index, message), KIP-467
    acks_pending: asyncio.Future[ErrorCode] | None = None


@dataclass(slots=True)
class FollowerProgress:
    """What a leader knows of one follower."""

    log_end_offset: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    leader_end_at_last_fetch: int = UNKNOWN_OFFSET


@dataclass(slots=True, eq=False)
class FollowerFetch:
    """This broker following the partition: one per follow (a new leader or epoch makes a new one, so a
    fetcher's answer to an older follow is recognised and dropped)."""

    truncating: bool = True
    retry_at: float = 0.0  # time.monotonic() before which it is not fetched (after an error)


class PartitionHost(Protocol):
    """What a partition needs of the broker's cross-partition service (`ReplicaManager`)."""

    node_id: int
    leader_throttle: ReplicationThrottle

    def isr_eligible(self, broker_id: int) -> bool: ...

    def send_alter_partition(self, partition: Partition, new_isr: tuple[int, ...]) -> None: ...


class Partition:
    """One hosted partition: its log, its assignment and its leader or follower state."""

    def __init__(
        self, assignment: PartitionAssignment, partition_log: PartitionLog, host: PartitionHost
    ) -> None:
        self.assignment = assignment
        self.log = partition_log
        self._host = host
        self.is_leader = False
        # Leader state (meaningful while is_leader).
        self.in_sync: frozenset[int] = frozenset()
        # An ISR sent to the controller and not yet answered (None: nothing pending).
        self.proposed_isr: frozenset[int] | None = None
        # Where this leader's epoch begins: a follower below it may still hold a divergent tail.
        self.epoch_start_offset = 0
        self.followers: dict[int, FollowerProgress] = {}
        self.acks = PendingAcks()
        self.alter_in_flight = False
        self.alter_retry_after = 0.0  # time.monotonic()
        # Follower state (set by the fetcher that follows it; None while leading or not fetched).
        self.following: FollowerFetch | None = None

    # ---- state ---------------------------------------------------------------------------------

    @property
    def key(self) -> tuple[str, int]:
        return self.assignment.topic, self.assignment.partition

    @property
    def topic(self) -> str:
        return self.log.topic

    @property
    def index(self) -> int:
        return self.log.partition

    @property
    def leader_epoch(self) -> int:
        return self.assignment.leader_epoch

    @property
    def isr(self) -> tuple[int, ...]:
        """The ISR as this broker knows it (a leader's own view is the freshest)."""
        return tuple(sorted(self.in_sync)) if self.is_leader else self.assignment.isr

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def last_stable_offset(self) -> int:
        """What read_committed consumers may read: the high watermark, held back by the first
        offset of any transaction still open (or closed by a marker not yet replicated)."""
        return self.log.last_stable_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    def in_sync_replica(self, broker_id: int) -> bool:
        return self.is_leader and broker_id in self.in_sync

    def add_append_listener(self, listener: Callable[[], None]) -> None:
        self.log.add_append_listener(listener)

    def remove_append_listener(self, listener: Callable[[], None]) -> None:
        self.log.remove_append_listener(listener)

    # ---- becoming leader or follower -----------------------------------------------------------

    def make_leader(self, assignment: PartitionAssignment, now: int) -> bool:
        """Lead at `assignment`'s epoch; False when already leading at that epoch (a reassignment or an
        ISR change under the same leader: the added replicas are tracked, the removed ones forgotten)."""
        if self.is_leader and self.assignment.leader_epoch == assignment.leader_epoch:
            self.assignment = assignment
            self._set_replicas(assignment.replicas, now)
            self._set_isr(assignment.isr, now)
            self.maybe_advance_high_watermark()
            return False
        partition_log = self.log
        # Everything this leader appends from here on belongs to its epoch; followers truncate
        # against this boundary (OffsetForLeaderEpoch).
        partition_log.leader_epochs.assign(assignment.leader_epoch, partition_log.log_end_offset)
        self.assignment = assignment
        self.is_leader = True
        self.following = None
        self.in_sync = frozenset(assignment.isr)
        self.proposed_isr = None
        self.epoch_start_offset = partition_log.log_end_offset
        # A new leader gives every follower a full lag window before judging it. An empty log
        # (a new partition) has nothing to replicate: every follower has all of it, whether or not
        # it fetched yet (a broker taking 10,000 new partitions may take a while to open them all).
        known_end = 0 if self.epoch_start_offset == 0 else UNKNOWN_OFFSET
        self.followers = {
            replica: FollowerProgress(
                log_end_offset=known_end, last_caught_up_ms=now if replica in self.in_sync else 0
            )
            for replica in assignment.replicas
            if replica != self._host.node_id
        }
        self.maybe_advance_high_watermark()
        return True

    def make_follower(self, assignment: PartitionAssignment) -> bool:
        """Follow `assignment`'s leader; False when nothing changed (same leader, same epoch)."""
        previous = self.assignment
        self.assignment = assignment
        unchanged = previous.leader_epoch == assignment.leader_epoch and previous.leader == assignment.leader
        if not self.is_leader and unchanged:
            return False
        self._stop_leading()
        return True

    def stop(self) -> None:
        """No longer hosted here (deleted, moved away, or the broker closes)."""
        self._stop_leading()
        self.following = None

    def _stop_leading(self) -> None:
        if self.is_leader:
            self.is_leader = False
            self.in_sync = frozenset()
            self.proposed_isr = None
            self.followers = {}
        self.acks.fail_all(ErrorCode.not_leader_or_follower)

    # ---- produce -------------------------------------------------------------------------------

    def append(
        self, records: bytes, acks: int, now_ms: int | None = None, *, from_coordinator: bool = False
    ) -> AppendOutcome:
        """Append batches as leader (acks 0, 1 or -1): min.insync.replicas is checked first for
        acks=all, the high watermark moves by the ISR rule, and acks=all gets a future for the ISR.
        `from_coordinator`: a coordinator's own write (see PartitionLog.append_as_leader)."""
        if not self.is_leader:
            return AppendOutcome(ErrorCode.not_leader_or_follower)
        if acks == -1:
            error, message = self._check_enough_replicas()
            if error != ErrorCode.none:
                return AppendOutcome(error, message)
        try:
            result = self.log.append_as_leader(
                records,
                leader_epoch=self.leader_epoch,
                now_ms=int(time.time() * 1000) if now_ms is None else now_ms,
                from_coordinator=from_coordinator,
            )
        except StorageError as exc:
            return AppendOutcome(ErrorCode(exc.error_code), str(exc), record_errors=tuple(exc.record_errors))
        # With an ISR of one, the append alone moves the high watermark.
        self.maybe_advance_high_watermark()
        pending = None
        if acks == -1 and result.last_offset >= 0:
            pending = self._wait_for_isr(result.last_offset + 1)
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
        if not self.is_leader:
            raise PartitionError(ErrorCode.not_leader_or_follower)
        error, message = self._check_enough_replicas()
        if error != ErrorCode.none:
            raise PartitionError(error, message or "")
        offset = self.log.append_txn_marker(
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            commit=commit,
            coordinator_epoch=coordinator_epoch,
            leader_epoch=self.leader_epoch,
            now_ms=int(time.time() * 1000),
        )
        self.maybe_advance_high_watermark()
        pending = self._wait_for_isr(offset + 1)
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

    def _check_enough_replicas(self) -> tuple[ErrorCode, str | None]:
        """acks=all before appending: NOT_ENOUGH_REPLICAS while the ISR is below min.insync.replicas."""
        required = self.log.config.min_insync_replicas
        if len(self.in_sync) < required:
            return ErrorCode.not_enough_replicas, (
                f"min.insync.replicas={required} but the ISR has {len(self.in_sync)} replica(s)"
            )
        return ErrorCode.none, None

    def _wait_for_isr(self, end_offset: int) -> asyncio.Future[ErrorCode] | None:
        """A future for acks=all, None when the high watermark already covers `end_offset`."""
        if self.log.high_watermark >= end_offset:
            return None
        return self.acks.wait_for(end_offset)

    def in_open_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether the producer, at this epoch, has an open transaction here: its earlier batches
        were verified with the coordinator, so KIP-890 need not ask again until the marker."""
        entry = self.log.producer_state.producers.get(producer_id)
        return entry is not None and entry.epoch == producer_epoch and entry.current_txn_first_offset >= 0

    def producers(self) -> list[ProducerEntry]:
        """The producers this partition remembers (DescribeProducers), each a private copy; a follower
        replays the leader's batches, so it knows them too."""
        return [entry.copy() for entry in self.log.producer_state.producers.values()]

    def wait_until_committed(self) -> asyncio.Future[ErrorCode] | None:
        """A future for the high watermark to reach today's log end (None: it already has)."""
        return self._wait_for_isr(self.log.log_end_offset)

    # ---- leader: follower progress, high watermark, ISR ----------------------------------------

    def record_follower_fetch(self, follower: int, fetch_offset: int, now: int | None = None) -> bool:
        """A follower's fetch position (moves the high watermark and may propose it for the ISR);
        False when `follower` is not a replica of this partition."""
        partition_log = self.log
        if not partition_log.log_start_offset <= fetch_offset <= partition_log.log_end_offset:
            return True  # answered OFFSET_OUT_OF_RANGE by the read; progress is not recorded
        progress = self.followers.get(follower)
        if progress is None:
            return False
        now = now_ms() if now is None else now
        leader_end_offset = partition_log.log_end_offset
        if fetch_offset >= leader_end_offset:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, now)
        elif fetch_offset >= progress.leader_end_at_last_fetch >= 0:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, progress.last_fetch_ms)
        progress.log_end_offset = fetch_offset
        progress.leader_end_at_last_fetch = leader_end_offset
        progress.last_fetch_ms = now
        self.maybe_advance_high_watermark()
        if (
            not self.alter_in_flight
            and time.monotonic() >= self.alter_retry_after
            and self._host.isr_eligible(follower)
            and self.may_join(follower)
        ):
            self.propose_isr(tuple(sorted(self.in_sync | {follower})))
        return True

    @property
    def maximal_isr(self) -> frozenset[int]:
        """The ISR and a pending proposal together: whichever the controller commits, the high
        watermark may only cover what every member of it has."""
        return self.in_sync if self.proposed_isr is None else self.in_sync | self.proposed_isr

    def high_watermark_candidate(self) -> int:
        """min(log end offset) over the maximal ISR; UNKNOWN_OFFSET while a member's is unknown."""
        local_end = self.log.log_end_offset
        node_id = self._host.node_id
        candidate = local_end
        for replica in self.maximal_isr:
            if replica == node_id:
                continue
            progress = self.followers.get(replica)
            end = UNKNOWN_OFFSET if progress is None else progress.log_end_offset
            if end == UNKNOWN_OFFSET:
                return UNKNOWN_OFFSET
            candidate = min(candidate, end)
        return candidate

    def maybe_advance_high_watermark(self) -> None:
        """The only place a leader's high watermark moves; answers the acks=all waiters it covers."""
        if not self.is_leader:
            return
        partition_log = self.log
        candidate = self.high_watermark_candidate()
        if candidate >= 0:
            partition_log.advance_high_watermark(candidate)
        if len(self.acks):
            enough = len(self.in_sync) >= partition_log.config.min_insync_replicas
            self.acks.complete_up_to(partition_log.high_watermark, enough_replicas=enough)

    def out_of_sync(
        self, now: int, lag_max_ms: int, last_session_fetch_ms: Mapping[int, int]
    ) -> frozenset[int]:
        """ISR members (never the leader) that have not caught up within `lag_max_ms`.

        With fetch sessions a caught-up follower no longer names an idle partition in its
        fetches: one whose last known log end is still the leader's log end counts as caught
        up at that follower's latest fetch (`last_session_fetch_ms`, any partition)."""
        local_end = self.log.log_end_offset
        node_id = self._host.node_id
        lagging = []
        for replica in self.in_sync:
            if replica == node_id:
                continue
            progress = self.followers[replica]
            caught_up = progress.last_caught_up_ms
            if progress.log_end_offset >= local_end >= 0:
                caught_up = max(caught_up, last_session_fetch_ms.get(replica, 0))
            if now - caught_up > lag_max_ms:
                lagging.append(replica)
        return frozenset(lagging)

    def may_join(self, replica: int) -> bool:
        """A follower outside the ISR whose log reaches the high watermark and this epoch's start."""
        progress = self.followers.get(replica)
        return (
            progress is not None
            and replica not in self.in_sync
            and progress.log_end_offset >= max(self.log.high_watermark, self.epoch_start_offset)
        )

    def maybe_shrink_isr(self, now: int, lag_max_ms: int, last_session_fetch_ms: Mapping[int, int]) -> None:
        """Propose the ISR without the followers that did not catch up within `lag_max_ms`."""
        if not self.is_leader or self.alter_in_flight:
            return
        lagging = self.out_of_sync(now, lag_max_ms, last_session_fetch_ms)
        if lagging:
            log.info(
                "shrinking ISR of %s-%d: %s did not catch up within %d ms",
                *self.key,
                sorted(lagging),
                lag_max_ms,
            )
            self.propose_isr(tuple(sorted(self.in_sync - lagging)))

    def maybe_expand_isr(self, fetching_since_ms: int, last_session_fetch_ms: Mapping[int, int]) -> None:
        """Propose the followers outside the ISR that caught up and still fetch (their latest Fetch, any
        partition, at or after `fetching_since_ms`: a follower that stopped must not be voted back in)."""
        if (
            not self.is_leader
            or self.in_sync.issuperset(self.followers)
            or self.alter_in_flight
            or time.monotonic() < self.alter_retry_after
        ):
            return
        joining = {
            follower
            for follower in self.followers
            if last_session_fetch_ms.get(follower, 0) >= fetching_since_ms
            and self._host.isr_eligible(follower)
            and self.may_join(follower)
        }
        if joining:
            self.propose_isr(tuple(sorted(self.in_sync | joining)))

    def propose_isr(self, new_isr: tuple[int, ...]) -> None:
        """Send `new_isr` to the controller (AlterPartition, through the host); until it answers, the high
        watermark respects both the old and the new ISR."""
        self.alter_in_flight = True
        self.proposed_isr = frozenset(new_isr)
        self._host.send_alter_partition(self, new_isr)

    def alter_partition_answered(self, accepted: PartitionAssignment | None) -> bool:
        """The controller answered a proposal: `accepted` is the partition it committed, None when it
        refused or could not be reached. True when this leader took `accepted` as its state."""
        self.alter_in_flight = False
        self.proposed_isr = None
        if accepted is None:
            self.alter_retry_after = time.monotonic() + ALTER_PARTITION_RETRY_S
            self.maybe_advance_high_watermark()
            return False
        if not self.is_leader or accepted.leader_epoch != self.assignment.leader_epoch:
            return False
        if accepted.partition_epoch < self.assignment.partition_epoch:
            # The metadata log already brought a newer state of the partition (a fencing's ISR change)
            # while the answer was on its way: the answer must not undo it.
            return False
        self.assignment = accepted
        now = now_ms()
        # The ISR change may have completed a reassignment (removed replicas are gone).
        self._set_replicas(accepted.replicas, now)
        self._set_isr(accepted.isr, now)
        log.info(
            "ISR of %s-%d is now %s (partition epoch %d)",
            *self.key,
            list(accepted.isr),
            accepted.partition_epoch,
        )
        self.maybe_advance_high_watermark()
        return True

    def _set_replicas(self, replicas: tuple[int, ...], now: int) -> None:
        """A reassignment added or removed replicas: track fetches from the added ones (outside
        the ISR until they catch up) and forget the removed ones."""
        node_id = self._host.node_id
        for replica in replicas:
            if replica != node_id and replica not in self.followers:
                self.followers[replica] = FollowerProgress(
                    last_caught_up_ms=now if replica in self.in_sync else 0
                )
        for replica in [r for r in self.followers if r not in replicas]:
            del self.followers[replica]

    def _set_isr(self, isr: tuple[int, ...], now: int) -> None:
        joined = frozenset(isr) - self.in_sync
        self.in_sync = frozenset(isr)
        for replica in joined:
            if replica in self.followers:
                self.followers[replica].last_caught_up_ms = now

    # ---- fetch ---------------------------------------------------------------------------------

    def fetch_bound(self, isolation_level: int, follower: bool) -> int:
        """The offset a read stops before: the log end for followers, else the high watermark (or
        the last stable offset under read_committed)."""
        if follower:
            return self.log.log_end_offset
        return self.last_stable_offset if isolation_level == READ_COMMITTED else self.log.high_watermark

    def follower_limit(self, follower: int, limit: int, first: bool) -> tuple[int, bool]:
        """leader.replication.throttled.rate: a follower outside the ISR gets what the rate allows."""
        throttle = self._host.leader_throttle
        if not throttle.enabled or self.in_sync_replica(follower):
            return limit, first
        # Whole batches within the allowance only: the rate must hold even for the first batch.
        return min(limit, throttle.allowance(time.monotonic())), False

    def note_follower_read(self, follower: int, size: int) -> None:
        if not self.in_sync_replica(follower):  # only catching-up replicas count against the throttle
            self._host.leader_throttle.record(size, time.monotonic())

    def read(self, fetch_offset: int, max_bytes: int, max_offset: int, min_one_message: bool) -> bytes:
        """Whole batches from `fetch_offset` below `max_offset` (StorageError when out of range)."""
        return self.log.read(fetch_offset, max_bytes, max_offset=max_offset, min_one_message=min_one_message)

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound): a read_committed Fetch
        returns them so the consumer drops those producers' batches in that range."""
        return self.log.collect_aborted_transactions(fetch_offset, upper_bound)

    # ---- offsets -------------------------------------------------------------------------------

    def max_timestamp(self) -> tuple[int, int] | None:
        return self.log.max_timestamp()

    def offset_for_timestamp(
        self, timestamp_ms: int, isolation_level: int = READ_UNCOMMITTED
    ) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after `timestamp_ms` that a consumer of
        `isolation_level` may read (below the high watermark, or the last stable offset)."""
        hit = self.log.offset_for_timestamp(timestamp_ms)
        return None if hit is None or hit[0] >= self.fetch_bound(isolation_level, follower=False) else hit

    def legacy_offsets_before(self, timestamp_ms: int, max_num_offsets: int) -> list[int]:
        """ListOffsets v0 from a consumer (`PartitionLog.legacy_offsets_before`), as Kafka's
        `Partition.legacyFetchOffsetsForTimestamp`: offsets past the high watermark give way to it."""
        offsets = self.log.legacy_offsets_before(timestamp_ms, max_num_offsets, int(time.time() * 1000))
        high_watermark = self.log.high_watermark
        if any(offset > high_watermark for offset in offsets):
            return [high_watermark, *(offset for offset in offsets if offset <= high_watermark)]
        return offsets

    def end_offset_for_leader_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """(epoch, end offset) with Kafka's OffsetForLeaderEpoch semantics."""
        return self.log.end_offset_for_leader_epoch(leader_epoch)

    def delete_records_before(self, offset: int) -> tuple[ErrorCode, int]:
        """DeleteRecords (-1: up to the high watermark): (error, new low watermark or -1)."""
        if "delete" not in self.log.config.cleanup_policy:
            # Kafka's Partition.deleteRecordsOnLeader: a compacted-only log keeps every key's latest record.
            return ErrorCode.policy_violation, -1
        high_watermark = self.log.high_watermark
        if offset == -1:
            offset = high_watermark
        if offset < 0 or offset > high_watermark:
            return ErrorCode.offset_out_of_range, -1
        try:
            self.log.delete_records_before(offset)
        except StorageError as exc:
            return ErrorCode(exc.error_code), -1
        return ErrorCode.none, self.log.log_start_offset
