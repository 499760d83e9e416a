"""The share-state persister's contract (KIP-932): what a share coordinator answers for one share-partition key,
and how it combines state batches, as Kafka 4.2's. The coordinator itself (on `__share_group_state`) is
`broker/server/share_storage.py`; its RPCs are `broker/handlers/share_state.py`."""

from __future__ import annotations

import heapq
import itertools
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kio.schema.errors import ErrorCode

from broker.share.state_records import ShareSnapshot, StateBatch

# (group id, topic id, partition)
ShareKey = tuple[str, uuid.UUID, int]
NOT_INITIALIZED = -1
# Kafka's messages for the answers a share-partition leader acts on.
UNINITIALIZED_READ = "Read operation on uninitialized share partition not allowed."
UNINITIALIZED_WRITE = "Write operation on uninitialized share partition not allowed."
FENCED_LEADER_EPOCH_MESSAGE = "The leader epoch in the request is older than the epoch on the broker."
FENCED_STATE_EPOCH_MESSAGE = (
    "The share coordinator rejected the request because the share-group state epoch did not match."
)


@dataclass(frozen=True, slots=True)
class CoordinatorAnswer:
    """One key's answer from the share coordinator: an error, or the stored snapshot (None: not initialized)."""

    error: ErrorCode = ErrorCode.none
    snapshot: ShareSnapshot | None = None
    message: str | None = None

    @property
    def uninitialized(self) -> bool:
        """The share-partition has no state at its coordinator (never initialized, or deleted)."""
        return self.error == ErrorCode.invalid_request and self.message in (
            UNINITIALIZED_READ,
            UNINITIALIZED_WRITE,
        )


def merge_batches(
    current: Iterable[StateBatch], newer: Iterable[StateBatch], start_offset: int
) -> tuple[StateBatch, ...]:
    """`current` and `newer` combined as Kafka's share coordinator combines them: where they overlap, the state
    with the higher delivery count wins (the higher delivery state on a tie), whichever came first; nothing below
    `start_offset` is kept; adjacent offsets with the same state and delivery count form one batch."""
    # A sweep over the offsets where some batch starts or ends: between two such points every batch either
    # covers all offsets or none, so the state there is the best (count, state) of the batches open there.
    clipped = sorted(
        (max(first, start_offset), last, state, count)
        for first, last, state, count in (*current, *newer)
        if last >= max(first, start_offset)
    )
    points = sorted({first for first, *_rest in clipped} | {last + 1 for _first, last, *_rest in clipped})
    open_batches: list[tuple[int, int, int]] = []  # (-count, -state, last): the best one on top
    merged: list[StateBatch] = []
    taken = 0
    for begin, end in itertools.pairwise(points):
        while taken < len(clipped) and clipped[taken][0] <= begin:
            _first, last, state, count = clipped[taken]
            heapq.heappush(open_batches, (-count, -state, last))
            taken += 1
        while open_batches and open_batches[0][2] < begin:
            heapq.heappop(open_batches)
        if not open_batches:
            continue
        count, state = -open_batches[0][0], -open_batches[0][1]
        if merged and merged[-1][1] == begin - 1 and merged[-1][2:] == (state, count):
            merged[-1] = (merged[-1][0], end - 1, state, count)
        else:
            merged.append((begin, end - 1, state, count))
    return tuple(merged)


class ShareCoordinator(Protocol):
    """The share coordinator of the keys whose `__share_group_state` partition this broker leads."""

    def ensure_topic(self) -> bool: ...

    def locate(self, key: str, listener_name: str) -> tuple[ErrorCode, int, str, int] | None: ...

    def read(self, key: ShareKey, leader_epoch: int) -> CoordinatorAnswer: ...

    def summary(self, key: ShareKey) -> CoordinatorAnswer: ...

    async def write(
        self,
        key: ShareKey,
        *,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[StateBatch],
    ) -> CoordinatorAnswer: ...

    async def initialize(
        self, key: ShareKey, *, state_epoch: int, start_offset: int
    ) -> CoordinatorAnswer: ...

    async def delete(self, key: ShareKey) -> CoordinatorAnswer: ...
