"""acks=all produce requests parked until the ISR has their batches (Kafka's produce purgatory).

A waiter for one partition completes when the high watermark reaches the end of its batches, with
NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below min.insync.replicas meanwhile, or early with
NOT_LEADER_OR_FOLLOWER when leadership moves. The produce handler bounds the wait by its timeout.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

# While the high watermark is stuck, timed-out waiters pile up: sweep them out now and then.
PRUNE_AT = 1024


@dataclass(slots=True)
class _Waiter:
    required_offset: int
    future: asyncio.Future[ErrorCode]


class PendingAcks:
    """Waiters of one partition, ordered by the offset they need (appends only grow)."""

    def __init__(self) -> None:
        self._waiters: list[_Waiter] = []

    def __len__(self) -> int:
        return len(self._waiters)

    def wait_for(self, required_offset: int) -> asyncio.Future[ErrorCode]:
        if len(self._waiters) >= PRUNE_AT:
            self.forget_done()
        future: asyncio.Future[ErrorCode] = asyncio.get_running_loop().create_future()
        self._waiters.append(_Waiter(required_offset, future))
        return future

    def complete_up_to(self, high_watermark: int, *, enough_replicas: bool) -> int:
        """Answer every waiter the high watermark covers; returns how many were answered."""
        done = 0
        for waiter in self._waiters:
            if waiter.required_offset > high_watermark:
                break
            done += 1
            if not waiter.future.done():
                waiter.future.set_result(
                    ErrorCode.none if enough_replicas else ErrorCode.not_enough_replicas_after_append
                )
        if done:
            del self._waiters[:done]
        return done

    def fail_all(self, error: ErrorCode) -> None:
        for waiter in self._waiters:
            if not waiter.future.done():
                waiter.future.set_result(error)
        self._waiters.clear()

    def forget_done(self) -> None:
        """Drop waiters whose request gave up (timed out): their futures were cancelled."""
        self._waiters = [w for w in self._waiters if not w.future.done()]
