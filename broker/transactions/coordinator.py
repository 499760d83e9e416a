"""The transaction coordinator (Kafka's `TransactionCoordinator` + `TransactionStateManager`).

A transactional id belongs to one `__transaction_state` partition (`partition_for_transactional_id`).
A broker owns the partitions it leads (a single node leads them all): `load_partition` when it becomes
the leader (replay, then finish transactions left in PrepareCommit/PrepareAbort by sending their
markers), `unload_partition` when leadership moves. Every state change is written to the partition
(acks=all) before it is applied in memory and answered.

EndTxn answers once PrepareCommit/PrepareAbort is written; the markers then go to every partition
of the transaction (retried until each leader has them) and CompleteCommit/CompleteAbort is written.
Until then the id answers CONCURRENT_TRANSACTIONS, as in Kafka.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kio.schema.errors import ErrorCode

from broker.coordinator.runtime import CoordinatorAppendError, CoordinatorRuntime, CoordinatorSlot
from broker.metadata.coordinator_records import LogEntry
from broker.transactions.state import (
    COMPLETED,
    MAX_PRODUCER_EPOCH,
    PREPARED,
    STATE_NAMES,
    STATES_BY_NAME,
    TopicPartition,
    TransactionMetadata,
    TxnState,
)
from broker.transactions.state_format import (
    TransactionStateFormatError,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    partition_for_transactional_id,
)

log = logging.getLogger(__name__)

# Between two rounds of markers to partitions whose leader could not take them yet.
MARKER_RETRY_BACKOFF_S = 0.1
MARKER_RETRY_BACKOFF_MAX_S = 2.0
# Errors after which a marker is not retried: the partition is gone, or this coordinator is fenced.
_MARKER_DONE_ERRORS = frozenset({ErrorCode.none, ErrorCode.unknown_topic_id})
_MARKER_FENCED_ERRORS = frozenset({ErrorCode.transaction_coordinator_fenced})
# How often a transaction whose markers (or complete state) cannot be written yet says so in the log.
WAITING_LOG_INTERVAL_S = 10.0


class TransactionStateAppendError(CoordinatorAppendError):
    """A `__transaction_state` append refused or not replicated, with the log's error code."""


class TransactionStateLog(Protocol):
    num_partitions: int

    async def append(self, partition: int, records: Sequence[tuple[bytes, bytes | None]]) -> int:
        """Appends the records as one batch; returns once committed, raises
        TransactionStateAppendError when they cannot be."""
        ...

    def read(self, partition: int) -> Iterator[LogEntry]:
        """Every record of the partition, oldest first."""
        ...

    async def wait_until_committed(self, partition: int) -> None:
        """Returns once everything `read` yields is committed."""
        ...

    def coordinator_epoch(self, partition: int) -> int:
        """The leader epoch of the partition: the coordinator epoch markers carry."""
        ...


class CoordinatorLocator(Protocol):
    def locate(self, key: str, listener_name: str) -> Any:
        """Where the key's coordinator is (a CoordinatorEndpoint of broker.groups)."""
        ...


class MarkerWriter(Protocol):
    async def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        partitions: Sequence[TopicPartition],
    ) -> dict[TopicPartition, int]:
        """One attempt to write a commit/abort marker to each partition's leader: an error code
        per partition (NONE when written, UNKNOWN_TOPIC_ID when the topic no longer exists)."""
        ...


@dataclass(frozen=True, slots=True)
class TransactionCoordinatorConfig:
    max_timeout_ms: int = 900_000  # transaction.max.timeout.ms
    id_expiration_ms: int = 604_800_000  # transactional.id.expiration.ms
    abort_timed_out_interval_ms: int = 10_000  # transaction.abort.timed.out.transaction.cleanup.interval.ms
    remove_expired_interval_ms: int = 3_600_000  # transaction.remove.expired.transaction.cleanup.interval.ms


@dataclass(frozen=True, slots=True)
class InitProducerResult:
    error: int
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(frozen=True, slots=True)
class TransactionDescription:
    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_ms: int
    partitions: tuple[TopicPartition, ...]


