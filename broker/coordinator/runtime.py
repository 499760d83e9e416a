"""One runtime for every coordinator that keeps its state in an internal topic's partitions.

The group coordinator (`__consumer_offsets`) and the transaction coordinator (`__transaction_state`)
both serve the keys of the partitions this broker leads, as Kafka's `CoordinatorRuntime` does: a
partition is *loaded* (its log replayed into the shard's state) when the broker becomes its leader,
served once loaded, and *unloaded* (its state dropped, waiters answered NOT_COORDINATOR) when
leadership moves. Writes go through the partition's log and count once committed; a write that
completes after the partition moved away is refused, since the new leader replays the log.

The runtime owns that lifecycle (which partitions are owned, at which leader epoch, loading or
loaded, the load tasks, work deferred until a load finishes) so each coordinator only says how to
replay and how to drop one partition's state (`CoordinatorShard`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from kio.schema.errors import ErrorCode

log = logging.getLogger(__name__)

# Replay yields to the event loop this often (records) so a long replay does not stall the broker.
REPLAY_YIELD_EVERY = 1000

Entry = TypeVar("Entry")


class CoordinatorAppendError(Exception):
    """An append to a coordinator partition refused or not replicated, with the Kafka error code the
    log gave (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT...)."""

    def __init__(self, error_code: int, message: str = "") -> None:
        super().__init__(message or f"coordinator append failed with error {error_code}")
        self.error_code = error_code


class Timer(Protocol):
    def cancel(self) -> None: ...


class TimerFactory(Protocol):
    """Schedules `callback` in `delay_ms` (a coordinator's clock: the loop's, or a test's manual one)."""

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> Timer: ...


class PartitionTimer:
    """A timer of one coordinator partition: cancelled with the partition (unload, stop), so it never
    fires on state that was dropped."""

    __slots__ = ("_slot", "_timer")

    def __init__(
        self, slot: CoordinatorSlot, clock: TimerFactory, delay_ms: int, callback: Callable[[], None]
    ) -> None:
        self._slot = slot

        def fire() -> None:
            if self in slot.timers:
                slot.timers.discard(self)
                callback()

        slot.timers.add(self)
        self._timer = clock.call_later(delay_ms, fire)

    def cancel(self) -> None:
        self._slot.timers.discard(self)
        self._timer.cancel()


@dataclass(eq=False, slots=True)
class CoordinatorSlot:
    """One coordinator partition this broker owns: its leader epoch when taken, whether its log has
    been replayed, the work waiting for that (run, in order, as soon as it has), and its timers."""

    partition: int
    epoch: int = 0
    loaded: bool = False
    after_load: list[Callable[[], None]] = field(default_factory=list)
    timers: set[PartitionTimer] = field(default_factory=set)

    def cancel_timers(self) -> None:
        for timer in list(self.timers):
            timer.cancel()


class CoordinatorShard(Protocol):
    """What a coordinator tells the runtime about its state, one partition at a time."""

    async def load_partition_state(self, slot: CoordinatorSlot) -> None:
        """Replays the slot's partition into memory; may return early once `runtime.current(slot)` is
        False (the partition moved away meanwhile). Raising leaves the partition unowned."""
        ...

    def drop_partition_state(self, partition: int) -> None:
        """Forgets the partition's state: timers stop, waiting requests get NOT_COORDINATOR."""
        ...


class CoordinatorRuntime:
    """The partitions of one internal topic a shard serves, and their load/unload lifecycle."""

    def __init__(self, topic: str, shard: CoordinatorShard) -> None:
        self.topic = topic
        self.shard = shard
        self.slots: dict[int, CoordinatorSlot] = {}
        self.stopped = False
        # Loads may wait for followers; stopping cancels them rather than waiting.
        self._loads: set[asyncio.Task[None]] = set()

    # --- ownership ------------------------------------------------------------------------------

    def owns(self, partition: int) -> bool:
        return partition in self.slots

    def loaded(self, partition: int) -> bool:
        slot = self.slots.get(partition)
        return slot is not None and slot.loaded

    def current(self, slot: CoordinatorSlot) -> bool:
        """Whether `slot` is still how this broker owns its partition (not unloaded nor re-taken)."""
        return self.slots.get(slot.partition) is slot

    def availability_error(self, partition: int) -> int | None:
        """NOT_COORDINATOR when the partition is not served here, COORDINATOR_LOAD_IN_PROGRESS while it
        is replayed, None when its keys can be served."""
        slot = self.slots.get(partition)
        if slot is None or self.stopped:
            return ErrorCode.not_coordinator
        if not slot.loaded:
            return ErrorCode.coordinator_load_in_progress
        return None

    def defer_until_loaded(self, partition: int, work: Callable[[], None]) -> bool:
        """Runs `work` once the partition's replay has finished (True) when it is being replayed;
        False when it is not (then the caller does the work now, or has nothing to do)."""
        slot = self.slots.get(partition)
        if slot is None or slot.loaded:
            return False
        slot.after_load.append(work)
        return True

    # --- loading and unloading ------------------------------------------------------------------

    def load(self, partition: int, epoch: int = 0) -> asyncio.Task[None] | None:
        """Takes the partition at leader `epoch` and replays it in the returned task (its keys answer
        COORDINATOR_LOAD_IN_PROGRESS meanwhile). None when stopped or already owned at this epoch.

        Owned at an older epoch (this broker lost the leadership and got it back without seeing
        itself lose it), the partition is unloaded and loaded again: its log may have been
        truncated to what another leader wrote meanwhile."""
        if self.stopped:
            return None
        previous = self.slots.get(partition)
        if previous is not None:
            if epoch <= previous.epoch:
                return None
            log.info(
                "%s partition %d: led again at epoch %d (was %d); reloading",
                self.topic, partition, epoch, previous.epoch,
            )  # fmt: skip
            self.unload(partition)
        slot = self.slots[partition] = CoordinatorSlot(partition, epoch)
        task = asyncio.get_running_loop().create_task(
            self._load_logged(slot), name=f"load-{self.topic}-{partition}"
        )
        self._loads.add(task)
        task.add_done_callback(self._loads.discard)
        return task

    async def _load_logged(self, slot: CoordinatorSlot) -> None:
        try:
            await self._load(slot)
        except Exception:
            log.exception("loading %s partition %d failed", self.topic, slot.partition)
            if self.slots.get(slot.partition) is slot:
                del self.slots[slot.partition]

    async def _load(self, slot: CoordinatorSlot) -> None:
        await self.shard.load_partition_state(slot)
        if not self.current(slot):
            return
        slot.loaded = True
        deferred, slot.after_load = slot.after_load, []
        for work in deferred:
            work()

    def unload(self, partition: int) -> None:
        """Gives the partition up (leadership moved): its timers stop and the shard drops its state."""
        slot = self.slots.pop(partition, None)
        if slot is None:
            return
        slot.cancel_timers()
        self.shard.drop_partition_state(partition)

    def call_later(
        self, partition: int, clock: TimerFactory, delay_ms: int, callback: Callable[[], None]
    ) -> Timer:
        """A timer of the partition (session expiry, rebalance and sync timeouts): cancelled when the
        partition is unloaded or the runtime stops. A partition not owned gets a plain clock timer."""
        slot = self.slots.get(partition)
        if slot is None:
            return clock.call_later(delay_ms, callback)
        return PartitionTimer(slot, clock, delay_ms, callback)

    async def replay(self, slot: CoordinatorSlot, entries: Iterable[Entry]) -> AsyncIterator[Entry]:
        """The partition's log entries, yielding to the event loop now and then; stops early when the
        partition is unloaded meanwhile (the log may be changing under the replay)."""
        for count, entry in enumerate(entries):
            if count % REPLAY_YIELD_EVERY == REPLAY_YIELD_EVERY - 1:
                await asyncio.sleep(0)
                if not self.current(slot):
                    return
            yield entry

    # --- writing --------------------------------------------------------------------------------

    async def write(
        self,
        partition: int,
        append: Callable[[], Awaitable[object]],
        error_for: Callable[[int], int],
    ) -> int | None:
        """Runs `append` (a write to the partition's log that returns once committed) for a loaded
        partition: None when written while the partition stayed owned, else the error for the client
        (`error_for` maps the log's error to the coordinator's)."""
        slot = self.slots.get(partition)
        if slot is None or not slot.loaded:
            return ErrorCode.not_coordinator
        try:
            await append()
        except CoordinatorAppendError as exc:
            return error_for(exc.error_code)
        except Exception:
            log.exception("writing to %s partition %d failed", self.topic, partition)
            return ErrorCode.coordinator_not_available
        if self.slots.get(partition) is not slot:
            # Leadership moved while the ISR was awaited: the new coordinator replays the log.
            return ErrorCode.not_coordinator
        return None

    # --- stopping -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Serves nothing more and cancels the loads in flight; the shard releases its own state."""
        self.stopped = True
        for load in list(self._loads):
            load.cancel()
        for slot in self.slots.values():
            slot.cancel_timers()

    def loading(self) -> bool:
        """Whether a load task is still running."""
        return bool(self._loads)

    async def drain(self) -> None:
        """Waits for the loads in flight to finish (or, once stopped, to be cancelled)."""
        while self._loads:
            await asyncio.gather(*list(self._loads), return_exceptions=True)
