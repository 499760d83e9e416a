"""A 10,000-partition topic's metadata entry is applied without holding up the event loop.

Raft heartbeats, elections and broker heartbeats share the loop with the metadata image: an entry
applied in one go stalled them long enough (under load) for the active controller to move. The probe
measures the main thread's CPU time between its wake-ups, which is the work done without yielding
however busy the machine is (wall time would also count the time the process was not scheduled).
"""

from __future__ import annotations

import asyncio
import base64
import gc
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from broker.controller import records as rec
from broker.controller.api import BrokerRegistration, PartitionAssignment
from broker.controller.broker_lifecycle import BrokerLifecycle
from broker.controller.client import ControllerClient
from broker.controller.decisions import TopicRequest
from broker.controller.image import (
    LARGE_ENTRY_RECORDS,
    MetadataImage,
    apply_entry_yielding,
    image_from_snapshot_yielding,
)
from broker.controller.rpc.brokers import FetchMetadataResponse
from broker.runtime.heap import full_collections
from tests.unit.broker.controller.test_decisions import cluster, commit

PARTITIONS = 10_000
MAX_LOOP_STALL_S = 0.05

T = TypeVar("T")


@dataclass
class LoopLagProbe:
    """Takes a turn whenever the event loop gives it one while `work` runs; records the longest
    stretch of this thread's CPU time between two turns (the end of the work included) and how many
    turns it got during the work."""

    longest_stall_s: float = 0.0
    wakeups: int = 0
    _last: float = 0.0
    _task: asyncio.Task[None] | None = field(default=None, repr=False)

    async def run(self, work: Awaitable[T]) -> T:
        # Garbage other tests left behind would be collected on the work's time (a full collection
        # of it took 95 ms): what the work's own allocations cause is measured, that is not.
        gc.collect()
        self._task = asyncio.create_task(self._probe())
        await asyncio.sleep(0)  # the probe starts and is next in the queue when the work yields
        self._last = time.thread_time()
        try:
            return await work
        finally:
            self._task.cancel()
            self._reading()

    def _reading(self) -> None:
        now = time.thread_time()
        self.longest_stall_s = max(self.longest_stall_s, now - self._last)
        self._last = now

    async def _probe(self) -> None:
        while True:
            # sleep(0): back in the queue at once, so every turn the loop gets is one for the probe.
            await asyncio.sleep(0)
            self._reading()
            self.wakeups += 1


def big_topic_entry(image: MetadataImage) -> list[rec.Record]:
    _, decider = cluster()
    decision = decider.create_topic(image, TopicRequest("big", PARTITIONS, 3))
    assert decision.error_code == 0
    return decision.records


def test_a_10000_partition_entry_is_applied_in_slices_and_readers_see_all_of_it_or_nothing() -> None:
    image, _ = cluster()
    records = big_topic_entry(image)
    offset = image.offset + 1
    expected = MetadataImage.from_snapshot(image.to_snapshot())
    expected.apply_entry(offset, records)
    seen_by_readers: set[int] = set()

    async def reader() -> None:
        # What a Metadata request or a decision would read while the entry is being applied.
        while True:
            topic = image.topic_by_name("big")
            seen_by_readers.add(0 if topic is None else len(topic.partitions))
            await asyncio.sleep(0.001)

    async def scenario() -> tuple[MetadataImage, LoopLagProbe]:
        probe = LoopLagProbe()
        reading = asyncio.create_task(reader())
        applied, delta = await probe.run(apply_entry_yielding(image, offset, records))
        reading.cancel()
        assert len(delta.partitions) == PARTITIONS
        return applied, probe

    applied, probe = asyncio.run(scenario())

    assert probe.longest_stall_s < MAX_LOOP_STALL_S, f"the loop stalled {probe.longest_stall_s * 1000:.0f} ms"
    assert probe.wakeups >= 1, "the entry was applied in one go"
    # The image being read never showed a partial topic: the entry went to a copy.
    assert seen_by_readers == {0}
    assert image.topic_by_name("big") is None
    assert image.offset == offset - 1
    assert applied.offset == offset
    assert applied.to_snapshot() == expected.to_snapshot()


def test_the_probe_sees_an_entry_applied_in_one_go_as_one_stall() -> None:
    image, _ = cluster()
    records = big_topic_entry(image)

    async def in_one_go() -> float:
        started = time.thread_time()
        image.apply_entry(image.offset + 1, records)
        return time.thread_time() - started

    async def scenario() -> tuple[LoopLagProbe, float]:
        probe = LoopLagProbe()
        return probe, await probe.run(in_one_go())

    probe, work_s = asyncio.run(scenario())

    assert probe.wakeups == 0
    assert probe.longest_stall_s >= 0.9 * work_s


