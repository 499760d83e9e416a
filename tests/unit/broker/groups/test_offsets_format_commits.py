"""Offset commits, fetches and deletes, group listing/description/deletion, and expiry."""

from __future__ import annotations

import asyncio

from kio.schema.errors import ErrorCode

from broker.groups.coordinator import GroupCoordinator, PartitionOffset
from broker.groups.group import GroupState, JoinResult
from broker.groups.offsets_format import (
    GroupMetadataKey,
    OffsetCommitKey,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    partition_for_group,
)

from .conftest import ManualClock, MemoryOffsetsLog, settle
from .helpers import join, stable_group, subscription, sync


async def commit(
    coordinator: GroupCoordinator,
    *offsets: PartitionOffset,
    group: str = "g",
    generation: int = -1,
    member_id: str = "",
    retention_ms: int = -1,
) -> list[int]:
    return await coordinator.commit_offsets(
        group_id=group,
        generation_id=generation,
        member_id=member_id,
        group_instance_id=None,
        offsets=offsets,
        retention_ms=retention_ms,
    )


def fetched(coordinator: GroupCoordinator, group: str = "g") -> dict[tuple[str, int], int]:
    error, offsets = coordinator.fetch_offsets(group_id=group, topics=None)
    assert error == ErrorCode.none
    return {(t, p): c.offset for t, p, c in offsets if c is not None}


async def consumer_group(coordinator: GroupCoordinator, *topics: str) -> JoinResult:
    """One consumer subscribed to `topics`, Stable."""
    protocols = (("range", subscription(*topics)),)
    result = await join(coordinator, protocols=protocols, require_known_member_id=False)
    await sync(coordinator, result, assignments={result.member_id: b"a"})
    return result


async def test_a_member_commits_and_fetches_offsets(coordinator: GroupCoordinator) -> None:
    (member,) = await stable_group(coordinator, 1)
    codes = await commit(
        coordinator,
        PartitionOffset("t", 0, 42, leader_epoch=3, metadata="meta"),
        PartitionOffset("t", 1, 7),
        generation=member.generation_id,
        member_id=member.member_id,
    )
    assert codes == [ErrorCode.none, ErrorCode.none]
    error, offsets = coordinator.fetch_offsets(group_id="g", topics=[("t", [0, 1, 2])])
    assert error == ErrorCode.none
    by_partition = {p: c for _, p, c in offsets}
    assert by_partition[0] is not None
    assert (by_partition[0].offset, by_partition[0].leader_epoch, by_partition[0].metadata) == (42, 3, "meta")
    assert by_partition[1] is not None
    assert by_partition[1].offset == 7
    assert by_partition[2] is None


