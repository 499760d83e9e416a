"""TxnOffsetCommit offsets: written inside the producer's transaction, pending until its marker
reaches the group's `__consumer_offsets` partition, and replayed with the same outcome."""

from __future__ import annotations

import asyncio

import pytest
from kio.schema.errors import ErrorCode

from broker.groups.coordinator import GroupCoordinator, PartitionOffset
from tests.fixtures.coordinators import lead_every_partition

from .conftest import TEST_CONFIG, ManualClock, MemoryOffsetsLog, SlowToCommitLog, settle
from .test_offsets_format_replay import restarted

PRODUCER = 4242


async def commit_in_transaction(coordinator: GroupCoordinator, group: str, offset: int) -> list[int]:
    return await coordinator.commit_transactional_offsets(
        group_id=group,
        producer_id=PRODUCER,
        producer_epoch=3,
        generation_id=-1,
        member_id="",
        group_instance_id=None,
        offsets=[PartitionOffset(topic="t", partition=0, offset=offset)],
    )


def committed(coordinator: GroupCoordinator, group: str) -> int | None:
    _, listed = coordinator.fetch_offsets(group_id=group, topics=[("t", [0])])
    found = listed[0][2]
    return found.offset if found is not None else None


async def test_offsets_are_pending_until_the_commit_marker(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog
) -> None:
    assert await commit_in_transaction(coordinator, "g", 10) == [ErrorCode.none]
    partition = coordinator.partition_for("g")
    # Written as the producer's transactional batch, not visible yet.
    assert offsets_log.partitions[partition][-1].producer_id == PRODUCER
    assert committed(coordinator, "g") is None
    assert coordinator.has_pending_offsets("g", "t", 0)
    coordinator.complete_transaction(partition, PRODUCER, commit=True)
    assert committed(coordinator, "g") == 10
    assert not coordinator.has_pending_offsets("g", "t", 0)


async def test_an_abort_marker_drops_them(coordinator: GroupCoordinator) -> None:
    await commit_in_transaction(coordinator, "g", 10)
    coordinator.complete_transaction(coordinator.partition_for("g"), PRODUCER, commit=False)
    assert committed(coordinator, "g") is None
    assert coordinator.pending_transactions == {}


async def test_replay_applies_committed_transactions_at_their_marker_and_keeps_open_ones_pending(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    partition = coordinator.partition_for("g")
    await commit_in_transaction(coordinator, "g", 10)
    offsets_log.write_marker(partition, PRODUCER, commit=True)
    await commit_in_transaction(coordinator, "g", 20)
    offsets_log.write_marker(partition, PRODUCER, commit=False)
    await commit_in_transaction(coordinator, "g", 30)  # still open when the broker stopped

    replayed = await restarted(offsets_log, clock)
    assert committed(replayed, "g") == 10
    assert replayed.has_pending_offsets("g", "t", 0)
    replayed.complete_transaction(partition, PRODUCER, commit=True)
    assert committed(replayed, "g") == 30


@pytest.mark.parametrize("commit", [True, False])
async def test_a_marker_written_while_the_partition_loads_completes_the_transaction_it_finds(
    clock: ManualClock, commit: bool
) -> None:
    """Failover: the new transaction coordinator sends the marker of a prepared transaction to the
    new leader of the group's partition while that leader is still loading it. The load has read
    the log before the marker, so it finds the transaction open; the marker must still decide it."""
    offsets_log = SlowToCommitLog()
    writer = GroupCoordinator(offsets_log, TEST_CONFIG, clock)
    await lead_every_partition(writer)
    await commit_in_transaction(writer, "g", 10)
    partition = writer.partition_for("g")

    offsets_log.followers_caught_up.clear()
    leader = GroupCoordinator(offsets_log, TEST_CONFIG, clock)
    load = leader.load_partition(partition)
    assert load is not None
    await settle()  # the log is read; the load waits for the followers
    offsets_log.write_marker(partition, PRODUCER, commit=commit)
    leader.complete_transaction(partition, PRODUCER, commit=commit)
    offsets_log.followers_caught_up.set()
    await load

    assert committed(leader, "g") == (10 if commit else None)
    assert not leader.has_pending_offsets("g", "t", 0)
    assert leader.pending_transactions == {}


async def commit_plain(coordinator: GroupCoordinator, group: str, offset: int) -> None:
    assert await coordinator.commit_offsets(
        group_id=group,
        generation_id=-1,
        member_id="",
        group_instance_id=None,
        offsets=[PartitionOffset(topic="t", partition=0, offset=offset)],
    ) == [ErrorCode.none]


@pytest.mark.parametrize("with_committed_offset", [False, True])
async def test_deleting_a_group_drops_its_pending_offsets_so_the_commit_marker_leaves_it_deleted(
    coordinator: GroupCoordinator,
    offsets_log: MemoryOffsetsLog,
    clock: ManualClock,
    with_committed_offset: bool,
) -> None:
    """Kafka's DeleteGroups on a group without members: tombstones for its offsets, those pending
    in open transactions included, so neither the marker nor a replay brings them back."""
    if with_committed_offset:
        await commit_plain(coordinator, "g", 5)
    await commit_in_transaction(coordinator, "g", 10)
    assert await coordinator.delete_groups(["g"]) == {"g": ErrorCode.none}
    assert not coordinator.has_pending_offsets("g", "t", 0)

    partition = coordinator.partition_for("g")
    offsets_log.write_marker(partition, PRODUCER, commit=True)
    coordinator.complete_transaction(partition, PRODUCER, commit=True)
    assert committed(coordinator, "g") is None
    assert "g" not in coordinator.groups
    assert await coordinator.delete_groups(["g"]) == {"g": ErrorCode.group_id_not_found}

    replayed = await restarted(offsets_log, clock)
    assert committed(replayed, "g") is None
    assert "g" not in replayed.groups
    assert replayed.pending_transactions == {}


async def test_offsets_a_transaction_writes_after_the_deletion_are_committed_by_its_marker(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    await commit_in_transaction(coordinator, "g", 10)
    assert await coordinator.delete_groups(["g"]) == {"g": ErrorCode.none}
    await commit_in_transaction(coordinator, "g", 20)  # the same transaction, after the tombstones
    partition = coordinator.partition_for("g")
    offsets_log.write_marker(partition, PRODUCER, commit=True)
    coordinator.complete_transaction(partition, PRODUCER, commit=True)
    assert committed(coordinator, "g") == 20
    assert committed(await restarted(offsets_log, clock), "g") == 20


async def test_an_offset_pending_in_a_transaction_does_not_expire_meanwhile(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    await commit_plain(coordinator, "g", 5)
    await commit_in_transaction(coordinator, "g", 10)
    await clock.advance(TEST_CONFIG.offsets_retention_ms + 1)
    assert await coordinator.expire_offsets() == 0
    assert committed(coordinator, "g") == 5
    coordinator.complete_transaction(coordinator.partition_for("g"), PRODUCER, commit=True)
    assert committed(coordinator, "g") == 10


async def test_a_commit_marker_arriving_during_the_deletion_does_not_bring_the_group_back(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog
) -> None:
    await commit_in_transaction(coordinator, "g", 10)
    offsets_log.isr_gate = asyncio.Event()  # the tombstones wait for the followers
    deletion = asyncio.ensure_future(coordinator.delete_groups(["g"]))
    await settle()
    coordinator.complete_transaction(coordinator.partition_for("g"), PRODUCER, commit=True)
    offsets_log.isr_gate.set()
    assert await deletion == {"g": ErrorCode.none}
    assert "g" not in coordinator.groups
    assert committed(coordinator, "g") is None
