"""A rate over `num_windows` samples of `window_s` seconds (Kafka's SampledStat + Rate)."""

from __future__ import annotations


class WindowedRate:
    __slots__ = ("_current", "_starts", "_values", "num_windows", "window_s")

    def __init__(self, num_windows: int, window_s: float, now: float) -> None:
        self.num_windows = num_windows
        self.window_s = window_s
        self._starts = [now] * num_windows
        self._values = [0.0] * num_windows
        self._current = 0

    def record(self, value: float, now: float) -> None:
        self._advance(now)
        self._values[self._current] += value

    def _advance(self, now: float) -> None:
        if now - self._starts[self._current] >= self.window_s:
            self._current = (self._current + 1) % self.num_windows
            self._starts[self._current] = now
            self._values[self._current] = 0.0
        # Samples older than the whole span no longer count.
        expire = self.num_windows * self.window_s
        for i in range(self.num_windows):
            if now - self._starts[i] >= expire:
                self._starts[i] = now
                self._values[i] = 0.0

    def elapsed(self, now: float) -> float:
        """Kafka's Rate.windowSize: time covered, but never less than num_windows - 1 windows.

        The floor keeps a first burst from reading as a huge rate, and makes a client that
        goes over its quota wait long enough for the average to come back down.
        """
        elapsed = now - min(self._starts)
        full_windows = int(elapsed // self.window_s)
        minimum = self.num_windows - 1
        if full_windows < minimum:
            elapsed += (minimum - full_windows) * self.window_s
        return elapsed

    def rate(self, now: float) -> float:
        self._advance(now)
        return sum(self._values) / self.elapsed(now)

    def headroom(self, quota: float, now: float) -> float:
        """How much more may be recorded now without going over `quota`."""
        self._advance(now)
        return quota * self.elapsed(now) - sum(self._values)

    def throttle_s(self, quota: float, now: float, max_s: float) -> float:
        """How long the client must wait for its rate to come back to `quota` (capped)."""
        rate = self.rate(now)
        if rate <= quota:
            return 0.0
        return min((rate - quota) / quota * self.elapsed(now), max_s)
