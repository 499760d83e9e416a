"""Log lines that clients can cause, rate limited so that a flood of them cannot fill the disk.

One client sending malformed frames used to write a WARNING per connection: 69,637 lines (8.7 MB) in ten
minutes. Each kind of such line (a connection closed for bad input, a refused connection, a failed
authentication, a handler that failed on a request) gets `lines_per_window` lines per window, across all
connections; past that, lines are counted instead, and one summary per window says how many were left out
and from how many addresses. A connection also writes at most `per_connection` lines of a kind (most close
after their first bad frame; the cap holds for those that do not).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

LINES_PER_WINDOW = 10
WINDOW_S = 60.0
PER_CONNECTION = 3
# Addresses counted for a summary; past this the summary says "at least".
_MAX_ADDRESSES = 1000


@dataclass
class _Budget:
    window_start: float
    logged: int = 0
    suppressed: int = 0
    addresses: set[str] = field(default_factory=set)
    summary_scheduled: bool = False


class ClientEventLog:
    """Rate-limited logging of what clients cause, one budget per kind of line."""

    def __init__(
        self,
        logger: logging.Logger,
        *,
        lines_per_window: int = LINES_PER_WINDOW,
        window_s: float = WINDOW_S,
        per_connection: int = PER_CONNECTION,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._lines_per_window = lines_per_window
        self._window_s = window_s
        self.per_connection = per_connection
        self._clock = clock
        self._budgets: dict[str, _Budget] = {}

    def log(
        self,
        kind: str,
        level: int,
        address: str,
        message: str,
        *args: object,
        connection_lines: int = 0,
        exc_info: bool = False,
    ) -> bool:
        """Log `message % args` unless this kind of line is over its budget or the connection has
        already written `per_connection` of them (`connection_lines`); True when it was written."""
        now = self._clock()
        budget = self._budgets.get(kind)
        if budget is None:
            budget = self._budgets[kind] = _Budget(window_start=now)
        elif now - budget.window_start >= self._window_s:
            self._summarize(kind, budget)
            budget.window_start = now
        if connection_lines < self.per_connection and budget.logged < self._lines_per_window:
            budget.logged += 1
            self._logger.log(level, message, *args, exc_info=exc_info)
            return True
        budget.suppressed += 1
        if len(budget.addresses) < _MAX_ADDRESSES:
            budget.addresses.add(address)
        self._schedule_summary(kind, budget)
        return False

    def flush(self) -> None:
        """Write the summaries of every window with lines left out (and start new windows)."""
        now = self._clock()
        for kind, budget in self._budgets.items():
            self._summarize(kind, budget)
            budget.window_start = now

    def _schedule_summary(self, kind: str, budget: _Budget) -> None:
        """A flood that stops still gets its summary, at the end of its window."""
        if budget.summary_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a unit test): the next line of this kind writes it
        budget.summary_scheduled = True
        delay = max(0.0, budget.window_start + self._window_s - self._clock())
        loop.call_later(delay, self._summarize_due, kind)

    def _summarize_due(self, kind: str) -> None:
        budget = self._budgets[kind]
        budget.summary_scheduled = False
        if self._clock() - budget.window_start >= self._window_s:
            self._summarize(kind, budget)
            budget.window_start = self._clock()
        elif budget.suppressed:
            self._schedule_summary(kind, budget)

    def _summarize(self, kind: str, budget: _Budget) -> None:
        if budget.suppressed:
            many = "at least " if len(budget.addresses) >= _MAX_ADDRESSES else ""
            self._logger.warning(
                "%s: %d more like it not logged in the last %.0f s, from %s%d address(es)",
                kind,
                budget.suppressed,
                self._clock() - budget.window_start,
                many,
                len(budget.addresses),
            )
        budget.logged = 0
        budget.suppressed = 0
        budget.addresses = set()
