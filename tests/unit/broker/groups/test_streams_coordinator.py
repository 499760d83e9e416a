"""Streams groups on the coordinator: joining, the initial delay, revoke-before-reassign, leaving, member epochs on
commits, and the topology's plan (tasks, internal topics, statuses)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.streams_group_describe.v0.request import StreamsGroupDescribeRequest

from broker.groups.consumer_groups import ConsumerGroups
from broker.groups.coordinator import GroupCoordinator, PartitionOffset
from broker.groups.group_type import OffsetCommitter
from broker.groups.streams_coordinator import (
    StreamsGroupConfig,
    StreamsGroups,
    StreamsHeartbeatResult,
)
from broker.groups.streams_topology import (
    MISSING_INTERNAL_TOPICS,
    MISSING_SOURCE_TOPICS,
    InternalTopic,
    StreamsTopology,
    Subtopology,
    TopologyPlan,
    plan_topology,
)
from broker.handlers.streams_groups import streams_group_describe
from broker.protocol.frames import encode_response
from broker.protocol.responses import build_response
from tests.fixtures.coordinators import lead_every_partition
from tests.unit.broker.groups.conftest import TEST_CONFIG, ManualClock, MemoryOffsetsLog
from tests.unit.broker.groups.helpers import request_context

CHANGELOG = InternalTopic("app-store-changelog", 0, -1, (("cleanup.policy", "compact"),))
TOPOLOGY = StreamsTopology(
    0, (Subtopology("0", source_topics=("input",), state_changelog_topics=(CHANGELOG,)),)
)
TOPICS = {"input": 4, "app-store-changelog": 4}
DELAY_MS = 3000


@pytest.fixture
def streams(offsets_log: MemoryOffsetsLog, clock: ManualClock) -> StreamsGroups:
    coordinator = GroupCoordinator(offsets_log, TEST_CONFIG, clock)
    ConsumerGroups(coordinator)
    streams = StreamsGroups(coordinator, StreamsGroupConfig(initial_rebalance_delay_ms=DELAY_MS))
    asyncio.run(lead_every_partition(coordinator))
    return streams


def beat(
    coordinator: StreamsGroups, member: str, epoch: int, owned: set[tuple[str, int]] | None = None
) -> StreamsHeartbeatResult:
    return coordinator.heartbeat(
        group_id="app",
        member_id=member,
        member_epoch=epoch,
        topology=TOPOLOGY if epoch == 0 else None,
        plan_for=lambda topology: plan_topology(topology, TOPICS.get),
        fields={"process_id": f"process-{member}", "client_id": member, "client_host": "/127.0.0.1"},
        owned_active=frozenset(owned) if owned is not None else None,
        owned_standby=frozenset() if owned is not None else None,
    )


def tasks(*partitions: int) -> set[tuple[str, int]]:
    return {("0", p) for p in partitions}


async def test_the_first_member_waits_out_the_delay_then_runs_every_task(
    streams: StreamsGroups, clock: ManualClock
) -> None:
    joined = beat(streams, "a", 0)
    assert joined.error_code == ErrorCode.none
    assert [code for code, _ in joined.statuses] == [5]  # ASSIGNMENT_DELAYED
    assert joined.member_epoch > 0, "in the group meanwhile, at the group's epoch"
    await clock.advance(DELAY_MS)
    running = beat(streams, "a", joined.member_epoch)
    assert running.tasks is not None
    assert set(running.tasks.active) == tasks(0, 1, 2, 3)
    epoch = running.member_epoch
    assert streams.committing_member_error("app", OffsetCommitter("a", epoch, None)) is None
    assert streams.committing_member_error("app", OffsetCommitter("a", epoch - 1, None)) == (
        ErrorCode.stale_member_epoch
    )
    assert (
        streams.committing_member_error("app", OffsetCommitter("z", epoch, None))
        == ErrorCode.unknown_member_id
    )


async def test_tasks_move_only_once_their_owner_gave_them_up(
    streams: StreamsGroups, clock: ManualClock
) -> None:
    first = beat(streams, "a", 0)
    await clock.advance(DELAY_MS)
    first = beat(streams, "a", first.member_epoch)
    second = beat(streams, "b", 0)
    assert second.tasks is None or set(second.tasks.active) == set(), "nothing until a gives some up"
    revoking = beat(streams, "a", first.member_epoch, owned=tasks(0, 1, 2, 3))
    assert revoking.tasks is not None
    kept = set(revoking.tasks.active)
    assert len(kept) == 2
    still_waiting = beat(streams, "b", second.member_epoch)
    assert still_waiting.tasks is None or set(still_waiting.tasks.active) == set()
    released = beat(streams, "a", revoking.member_epoch, owned=kept)
    assert released.error_code == ErrorCode.none
    given = beat(streams, "b", still_waiting.member_epoch)
    assert given.tasks is not None
    assert set(given.tasks.active) == tasks(0, 1, 2, 3) - kept
    assert streams.groups["app"].state == "Stable"
    # b leaves: a takes everything back.
    assert beat(streams, "b", -1).error_code == ErrorCode.none
    back = beat(streams, "a", released.member_epoch, owned=kept)
    assert back.tasks is not None
    assert set(back.tasks.active) == tasks(0, 1, 2, 3)


async def test_the_coordinator_asks_the_streams_group_type_about_its_groups(
    streams: StreamsGroups, clock: ManualClock
) -> None:
    """Composition: offset commits and fetches, ListGroups and unloading reach the streams groups through
    the coordinator's shared code."""
    coordinator = streams._coordinator
    assert coordinator.group_type(StreamsGroups) is streams
    joined = beat(streams, "a", 0)
    stale = await coordinator.commit_offsets(
        group_id="app",
        generation_id=joined.member_epoch + 1,
        member_id="a",
        group_instance_id=None,
        offsets=[PartitionOffset("input", 0, 5)],
    )
    assert stale == [ErrorCode.stale_member_epoch]
    assert coordinator.fetch_offsets(group_id="app", topics=None, member_id="z", member_epoch=0)[0] == (
        ErrorCode.unknown_member_id
    )
    assert coordinator.fetch_offsets(group_id="app", topics=None)[0] == ErrorCode.none
    error, listed = coordinator.list_groups(types_filter=["streams"])
    assert (error, [(g.group_id, g.group_type) for g in listed]) == (ErrorCode.none, [("app", "streams")])
    assert coordinator.list_groups(types_filter=["classic"])[1] == []
    coordinator.unload_partition(coordinator.partition_for("app"))
    assert "app" not in streams.groups


