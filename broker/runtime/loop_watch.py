"""Says in the log when the event loop was held up, and how much of it full garbage collections took.

A cluster node's Raft heartbeats and elections, its broker heartbeats and every client share one
event loop: a stretch of work that does not yield (applying a huge metadata entry, a full garbage
collection over a heap holding 10,000 partitions) shows up as a moved controller or a fenced broker
seconds later. This line names the stall where it happened.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

log = logging.getLogger("broker.loop")

# A stall this long is logged (the Raft election timeout of the local provisioner is 1 s).
STALL_LOG_S = 0.25
CHECK_INTERVAL_S = 0.1


class FullCollectionClock:
    """Time spent in full (generation 2) garbage collections since the last `take`."""

    def __init__(self) -> None:
        self._started: float | None = None
        self._spent_s = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self._spent_s += time.perf_counter() - self._started
            self._started = None

    def take(self) -> float:
        spent, self._spent_s = self._spent_s, 0.0
        return spent


async def watch_loop_stalls(threshold_s: float = STALL_LOG_S, interval_s: float = CHECK_INTERVAL_S) -> None:
    """Runs until cancelled: wakes every `interval_s` and logs a warning when it woke `threshold_s`
    or more late."""
    loop = asyncio.get_running_loop()
    collections = FullCollectionClock()
    gc.callbacks.append(collections)
    try:
        due = loop.time() + interval_s
        while True:
            await asyncio.sleep(interval_s)
            now = loop.time()
            late_s = now - due
            collected_s = collections.take()
            if late_s >= threshold_s:
                log.warning(
                    "event loop held up for %d ms (full garbage collections: %d ms of it)",
                    late_s * 1000,
                    collected_s * 1000,
                )
            due = now + interval_s
    finally:
        gc.callbacks.remove(collections)
