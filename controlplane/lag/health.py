"""Health of one partition of a group over the evaluation window (after Burrow's rules), with a reason.

Checks run from the most to the least specific: data loss, a rewind, a partition assigned but never
committed, a group without members that stopped, a stall, a growing lag. `window` holds the
partition's (time, committed offset, lag) samples, oldest first, ending with the current one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from controlplane.lag.observations import Health

Sample = tuple[float, int | None, int]  # (time, committed offset or None, lag in records)


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str


@dataclass(frozen=True)
class PartitionState:
    window: Sequence[Sample]
    log_start_offset: int
    has_members: bool
    assigned: bool  # a member holds this partition (when members are known), else has_members
    window_seconds: float
    lagging_min_messages: int


def _covers_window(state: PartitionState) -> bool:
    """At least two samples spanning half the window: enough to say a value did not move across it."""
    window = state.window
    return len(window) >= 2 and window[-1][0] - window[0][0] >= state.window_seconds / 2


def classify(state: PartitionState) -> Verdict:
    _now, committed, lag = state.window[-1]
    span = f"{state.window_seconds:g} s"
    if committed is None:
        # Never committed: a consumer of the group would start at the log start (auto.offset.reset=earliest,
        # as the backlog job counts), so every record from there on is lag.
        waiting = (
            f"the {lag} records from the log start {state.log_start_offset} are unread"
            if lag
            else "the partition holds no records"
        )
        if state.assigned:
            return Verdict(
                Health.NO_COMMIT,
                f"Assigned to a member but the group has never committed an offset; {waiting}.",
            )
        if lag:
            return Verdict(Health.NO_COMMIT, f"The group has never committed an offset here; {waiting}.")
        return Verdict(Health.OK, f"No committed offset; {waiting}.")
    if committed < state.log_start_offset:
        lost = state.log_start_offset - committed
        return Verdict(
            Health.DATA_LOSS,
            f"Committed offset {committed} is below the log start {state.log_start_offset}: retention deleted "
            f"{lost} unread records.",
        )
    offsets = [c for _t, c, _lag in state.window if c is not None]
    for before, after in pairwise(offsets):
        if after < before:
            return Verdict(Health.REWIND, f"Committed offset went back from {before} to {after}.")
    moved = len(set(offsets)) > 1
    if not state.has_members:
        if lag == 0:
            return Verdict(Health.OK, "Caught up; the group has no members.")
        if not moved:
            return Verdict(
                Health.STOPPED,
                f"No members, and the committed offset {committed} has not moved; {lag} records unread.",
            )
    if (
        lag > 0
        and not moved
        and _covers_window(state)
        and all(sample_lag > 0 for *_r, sample_lag in state.window)
    ):
        if state.assigned:
            return Verdict(
                Health.STALLED,
                f"Committed offset {committed} has not moved for {span} while {lag} records wait.",
            )
        return Verdict(Health.STOPPED, f"No member is assigned this partition; {lag} records unread.")
    lags = [sample_lag for *_r, sample_lag in state.window]
    if _covers_window(state) and min(lags) > 0 and lags[-1] > lags[0] and lag >= state.lagging_min_messages:
        return Verdict(Health.LAGGING, f"Lag grew from {lags[0]} to {lags[-1]} records over the last {span}.")
    if lag == 0 or min(lags) == 0:
        return Verdict(Health.OK, "Caught up within the window.")
    return Verdict(Health.OK, f"{lag} records behind, not growing.")
