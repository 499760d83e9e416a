"""A consumer-protocol heartbeat whose records could not be written leaves the group as the log has it, as Kafka's
coordinator runtime reverts its state to the last written offset: the member's retry (same epoch, as librdkafka
retries) is served the change then. Before, the group kept the unwritten epoch in memory, so the retry was fenced
(FENCED_MEMBER_EPOCH) and the records of that epoch were never written at all. Any failed write of a group (a
leave, an expiry) is sent again with the group's next write: before, it counted as written, so a coordinator
taking over found members that had left."""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from broker.groups import consumer_records as records
from tests.fixtures.coordinators import lead_every_partition
from tests.unit.broker.groups.conftest import ManualClock, MemoryOffsetsLog
from tests.unit.broker.groups.test_consumer_protocol import (
    ORDERS,
    TOPICS,
    beat,
    consumer,
    make_coordinator,
)


def written_group_epochs(offsets_log: MemoryOffsetsLog) -> list[int]:
    epochs = []
    for entries in offsets_log.partitions.values():
        for entry in entries:
            key = records.decode_key(entry.key) if entry.key is not None else None
            if key is not None and key.record_type == 3 and entry.value is not None:
                epochs.append(records.decode_epoch(entry.value))
    return epochs


async def test_a_grown_topic_whose_epoch_was_not_written_is_assigned_on_the_retry(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    topics = dict(TOPICS)
    coordinator = make_coordinator(offsets_log, clock, topics)
    await lead_every_partition(coordinator)
    joined = await beat(coordinator, "m1", 0)
    assert (await beat(coordinator, "m1", 1, owned=joined.assignment)).error_code == ErrorCode.none
    topics["orders"] = (ORDERS, 8)  # partitions added (librdkafka 0045 non_exist_and_partchange)

    offsets_log.append_error = ErrorCode.not_enough_replicas
    refused = await beat(coordinator, "m1", 1)
    assert refused.error_code == ErrorCode.coordinator_not_available  # retriable, as Kafka maps it
    assert consumer(coordinator).describe("g").group_epoch == 1

    offsets_log.append_error = None
    retried = await beat(coordinator, "m1", 1)
    assert retried.error_code == ErrorCode.none
    assert (retried.member_epoch, retried.assignment) == (2, {ORDERS: frozenset(range(8))})
    assert written_group_epochs(offsets_log) == [1, 2]


async def test_a_join_that_was_not_written_leaves_no_member_behind(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    coordinator = make_coordinator(offsets_log, clock)
    await lead_every_partition(coordinator)
    first = await beat(coordinator, "m1", 0)
    offsets_log.append_error = ErrorCode.not_enough_replicas
    assert (await beat(coordinator, "m2", 0)).error_code == ErrorCode.coordinator_not_available
    described = consumer(coordinator).describe("g")
    assert [m.member.member_id for m in described.members] == ["m1"]
    assert (described.group_epoch, described.state) == (1, "Stable")
    offsets_log.append_error = None
    # m1 is not asked to give anything up for a member nobody wrote; m2's retry joins at the next epoch.
    assert (await beat(coordinator, "m1", 1, owned=first.assignment)).assignment is None
    assert (await beat(coordinator, "m2", 0)).member_epoch == 2
    assert written_group_epochs(offsets_log) == [1, 2]


async def test_a_leave_that_was_not_written_is_written_with_the_next_change(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    coordinator = make_coordinator(offsets_log, clock)
    await lead_every_partition(coordinator)
    first = await beat(coordinator, "m1", 0)
    await beat(coordinator, "m2", 0)
    offsets_log.append_error = ErrorCode.not_enough_replicas
    assert (await beat(coordinator, "m2", -1)).error_code == ErrorCode.coordinator_not_available
    offsets_log.append_error = None
    await beat(coordinator, "m1", 1, owned=first.assignment)
    # A coordinator taking the partition over reads the group as this one holds it: m2 gone, same epoch.
    described = consumer(coordinator).describe("g")
    successor = make_coordinator(offsets_log, clock)
    await lead_every_partition(successor)
    reloaded = consumer(successor).describe("g")
    assert [m.member.member_id for m in reloaded.members] == [m.member.member_id for m in described.members]
    assert [m.member.member_id for m in described.members] == ["m1"]
    assert reloaded.group_epoch == described.group_epoch
