"""Producer state per partition: each producer's epoch, its last five batches and its open transaction.

A transactional producer's first batch in a partition opens a transaction there (its first offset
holds back the last stable offset); the commit or abort marker the coordinator writes closes it.
A closed transaction stays "unreplicated" until the high watermark passes its marker, and holds the
last stable offset back meanwhile (Kafka's `ProducerStateManager`).

Snapshots (`<offset>.snapshot`, JSON) let recovery replay only the log tail after the snapshot.
"""

import contextlib
import itertools
import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from broker.log.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
    UnknownProducerIdError,
)
from broker.wire.records.batch import increment_sequence

BATCHES_TO_REMEMBER = 5
SNAPSHOTS_TO_KEEP = 3
# Kafka's producer.id.expiration.ms default: an idle producer is forgotten after a day.
PRODUCER_ID_EXPIRATION_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int
    max_timestamp: int


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction closed by a marker: its first data offset and the marker's offset (`last_offset`)."""

    producer_id: int
    first_offset: int
    last_offset: int
    aborted: bool


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=BATCHES_TO_REMEMBER))
    last_timestamp: int = -1
    coordinator_epoch: int = -1
    # First offset of the producer's open transaction in this partition; -1 when none is open.
    current_txn_first_offset: int = -1

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else -1

    def find_duplicate(self, first_sequence: int, last_sequence: int) -> BatchMetadata | None:
        for batch in self.batches:
            if batch.first_sequence == first_sequence and batch.last_sequence == last_sequence:
                return batch
        return None

    def copy(self) -> "ProducerEntry":
        return ProducerEntry(
            self.producer_id,
            self.epoch,
            deque(self.batches, maxlen=BATCHES_TO_REMEMBER),
            self.last_timestamp,
            self.coordinator_epoch,
            self.current_txn_first_offset,
        )

    def bump_epoch(self, epoch: int) -> None:
        """A new epoch starts a new sequence: the old epoch's batches no longer count as duplicates."""
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches.clear()


def _pending_entry(
    pending: dict[int, ProducerEntry], current: dict[int, ProducerEntry], producer_id: int, epoch: int
) -> ProducerEntry:
    """The producer's entry in `pending`, copied from `current` (or new) on first use."""
    entry = pending.get(producer_id)
    if entry is None:
        existing = current.get(producer_id)
        entry = existing.copy() if existing is not None else ProducerEntry(producer_id, epoch)
        pending[producer_id] = entry
    return entry


def snapshot_path(directory: Path, offset: int) -> Path:
    return directory / f"{offset:020d}.snapshot"


