"""The coordinator of a cluster broker over a real ReplicaManager and real logs (no sockets).

Offset commits are appended as the `__consumer_offsets` leader and answered only once the ISR
has them; the test plays the follower by reporting its fetch position, as the Fetch handler does.
FindCoordinator names the leader of the group's partition, and creates the topic through the
controller the first time.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v3 import request as find_v3
from kio.schema.find_coordinator.v4 import request as find_v4

from broker.config import BrokerConfig
from broker.context import BrokerState, RequestContext
from broker.controller.api import BrokerRegistration, Endpoint, PartitionAssignment
from broker.controller.image import MetadataImage
from broker.controller.rpc.admin import CreateTopicsRequest, TopicResult, TopicResults
from broker.controller.rpc.base import R, Request
from broker.groups.coordinator import GroupCoordinator, PartitionOffset
from broker.groups.offsets_log import OFFSETS_TOPIC_NAME
from broker.handlers.groups import find_coordinator
from broker.replication.config import ReplicationConfig
from broker.replication.manager import ReplicaManager
from broker.server.app import close_broker_state, open_broker_state
from broker.server.group_storage import LeadershipListener, open_group_coordinator
from tests.fixtures.static_assignments import StaticAlterPartitions

from .helpers import request_context

NODE_ID = 1
OFFSETS_TOPIC_ID = uuid.UUID(int=0xC0FFEE)


def offsets_partition(leader: int, isr: tuple[int, ...], epoch: int = 0) -> PartitionAssignment:
    return PartitionAssignment(
        topic=OFFSETS_TOPIC_NAME,
        partition=0,
        topic_id=OFFSETS_TOPIC_ID,
        leader=leader,
        leader_epoch=epoch,
        partition_epoch=epoch,
        replicas=(1, 2),
        isr=isr,
    )


def registration(broker_id: int) -> BrokerRegistration:
    return BrokerRegistration(
        broker_id=broker_id,
        incarnation_id=uuid.UUID(int=broker_id),
        epoch=broker_id,
        endpoints=(
            Endpoint("INTERNAL", f"10.0.0.{broker_id}", 9093),
            Endpoint("PLAINTEXT", f"broker-{broker_id}.example", 9092),
        ),
        fenced=False,
    )


class RecordingControllerLink:
    """Stands in for the controller quorum (another process): an empty image, and the calls made."""

    def __init__(self) -> None:
        self.image = MetadataImage()
        self.calls: list[Request[Any]] = []

    async def call(self, request: Request[R]) -> TopicResults:
        self.calls.append(request)
        assert isinstance(request, CreateTopicsRequest)
        return TopicResults(tuple(TopicResult(t.name, 0) for t in request.topics))


@asynccontextmanager
async def cluster_broker(
    tmp_path: Path, *, isr: tuple[int, ...], min_insync: int = 2, commit_timeout_ms: int = 5000
) -> AsyncIterator[tuple[BrokerState, GroupCoordinator, LeadershipListener]]:
    config = BrokerConfig.from_properties(
        {
            "node.id": str(NODE_ID),
            "log.dirs": str(tmp_path / "broker-1"),
            "offsets.topic.num.partitions": "1",
            "offsets.topic.replication.factor": "3",
            "offsets.commit.timeout.ms": str(commit_timeout_ms),
            "min.insync.replicas": str(min_insync),
        }
    )
    state = await open_broker_state(config)
    manager = ReplicaManager(
        ReplicationConfig(node_id=NODE_ID),
        logs=state.logs,
        metadata=state.metadata,
        log_config=state.topics.log_config,
        broker_epoch=lambda: 1,
    )
    manager.alter_partitions.sender = StaticAlterPartitions(manager)
    state.replication = manager
    state.cluster = RecordingControllerLink()
    manager.on_image_loaded([offsets_partition(NODE_ID, isr)], [registration(1), registration(2)])
    coordinator, listener = open_group_coordinator(state)
    state.groups = coordinator
    try:
        await until(lambda: coordinator.partitions[0].loaded)
        yield state, coordinator, listener
    finally:
        await manager.close()
        await close_broker_state(state)


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached within 2 s")


def commit(coordinator: GroupCoordinator, offset: int) -> asyncio.Future[list[int]]:
    return asyncio.ensure_future(
        coordinator.commit_offsets(
            group_id="readers",
            generation_id=-1,
            member_id="",
            group_instance_id=None,
            offsets=[PartitionOffset("orders", 0, offset)],
        )
    )


def committed(coordinator: GroupCoordinator) -> dict[tuple[str, int], int]:
    error, offsets = coordinator.fetch_offsets(group_id="readers", topics=None)
    assert error == ErrorCode.none
    return {(t, p): c.offset for t, p, c in offsets if c is not None}


def follower_fetches_everything(state: BrokerState) -> None:
    partition = state.replication.partitions[(OFFSETS_TOPIC_NAME, 0)]
    assert partition.record_follower_fetch(2, partition.log_end_offset)


async def test_an_offset_commit_is_answered_only_once_the_isr_has_it(tmp_path: Path) -> None:
    async with cluster_broker(tmp_path, isr=(1, 2)) as (state, coordinator, _):
        pending = commit(coordinator, 17)
        await asyncio.sleep(0.05)
        assert not pending.done()
        assert committed(coordinator) == {}  # written on the leader only: not committed yet

        follower_fetches_everything(state)

        assert await pending == [ErrorCode.none]
        assert committed(coordinator) == {("orders", 0): 17}
        assert state.logs.get(OFFSETS_TOPIC_NAME, 0).high_watermark == 1


async def test_commits_are_refused_while_the_isr_is_smaller_than_min_insync_replicas(tmp_path: Path) -> None:
    async with cluster_broker(tmp_path, isr=(1,), min_insync=2) as (state, coordinator, _):
        assert await commit(coordinator, 5) == [ErrorCode.coordinator_not_available]
        assert committed(coordinator) == {}
        assert state.logs.get(OFFSETS_TOPIC_NAME, 0).log_end_offset == 0


async def test_a_commit_the_isr_never_acknowledges_times_out_as_coordinator_not_available(
    tmp_path: Path,
) -> None:
    async with cluster_broker(tmp_path, isr=(1, 2), commit_timeout_ms=100) as (_, coordinator, _):
        assert await commit(coordinator, 5) == [ErrorCode.coordinator_not_available]
        assert committed(coordinator) == {}


async def test_losing_leadership_while_a_commit_waits_answers_not_coordinator(tmp_path: Path) -> None:
    async with cluster_broker(tmp_path, isr=(1, 2)) as (state, coordinator, listener):
        pending = commit(coordinator, 5)
        await asyncio.sleep(0.05)
        before, after = offsets_partition(1, (1, 2)), offsets_partition(2, (1, 2), epoch=1)
        # Metadata listeners run in this order: the ReplicaManager, then the coordinator's.
        state.replication.on_partition_changed(before, after)
        listener.on_partition_changed(before, after)

        assert await pending == [ErrorCode.not_coordinator]
        assert not coordinator.owns_partition(0)
        assert coordinator.fetch_offsets(group_id="readers", topics=None)[0] == ErrorCode.not_coordinator


def find_context(state: BrokerState, version: int) -> RequestContext:
    return request_context(state, 10, version)


async def test_find_coordinator_names_the_partition_leader_on_the_listener_asked(tmp_path: Path) -> None:
    async with cluster_broker(tmp_path, isr=(1, 2)) as (state, _, listener):
        before, after = offsets_partition(1, (1, 2)), offsets_partition(2, (1, 2), epoch=1)
        state.replication.on_partition_changed(before, after)
        listener.on_partition_changed(before, after)

        v3 = await find_coordinator(find_context(state, 3), find_v3.FindCoordinatorRequest(key="readers"))
        assert (v3.error_code, v3.node_id, v3.host, v3.port) == (0, 2, "broker-2.example", 9092)
        v4 = await find_coordinator(
            find_context(state, 4), find_v4.FindCoordinatorRequest(key_type=0, coordinator_keys=("a", "b"))
        )
        assert [(c.key, c.node_id) for c in v4.coordinators] == [("a", 2), ("b", 2)]


async def test_the_first_find_coordinator_creates_the_internal_offsets_topic_through_the_controller(
    tmp_path: Path,
) -> None:
    async with cluster_broker(tmp_path, isr=(1, 2)) as (state, _, _):
        state.replication.on_partition_removed(offsets_partition(1, (1, 2)))  # no topic yet
        link: RecordingControllerLink = state.cluster
        request = find_v3.FindCoordinatorRequest(key="readers")

        first = await find_coordinator(find_context(state, 3), request)
        again = await find_coordinator(find_context(state, 3), request)
        assert first.error_code == again.error_code == ErrorCode.coordinator_not_available
        await until(lambda: bool(link.calls))
        await asyncio.sleep(0.01)

        assert len(link.calls) == 1  # one creation at a time
        (creation,) = link.calls
        assert isinstance(creation, CreateTopicsRequest)
        (topic,) = creation.topics
        assert topic.name == OFFSETS_TOPIC_NAME
        assert topic.internal is True
        assert topic.partitions == 1
        # offsets.topic.replication.factor is 3 and only two brokers are alive: asked for 3 all the
        # same (the controller refuses until a third broker is up; lookups keep retrying).
        assert topic.replication_factor == 3
        assert topic.configs is not None
        assert topic.configs["cleanup.policy"] == "compact"


async def test_a_new_leader_serves_its_groups_only_once_what_it_replayed_is_committed(tmp_path: Path) -> None:
    async with cluster_broker(tmp_path, isr=(1, 2), commit_timeout_ms=100) as (state, coordinator, listener):
        # Written on this leader, never acknowledged by the follower: beyond the high watermark.
        assert await commit(coordinator, 5) == [ErrorCode.coordinator_not_available]
        first, away, back = (
            offsets_partition(1, (1, 2)),
            offsets_partition(2, (1, 2), epoch=1),
            offsets_partition(1, (1, 2), epoch=2),
        )
        for previous, current in ((first, away), (away, back)):
            state.replication.on_partition_changed(previous, current)
            listener.on_partition_changed(previous, current)
        await asyncio.sleep(0.05)
        assert coordinator.fetch_offsets(group_id="readers", topics=None)[0] == (
            ErrorCode.coordinator_load_in_progress
        )

        follower_fetches_everything(state)

        await until(lambda: coordinator.partitions[0].loaded)
        assert committed(coordinator) == {("orders", 0): 5}  # committed now, as Kafka would serve it
