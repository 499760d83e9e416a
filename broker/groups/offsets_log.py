"""The storage the group coordinator needs: Kafka's `__consumer_offsets` topic.

SERVER implements this over the real log; the coordinator only appends key/value
records (a None value is a tombstone) and replays partitions when it takes them over.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from broker.coordinator.runtime import CoordinatorAppendError
from broker.metadata.coordinator_records import LogEntry
from broker.metadata.topic_names import OFFSETS_TOPIC_NAME

__all__ = ["OFFSETS_TOPIC_NAME", "OffsetsAppendError", "OffsetsLog"]


class OffsetsAppendError(CoordinatorAppendError):
    """A `__consumer_offsets` append refused or not replicated."""


class OffsetsLog(Protocol):
    num_partitions: int

    async def append(
        self,
        partition: int,
        records: Sequence[tuple[bytes, bytes | None]],
        producer: tuple[int, int] | None = None,
    ) -> int:
        """Appends the records as one batch and returns the offset of the last one once it is
        committed; raises OffsetsAppendError when it cannot be. With `producer` (id, epoch) the
        batch belongs to that producer's open transaction (TxnOffsetCommit)."""
        ...

    def read(self, partition: int) -> Iterator[LogEntry]:
        """Every record and transaction marker of the partition, oldest first."""
        ...

    async def wait_until_committed(self, partition: int) -> None:
        """Returns once every record `read` yields is committed (a replicated leader's high
        watermark reached its log end); raises OffsetsAppendError when it no longer leads."""
        ...