async def test_commits_are_written_to_the_groups_offsets_partition_in_kafka_format(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    await commit(coordinator, PartitionOffset("orders", 3, 99, leader_epoch=1, metadata="m"), group="billing")
    (partition, key, value) = offsets_log.all_records()[-1]
    assert partition == partition_for_group("billing", offsets_log.num_partitions)
    assert key[:2] == b"\x00\x01"
    assert decode_key(key) == OffsetCommitKey("billing", "orders", 3)
    assert value is not None
    stored = decode_offset_commit_value(value)
    assert (stored.offset, stored.leader_epoch, stored.metadata) == (99, 1, "m")
    assert stored.commit_timestamp == clock.now
    assert value[:2] == b"\x00\x03"


async def test_admin_commits_without_a_generation_are_allowed_only_while_the_group_is_empty(
    coordinator: GroupCoordinator,
) -> None:
    assert await commit(coordinator, PartitionOffset("t", 0, 5)) == [ErrorCode.none]
    assert coordinator.groups["g"].state is GroupState.EMPTY
    await stable_group(coordinator, 1)
    assert await commit(coordinator, PartitionOffset("t", 0, 6)) == [ErrorCode.unknown_member_id]
    assert fetched(coordinator) == {("t", 0): 5}


async def test_a_commit_with_a_generation_for_a_missing_group_is_illegal(
    coordinator: GroupCoordinator,
) -> None:
    codes = await commit(coordinator, PartitionOffset("t", 0, 5), generation=3, member_id="m")
    assert codes == [ErrorCode.illegal_generation]


async def test_commits_with_a_stale_generation_or_during_sync_are_refused(
    coordinator: GroupCoordinator,
) -> None:
    (member,) = await stable_group(coordinator, 1)
    stale = await commit(
        coordinator,
        PartitionOffset("t", 0, 1),
        generation=member.generation_id - 1,
        member_id=member.member_id,
    )
    assert stale == [ErrorCode.illegal_generation]
    rejoined = await join(coordinator, member_id=member.member_id)  # the leader rejoins: new generation
    assert coordinator.groups["g"].state is GroupState.COMPLETING_REBALANCE
    during_sync = await commit(
        coordinator, PartitionOffset("t", 0, 1), generation=rejoined.generation_id, member_id=member.member_id
    )
    assert during_sync == [ErrorCode.rebalance_in_progress]


async def test_oversized_metadata_is_refused_per_partition(coordinator: GroupCoordinator) -> None:
    codes = await commit(
        coordinator, PartitionOffset("t", 0, 1, metadata="x" * 4097), PartitionOffset("t", 1, 2)
    )
    assert codes == [ErrorCode.offset_metadata_too_large, ErrorCode.none]
    assert fetched(coordinator) == {("t", 1): 2}


async def test_a_failed_write_reports_coordinator_not_available_and_keeps_old_offsets(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog
) -> None:
    await commit(coordinator, PartitionOffset("t", 0, 1))
    offsets_log.fail_appends = True
    assert await commit(coordinator, PartitionOffset("t", 0, 2)) == [ErrorCode.coordinator_not_available]
    assert fetched(coordinator) == {("t", 0): 1}


async def test_fetching_offsets_of_an_unknown_group_returns_no_offsets(coordinator: GroupCoordinator) -> None:
    error, offsets = coordinator.fetch_offsets(group_id="nobody", topics=[("t", [0])])
    assert error == ErrorCode.none
    assert offsets == [("t", 0, None)]


async def test_offset_delete_refuses_topics_the_group_consumes(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog
) -> None:
    member = await consumer_group(coordinator, "consumed")
    await commit(
        coordinator,
        PartitionOffset("consumed", 0, 1),
        PartitionOffset("old", 0, 2),
        generation=member.generation_id,
        member_id=member.member_id,
    )
    error, codes = await coordinator.delete_offsets(group_id="g", partitions=[("consumed", 0), ("old", 0)])
    assert error == ErrorCode.none
    assert codes == [ErrorCode.group_subscribed_to_topic, ErrorCode.none]
    assert fetched(coordinator) == {("consumed", 0): 1}
    _, key, value = offsets_log.all_records()[-1]
    assert decode_key(key) == OffsetCommitKey("g", "old", 0)
    assert value is None  # a tombstone


async def test_offset_delete_of_an_unknown_group_is_group_id_not_found(coordinator: GroupCoordinator) -> None:
    assert await coordinator.delete_offsets(group_id="x", partitions=[("t", 0)]) == (
        ErrorCode.group_id_not_found,
        [],
    )


async def test_offset_delete_on_an_active_group_with_an_opaque_protocol_is_non_empty_group(
    coordinator: GroupCoordinator,
) -> None:
    await join(coordinator, protocol_type="connect", require_known_member_id=False)
    error, _ = await coordinator.delete_offsets(group_id="g", partitions=[("t", 0)])
    assert error == ErrorCode.non_empty_group


async def test_delete_groups_only_deletes_empty_groups_and_writes_tombstones(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog
) -> None:
    await commit(coordinator, PartitionOffset("t", 0, 5), group="idle")
    await stable_group(coordinator, 1, group="busy")
    results = await coordinator.delete_groups(["idle", "busy", "missing", ""])
    assert results == {
        "idle": ErrorCode.none,
        "busy": ErrorCode.non_empty_group,
        "missing": ErrorCode.group_id_not_found,
        "": ErrorCode.invalid_group_id,
    }
    assert "idle" not in coordinator.groups
    tail = [(decode_key(k), v) for _, k, v in offsets_log.all_records()[-2:]]
    assert tail == [(OffsetCommitKey("idle", "t", 0), None), (GroupMetadataKey("idle"), None)]


async def test_list_groups_filters_by_state_and_type(coordinator: GroupCoordinator) -> None:
    await commit(coordinator, PartitionOffset("t", 0, 5), group="offsets-only")
    await stable_group(coordinator, 1, group="running")
    _, listed = coordinator.list_groups()
    assert [(g.group_id, g.protocol_type, g.state) for g in listed] == [
        ("offsets-only", "", "Empty"),
        ("running", "consumer", "Stable"),
    ]
    _, stable = coordinator.list_groups(states_filter=["stable"])
    assert [g.group_id for g in stable] == ["running"]
    _, classic = coordinator.list_groups(types_filter=["Classic"])
    assert len(classic) == 2
    _, consumer_type = coordinator.list_groups(types_filter=["consumer"])
    assert consumer_type == []


async def test_describe_shows_members_with_metadata_and_assignment_once_stable(
    coordinator: GroupCoordinator,
) -> None:
    (member,) = await stable_group(coordinator, 1)
    description = coordinator.describe_group("g")
    assert (description.state, description.protocol_type, description.protocol_data) == (
        "Stable",
        "consumer",
        "range",
    )
    (described,) = description.members
    assert described.member_id == member.member_id
    assert (described.client_id, described.client_host) == ("client", "/127.0.0.1")
    assert described.metadata == b"range-metadata"
    assert described.assignment == member.member_id.encode()


async def test_describe_hides_metadata_during_a_rebalance_and_reports_unknown_groups_as_dead(
    coordinator: GroupCoordinator,
) -> None:
    (member,) = await stable_group(coordinator, 1)
    await join(coordinator, member_id=member.member_id)
    description = coordinator.describe_group("g")
    assert description.state == "CompletingRebalance"
    assert description.protocol_data == ""
    assert description.members[0].metadata == b""
    unknown = coordinator.describe_group("nope")
    assert (unknown.error_code, unknown.state, unknown.members) == (ErrorCode.none, "Dead", ())


async def test_offsets_of_an_empty_consumer_group_expire_together_after_retention(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    (member,) = await stable_group(coordinator, 1)
    await commit(
        coordinator, PartitionOffset("t", 0, 1), generation=member.generation_id, member_id=member.member_id
    )
    clock.now += 50 * 60_000  # a jump that fires no timers: the member stays
    coordinator.leave_group(group_id="g", members=[(member.member_id, None)])
    await coordinator.drain()
    await clock.advance(59 * 60_000)
    assert await coordinator.expire_offsets() == 0  # retention counts from when the group became empty
    await clock.advance(60_000)
    assert await coordinator.expire_offsets() == 1
    assert "g" not in coordinator.groups  # an empty group without offsets is removed


async def test_offsets_committed_by_admin_tools_expire_one_by_one(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    await commit(coordinator, PartitionOffset("t", 0, 1))
    await clock.advance(30 * 60_000)
    await commit(coordinator, PartitionOffset("t", 1, 1))
    await clock.advance(30 * 60_000)
    assert await coordinator.expire_offsets() == 1
    assert fetched(coordinator) == {("t", 1): 1}


async def test_a_live_group_keeps_offsets_of_subscribed_topics_past_retention(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    member = await consumer_group(coordinator, "live")
    await commit(
        coordinator,
        PartitionOffset("live", 0, 1),
        PartitionOffset("gone", 0, 1),
        generation=member.generation_id,
        member_id=member.member_id,
    )
    clock.now += 2 * 60 * 60_000  # jump without firing session timers
    assert await coordinator.expire_offsets() == 1
    assert fetched(coordinator) == {("live", 0): 1}


async def test_group_metadata_is_written_after_sync_in_kafka_format(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog
) -> None:
    (member,) = await stable_group(coordinator, 1)
    metadata_records = [
        (k, v) for _, k, v in offsets_log.all_records() if isinstance(decode_key(k), GroupMetadataKey)
    ]
    _, value = metadata_records[-1]
    assert value is not None
    assert value[:2] == b"\x00\x03"
    stored = decode_group_metadata_value(value)
    assert (stored.protocol_type, stored.generation, stored.protocol, stored.leader) == (
        "consumer",
        member.generation_id,
        "range",
        member.member_id,
    )
    (stored_member,) = stored.members
    assert stored_member.subscription == b"range-metadata"
    assert stored_member.assignment == member.member_id.encode()
    assert stored_member.session_timeout == 10_000
    assert stored_member.rebalance_timeout == 30_000


async def test_a_commit_cancelled_mid_write_still_lands_in_memory_and_log(
    coordinator: GroupCoordinator, offsets_log: MemoryOffsetsLog
) -> None:
    request = asyncio.ensure_future(commit(coordinator, PartitionOffset("t", 0, 9)))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    request.cancel()
    await settle()
    assert fetched(coordinator) == {("t", 0): 9}
    assert decode_key(offsets_log.all_records()[-1][1]) == OffsetCommitKey("g", "t", 0)


async def test_expiry_removes_empty_groups_without_offsets_unless_a_member_is_joining(
    coordinator: GroupCoordinator,
) -> None:
    abandoned = await join(coordinator, group="half-joined")
    assert abandoned.error_code == ErrorCode.member_id_required
    await join(coordinator, group="refused", protocols=())  # leaves an Empty group behind
    await coordinator.expire_offsets()
    assert "refused" not in coordinator.groups
    assert "half-joined" in coordinator.groups
