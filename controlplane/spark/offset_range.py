"""The unit a topic read is planned in and executed by: one partition's offsets [start, end).

Planning (`planning.py`) makes them, filter pushdown (`pushdown.py`) narrows them and the readers
(`reading.py`, `raw_reading.py`) fetch them in executors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OffsetRange:
    """The records of one partition with offsets in [start, end)."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start