class TransactionCoordinator:
    """Serves the transactional ids of the `__transaction_state` partitions it owns: the shard of the
    coordinator runtime for that topic (a partition's epoch is its leader epoch, the coordinator
    epoch its markers carry)."""

    def __init__(
        self,
        state_log: TransactionStateLog,
        markers: MarkerWriter,
        allocate_producer_id: Callable[[], Awaitable[int]],
        offsets_partition_for_group: Callable[[str], TopicPartition],
        config: TransactionCoordinatorConfig | None = None,
        *,
        now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.log = state_log
        self.markers = markers
        self.config = config or TransactionCoordinatorConfig()
        self._allocate_producer_id = allocate_producer_id
        self._offsets_partition_for_group = offsets_partition_for_group
        self._now_ms = now_ms
        self.transactions: dict[str, TransactionMetadata] = {}
        self.runtime = CoordinatorRuntime("__transaction_state", self)
        # Set once the broker joined its quorum: FindCoordinator names the leader of the key's partition.
        self.locator: CoordinatorLocator | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def partitions(self) -> dict[int, CoordinatorSlot]:
        """The `__transaction_state` partitions this coordinator owns (loading or loaded)."""
        return self.runtime.slots

    @property
    def stopped(self) -> bool:
        return self.runtime.stopped

    def start_sweeps(self) -> None:
        """Starts aborting timed-out transactions and forgetting expired transactional ids."""
        self._spawn(self._sweep_forever(), "transaction-sweeps")

    def load_partition(self, partition: int) -> asyncio.Task[None] | None:
        """Becomes the coordinator of the partition's transactional ids (COORDINATOR_LOAD_IN_PROGRESS
        until replayed); None when already owned at this coordinator epoch, or stopped.

        Owned at an older epoch (this broker lost the leadership and got it back while cut off, so
        it never saw itself lose it), the partition is loaded again as Kafka's `onElection` does:
        the log may have been truncated to what another coordinator wrote meanwhile, and markers
        sent with the old epoch are refused as TRANSACTION_COORDINATOR_FENCED."""
        return self.runtime.load(partition, self.log.coordinator_epoch(partition))

    def unload_partition(self, partition: int) -> None:
        self.runtime.unload(partition)

    def drop_partition_state(self, partition: int) -> None:
        unloaded = [t for t in self.transactions if self.partition_for(t) == partition]
        for transactional_id in unloaded:
            # Writes and marker rounds still in flight see the id gone and stop.
            self.transactions.pop(transactional_id).state = TxnState.DEAD
        log.info("unloaded __transaction_state partition %d (%d transactional ids)", partition, len(unloaded))

    async def close(self) -> None:
        self.runtime.stop()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.runtime.drain()
        close_markers = getattr(self.markers, "close", None)
        if close_markers is not None:
            await close_markers()

    def owns(self, transactional_id: str) -> bool:
        """Whether this coordinator has loaded the transactional id's partition."""
        return self.runtime.loaded(self.partition_for(transactional_id))

    def partition_for(self, transactional_id: str) -> int:
        return partition_for_transactional_id(transactional_id, self.log.num_partitions)

    def _availability_error(self, transactional_id: str) -> int | None:
        return self.runtime.availability_error(self.partition_for(transactional_id))

    async def load_partition_state(self, slot: CoordinatorSlot) -> None:
        partition = slot.partition
        found: dict[str, TransactionMetadata | None] = {}
        async for entry in self.runtime.replay(slot, self.log.read(partition)):
            key_bytes, value_bytes = entry.key, entry.value
            if key_bytes is None:
                continue
            try:
                transactional_id = decode_key(key_bytes)
                if transactional_id is None:
                    continue
                found[transactional_id] = (
                    None
                    if value_bytes is None
                    else TransactionMetadata.from_value(transactional_id, decode_value(value_bytes))
                )
            except (TransactionStateFormatError, ValueError):
                log.warning("skipping an unreadable __transaction_state record in partition %d", partition)
        with contextlib.suppress(TransactionStateAppendError):
            await self.log.wait_until_committed(partition)
        if not self.runtime.current(slot):
            return
        to_finish = []
        for transactional_id, metadata in found.items():
            if metadata is None or self.partition_for(transactional_id) != partition:
                continue
            self.transactions[transactional_id] = metadata
            if metadata.state in PREPARED:
                to_finish.append(metadata)
        log.info(
            "coordinating the %d transactional ids of __transaction_state partition %d (epoch %d)",
            sum(1 for t in self.transactions if self.partition_for(t) == partition),
            partition,
            slot.epoch,
        )
        for metadata in to_finish:
            # Started once the partition counts as loaded: their writes need it.
            self.runtime.defer_until_loaded(
                partition,
                lambda metadata=metadata: self._spawn(
                    self._complete(metadata), f"complete-{metadata.transactional_id}"
                ),
            )

    # --- InitProducerId ---------------------------------------------------------------------

    async def init_producer_id(
        self, transactional_id: str, timeout_ms: int, producer_id: int = -1, producer_epoch: int = -1
    ) -> InitProducerResult:
        if not transactional_id:
            return InitProducerResult(ErrorCode.invalid_request)
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return InitProducerResult(ErrorCode.invalid_transaction_timeout)
        error = self._availability_error(transactional_id)
        if error is not None:
            return InitProducerResult(error)
        metadata = self.transactions.get(transactional_id)
        now = self._now_ms()
        if metadata is None:
            return await self._init_new(transactional_id, timeout_ms, now)
        if metadata.pending or metadata.state in PREPARED or metadata.state == TxnState.PREPARE_EPOCH_FENCE:
            return InitProducerResult(ErrorCode.concurrent_transactions)
        if producer_id >= 0:
            # KIP-360: the producer names the id and epoch it holds.
            if (
                producer_id == metadata.previous_producer_id
                and producer_epoch == metadata.last_producer_epoch
            ):
                # A retry of the InitProducerId that already moved it to a new id: answer it again.
                return InitProducerResult(ErrorCode.none, metadata.producer_id, metadata.producer_epoch)
            if producer_id != metadata.producer_id:
                return InitProducerResult(ErrorCode.producer_fenced)
            if producer_epoch != metadata.producer_epoch and not (
                producer_epoch == metadata.last_producer_epoch and metadata.state in COMPLETED
            ):
                return InitProducerResult(ErrorCode.producer_fenced)
        if metadata.state == TxnState.ONGOING:
            # A new producer instance: fence the old one (epoch bump) and abort its transaction.
            # The client retries on CONCURRENT_TRANSACTIONS until the abort has completed.
            error = await self._fence_and_abort(metadata)
            return InitProducerResult(error if error is not None else ErrorCode.concurrent_transactions)
        updated = _copy(metadata)
        updated.last_producer_epoch = metadata.producer_epoch
        if metadata.producer_epoch >= MAX_PRODUCER_EPOCH - 1:
            new_id = await self._new_producer_id()
            if new_id is None:
                return InitProducerResult(ErrorCode.coordinator_not_available)
            updated.previous_producer_id = metadata.producer_id
            updated.producer_id = new_id
            updated.producer_epoch = 0
        else:
            updated.producer_epoch = metadata.producer_epoch + 1
        updated.timeout_ms = timeout_ms
        updated.state = TxnState.EMPTY
        updated.partitions = set()
        updated.start_ms = -1
        updated.last_update_ms = now
        error = await self._write(metadata, updated)
        if error is not None:
            return InitProducerResult(error)
        return InitProducerResult(ErrorCode.none, metadata.producer_id, metadata.producer_epoch)

    async def _init_new(self, transactional_id: str, timeout_ms: int, now: int) -> InitProducerResult:
        """A transactional id seen for the first time: a new producer id with epoch 0, written as
        Empty. The id is held (pending) meanwhile, so a concurrent InitProducerId waits its turn."""
        metadata = TransactionMetadata(
            transactional_id, -1, 0, timeout_ms, TxnState.EMPTY, start_ms=-1, last_update_ms=now, pending=True
        )
        self.transactions[transactional_id] = metadata
        new_id = await self._new_producer_id()
        error = ErrorCode.coordinator_not_available if new_id is None else None
        if new_id is not None:
            metadata.producer_id = new_id
            error = await self._write(metadata, _copy(metadata))
        if error is not None:
            if self.transactions.get(transactional_id) is metadata:
                del self.transactions[transactional_id]
            return InitProducerResult(error)
        return InitProducerResult(ErrorCode.none, metadata.producer_id, metadata.producer_epoch)

    async def _new_producer_id(self) -> int | None:
        """A producer id from the blocks the controller allocates to this broker; None when none
        can be had right now (the client retries on COORDINATOR_NOT_AVAILABLE)."""
        try:
            return await self._allocate_producer_id()
        except Exception as exc:
            log.warning("no producer id for a transactional id: %s", exc)
            return None

    async def _fence_and_abort(self, metadata: TransactionMetadata) -> int | None:
        """Bumps the epoch (the old producer gets PRODUCER_FENCED) and aborts the open transaction
        with the new epoch, as Kafka does for a timed-out transaction or a re-initialised producer."""
        if metadata.producer_epoch >= MAX_PRODUCER_EPOCH - 1:
            # The epoch cannot go up: abort with the current one (the next InitProducerId moves
            # the id to a new producer id).
            fenced_epoch = metadata.producer_epoch
        else:
            fenced_epoch = metadata.producer_epoch + 1
        previous_state = metadata.state
        metadata.state = TxnState.PREPARE_EPOCH_FENCE
        updated = _copy(metadata)
        updated.last_producer_epoch = metadata.producer_epoch
        updated.producer_epoch = fenced_epoch
        updated.state = TxnState.PREPARE_ABORT
        updated.last_update_ms = self._now_ms()
        error = await self._write(metadata, updated)
        if error is not None:
            if metadata.state == TxnState.PREPARE_EPOCH_FENCE:
                metadata.state = previous_state
            return error
        self._spawn(self._complete(metadata), f"complete-{metadata.transactional_id}")
        return None

    # --- AddPartitionsToTxn / AddOffsetsToTxn -------------------------------------------------

    def _producer_error(self, transactional_id: str, producer_id: int, producer_epoch: int) -> int | None:
        error = self._availability_error(transactional_id)
        if error is not None:
            return error
        metadata = self.transactions.get(transactional_id)
        if metadata is None or metadata.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if producer_epoch != metadata.producer_epoch:
            return ErrorCode.producer_fenced
        if metadata.pending or metadata.state in PREPARED or metadata.state == TxnState.PREPARE_EPOCH_FENCE:
            return ErrorCode.concurrent_transactions
        return None

    async def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> int:
        """Adds partitions to the producer's transaction (starting one): the error for all of them."""
        wanted = set(partitions)
        error = self._producer_error(transactional_id, producer_id, producer_epoch)
        if error is not None:
            return error
        metadata = self.transactions[transactional_id]
        if metadata.state == TxnState.ONGOING and wanted <= metadata.partitions:
            return ErrorCode.none
        updated = _copy(metadata)
        now = self._now_ms()
        if metadata.state != TxnState.ONGOING:
            updated.partitions = set()
            updated.start_ms = now
        updated.partitions |= wanted
        updated.state = TxnState.ONGOING
        updated.last_update_ms = now
        error = await self._write(metadata, updated)
        return ErrorCode.none if error is None else error

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, int]:
        """KIP-890 (AddPartitionsToTxn v4+ verify_only): whether each partition is in the producer's
        ongoing transaction; nothing is added."""
        wanted = list(partitions)
        error = self._producer_error(transactional_id, producer_id, producer_epoch)
        if error is not None:
            return dict.fromkeys(wanted, error)
        metadata = self.transactions[transactional_id]
        ongoing = metadata.state == TxnState.ONGOING
        return {
            tp: ErrorCode.none if ongoing and tp in metadata.partitions else ErrorCode.invalid_txn_state
            for tp in wanted
        }

    async def add_offsets(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str
    ) -> int:
        """AddOffsetsToTxn: the group's `__consumer_offsets` partition joins the transaction."""
        return await self.add_partitions(
            transactional_id, producer_id, producer_epoch, [self._offsets_partition_for_group(group_id)]
        )

    # --- EndTxn -----------------------------------------------------------------------------

    async def end_transaction(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> InitProducerResult:
        """EndTxn: the error, and the producer id and epoch the producer holds afterwards."""
        error = self._availability_error(transactional_id)
        if error is not None:
            return InitProducerResult(error)
        metadata = self.transactions.get(transactional_id)
        if metadata is None:
            return InitProducerResult(ErrorCode.invalid_producer_id_mapping)
        if _transition_pending(metadata):
            return InitProducerResult(ErrorCode.concurrent_transactions)
        if metadata.producer_id != producer_id:
            return InitProducerResult(ErrorCode.invalid_producer_id_mapping)
        if producer_epoch != metadata.producer_epoch:
            return InitProducerResult(ErrorCode.producer_fenced)
        if metadata.state == TxnState.PREPARE_EPOCH_FENCE:
            return InitProducerResult(ErrorCode.concurrent_transactions)
        held = (metadata.producer_id, metadata.producer_epoch)
        state = metadata.state
        if state == TxnState.ONGOING:
            updated = _copy(metadata)
            updated.state = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
            updated.last_update_ms = self._now_ms()
            error = await self._write(metadata, updated)
            if error is not None:
                return InitProducerResult(error)
            self._spawn(self._complete(metadata), f"complete-{transactional_id}")
            return InitProducerResult(ErrorCode.none, *held)
        # Retries of an EndTxn whose answer was lost are answered as the first one was.
        if (commit and state == TxnState.COMPLETE_COMMIT) or (
            not commit and state == TxnState.COMPLETE_ABORT
        ):
            return InitProducerResult(ErrorCode.none, *held)
        return InitProducerResult(ErrorCode.invalid_txn_state)

    async def end_transaction_v2(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> InitProducerResult:
        """EndTxn v5 with transaction.version 2 (KIP-890 part 2): every transaction ends with an epoch bump.
        The prepare record carries the bumped epoch (the markers too, so the old epoch is fenced on every
        partition); past the last epoch the producer moves to a new producer id with epoch 0 once the
        transaction completes. Answers the producer id and epoch the producer holds afterwards."""
        error = self._availability_error(transactional_id)
        if error is not None:
            return InitProducerResult(error)
        metadata = self.transactions.get(transactional_id)
        if metadata is None:
            return InitProducerResult(ErrorCode.invalid_producer_id_mapping)
        state = metadata.state
        if _transition_pending(metadata):
            return InitProducerResult(ErrorCode.concurrent_transactions)
        # A retry of an EndTxn whose answer was lost: the epoch it bumped, or the new producer id it moved to.
        retry_on_bump = metadata.producer_id == producer_id and metadata.producer_epoch == producer_epoch + 1
        retry_on_overflow = (
            metadata.previous_producer_id == producer_id
            and producer_epoch == MAX_PRODUCER_EPOCH - 1
            and metadata.producer_epoch == 0
        )
        is_retry = retry_on_bump or retry_on_overflow
        if metadata.producer_id != producer_id and not retry_on_overflow:
            return InitProducerResult(ErrorCode.invalid_producer_id_mapping)
        if state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            valid_epoch = is_retry or producer_epoch == metadata.producer_epoch
        else:
            valid_epoch = producer_epoch == metadata.producer_epoch
        if not valid_epoch:
            return InitProducerResult(ErrorCode.producer_fenced)
        if state == TxnState.PREPARE_EPOCH_FENCE:
            return InitProducerResult(ErrorCode.concurrent_transactions)
        held = InitProducerResult(ErrorCode.none, metadata.producer_id, metadata.producer_epoch)
        if state == TxnState.ONGOING:
            return await self._prepare_v2(metadata, commit, empty=False)
        if state == TxnState.COMPLETE_COMMIT and commit and is_retry:
            return held
        if state == TxnState.COMPLETE_ABORT and not commit and is_retry:
            return held
        if not commit and not is_retry and state in COMPLETED:
            # An abort with nothing added (the producer failed before its first send) still bumps the epoch.
            return await self._prepare_v2(metadata, commit, empty=True)
        return InitProducerResult(ErrorCode.invalid_txn_state)

    async def _prepare_v2(
        self, metadata: TransactionMetadata, commit: bool, empty: bool
    ) -> InitProducerResult:
        """Writes PrepareCommit/PrepareAbort with the epoch bumped (and, past the last epoch, the producer id
        to move to), then completes it in the background; `empty`: an abort with no partitions added."""
        state = metadata.state
        next_producer_id = -1
        if metadata.producer_epoch >= MAX_PRODUCER_EPOCH - 1:
            allocated = await self._new_producer_id()
            if allocated is None:
                return InitProducerResult(ErrorCode.coordinator_not_available)
            if self.transactions.get(metadata.transactional_id) is not metadata or metadata.pending:
                return InitProducerResult(ErrorCode.concurrent_transactions)
            if metadata.state != state:
                return InitProducerResult(ErrorCode.concurrent_transactions)
            next_producer_id = allocated
        now = self._now_ms()
        updated = _copy(metadata)
        updated.state = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        updated.last_producer_epoch = metadata.producer_epoch
        updated.producer_epoch = metadata.producer_epoch + 1
        updated.next_producer_id = next_producer_id
        updated.client_transaction_version = 2
        if empty:
            updated.partitions = set()
            updated.start_ms = now
        updated.last_update_ms = now
        error = await self._write(metadata, updated)
        if error is not None:
            return InitProducerResult(error)
        self._spawn(self._complete(metadata), f"complete-{metadata.transactional_id}")
        if next_producer_id >= 0:
            return InitProducerResult(ErrorCode.none, next_producer_id, 0)
        return InitProducerResult(ErrorCode.none, updated.producer_id, updated.producer_epoch)

    async def _complete(self, metadata: TransactionMetadata) -> None:
        """Writes the markers of a prepared transaction, then its CompleteCommit/CompleteAbort."""
        commit = metadata.state == TxnState.PREPARE_COMMIT
        partition = self.partition_for(metadata.transactional_id)
        owned = self.partitions.get(partition)
        if owned is None:
            return
        remaining = sorted(metadata.partitions)
        backoff = MARKER_RETRY_BACKOFF_S
        waiting = _WaitingLog(metadata, time.monotonic())
        while remaining:
            if self._lost(metadata, owned):
                return
            try:
                answers = await self.markers.write_markers(
                    metadata.producer_id, metadata.producer_epoch, commit, owned.epoch, remaining
                )
            except Exception:
                log.exception("sending markers of %s failed; retrying", metadata.transactional_id)
                answers = dict.fromkeys(remaining, ErrorCode.unknown_server_error)
            if any(answers.get(tp) in _MARKER_FENCED_ERRORS for tp in remaining):
                if self._reload_if_led_at_new_epoch(partition, owned):
                    return  # the reload finishes the transaction with the current epoch
                # A newer coordinator wrote markers for this producer: this one is about to be
                # unloaded. Until it is, it keeps trying rather than leave the transaction stuck.
                log.warning(
                    "markers of %s refused: coordinator epoch %d is fenced; retrying until unloaded",
                    metadata.transactional_id, owned.epoch,
                )  # fmt: skip
            failed = [
                tp
                for tp in remaining
                if answers.get(tp, ErrorCode.unknown_server_error) not in _MARKER_DONE_ERRORS
            ]
            if len(failed) < len(remaining):
                backoff = MARKER_RETRY_BACKOFF_S  # progress: the next round starts quickly again
            remaining = failed
            if remaining:
                waiting.maybe_log(
                    "markers on "
                    + ", ".join(f"{t}-{i} ({ErrorCode(answers.get((t, i), -1)).name})" for t, i in remaining)
                )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MARKER_RETRY_BACKOFF_MAX_S)
        # The epoch may not move until the complete state is written.
        while True:
            if self._lost(metadata, owned):
                return
            waiting.maybe_log(
                f"writing {STATE_NAMES[TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT]}"
            )
            if not metadata.pending:
                updated = _copy(metadata)
                updated.state = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
                updated.partitions = set()
                if metadata.next_producer_id >= 0:
                    # Transaction version 2 past the last epoch: the producer goes on with a new id.
                    updated.previous_producer_id = metadata.producer_id
                    updated.producer_id, updated.producer_epoch = metadata.next_producer_id, 0
                    updated.next_producer_id = -1
                updated.last_update_ms = self._now_ms()
                if await self._write(metadata, updated) is None:
                    waiting.log_done()
                    return
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MARKER_RETRY_BACKOFF_MAX_S)

    def _reload_if_led_at_new_epoch(self, partition: int, owned: CoordinatorSlot) -> bool:
        """Whether the partition was loaded again because this broker leads it at a newer
        coordinator epoch than the one its markers carried."""
        if not self.runtime.current(owned) or self.log.coordinator_epoch(partition) <= owned.epoch:
            return False
        return self.load_partition(partition) is not None

    def _lost(self, metadata: TransactionMetadata, owned: CoordinatorSlot) -> bool:
        return (
            self.stopped
            or not self.runtime.current(owned)
            or self.transactions.get(metadata.transactional_id) is not metadata
        )

    # --- DescribeTransactions / ListTransactions --------------------------------------------

    def describe(self, transactional_id: str) -> tuple[int, TransactionDescription | None]:
        error = self._availability_error(transactional_id)
        if error is not None:
            return error, None
        metadata = self.transactions.get(transactional_id)
        if metadata is None:
            return ErrorCode.transactional_id_not_found, None
        return ErrorCode.none, _describe(metadata)

    def list_transactions(
        self, state_names: Sequence[str], producer_ids: Sequence[int], min_duration_ms: int = -1
    ) -> tuple[list[TransactionDescription], list[str]]:
        """Transactions of the loaded partitions matching every given filter, and the state names
        that are not Kafka's (answered as unknown). As Kafka, an unknown state name matches nothing: state
        filters that are all unknown list no transaction, rather than being ignored."""
        unknown = [name for name in state_names if name not in STATES_BY_NAME]
        states = {STATES_BY_NAME[name] for name in state_names if name in STATES_BY_NAME}
        if state_names and not states:
            return [], unknown
        wanted_ids = set(producer_ids)
        now = self._now_ms()
        listed = []
        for transactional_id, metadata in self.transactions.items():
            if not self.runtime.loaded(self.partition_for(transactional_id)):
                continue
            if metadata.state == TxnState.DEAD or (states and metadata.state not in states):
                continue
            if wanted_ids and metadata.producer_id not in wanted_ids:
                continue
            # Kafka's rule: running for more than the duration, counted from the transaction's start.
            if min_duration_ms >= 0 and now - metadata.start_ms <= min_duration_ms:
                continue
            listed.append(_describe(metadata))
        return listed, unknown

    # --- timeouts and expiration ------------------------------------------------------------

    async def abort_timed_out(self) -> int:
        """Aborts (fencing the producer) every ongoing transaction older than its timeout."""
        now = self._now_ms()
        timed_out = [
            m
            for m in list(self.transactions.values())
            if m.state == TxnState.ONGOING and not m.pending and now - m.start_ms > m.timeout_ms
        ]
        for metadata in timed_out:
            log.info(
                "aborting transaction of %s (producer %d): open for more than %d ms",
                metadata.transactional_id,
                metadata.producer_id,
                metadata.timeout_ms,
            )
            await self._fence_and_abort(metadata)
        return len(timed_out)

    async def remove_expired(self) -> int:
        """Forgets transactional ids idle past transactional.id.expiration.ms (a tombstone each)."""
        now = self._now_ms()
        expired = [
            m
            for m in list(self.transactions.values())
            if m.state in COMPLETED
            and not m.pending
            and now - m.last_update_ms > self.config.id_expiration_ms
        ]
        removed = 0
        for metadata in expired:
            metadata.pending = True
            try:
                error = await self._append(metadata.transactional_id, None)
            finally:
                metadata.pending = False
            if error is None and self.transactions.get(metadata.transactional_id) is metadata:
                del self.transactions[metadata.transactional_id]
                removed += 1
        return removed

    async def _sweep_forever(self) -> None:
        abort_every = self.config.abort_timed_out_interval_ms / 1000
        expire_every = self.config.remove_expired_interval_ms / 1000
        next_expiry = time.monotonic() + expire_every
        while not self.stopped:
            await asyncio.sleep(abort_every)
            try:
                await self.abort_timed_out()
                if time.monotonic() >= next_expiry:
                    next_expiry = time.monotonic() + expire_every
                    await self.remove_expired()
            except Exception:
                log.exception("transaction timeout/expiration sweep failed")

    # --- writing ------------------------------------------------------------------------------

    async def _write(self, current: TransactionMetadata, updated: TransactionMetadata) -> int | None:
        """Writes `updated` as the id's new state and applies it to `current` once committed; None
        on success, else the error for the client (the state in memory is unchanged)."""
        current.pending = True
        try:
            error = await self._append(current.transactional_id, encode_value(updated.to_value()))
        finally:
            current.pending = False
        if error is not None:
            return error
        if self.transactions.get(current.transactional_id) is not current:
            return ErrorCode.not_coordinator  # unloaded (or expired) while the write was in flight
        _apply(current, updated)
        return None

    async def _append(self, transactional_id: str, value: bytes | None) -> int | None:
        partition = self.partition_for(transactional_id)

        def error_for(error_code: int) -> int:
            log.warning("writing the state of %s failed with error %d", transactional_id, error_code)
            # Kafka's mapping: what the client should do is find the coordinator again or retry.
            if error_code in (ErrorCode.not_leader_or_follower, ErrorCode.unknown_topic_or_partition):
                return ErrorCode.not_coordinator
            if error_code in (ErrorCode.message_too_large, ErrorCode.record_list_too_large):
                return ErrorCode.unknown_server_error
            return ErrorCode.coordinator_not_available

        return await self.runtime.write(
            partition, lambda: self.log.append(partition, [(encode_key(transactional_id), value)]), error_for
        )

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self) -> None:
        """Waits for marker rounds and loads in flight (tests)."""
        while self.runtime.loading() or [t for t in self._tasks if t.get_name() != "transaction-sweeps"]:
            await self.runtime.drain()
            pending = [t for t in self._tasks if t.get_name() != "transaction-sweeps"]
            await asyncio.gather(*pending, return_exceptions=True)


