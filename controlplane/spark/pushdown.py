"""Filters Spark pushes into the topic source, turned into narrower offset ranges.

`partition = n`, `partition IN (…)` and bounds or equality on `offset` pick records by where they are, so they
narrow the plan exactly and Spark need not check them again. A lower bound on `timestamp` moves each range's
start to the first offset with that timestamp (ListOffsets): records before it are all earlier, but later
records need not be in timestamp order, so Spark still applies the filter itself.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from pyspark.sql.datasource import (
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
)

from controlplane.spark.offset_range import OffsetRange

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class RangeFilter:
    """What the pushed filters allow: partitions (None = all), offsets in [min_offset, end_offset) and
    timestamps from min_timestamp_ms on (None = unbounded)."""

    partitions: frozenset[int] | None = None
    min_offset: int = 0
    end_offset: int | None = None
    min_timestamp_ms: int | None = None

    def allows_partition(self, partition: int) -> bool:
        return self.partitions is None or partition in self.partitions

    def narrow(self, ranges: Iterable[OffsetRange]) -> list[OffsetRange]:
        """The parts of the ranges in the allowed partitions and offsets; empty ones left out."""
        narrowed = []
        for offset_range in ranges:
            if not self.allows_partition(offset_range.partition):
                continue
            start = max(offset_range.start, self.min_offset)
            end = offset_range.end if self.end_offset is None else min(offset_range.end, self.end_offset)
            if end > start:
                narrowed.append(replace(offset_range, start=start, end=end))
        return narrowed


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _partition_filter(found: Filter, current: RangeFilter) -> RangeFilter | None:
    if isinstance(found, EqualTo) and _is_int(found.value):
        allowed = frozenset({found.value})
    elif isinstance(found, In) and found.value and all(_is_int(v) for v in found.value):
        allowed = frozenset(found.value)
    else:
        return None
    # Several filters on one column are ANDed: only partitions all of them allow.
    return replace(
        current, partitions=allowed if current.partitions is None else current.partitions & allowed
    )


def _offset_filter(found: Filter, current: RangeFilter) -> RangeFilter | None:
    value = getattr(found, "value", None)
    if not _is_int(value):
        return None
    # [lowest, end) of the offsets the filter allows; None where it sets no bound.
    if isinstance(found, GreaterThan):
        lowest, end = value + 1, None
    elif isinstance(found, GreaterThanOrEqual):
        lowest, end = value, None
    elif isinstance(found, LessThan):
        lowest, end = None, value
    elif isinstance(found, LessThanOrEqual):
        lowest, end = None, value + 1
    elif isinstance(found, EqualTo):
        lowest, end = value, value + 1
    else:
        return None
    if lowest is not None:
        current = replace(current, min_offset=max(current.min_offset, lowest))
    if end is not None:
        current = replace(
            current, end_offset=end if current.end_offset is None else min(current.end_offset, end)
        )
    return current


def _timestamp_filter(found: Filter, current: RangeFilter) -> RangeFilter | None:
    if not isinstance(found, (GreaterThan, GreaterThanOrEqual, EqualTo)):
        return None
    value = found.value
    # Only instants: a timestamp without a zone cannot be placed on the log's UTC clock.
    if not isinstance(value, datetime.datetime) or value.tzinfo is None:
        return None
    # Whole milliseconds, rounded down: records of that millisecond are kept and Spark filters them exactly.
    milliseconds = (value - _EPOCH) // datetime.timedelta(milliseconds=1)
    if current.min_timestamp_ms is not None:
        milliseconds = max(milliseconds, current.min_timestamp_ms)
    return replace(current, min_timestamp_ms=milliseconds)


# (column, how it narrows, whether the narrowing is exact)
_PUSHABLE: dict[str, tuple[Callable[[Filter, RangeFilter], RangeFilter | None], bool]] = {
    "partition": (_partition_filter, True),
    "offset": (_offset_filter, True),
    "timestamp": (_timestamp_filter, False),
}


def push_filters(
    filters: Iterable[Filter], source_column: Callable[[str], str | None]
) -> tuple[RangeFilter, list[Filter]]:
    """The range filter the pushable filters make, and the filters Spark must still apply.

    `source_column` maps a column name of the read's schema to the source column behind it (or None)."""
    narrowed = RangeFilter()
    remaining: list[Filter] = []
    for found in filters:
        attribute = getattr(found, "attribute", ())
        column = source_column(attribute[0]) if len(attribute) == 1 else None
        pushable = _PUSHABLE.get(column or "")
        result = pushable[0](found, narrowed) if pushable else None
        if result is None:
            remaining.append(found)
            continue
        narrowed = result
        if not pushable[1]:
            remaining.append(found)
    return narrowed, remaining
