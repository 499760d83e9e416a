"""The storage the group coordinator needs: Kafka's `__consumer_offsets` topic.

SERVER implements this over the real log; the coordinator only appends key/value
records (a None value is a tombstone) and replays partitions when it takes them over.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from broker.metadata.coordinator_records import LogEntry
from broker.metadata.topic_names import OFFSETS_TOPIC_NAME

__all__ = ["OFFSETS_TOPIC_NAME", "OffsetsAppendError", "OffsetsLog"]


class OffsetsAppendError(Exception):
    """An append refused or not replicated, with the Kafka error code the log gave
    (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT...)."""

    def __init__(self, error_code: int, message: str = "") -> None:
        super().__init__(message or f"__consumer_offsets append failed with error {error_code}")
        self.error_code = error_code


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