class _WaitingLog:
    """Says in the log, every WAITING_LOG_INTERVAL_S, what a prepared transaction waits on (its
    producer answers CONCURRENT_TRANSACTIONS meanwhile), and when it finally completes."""

    def __init__(self, metadata: TransactionMetadata, started: float) -> None:
        self.metadata = metadata
        self.started = started
        self.last = started
        self.logged = False

    def maybe_log(self, what: str) -> None:
        now = time.monotonic()
        if now - self.last < WAITING_LOG_INTERVAL_S:
            return
        self.last, self.logged = now, True
        metadata = self.metadata
        log.warning(
            "transaction of %s (producer %d, epoch %d) in %s for %.0f s: waiting for %s",
            metadata.transactional_id, metadata.producer_id, metadata.producer_epoch,
            STATE_NAMES[metadata.state], now - self.started, what,
        )  # fmt: skip

    def log_done(self) -> None:
        if self.logged:
            log.warning(
                "transaction of %s (producer %d) completed after %.0f s",
                self.metadata.transactional_id, self.metadata.producer_id, time.monotonic() - self.started,
            )  # fmt: skip


def _transition_pending(metadata: TransactionMetadata) -> bool:
    """A state write in flight, or a prepared transaction whose markers are being written (its completion
    pending). Kafka's EndTxn answers CONCURRENT_TRANSACTIONS for these before it looks at the producer id or
    epoch: the producer retries, where PRODUCER_FENCED for the next transaction's EndTxn would be fatal."""
    return metadata.pending or metadata.state in PREPARED


def _copy(metadata: TransactionMetadata) -> TransactionMetadata:
    copied = TransactionMetadata(**{name: getattr(metadata, name) for name in metadata.__dataclass_fields__})
    copied.partitions = set(metadata.partitions)
    copied.pending = False
    return copied


def _apply(current: TransactionMetadata, updated: TransactionMetadata) -> None:
    for name in current.__dataclass_fields__:
        if name != "pending":
            setattr(current, name, getattr(updated, name))


def _describe(metadata: TransactionMetadata) -> TransactionDescription:
    return TransactionDescription(
        transactional_id=metadata.transactional_id,
        state=STATE_NAMES[metadata.state],
        producer_id=metadata.producer_id,
        producer_epoch=metadata.producer_epoch,
        timeout_ms=metadata.timeout_ms,
        start_ms=metadata.start_ms,
        partitions=tuple(sorted(metadata.partitions)),
    )
