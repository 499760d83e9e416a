"""The storage the group coordinator needs: Kafka's `__consumer_offsets` topic.

SERVER implements this over the real log; the coordinator only appends key/value
records (a None value is a tombstone) and replays partitions on start.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

OFFSETS_TOPIC_NAME = "__consumer_offsets"


class OffsetsLog(Protocol):
    num_partitions: int

    async def append(self, partition: int, records: Sequence[tuple[bytes, bytes | None]]) -> int:
        """Appends the records as one batch and returns the offset of the last one."""
        ...

    def read(self, partition: int) -> Iterator[tuple[int, bytes, bytes | None]]:
        """Yields (offset, key, value) for every record of the partition, oldest first."""
        ...
