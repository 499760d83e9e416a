"""Planning an offset reset: old -> new per partition, clamped to the log. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from controlplane.groups.choices import ResetStrategy

Partition = tuple[str, int]


@dataclass(frozen=True)
class PlannedOffset:
    topic: str
    partition: int
    old_offset: int | None
    new_offset: int


def plan_reset(
    *,
    strategy: str,
    partitions: list[Partition],
    committed: Mapping[Partition, int],
    earliest: Mapping[Partition, int],
    latest: Mapping[Partition, int],
    by_timestamp: Mapping[Partition, int] | None = None,
    exact: Mapping[Partition, int] | None = None,
    shift_by: int = 0,
) -> list[PlannedOffset]:
    """Where each partition's committed offset goes. Targets outside [earliest, latest] are clamped, so
    a reset never points a group at offsets that do not exist; a timestamp later than every record
    means the end of the log."""
    planned = []
    for key in sorted(partitions):
        low, high = earliest[key], latest[key]
        old = committed.get(key)
        if strategy == ResetStrategy.EARLIEST:
            target = low
        elif strategy == ResetStrategy.LATEST:
            target = high
        elif strategy == ResetStrategy.TIMESTAMP:
            found = (by_timestamp or {}).get(key, -1)
            target = high if found < 0 else found
        elif strategy == ResetStrategy.OFFSET:
            if exact is None or key not in exact:
                continue
            target = exact[key]
        elif strategy == ResetStrategy.SHIFT:
            target = (old if old is not None else low) + shift_by
        else:
            raise ValueError(f"unknown strategy {strategy}")
        planned.append(PlannedOffset(key[0], key[1], old, min(max(target, low), high)))
    return planned


def lag_of(committed: int | None, log_end: int) -> int:
    """Offset lag: log end minus committed, never below zero; no commit yet counts the whole log."""
    if committed is None:
        return max(log_end, 0)
    return max(log_end - committed, 0)
