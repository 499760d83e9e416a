"""Replication throttles: a byte rate shared by every replica that is catching up.

As in Kafka, replicas in the ISR are never throttled (that would stall acks=all); the rest share
`leader.replication.throttled.rate` on the leader and `follower.replication.throttled.rate` on the
follower, measured over Kafka's quota windows.
"""

from __future__ import annotations

from broker.quotas.rate import WindowedRate

NUM_WINDOWS = 11
WINDOW_S = 1.0


class ReplicationThrottle:
    def __init__(self, bytes_per_second: int | None, now: float) -> None:
        self.bytes_per_second = bytes_per_second
        self._rate = WindowedRate(NUM_WINDOWS, WINDOW_S, now) if bytes_per_second else None

    def set_rate(self, bytes_per_second: int | None, now: float) -> None:
        """A new rate (a dynamic broker config changed); None switches the throttle off."""
        if bytes_per_second == self.bytes_per_second:
            return
        self.bytes_per_second = bytes_per_second
        if not bytes_per_second:
            self._rate = None
        elif self._rate is None:
            self._rate = WindowedRate(NUM_WINDOWS, WINDOW_S, now)

    @property
    def enabled(self) -> bool:
        return self._rate is not None

    def allowance(self, now: float) -> int:
        """Bytes that may still be sent now without going over the rate (0: wait)."""
        if self._rate is None or self.bytes_per_second is None:
            return 2**31 - 1
        return max(0, int(self._rate.headroom(self.bytes_per_second, now)))

    def record(self, size: int, now: float) -> None:
        if self._rate is not None and size:
            self._rate.record(size, now)
