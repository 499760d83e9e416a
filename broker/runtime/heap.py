"""Full garbage collections while a broker takes in thousands of partitions at once.

CPython runs a full collection whenever the objects that survived earlier collections have grown by a
quarter, and each one walks every tracked object, on the thread that runs the event loop (and with it
Raft and heartbeats). Taking in a 10,000-partition topic (metadata images, logs, replicas: tens of
objects per partition) grows the heap several times over: several full collections follow, each longer
than the last (about 100 ms for 300,000 objects on a quiet machine, many times that under load).

During such a burst, the objects alive are set aside where the collector does not look (`gc.freeze`);
`DEFER_S` after the last burst they are handed back (`gc.unfreeze`), so cyclic garbage among them is
still collected, in one full collection once the burst is over.
"""

from __future__ import annotations

import asyncio
import gc

DEFER_S = 60.0


class FullCollectionDeferral:
    def __init__(self, defer_s: float = DEFER_S) -> None:
        self.defer_s = defer_s
        self._release: asyncio.TimerHandle | None = None

    def burst(self) -> None:
        """Many long-lived objects were just created (call on the event loop)."""
        # Young cyclic garbage is collected now (a young collection is quick), not set aside.
        gc.collect(1)
        gc.freeze()
        if self._release is not None:
            self._release.cancel()
        self._release = asyncio.get_running_loop().call_later(self.defer_s, self.release)

    def release(self) -> None:
        if self._release is not None:
            self._release.cancel()
            self._release = None
        gc.unfreeze()


# One per process: the collector is.
full_collections = FullCollectionDeferral()
