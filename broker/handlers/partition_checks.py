"""Checks shared by the partition-addressed APIs (Fetch, ListOffsets, OffsetForLeaderEpoch)."""

from __future__ import annotations

from kio.schema.errors import ErrorCode


def leader_epoch_error(requested: int, current: int) -> ErrorCode:
    """Kafka's fencing rule: a client with an older epoch is fenced, a newer one is ahead of us."""
    if requested == -1 or requested == current:
        return ErrorCode.none
    if requested < current:
        return ErrorCode.fenced_leader_epoch
    return ErrorCode.unknown_leader_epoch