class ProducerStateManager:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.producers: dict[int, ProducerEntry] = {}
        # producer id -> first offset of its open transaction (a subset of `producers`, kept small).
        self.ongoing: dict[int, int] = {}
        # Closed transactions whose marker the high watermark has not passed yet, in marker order.
        self.unreplicated: deque[CompletedTxn] = deque()

    def check(
        self,
        pending: dict[int, ProducerEntry],
        producer_id: int,
        epoch: int,
        first_sequence: int,
        last_sequence: int,
        transactional: bool = False,
    ) -> BatchMetadata | None:
        """Validate one client batch against the state (plus `pending` entries of the same request).

        Returns the original batch when this one is a duplicate; raises the Kafka error otherwise bad.
        """
        entry = pending.get(producer_id) or self.producers.get(producer_id)
        if entry is not None and not transactional and entry.current_txn_first_offset >= 0:
            raise InvalidTxnStateError(
                f"producer {producer_id} sent a non-transactional batch inside its open transaction"
            )
        if entry is None:
            if first_sequence != 0 and transactional:
                # A later batch of a transaction overtook its first one (refused retriably, e.g. its KIP-890
                # verification failed): Kafka's leader remembers the lowest sequence it began verifying and
                # answers a higher one OUT_OF_ORDER_SEQUENCE_NUMBER, which the client retries after the first.
                raise OutOfOrderSequenceError(
                    f"producer {producer_id} is unknown here and its transaction's first batch here has "
                    f"sequence {first_sequence}, not 0"
                )
            if first_sequence != 0:
                # Stricter than Kafka (which takes any first sequence here): the client bumps its epoch and
                # starts again at 0, rather than have an earlier batch refused as out of order after this one.
                raise UnknownProducerIdError(
                    f"producer {producer_id} is unknown here and its first sequence is {first_sequence}"
                )
            return None
        if epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"producer {producer_id} epoch {epoch} is older than {entry.epoch}"
            )
        if epoch > entry.epoch:
            if first_sequence != 0:
                raise OutOfOrderSequenceError(
                    f"producer {producer_id} bumped its epoch to {epoch} but starts at sequence {first_sequence}"
                )
            return None
        duplicate = entry.find_duplicate(first_sequence, last_sequence)
        if duplicate is not None:
            return duplicate
        expected = increment_sequence(entry.last_sequence, 1) if entry.batches else 0
        if entry.batches and first_sequence != expected:
            raise OutOfOrderSequenceError(
                f"producer {producer_id}: expected sequence {expected}, got {first_sequence}"
            )
        if not entry.batches and first_sequence != 0:
            raise OutOfOrderSequenceError(
                f"producer {producer_id}: expected sequence 0, got {first_sequence}"
            )
        return None

    @staticmethod
    def record(
        pending: dict[int, ProducerEntry],
        current: "dict[int, ProducerEntry]",
        producer_id: int,
        epoch: int,
        batch: BatchMetadata,
        transactional: bool = False,
    ) -> None:
        """Note an accepted batch in `pending` (copy-on-write of `current`), to be committed after the write."""
        entry = _pending_entry(pending, current, producer_id, epoch)
        entry.bump_epoch(epoch)
        if batch.first_sequence >= 0:
            entry.batches.append(batch)
        entry.last_timestamp = max(entry.last_timestamp, batch.max_timestamp)
        if transactional and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = batch.first_offset

    def commit(self, pending: dict[int, ProducerEntry]) -> None:
        self.producers.update(pending)
        for producer_id, entry in pending.items():
            if entry.current_txn_first_offset >= 0:
                self.ongoing[producer_id] = entry.current_txn_first_offset
            else:
                self.ongoing.pop(producer_id, None)

    # ---- transactions ---------------------------------------------------------------------------

    def check_marker(self, producer_id: int, epoch: int, coordinator_epoch: int) -> None:
        """A coordinator's marker: a producer epoch older than the current one is fenced
        (INVALID_PRODUCER_EPOCH), as is a coordinator epoch older than the last marker's
        (TRANSACTION_COORDINATOR_FENCED: a zombie coordinator)."""
        entry = self.producers.get(producer_id)
        if entry is None:
            return
        if epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"marker for producer {producer_id} carries epoch {epoch}, older than {entry.epoch}"
            )
        if coordinator_epoch < entry.coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"marker for producer {producer_id} comes from coordinator epoch {coordinator_epoch}, "
                f"older than {entry.coordinator_epoch}"
            )

    def complete_txn(
        self,
        producer_id: int,
        epoch: int,
        coordinator_epoch: int,
        marker_offset: int,
        commit: bool,
        timestamp: int,
    ) -> CompletedTxn:
        """Close the producer's transaction at its marker (no checks: `check_marker` ran, or the
        marker is being replayed from the log). A marker with no open transaction closes an empty one."""
        # Copy-on-write, as appends do: the cleaner's thread may be reading the current entry.
        entry = _pending_entry({}, self.producers, producer_id, epoch)
        entry.bump_epoch(epoch)
        first_offset = (
            entry.current_txn_first_offset if entry.current_txn_first_offset >= 0 else marker_offset
        )
        entry.current_txn_first_offset = -1
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = max(entry.last_timestamp, timestamp)
        self.producers[producer_id] = entry
        self.ongoing.pop(producer_id, None)
        completed = CompletedTxn(producer_id, first_offset, marker_offset, not commit)
        self.unreplicated.append(completed)
        return completed

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """The first offset of any open transaction, or of a closed one whose marker is not yet below
        the high watermark; None when there is none. Reads only (the cleaner's thread calls it too)."""
        if not self.ongoing and not self.unreplicated:
            return None
        unreplicated = (
            txn.first_offset for txn in tuple(self.unreplicated) if txn.last_offset >= high_watermark
        )
        return min(itertools.chain(tuple(self.ongoing.values()), unreplicated), default=None)

    def retire_replicated(self, high_watermark: int) -> None:
        """Forget closed transactions whose marker is below the high watermark."""
        unreplicated = self.unreplicated
        while unreplicated and unreplicated[0].last_offset < high_watermark:
            unreplicated.popleft()

    def stable_offset_after(self, completed: CompletedTxn) -> int:
        """Kafka's `lastStableOffset(completedTxn)`, stored in the aborted-transaction index: the first
        offset of the next transaction still open, else just past the marker."""
        others = [first for pid, first in self.ongoing.items() if pid != completed.producer_id]
        return min(others) if others else completed.last_offset + 1

    def remove_expired(self, now_ms: int, expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> int:
        """Forget producers idle for longer than `expiration_ms` (by their last batch's timestamp)."""
        expired = [
            pid
            for pid, entry in self.producers.items()
            if entry.last_timestamp < now_ms - expiration_ms and entry.current_txn_first_offset < 0
        ]
        for producer_id in expired:
            del self.producers[producer_id]
        return len(expired)

    def replay_batch(self, producer_id: int, epoch: int, batch: BatchMetadata, transactional: bool) -> None:
        """Apply a batch read back from the log during recovery (no validation: it was accepted once)."""
        pending: dict[int, ProducerEntry] = {}
        self.record(pending, self.producers, producer_id, epoch, batch, transactional)
        self.commit(pending)

    # ---- snapshots ------------------------------------------------------------------------------

    def snapshot_offsets(self) -> list[int]:
        offsets = []
        for path in self.directory.glob(f"{'[0-9]' * 20}.snapshot"):
            with contextlib.suppress(ValueError):
                offsets.append(int(path.name.split(".")[0]))
        return sorted(offsets)

    def write_snapshot(self, offset: int) -> None:
        body = {
            "producers": [
                {
                    "id": entry.producer_id,
                    "epoch": entry.epoch,
                    "last_timestamp": entry.last_timestamp,
                    "coordinator_epoch": entry.coordinator_epoch,
                    "txn_first_offset": entry.current_txn_first_offset,
                    "batches": [
                        [b.first_sequence, b.last_sequence, b.first_offset, b.last_offset, b.max_timestamp]
                        for b in entry.batches
                    ],
                }
                for entry in self.producers.values()
            ]
        }
        path = snapshot_path(self.directory, offset)
        temporary = path.with_suffix(".snapshot.tmp")
        temporary.write_text(json.dumps(body))
        os.replace(temporary, path)
        for old in self.snapshot_offsets()[:-SNAPSHOTS_TO_KEEP]:
            snapshot_path(self.directory, old).unlink(missing_ok=True)

    def load_latest_snapshot(self, up_to: int) -> int | None:
        """Load the newest readable snapshot at or below `up_to`; returns its offset (None: start empty).

        Snapshots above `up_to` describe a log tail that no longer exists and are deleted.
        """
        self.producers = {}
        self.ongoing = {}
        self.unreplicated.clear()
        for offset in reversed(self.snapshot_offsets()):
            path = snapshot_path(self.directory, offset)
            if offset > up_to:
                path.unlink(missing_ok=True)
                continue
            try:
                body = json.loads(path.read_text())
                producers = {}
                for item in body["producers"]:
                    entry = ProducerEntry(
                        int(item["id"]),
                        int(item["epoch"]),
                        last_timestamp=item["last_timestamp"],
                        # Snapshots written before transactions existed lack these two.
                        coordinator_epoch=int(item.get("coordinator_epoch", -1)),
                        current_txn_first_offset=int(item.get("txn_first_offset", -1)),
                    )
                    for values in item["batches"]:
                        entry.batches.append(BatchMetadata(*(int(v) for v in values)))
                    producers[entry.producer_id] = entry
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)  # a torn snapshot: fall back to an older one
                continue
            self.producers = producers
            self.ongoing = {
                pid: entry.current_txn_first_offset
                for pid, entry in producers.items()
                if entry.current_txn_first_offset >= 0
            }
            return offset
        return None

    def truncate_snapshots_after(self, offset: int) -> None:
        for snapshot_offset in self.snapshot_offsets():
            if snapshot_offset > offset:
                snapshot_path(self.directory, snapshot_offset).unlink(missing_ok=True)
