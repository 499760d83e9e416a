"""TxnOffsetCommit offsets: written inside the producer's transaction, pending until its marker
reaches the group's `__consumer_offsets` partition, and replayed with the same outcome."""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from broker.groups.coordinator import GroupCoordinator, PartitionOffset

from .conftest import ManualClock, MemoryOffsetsLog
from .test_replay import restarted

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