def test_a_large_change_to_an_existing_topic_leaves_the_image_being_read_untouched() -> None:
    image, decider = cluster()
    commit(image, decider.create_topic(image, TopicRequest("big", PARTITIONS, 3)))
    topic = image.topic_by_name("big")
    assert topic is not None
    before = image.to_snapshot()
    shrink = [
        rec.PartitionChangeRecord(topic.topic_id, p, isr=(topic.partitions[p].leader,)) for p in range(2000)
    ]
    shrink.append(rec.ConfigRecord("topic", "big", "retention.ms", "1000"))
    assert len(shrink) >= LARGE_ENTRY_RECORDS

    applied, delta = asyncio.run(apply_entry_yielding(image, image.offset + 1, shrink))

    assert image.to_snapshot() == before
    changed = applied.topic_by_name("big")
    assert changed is not None
    assert changed is not topic
    assert changed.partitions[0].isr == (topic.partitions[0].leader,)
    assert changed.partitions[0].partition_epoch == topic.partitions[0].partition_epoch + 1
    assert changed.partitions[2000] is topic.partitions[2000]  # unchanged partitions are shared
    assert changed.configs == {"retention.ms": "1000"}
    assert topic.configs == {}
    assert len(delta.partitions) == 2000
    assert len(delta.topic_configs) == 1
    # Later small entries are applied in place to the new image (the old one is not used any more).
    small = [rec.PartitionChangeRecord(topic.topic_id, 1, isr=topic.partitions[1].replicas)]
    same, _ = asyncio.run(apply_entry_yielding(applied, applied.offset + 1, small))
    assert same is applied
    assert applied.topic_by_name("big") is changed


def test_snapshots_of_a_10000_partition_image_are_written_and_loaded_in_slices() -> None:
    image, decider = cluster()
    commit(image, decider.create_topic(image, TopicRequest("big", PARTITIONS, 3)))
    commit(image, decider.alter_configs(image, "topic", "big", {"cleanup.policy": "compact"}))

    async def scenario() -> tuple[bytes, MetadataImage, LoopLagProbe, LoopLagProbe]:
        writing, loading = LoopLagProbe(), LoopLagProbe()
        data = await writing.run(image.to_snapshot_yielding())
        loaded = await loading.run(image_from_snapshot_yielding(data))
        return data, loaded, writing, loading

    data, loaded, writing, loading = asyncio.run(scenario())

    assert data == image.to_snapshot()
    assert loaded.to_snapshot() == data
    for probe in (writing, loading):
        assert probe.longest_stall_s < MAX_LOOP_STALL_S, f"stalled {probe.longest_stall_s * 1000:.0f} ms"
        assert probe.wakeups >= 1


class RecordingListener:
    def __init__(self, lifecycle: BrokerLifecycle) -> None:
        self.lifecycle = lifecycle
        self.partitions_seen = 0
        self.image_partitions_when_told: set[int] = set()

    def on_image_loaded(
        self, partitions: Sequence[PartitionAssignment], brokers: Sequence[BrokerRegistration]
    ) -> None:
        pass

    def on_partition_changed(
        self, previous: PartitionAssignment | None, current: PartitionAssignment
    ) -> None:
        self.partitions_seen += 1
        topic = self.lifecycle.image.topic_by_name(current.topic)
        self.image_partitions_when_told.add(0 if topic is None else len(topic.partitions))

    def on_partition_removed(self, previous: PartitionAssignment) -> None:
        pass

    def on_topic_configs_changed(self, change: object) -> None:
        pass

    def on_broker_changed(self, broker: BrokerRegistration) -> None:
        pass

    def on_broker_configs_changed(self, resource_name: str, configs: object) -> None:
        pass

    def on_security_records(self, records: object) -> None:
        pass


def test_a_broker_applies_and_publishes_a_fetched_10000_partition_entry_without_stalling_its_loop() -> None:
    source, _ = cluster()
    snapshot = source.to_snapshot()
    records = big_topic_entry(source)
    # What fetch_metadata answers a broker: the stored entry in base64.
    fetched = base64.b64encode(rec.encode_entry(records, {})).decode()

    async def scenario() -> tuple[BrokerLifecycle, RecordingListener, LoopLagProbe]:
        # No connection is opened: the fetched reply is handed over as the follower would.
        lifecycle = BrokerLifecycle(ControllerClient({1: ("127.0.0.1", 1)}), 1, [], None, 0.5)
        listener = RecordingListener(lifecycle)
        lifecycle.listeners.append(listener)
        lifecycle.image = MetadataImage.from_snapshot(snapshot)
        lifecycle.broker_epoch = lifecycle.image.brokers[1].epoch
        lifecycle.caught_up.set()
        probe = LoopLagProbe()
        reply = FetchMetadataResponse(source.offset + 1, ((source.offset + 1, fetched),))
        await probe.run(lifecycle._apply_fetched(reply))
        lifecycle.client.close()
        # The partitions' objects were set aside from full collections (broker/runtime/heap.py).
        assert gc.get_freeze_count() > 0
        full_collections.release()
        return lifecycle, listener, probe

    lifecycle, listener, probe = asyncio.run(scenario())

    assert probe.longest_stall_s < MAX_LOOP_STALL_S, f"the loop stalled {probe.longest_stall_s * 1000:.0f} ms"
    topic = lifecycle.image.topic_by_name("big")
    assert topic is not None
    assert len(topic.partitions) == PARTITIONS
    assert lifecycle.published_offset == source.offset + 1
    # Listeners hear of the partitions once the image holds the whole topic.
    assert listener.partitions_seen == PARTITIONS
    assert listener.image_partitions_when_told == {PARTITIONS}
