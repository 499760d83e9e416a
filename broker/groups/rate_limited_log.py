"""A logger wrapper that writes at most a few lines per interval and counts what it held back.

The group coordinator logs every request it refuses as invalid (the rule that fired, the member,
the client), so a refusal can be diagnosed from the broker's log; a client that repeats a bad
request in a loop must not flood that log, so lines past the budget are only counted, and the
count is written with the next line that gets through.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class RateLimitedLog:
    def __init__(
        self,
        logger: logging.Logger,
        *,
        lines_per_interval: int = 10,
        interval_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.lines_per_interval = lines_per_interval
        self.interval_s = interval_s
        self.clock = clock
        self._interval_start = -float("inf")
        self._written = 0
        self.suppressed = 0

    def warning(self, message: str, *args: object) -> None:
        now = self.clock()
        if now - self._interval_start >= self.interval_s:
            self._interval_start = now
            self._written = 0
        if self._written >= self.lines_per_interval:
            self.suppressed += 1
            return
        self._written += 1
        if self.suppressed:
            message += " (%d similar lines suppressed before this one)"
            args = (*args, self.suppressed)
            self.suppressed = 0
        self.logger.warning(message, *args)
