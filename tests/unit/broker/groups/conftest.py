"""Test support for the coordinator: an in-memory offsets log, a manual clock, async tests."""

from __future__ import annotations

import asyncio
import heapq
import inspect
import itertools
from collections.abc import Callable, Iterator, Sequence

import pytest

from broker.groups.coordinator import GroupCoordinator, GroupCoordinatorConfig
from broker.groups.offsets_log import OffsetsAppendError
from broker.metadata.coordinator_records import LogEntry
from tests.fixtures.coordinators import lead_every_partition


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Runs `async def` tests in a fresh event loop (no pytest-asyncio in this project)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(asyncio.wait_for(pyfuncitem.obj(**arguments), timeout=10))
    return True


class MemoryOffsetsLog:
    """The OffsetsLog protocol kept in lists: enough for the unit tier, no sockets or files."""

    def __init__(self, num_partitions: int = 5) -> None:
        self.num_partitions = num_partitions
        self.partitions: dict[int, list[LogEntry]] = {p: [] for p in range(num_partitions)}
        self.fail_appends = False
        # As a replicated log reports them: a Kafka error refusing the append before it is
        # written (NOT_ENOUGH_REPLICAS...), and one ending the wait for the ISR after it is.
        self.append_error: int | None = None
        self.isr_error: int | None = None
        # While set and not released, written appends wait here (the ISR has not caught up).
        self.isr_gate: asyncio.Event | None = None

    async def append(
        self,
        partition: int,
        records: Sequence[tuple[bytes, bytes | None]],
        producer: tuple[int, int] | None = None,
    ) -> int:
        await asyncio.sleep(0)  # a real append yields to the loop; so must this one
        if self.fail_appends:
            raise OSError("disk full")
        if self.append_error is not None:
            raise OffsetsAppendError(self.append_error)
        stored = self.partitions[partition]
        for key, value in records:
            stored.append(LogEntry(len(stored), key, value, producer[0] if producer else -1))
        if self.isr_gate is not None:
            await self.isr_gate.wait()
        if self.isr_error is not None:
            raise OffsetsAppendError(self.isr_error)
        return len(stored) - 1

    def read(self, partition: int) -> Iterator[LogEntry]:
        return iter(list(self.partitions[partition]))

    def write_marker(self, partition: int, producer_id: int, commit: bool) -> None:
        stored = self.partitions[partition]
        stored.append(LogEntry(len(stored), None, None, producer_id, commit))

    async def wait_until_committed(self, partition: int) -> None:
        """Every stored record counts as committed."""

    def all_records(self) -> list[tuple[int, bytes, bytes | None]]:
        return [
            (p, e.key, e.value)
            for p, records in self.partitions.items()
            for e in records
            if e.key is not None
        ]


class ManualTimer:
    def __init__(self, due_ms: int, callback: Callable[[], None]) -> None:
        self.due_ms = due_ms
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that only moves when a test calls `advance`."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.now = start_ms
        self._timers: list[tuple[int, int, ManualTimer]] = []
        self._sequence = itertools.count()

    def now_ms(self) -> int:
        return self.now

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> ManualTimer:
        timer = ManualTimer(self.now + max(delay_ms, 0), callback)
        heapq.heappush(self._timers, (timer.due_ms, next(self._sequence), timer))
        return timer

    async def advance(self, ms: int) -> None:
        target = self.now + ms
        await settle()
        while self._timers and self._timers[0][0] <= target:
            _, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self.now = timer.due_ms
            timer.callback()
            await settle()
        self.now = target
        await settle()


async def settle() -> None:
    """Lets every runnable task (joins, syncs, background writes) make progress."""
    for _ in range(30):
        await asyncio.sleep(0)


TEST_CONFIG = GroupCoordinatorConfig(
    initial_rebalance_delay_ms=0,
    min_session_timeout_ms=1000,
    max_session_timeout_ms=60_000,
    offsets_retention_ms=60 * 60_000,
)


@pytest.fixture
def offsets_log() -> MemoryOffsetsLog:
    return MemoryOffsetsLog()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


class SlowToCommitLog(MemoryOffsetsLog):
    """A new leader's log whose followers have not caught up yet: the load waits at the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.followers_caught_up = asyncio.Event()
        self.followers_caught_up.set()

    async def wait_until_committed(self, partition: int) -> None:
        await self.followers_caught_up.wait()


@pytest.fixture
def coordinator(offsets_log: MemoryOffsetsLog, clock: ManualClock) -> GroupCoordinator:
    coordinator = GroupCoordinator(offsets_log, TEST_CONFIG, clock)
    asyncio.run(lead_every_partition(coordinator))  # replays the (empty) log
    return coordinator
