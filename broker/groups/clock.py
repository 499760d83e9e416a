"""Time for the coordinator: wall-clock milliseconds and cancellable timers.

The coordinator never reads the time or sleeps directly, so unit tests can swap in
a manual clock and drive session and rebalance timeouts without waiting.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now_ms(self) -> int: ...

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> Timer: ...


class LoopClock:
    """The real clock: `time.time()` and the running asyncio loop's timers."""

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, callback)
