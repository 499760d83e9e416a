"""Lag in time, consume and produce rates and time to catch up, from offsets and their history.

The exact lag in time is `now - timestamp of the record at the committed offset` (the sampler fetches
that record once and caches it). Without it, the committed offset is placed on the partition's
(time, log-end offset) history: the record at offset `o` was appended when the log end passed `o`, so
its time is interpolated between the two samples around that crossing. A committed offset older than
the whole history gives only a lower bound, and an offset past the history is never extrapolated.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence


def appended_at(offset: int, log_ends: Sequence[tuple[float, int]]) -> tuple[float | None, bool]:
    """(time the record at `offset` was appended, is that only an upper bound of its age's complement)

    Returns (time, True) when the record was already there at the oldest sample: it is at least that
    old, so `now - time` is a lower bound of the lag. (None, False) when the history cannot tell."""
    if not log_ends:
        return None, False
    target = offset + 1  # the log end exceeds `offset` once the record exists
    first_time, first_end = log_ends[0]
    if first_end >= target:
        return first_time, True
    # Log ends never decrease, so the crossing is found by bisection on the offsets.
    ends = [end for _time, end in log_ends]
    after = bisect.bisect_left(ends, target)
    if after >= len(log_ends):
        return None, False
    (t0, e0), (t1, e1) = log_ends[after - 1], log_ends[after]
    return t0 + (t1 - t0) * (target - e0) / (e1 - e0), False


def rate(points: Sequence[tuple[float, int]]) -> float | None:
    """Records per second between the oldest and newest (time, offset) point; never negative."""
    if len(points) < 2:
        return None
    (t0, v0), (t1, v1) = points[0], points[-1]
    if t1 <= t0:
        return None
    return max(0.0, (v1 - v0) / (t1 - t0))


def time_to_catch_up(lag: int, consume_rate: float | None, produce_rate: float | None) -> float | None:
    """Seconds until the lag is gone at the current rates; None when the consumer is not gaining."""
    if lag <= 0:
        return 0.0
    if consume_rate is None or produce_rate is None or consume_rate <= produce_rate:
        return None
    return lag / (consume_rate - produce_rate)
