"""Rebuilding groups and offsets from `__consumer_offsets` when the coordinator starts."""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from broker.groups.coordinator import GroupCoordinator, PartitionOffset
from broker.groups.group import GroupState
from broker.groups.offsets_format import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    encode_group_metadata_key,
    encode_group_metadata_value,
    encode_offset_commit_key,
    encode_offset_commit_value,
    partition_for_group,
)
from broker.metadata.coordinator_records import LogEntry
from tests.fixtures.coordinators import lead_every_partition

from .conftest import TEST_CONFIG, ManualClock, MemoryOffsetsLog
from .helpers import join, stable_group, sync


async def restarted(offsets_log: MemoryOffsetsLog, clock: ManualClock) -> GroupCoordinator:
    coordinator = GroupCoordinator(offsets_log, TEST_CONFIG, clock)
    await lead_every_partition(coordinator)
    return coordinator


async def test_a_restarted_coordinator_has_the_same_offsets_and_groups(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    (member,) = await stable_group(coordinator, 1)
    await coordinator.commit_offsets(
        group_id="g",
        generation_id=member.generation_id,
        member_id=member.member_id,
        group_instance_id=None,
        offsets=[PartitionOffset("t", 0, 10, leader_epoch=2, metadata="m")],
    )
    await coordinator.commit_offsets(
        group_id="g",
        generation_id=member.generation_id,
        member_id=member.member_id,
        group_instance_id=None,
        offsets=[PartitionOffset("t", 0, 11)],
    )
    await coordinator.stop()

    again = await restarted(offsets_log, clock)
    group = again.groups["g"]
    assert group.state is GroupState.STABLE
    assert group.generation_id == member.generation_id
    assert group.leader_id == member.member_id
    assert group.protocol_name == "range"
    assert group.offsets[("t", 0)].offset == 11
    # The loaded member carries on heartbeating and syncing in its generation.
    beat = again.heartbeat(
        group_id="g", generation_id=member.generation_id, member_id=member.member_id, group_instance_id=None
    )
    assert beat == ErrorCode.none
    assert (await sync(again, member)).assignment == member.member_id.encode()


async def test_loaded_members_that_never_return_expire_and_the_group_empties(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    await stable_group(coordinator, 2)
    await coordinator.stop()
    again = await restarted(offsets_log, clock)
    await clock.advance(10_000)
    await again.drain()
    assert again.groups["g"].state is GroupState.EMPTY


async def test_deleted_offsets_and_groups_stay_deleted_after_a_restart(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    for group in ("kept", "dropped"):
        await coordinator.commit_offsets(
            group_id=group,
            generation_id=-1,
            member_id="",
            group_instance_id=None,
            offsets=[PartitionOffset("t", 0, 1), PartitionOffset("t", 1, 2)],
        )
    await coordinator.delete_offsets(group_id="kept", partitions=[("t", 1)])
    await coordinator.delete_groups(["dropped"])
    again = await restarted(offsets_log, clock)
    assert set(again.groups) == {"kept"}
    assert set(again.groups["kept"].offsets) == {("t", 0)}


async def test_an_empty_group_is_restored_as_empty_with_its_generation(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    (member,) = await stable_group(coordinator, 1)
    coordinator.leave_group(group_id="g", members=[(member.member_id, None)])
    await coordinator.drain()
    again = await restarted(offsets_log, clock)
    group = again.groups["g"]
    assert group.state is GroupState.EMPTY
    assert group.generation_id == member.generation_id + 1
    # New members start from the next generation, never reusing an old one.
    result = await join(again, require_known_member_id=False)
    assert result.generation_id == member.generation_id + 2


async def test_it_replays_records_written_by_kafka_itself(clock: ManualClock) -> None:
    """Older value versions and key version 0, as a Kafka 2.x broker would have left them."""
    log = MemoryOffsetsLog()
    partition = partition_for_group("legacy", log.num_partitions)
    v0_key = b"\x00\x00" + encode_offset_commit_key(OffsetCommitKey("legacy", "t", 4))[2:]
    log.partitions[partition] += [
        LogEntry(
            0,
            v0_key,
            encode_offset_commit_value(OffsetCommitValue(offset=8, metadata="", commit_timestamp=1), 0),
        ),
        LogEntry(
            1,
            encode_group_metadata_key(GroupMetadataKey("legacy")),
            encode_group_metadata_value(
                GroupMetadataValue(
                    protocol_type="consumer",
                    generation=12,
                    protocol="range",
                    leader="m-1",
                    members=(
                        MemberMetadata(
                            member_id="m-1",
                            client_id="c",
                            client_host="/h",
                            rebalance_timeout=5000,
                            session_timeout=5000,
                            subscription=b"s",
                            assignment=b"a",
                        ),
                    ),
                ),
                version=1,
            ),
        ),
        LogEntry(2, b"\x00\x05garbage", b"whatever"),  # a record type from a newer Kafka: skipped
    ]
    coordinator = await restarted(log, clock)
    group = coordinator.groups["legacy"]
    assert group.generation_id == 12
    assert group.offsets[("t", 4)].offset == 8
    assert group.members["m-1"].assignment == b"a"
