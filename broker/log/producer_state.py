"""Idempotent-producer state per partition: each producer's epoch and its last five batches.

Snapshots (`<offset>.snapshot`, JSON) let recovery replay only the log tail after the snapshot.
"""

import contextlib
import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from broker.log.errors import InvalidProducerEpochError, OutOfOrderSequenceError, UnknownProducerIdError
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


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=BATCHES_TO_REMEMBER))
    last_timestamp: int = -1

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
            self.producer_id, self.epoch, deque(self.batches, maxlen=BATCHES_TO_REMEMBER), self.last_timestamp
        )


def snapshot_path(directory: Path, offset: int) -> Path:
    return directory / f"{offset:020d}.snapshot"


class ProducerStateManager:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.producers: dict[int, ProducerEntry] = {}

    def check(
        self,
        pending: dict[int, ProducerEntry],
        producer_id: int,
        epoch: int,
        first_sequence: int,
        last_sequence: int,
    ) -> BatchMetadata | None:
        """Validate one client batch against the state (plus `pending` entries of the same request).

        Returns the original batch when this one is a duplicate; raises the Kafka error otherwise bad.
        """
        entry = pending.get(producer_id) or self.producers.get(producer_id)
        if entry is None:
            if first_sequence != 0:
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
    ) -> None:
        """Note an accepted batch in `pending` (copy-on-write of `current`), to be committed after the write."""
        entry = pending.get(producer_id)
        if entry is None:
            existing = current.get(producer_id)
            entry = existing.copy() if existing is not None else ProducerEntry(producer_id, epoch)
            pending[producer_id] = entry
        if epoch != entry.epoch:
            entry.epoch = epoch
            entry.batches.clear()
        if batch.first_sequence >= 0:
            entry.batches.append(batch)
        entry.last_timestamp = max(entry.last_timestamp, batch.max_timestamp)

    def commit(self, pending: dict[int, ProducerEntry]) -> None:
        self.producers.update(pending)

    def remove_expired(self, now_ms: int, expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> int:
        """Forget producers idle for longer than `expiration_ms` (by their last batch's timestamp)."""
        expired = [
            pid for pid, entry in self.producers.items() if entry.last_timestamp < now_ms - expiration_ms
        ]
        for producer_id in expired:
            del self.producers[producer_id]
        return len(expired)

    def replay_batch(
        self, producer_id: int, epoch: int, first_sequence: int, last_sequence: int, batch: BatchMetadata
    ) -> None:
        """Apply a batch read back from the log during recovery (no validation: it was accepted once)."""
        pending: dict[int, ProducerEntry] = {}
        self.record(pending, self.producers, producer_id, epoch, batch)
        self.producers.update(pending)

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
                        int(item["id"]), int(item["epoch"]), last_timestamp=item["last_timestamp"]
                    )
                    for values in item["batches"]:
                        entry.batches.append(BatchMetadata(*(int(v) for v in values)))
                    producers[entry.producer_id] = entry
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)  # a torn snapshot: fall back to an older one
                continue
            self.producers = producers
            return offset
        return None

    def truncate_snapshots_after(self, offset: int) -> None:
        for snapshot_offset in self.snapshot_offsets():
            if snapshot_offset > offset:
                snapshot_path(self.directory, snapshot_offset).unlink(missing_ok=True)