async def test_refusals(streams: StreamsGroups) -> None:
    assert beat(streams, "a", 5).error_code == ErrorCode.group_id_not_found
    joined = beat(streams, "a", 0)
    assert beat(streams, "a", joined.member_epoch + 7).error_code == ErrorCode.fenced_member_epoch
    assert beat(streams, "nobody", 3).error_code == ErrorCode.unknown_member_id


def test_the_plan_names_what_is_missing_and_what_to_create() -> None:
    assert plan_topology(TOPOLOGY, {}.get).statuses[0][0] == MISSING_SOURCE_TOPICS
    plan = plan_topology(TOPOLOGY, {"input": 6}.get)
    assert plan.topics_to_create == [
        InternalTopic("app-store-changelog", 6, -1, (("cleanup.policy", "compact"),))
    ]
    assert [code for code, _ in plan.statuses] == [MISSING_INTERNAL_TOPICS]
    assert plan.task_counts == {}, "no tasks until the internal topics exist"
    ready = plan_topology(TOPOLOGY, {"input": 6, "app-store-changelog": 6}.get)
    assert ready == TopologyPlan(task_counts={"0": 6}, stateful=frozenset({"0"}))
    # A repartition topic takes the task count of the subtopology writing it.
    repartition = InternalTopic("app-repartition", 0, -1)
    chained = StreamsTopology(
        0,
        (
            Subtopology("0", source_topics=("input",), repartition_sink_topics=("app-repartition",)),
            Subtopology("1", repartition_source_topics=(repartition,)),
        ),
    )
    assert plan_topology(chained, {"input": 3}.get).topics_to_create == [
        InternalTopic("app-repartition", 3, -1)
    ]


async def test_a_streams_group_with_committed_offsets_is_listed_once_as_a_streams_group(
    streams: StreamsGroups,
) -> None:
    """The empty classic entry holding a streams group's offsets is not a group of its own: ListGroups names
    the group once, with its type (as Kafka does), whatever the filter."""
    coordinator = streams._coordinator
    joined = beat(streams, "a", 0)
    committed = await coordinator.commit_offsets(
        group_id="app",
        generation_id=joined.member_epoch,
        member_id="a",
        group_instance_id=None,
        offsets=[PartitionOffset("input", 0, 5)],
    )
    assert committed == [ErrorCode.none]
    error, listed = coordinator.list_groups()
    assert (error, [(g.group_id, g.group_type) for g in listed]) == (ErrorCode.none, [("app", "streams")])
    assert coordinator.list_groups(types_filter=["classic"])[1] == []
    assert coordinator.list_groups(states_filter=["Empty"])[1] == []


async def test_streams_group_describe_answers_the_topology_and_each_members_tasks(
    offsets_log: MemoryOffsetsLog, clock: ManualClock
) -> None:
    coordinator = GroupCoordinator(offsets_log, TEST_CONFIG, clock)
    streams = StreamsGroups(coordinator, StreamsGroupConfig(initial_rebalance_delay_ms=DELAY_MS))
    await lead_every_partition(coordinator)
    joined = beat(streams, "a", 0)
    await clock.advance(DELAY_MS)
    beat(streams, "a", joined.member_epoch)
    broker = SimpleNamespace(groups=coordinator, authorizer=None)
    request = StreamsGroupDescribeRequest(group_ids=("app", "nobody"), include_authorized_operations=False)
    answer = await streams_group_describe(request_context(broker, 89, 0), request)

    assert encode_response(89, 0, 1, build_response(89, 0, answer))
    app, nobody = answer.groups
    assert (app.error_code, app.group_id) == (ErrorCode.none, "app")
    assert app.topology is not None
    assert app.topology.subtopologies is not None
    (subtopology,) = app.topology.subtopologies
    assert subtopology.source_topics == ("input",)
    assert [
        (t.name, [(kv.key, kv.value) for kv in t.topic_configs]) for t in subtopology.state_changelog_topics
    ] == [("app-store-changelog", [("cleanup.policy", "compact")])]
    (member,) = app.members
    assert (member.member_id, member.process_id, member.client_id) == ("a", "process-a", "a")
    assert [(t.subtopology_id, t.partitions) for t in member.assignment.active_tasks] == [("0", (0, 1, 2, 3))]
    assert member.target_assignment == member.assignment
    assert (nobody.error_code, nobody.error_message, nobody.members) == (
        ErrorCode.group_id_not_found,
        "Group nobody not found.",
        (),
    )
