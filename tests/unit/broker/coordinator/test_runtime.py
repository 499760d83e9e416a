"""The coordinator runtime: partition ownership, loading, unloading, reloading at a new epoch, writes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from kio.schema.errors import ErrorCode

from broker.coordinator.runtime import (
    REPLAY_YIELD_EVERY,
    CoordinatorAppendError,
    CoordinatorRuntime,
    CoordinatorSlot,
)


class RecordingShard:
    """A shard whose replay reads `entries` and then waits for `release` (a partition being loaded)."""

    def __init__(self, entries: int = 3) -> None:
        self.runtime = CoordinatorRuntime("__test", self)
        self.entries = entries
        self.release = asyncio.Event()
        self.replayed: dict[int, int] = {}
        self.dropped: list[int] = []
        self.fail = False

    async def load_partition_state(self, slot: CoordinatorSlot) -> None:
        count = 0
        async for _ in self.runtime.replay(slot, range(self.entries)):
            count += 1
        self.replayed[slot.partition] = count
        if self.fail:
            raise RuntimeError("unreadable log")
        await self.release.wait()

    def drop_partition_state(self, partition: int) -> None:
        self.dropped.append(partition)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), timeout=10))


def test_a_partition_answers_load_in_progress_until_replayed_then_runs_the_deferred_work_in_order() -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        runtime = shard.runtime
        assert runtime.availability_error(0) == ErrorCode.not_coordinator
        load = runtime.load(0)
        assert load is not None
        await asyncio.sleep(0.01)
        assert runtime.availability_error(0) == ErrorCode.coordinator_load_in_progress
        done: list[str] = []
        assert runtime.defer_until_loaded(0, lambda: done.append("first"))
        assert runtime.defer_until_loaded(0, lambda: done.append("second"))
        assert not runtime.defer_until_loaded(1, lambda: done.append("not owned"))
        shard.release.set()
        await load
        assert runtime.availability_error(0) is None
        assert done == ["first", "second"]
        assert shard.replayed == {0: 3}
        # Loaded: nothing to defer, the caller does the work itself.
        assert not runtime.defer_until_loaded(0, lambda: done.append("late"))
        assert runtime.load(0) is None  # already owned at this epoch

    run(scenario)


def test_a_partition_unloaded_while_loading_is_never_served_nor_runs_deferred_work() -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        runtime = shard.runtime
        load = runtime.load(2)
        assert load is not None
        await asyncio.sleep(0.01)
        done: list[str] = []
        runtime.defer_until_loaded(2, lambda: done.append("marker"))
        runtime.unload(2)
        shard.release.set()
        await load
        assert shard.dropped == [2]
        assert runtime.availability_error(2) == ErrorCode.not_coordinator
        assert not runtime.owns(2)
        assert done == []
        runtime.unload(2)  # not owned any more: nothing to drop
        assert shard.dropped == [2]

    run(scenario)


def test_a_long_replay_stops_once_the_partition_is_unloaded() -> None:
    async def scenario() -> None:
        shard = RecordingShard(entries=10 * REPLAY_YIELD_EVERY)
        runtime = shard.runtime
        load = runtime.load(0)
        assert load is not None
        await asyncio.sleep(0)  # the load task starts and yields after its first REPLAY_YIELD_EVERY records
        runtime.unload(0)
        shard.release.set()
        await load
        assert shard.replayed[0] < 10 * REPLAY_YIELD_EVERY

    run(scenario)


def test_led_again_at_a_newer_epoch_the_partition_is_dropped_and_replayed_again() -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        shard.release.set()
        runtime = shard.runtime
        first = runtime.load(0, epoch=4)
        assert first is not None
        await first
        assert runtime.load(0, epoch=4) is None
        assert runtime.load(0, epoch=3) is None
        second = runtime.load(0, epoch=5)
        assert second is not None
        assert shard.dropped == [0]
        await second
        assert runtime.slots[0].epoch == 5
        assert runtime.loaded(0)

    run(scenario)


def test_a_failed_load_leaves_the_partition_unowned() -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        shard.fail = True
        load = shard.runtime.load(1)
        assert load is not None
        await load
        assert not shard.runtime.owns(1)
        assert shard.runtime.availability_error(1) == ErrorCode.not_coordinator

    run(scenario)


@pytest.mark.parametrize(
    ("append_raises", "expected"),
    [
        (None, None),
        (CoordinatorAppendError(ErrorCode.not_enough_replicas), -ErrorCode.not_enough_replicas),
        (RuntimeError("disk gone"), ErrorCode.coordinator_not_available),
    ],
)
def test_a_write_answers_none_or_the_coordinator_error(
    append_raises: Exception | None, expected: int | None
) -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        shard.release.set()
        runtime = shard.runtime
        load = runtime.load(0)
        assert load is not None
        appended: list[int] = []

        async def append() -> None:
            if append_raises is not None:
                raise append_raises
            appended.append(0)

        def negated(code: int) -> int:
            return -code  # tells the shard's mapping apart from the runtime's own answers

        # Not loaded yet: refused before anything is written.
        assert await runtime.write(0, append, negated) == ErrorCode.not_coordinator
        assert appended == []
        await load
        assert await runtime.write(0, append, negated) == expected

    run(scenario)


def test_a_write_committed_after_the_partition_moved_away_is_refused() -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        shard.release.set()
        runtime = shard.runtime
        load = runtime.load(0)
        assert load is not None
        await load

        async def append_while_leadership_moves() -> None:
            runtime.unload(0)

        assert await runtime.write(0, append_while_leadership_moves, int) == ErrorCode.not_coordinator

    run(scenario)


def test_stopping_cancels_loads_in_flight() -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        runtime = shard.runtime
        load = runtime.load(0)
        assert load is not None
        await asyncio.sleep(0.01)
        runtime.stop()
        await runtime.drain()
        assert load.cancelled()
        assert runtime.availability_error(0) == ErrorCode.not_coordinator
        assert runtime.load(1) is None

    run(scenario)


class ManualTimers:
    """A clock whose timers fire when the test says so (`fire_all`)."""

    def __init__(self) -> None:
        self.timers: list[ManualTimer] = []

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> ManualTimer:
        timer = ManualTimer(callback)
        self.timers.append(timer)
        return timer

    def fire_all(self) -> None:
        for timer in self.timers:
            if not timer.cancelled:
                timer.callback()

    def cancelled(self) -> int:
        return sum(timer.cancelled for timer in self.timers)


class ManualTimer:
    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def test_a_partitions_timers_stop_when_it_is_unloaded_and_never_fire_afterwards() -> None:
    async def scenario() -> None:
        shard = RecordingShard()
        runtime = shard.runtime
        # Both partitions led, still loading (their timers are theirs from the start).
        runtime.load(0)
        runtime.load(1)
        clock = ManualTimers()
        fired: list[str] = []
        runtime.call_later(0, clock, 10, lambda: fired.append("session of partition 0"))
        runtime.call_later(1, clock, 10, lambda: fired.append("session of partition 1"))
        runtime.call_later(5, clock, 10, lambda: fired.append("not owned: a plain timer"))
        assert len(runtime.slots[0].timers) == 1
        runtime.unload(0)
        assert clock.cancelled() == 1
        clock.fire_all()
        assert fired == ["session of partition 1", "not owned: a plain timer"]
        assert runtime.slots[1].timers == set(), "a timer that fired is forgotten"
        runtime.call_later(1, clock, 10, lambda: fired.append("never"))
        runtime.stop()
        assert clock.cancelled() == 2

    run(scenario)
