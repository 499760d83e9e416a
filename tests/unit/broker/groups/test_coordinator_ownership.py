"""A cluster broker's coordinator: it serves exactly the `__consumer_offsets` partitions it leads.

Loading replays a partition (COORDINATOR_LOAD_IN_PROGRESS meanwhile), unloading answers the
partition's waiting members with NOT_COORDINATOR and drops its groups, and writes that the ISR
refuses come back as the errors Kafka's group clients act on.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from kio.schema.errors import ErrorCode

from broker.controller.api import PartitionAssignment
from broker.groups.coordinator import GroupCoordinator, PartitionOffset
from broker.groups.group import GroupState
from broker.groups.offsets_format import (
    OffsetCommitKey,
    OffsetCommitValue,
    encode_offset_commit_key,
    encode_offset_commit_value,
    partition_for_group,
)
from broker.groups.offsets_log import OFFSETS_TOPIC_NAME
from broker.metadata.coordinator_records import LogEntry
from broker.server.group_storage import LeadershipListener

from .conftest import TEST_CONFIG, ManualClock, MemoryOffsetsLog, settle
from .helpers import join, stable_group, sync

PARTITIONS = 5
NODE_ID = 1


def group_in(partition: int, skip: int = 0) -> str:
    """A group id whose `__consumer_offsets` partition is `partition` (the `skip`-th such id)."""
    found = [f"group-{i}" for i in range(1000) if partition_for_group(f"group-{i}", PARTITIONS) == partition]
    return found[skip]


def cluster_coordinator(offsets_log: MemoryOffsetsLog, clock: ManualClock) -> GroupCoordinator:
    return GroupCoordinator(offsets_log, TEST_CONFIG, clock)


async def loaded(coordinator: GroupCoordinator, *partitions: int) -> GroupCoordinator:
    for partition in partitions:
        task = coordinator.load_partition(partition)
        assert task is not None
        await task
    return coordinator


def stored_offset(offsets_log: MemoryOffsetsLog, group: str, topic: str, partition: int, offset: int) -> None:
    offsets_log.partitions[partition_for_group(group, PARTITIONS)].append(
        LogEntry(
            0,
            encode_offset_commit_key(OffsetCommitKey(group, topic, partition)),
            encode_offset_commit_value(OffsetCommitValue(offset=offset, metadata="", commit_timestamp=1)),
        )
    )


async def commit(coordinator: GroupCoordinator, group: str, offset: int) -> list[int]:
    return await coordinator.commit_offsets(
        group_id=group,
        generation_id=-1,
        member_id="",
        group_instance_id=None,
        offsets=[PartitionOffset("t", 0, offset)],
    )


def committed(coordinator: GroupCoordinator, group: str) -> tuple[int, dict[tuple[str, int], int]]:
    error, offsets = coordinator.fetch_offsets(group_id=group, topics=None)
    return error, {(t, p): c.offset for t, p, c in offsets if c is not None}


async def test_a_cluster_coordinator_serves_no_group_before_it_leads_a_partition(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    coordinator = cluster_coordinator(offsets_log, clock)
    assert (await join(coordinator, group=group_in(0))).error_code == ErrorCode.not_coordinator
    assert await commit(coordinator, group_in(0), 5) == [ErrorCode.not_coordinator]
    assert coordinator.list_groups() == (ErrorCode.none, [])


async def test_a_partition_answers_load_in_progress_until_its_log_is_replayed(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    group = group_in(2)
    stored_offset(offsets_log, group, "t", 0, 42)
    coordinator = cluster_coordinator(offsets_log, clock)

    task = coordinator.load_partition(2)
    assert task is not None
    assert committed(coordinator, group) == (ErrorCode.coordinator_load_in_progress, {})
    assert coordinator.list_groups()[0] == ErrorCode.coordinator_load_in_progress
    assert coordinator.load_partition(2) is None  # already loading: nothing new starts
    await task

    assert committed(coordinator, group) == (ErrorCode.none, {("t", 0): 42})
    # Groups of partitions led elsewhere are still someone else's.
    assert committed(coordinator, group_in(3))[0] == ErrorCode.not_coordinator


async def test_loading_replays_only_the_groups_of_that_partition(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    mine, theirs = group_in(1), group_in(4)
    stored_offset(offsets_log, mine, "t", 0, 7)
    stored_offset(offsets_log, theirs, "t", 0, 9)
    coordinator = await loaded(cluster_coordinator(offsets_log, clock), 1)
    assert set(coordinator.groups) == {mine}
    error, listed = coordinator.list_groups()
    assert error == ErrorCode.none
    assert [g.group_id for g in listed] == [mine]


async def test_unloading_answers_parked_members_with_not_coordinator_and_drops_the_groups(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    group, other = group_in(0), group_in(3)
    coordinator = await loaded(cluster_coordinator(offsets_log, clock), 0, 3)
    a, _ = await stable_group(coordinator, 2, group=group)
    await stable_group(coordinator, 1, group=other)
    parked = join(coordinator, group=group, member_id=a.member_id)  # waits for the other member
    await settle()
    assert not parked.done()

    coordinator.unload_partition(0)

    assert (await parked).error_code == ErrorCode.not_coordinator
    assert group not in coordinator.groups
    assert coordinator.heartbeat(
        group_id=group, generation_id=a.generation_id, member_id=a.member_id, group_instance_id=None
    ) == (ErrorCode.not_coordinator)
    # Its timers are gone: time passing does not revive or rebalance anything.
    await clock.advance(120_000)
    assert group not in coordinator.groups
    # The other partition's group carries on (its member simply expired by now).
    assert other in coordinator.groups


@pytest.mark.parametrize(
    "isr_error",
    # The replica's waiters fail as it becomes a follower, or the ISR had it just before.
    [ErrorCode.not_leader_or_follower, None],
)
async def test_a_write_still_waiting_for_the_isr_when_leadership_moves_is_not_coordinators_any_more(
    offsets_log: MemoryOffsetsLog, clock: ManualClock, isr_error: ErrorCode | None
) -> None:
    group = group_in(2)
    coordinator = await loaded(cluster_coordinator(offsets_log, clock), 2)
    assert await commit(coordinator, group, 5) == [ErrorCode.none]
    offsets_log.isr_gate = asyncio.Event()
    pending = asyncio.ensure_future(commit(coordinator, group, 6))
    await settle()
    assert not pending.done()

    coordinator.unload_partition(2)
    offsets_log.isr_error = isr_error
    offsets_log.isr_gate.set()

    assert await pending == [ErrorCode.not_coordinator]
    assert group not in coordinator.groups


async def test_the_new_leader_recovers_every_acknowledged_commit_and_the_group(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    group = group_in(4)
    coordinator = await loaded(cluster_coordinator(offsets_log, clock), 4)
    (member,) = await stable_group(coordinator, 1, group=group)
    codes = await coordinator.commit_offsets(
        group_id=group,
        generation_id=member.generation_id,
        member_id=member.member_id,
        group_instance_id=None,
        offsets=[PartitionOffset("t", 0, 10), PartitionOffset("t", 1, 20)],
    )
    assert codes == [ErrorCode.none, ErrorCode.none]
    coordinator.unload_partition(4)

    # Another broker with the same (replicated) log takes over.
    successor = await loaded(cluster_coordinator(offsets_log, ManualClock()), 4)
    assert committed(successor, group) == (ErrorCode.none, {("t", 0): 10, ("t", 1): 20})
    recovered = successor.groups[group]
    assert recovered.state is GroupState.STABLE
    assert list(recovered.members) == [member.member_id]
    assert successor.heartbeat(
        group_id=group, generation_id=member.generation_id, member_id=member.member_id, group_instance_id=None
    ) == (ErrorCode.none)


async def test_unloading_in_the_middle_of_a_replay_discards_it(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    group = group_in(1)
    for offset in range(2500):  # the replay yields to the loop every 1000 records
        stored_offset(offsets_log, group, "t", 0, offset)
    coordinator = cluster_coordinator(offsets_log, clock)
    task = coordinator.load_partition(1)
    assert task is not None
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not task.done()
    coordinator.unload_partition(1)
    await task
    assert coordinator.groups == {}
    assert not coordinator.owns_partition(1)
    assert committed(coordinator, group)[0] == ErrorCode.not_coordinator


@pytest.mark.parametrize(
    ("log_error", "answer"),
    [
        (ErrorCode.not_enough_replicas, ErrorCode.coordinator_not_available),
        (ErrorCode.request_timed_out, ErrorCode.coordinator_not_available),
        (ErrorCode.not_leader_or_follower, ErrorCode.not_coordinator),
        (ErrorCode.message_too_large, ErrorCode.invalid_commit_offset_size),
    ],
)
async def test_offset_commits_the_isr_refuses_get_the_group_clients_error_and_are_not_served(
    offsets_log: MemoryOffsetsLog, clock: ManualClock, log_error: ErrorCode, answer: ErrorCode
) -> None:
    group = group_in(3)
    coordinator = await loaded(cluster_coordinator(offsets_log, clock), 3)
    assert await commit(coordinator, group, 1) == [ErrorCode.none]
    offsets_log.isr_error = log_error
    assert await commit(coordinator, group, 2) == [answer]
    assert committed(coordinator, group) == (ErrorCode.none, {("t", 0): 1})


async def test_a_group_whose_assignment_the_isr_refuses_is_not_synced(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    group = group_in(0)
    coordinator = await loaded(cluster_coordinator(offsets_log, clock), 0)
    first = await join(coordinator, group=group)
    joined = await join(coordinator, group=group, member_id=first.member_id)
    assert joined.error_code == ErrorCode.none
    offsets_log.append_error = ErrorCode.not_enough_replicas

    synced = await sync(coordinator, joined, group=group, assignments={joined.member_id: b"a"})

    assert synced.error_code == ErrorCode.coordinator_not_available
    assert coordinator.groups[group].state is not GroupState.STABLE


def offsets_partition(partition: int, leader: int, epoch: int = 1) -> PartitionAssignment:
    return PartitionAssignment(
        topic=OFFSETS_TOPIC_NAME,
        partition=partition,
        topic_id=uuid.UUID(int=1),
        leader=leader,
        leader_epoch=epoch,
        partition_epoch=epoch,
        replicas=(1, 2, 3),
        isr=(1, 2, 3),
    )


async def test_the_listener_loads_partitions_this_broker_comes_to_lead_and_unloads_the_rest(
    clock: ManualClock,
) -> None:
    offsets_log = MemoryOffsetsLog(num_partitions=50)  # the configured count, before the topic exists
    coordinator = cluster_coordinator(offsets_log, clock)
    listener = LeadershipListener(coordinator, offsets_log, NODE_ID)
    offsets_log.partitions = {p: [] for p in range(PARTITIONS)}

    listener.on_image_loaded([offsets_partition(p, leader=1 + p % 3) for p in range(PARTITIONS)], [])
    assert offsets_log.num_partitions == PARTITIONS  # the topic's real count
    assert set(coordinator.partitions) == {0, 3}
    await settle()
    assert all(owned.loaded for owned in coordinator.partitions.values())

    listener.on_partition_changed(offsets_partition(0, 1), offsets_partition(0, leader=2, epoch=2))
    listener.on_partition_changed(offsets_partition(1, 2), offsets_partition(1, leader=1, epoch=2))
    assert set(coordinator.partitions) == {1, 3}
    # Other topics and ISR-only changes of a partition already led change nothing.
    other = PartitionAssignment("orders", 0, uuid.UUID(int=2), 1, 1, 1, (1,), (1,))
    listener.on_partition_changed(None, other)
    listener.on_partition_changed(offsets_partition(3, 1), offsets_partition(3, leader=1, epoch=1))
    assert set(coordinator.partitions) == {1, 3}

    listener.on_partition_removed(offsets_partition(3, 1))
    listener.on_image_loaded([offsets_partition(p, leader=2) for p in range(PARTITIONS)], [])
    assert coordinator.partitions == {}


async def test_the_listener_grows_the_partition_count_as_a_new_topic_arrives(clock: ManualClock) -> None:
    offsets_log = MemoryOffsetsLog(num_partitions=3)
    listener = LeadershipListener(cluster_coordinator(offsets_log, clock), offsets_log, NODE_ID)
    offsets_log.partitions = {p: [] for p in range(PARTITIONS)}
    for partition in range(PARTITIONS):
        listener.on_partition_changed(None, offsets_partition(partition, leader=2))
        assert offsets_log.num_partitions == max(3, partition + 1)
    await settle()
