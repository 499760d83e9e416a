"""Full collections are kept off the objects of a burst, and get them back once it is over."""

from __future__ import annotations

import asyncio
import gc
import weakref

from broker.runtime.heap import FullCollectionDeferral


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_a_burst_sets_live_objects_aside_collects_young_garbage_and_hands_them_back_later() -> None:
    async def scenario() -> None:
        deferral = FullCollectionDeferral(defer_s=0.2)
        kept = [Node() for _ in range(1000)]
        garbage = Node()
        gone = weakref.ref(garbage)
        del garbage
        deferral.burst()
        assert gone() is None  # collected before the freeze, not frozen with the rest
        assert gc.get_freeze_count() >= len(kept)
        await asyncio.sleep(0.1)
        deferral.burst()  # a second burst pushes the hand-back later
        await asyncio.sleep(0.15)
        assert gc.get_freeze_count() > 0
        await asyncio.sleep(0.15)
        assert gc.get_freeze_count() == 0

        # Garbage among what was set aside is collected once it is handed back.
        frozen = Node()
        frozen_gone = weakref.ref(frozen)
        deferral.burst()
        del frozen
        gc.collect()
        assert frozen_gone() is not None
        deferral.release()
        gc.collect()
        assert frozen_gone() is None

    try:
        asyncio.run(scenario())
    finally:
        gc.unfreeze()
