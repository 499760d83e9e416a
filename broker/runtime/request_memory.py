"""The bytes of requests all connections hold at once: Kafka's `queued.max.request.bytes`.

A connection charges what it holds: a frame it is still receiving (its whole declared size is
reserved when the size prefix arrives, though the buffer only grows with the bytes that arrive),
bytes left over from a read, and complete frames waiting for their turn. A large frame whose
reservation does not fit waits, its connection unread, until memory is released; since every
frame that is being received had its reservation, each of them can complete and nothing
deadlocks. Small frames need no reservation, so clients with ordinary requests keep being served
while others wait for room for large ones.
"""

from __future__ import annotations

import asyncio
import collections
import functools
from collections.abc import Callable

# One read buffer for every connection of the broker: the event loop fills it with one socket's
# bytes and the connection parses them at once, so idle connections hold no buffer of their own.
SHARED_READ_BYTES = 256 * 1024
# Frames smaller than this need no reservation: clients with ordinary requests keep being served
# while large frames wait for room.
SMALL_FRAME_BYTES = 64 * 1024
# While memory is short, a read takes at most this much, so that leftovers stay small.
LOW_MEMORY_READ_BYTES = 4096


class RequestMemory:
    def __init__(self, limit_bytes: int = -1) -> None:
        self.limit = limit_bytes if limit_bytes > 0 else None
        self.used = 0
        self.read_buffer = bytearray(SHARED_READ_BYTES)
        self._waiters: collections.OrderedDict[object, tuple[int, Callable[[], None]]] = (
            collections.OrderedDict()
        )

    @property
    def short(self) -> bool:
        """More is held than the limit allows: connections read little and queue nothing more."""
        return self.limit is not None and self.used > self.limit

    def try_reserve(self, nbytes: int) -> bool:
        if self.limit is not None and self.used + nbytes > self.limit and self.used > 0:
            return False
        self.used += nbytes
        return True

    async def reserve(self, nbytes: int) -> None:
        """Wait until `nbytes` can be reserved, then reserve them (FIFO with the other waiters).
        For listeners that read with asyncio streams (the controller's); release them when done."""
        while not self.try_reserve(nbytes):
            woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            owner = object()
            self.wait(owner, nbytes, functools.partial(_wake, woken))
            try:
                await woken
            finally:
                self.forget(owner)

    def charge(self, nbytes: int) -> None:
        """Bytes already received: they cannot be refused, only accounted."""
        self.used += nbytes

    def release(self, nbytes: int) -> None:
        self.used -= nbytes
        self._wake_waiters()

    def wait(self, owner: object, nbytes: int, wake: Callable[[], None]) -> None:
        """Call `wake` once `nbytes` (0: any room at all) may be reserved; FIFO among waiters."""
        self._waiters[owner] = (nbytes, wake)

    def forget(self, owner: object) -> None:
        self._waiters.pop(owner, None)

    def _wake_waiters(self) -> None:
        while self._waiters:
            owner, (nbytes, wake) = next(iter(self._waiters.items()))
            if self.limit is not None and self.used + nbytes > self.limit and self.used > 0:
                return
            del self._waiters[owner]
            wake()


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
