"""Streams groups (KIP-1071): StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89).

The handler reads the request into the coordinator's terms (broker/groups/streams_coordinator.py), creates the
internal topics the topology needs (its repartition and changelog topics, as Kafka's coordinator does), and
writes the answer. Streams groups need `streams.version` 1 finalized.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterable
from typing import Any, TypeVar

from kio.schema.errors import ErrorCode
from kio.schema.streams_group_describe.v0 import response as describe
from kio.schema.streams_group_heartbeat.v0 import response as heartbeat

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.groups.streams_assignor import MemberTasks
from broker.groups.streams_coordinator import StreamsGroups
from broker.groups.streams_topology import (
    StreamsTopology,
    TopologyPlan,
    plan_topology,
    tasks_from_wire,
    topology_from_request,
    topology_is_valid,
)
from broker.metadata.features import STREAMS_VERSION
from broker.protocol.responses import NOT_THROTTLED
from broker.topics import TopicError

log = logging.getLogger(__name__)

PROTOCOL_OFF_MESSAGE = "The version of API is not supported."


def _streams_groups(ctx: RequestContext) -> StreamsGroups | None:
    coordinator = ctx.broker.groups
    return coordinator.group_type(StreamsGroups) if coordinator is not None else None


def _ms(value: datetime.timedelta) -> int:
    return value // datetime.timedelta(milliseconds=1)


def _partitions_of(ctx: RequestContext, name: str) -> int | None:
    topic = ctx.broker.metadata.get(name)
    return topic.partitions if topic is not None else None


async def _plan(ctx: RequestContext, topology: StreamsTopology) -> TopologyPlan:
    """The topology's plan; the internal topics it lacks are created first, and the plan made again."""
    plan = plan_topology(topology, lambda name: _partitions_of(ctx, name))
    if not plan.topics_to_create:
        return plan
    for topic in plan.topics_to_create:
        try:
            await ctx.broker.topics.create(
                topic.name,
                topic.partitions,
                topic.replication_factor if topic.replication_factor > 0 else -1,
                dict(topic.configs),
            )
        except TopicError as exc:
            if exc.error_code != ErrorCode.topic_already_exists:
                log.warning("streams group: cannot create internal topic %s: %s", topic.name, exc)
    return plan_topology(topology, lambda name: _partitions_of(ctx, name))


_TaskIds = TypeVar("_TaskIds", heartbeat.TaskIds, describe.TaskIds)


def _task_ids(task_ids: type[_TaskIds], tasks: frozenset[tuple[str, int]]) -> tuple[_TaskIds, ...]:
    """Tasks as the wire lists them: one entry per subtopology with its sorted partitions."""
    grouped: dict[str, list[int]] = {}
    for subtopology, partition in tasks:
        grouped.setdefault(subtopology, []).append(partition)
    return tuple(
        task_ids(subtopology_id=subtopology, partitions=tuple(sorted(partitions)))
        for subtopology, partitions in sorted(grouped.items())
    )


async def streams_group_heartbeat(
    ctx: RequestContext, request: Any
) -> heartbeat.StreamsGroupHeartbeatResponse:
    streams_groups = _streams_groups(ctx)

    def refused(error: ErrorCode, message: str | None = None) -> heartbeat.StreamsGroupHeartbeatResponse:
        # Kafka answers a refused heartbeat with its schema's defaults: no member id, epoch 0, no statuses.
        return heartbeat.StreamsGroupHeartbeatResponse(
            throttle_time=NOT_THROTTLED,
            error_code=error,
            error_message=message,
            member_id="",
            member_epoch=0,
            heartbeat_interval=datetime.timedelta(0),
            acceptable_recovery_lag=0,
            task_offset_interval=datetime.timedelta(0),
            status=(),
            active_tasks=None,
            standby_tasks=None,
            warmup_tasks=None,
            endpoint_information_epoch=0,
            partitions_by_user_endpoint=None,
        )

    if streams_groups is None or ctx.broker.feature_level(STREAMS_VERSION) < 1:
        return refused(ErrorCode.unsupported_version, PROTOCOL_OFF_MESSAGE)
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return refused(ErrorCode.group_authorization_failed)
    if not request.member_id:
        return refused(ErrorCode.invalid_request, "MemberId can't be empty.")
    if int(request.member_epoch) == 0 and _ms(request.rebalance_timeout) < 0:
        return refused(ErrorCode.invalid_request, "RebalanceTimeoutMs must be provided in first request.")
    topology = topology_from_request(request.topology) if request.topology is not None else None
    if topology is not None:
        problem = topology_is_valid(topology)
        if problem is not None:
            return refused(ErrorCode.invalid_request, problem)
    plans: dict[int, TopologyPlan] = {}
    group = streams_groups.groups.get(request.group_id)
    known = topology or (group.topology if group is not None else None)
    if known is not None:
        plans[id(known)] = await _plan(ctx, known)
    endpoint = request.user_endpoint
    fields = {
        "process_id": request.process_id,
        "client_id": ctx.client_id or "",
        "client_host": f"/{ctx.client_host}",
        "instance_id": request.instance_id,
        "rack_id": request.rack_id,
        "rebalance_timeout_ms": _ms(request.rebalance_timeout),
        "user_endpoint": (endpoint.host, int(endpoint.port)) if endpoint is not None else None,
        "client_tags": {kv.key: kv.value for kv in request.client_tags}
        if request.client_tags is not None
        else None,
        "shutdown_application": request.shutdown_application,
        "endpoint_information_epoch": int(request.endpoint_information_epoch),
    }

    def plan_for(topology_now: StreamsTopology) -> TopologyPlan:
        return plans.get(id(topology_now)) or plan_topology(
            topology_now, lambda name: _partitions_of(ctx, name)
        )

    result = streams_groups.heartbeat(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=int(request.member_epoch),
        topology=topology,
        plan_for=plan_for,
        fields=fields,
        owned_active=tasks_from_wire(request.active_tasks),
        owned_standby=tasks_from_wire(request.standby_tasks),
    )
    if result.error_code != ErrorCode.none:
        return refused(ErrorCode(result.error_code), result.error_message)
    streams = streams_groups.config
    tasks: MemberTasks | None = result.tasks
    return heartbeat.StreamsGroupHeartbeatResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode.none,
        error_message=None,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval=datetime.timedelta(milliseconds=streams.heartbeat_interval_ms),
        acceptable_recovery_lag=streams.acceptable_recovery_lag,
        task_offset_interval=datetime.timedelta(milliseconds=streams.task_offset_interval_ms),
        status=tuple(
            heartbeat.Status(status_code=code, status_detail=detail) for code, detail in result.statuses
        )
        or None,
        active_tasks=_task_ids(heartbeat.TaskIds, tasks.active) if tasks is not None else None,
        standby_tasks=_task_ids(heartbeat.TaskIds, tasks.standby) if tasks is not None else None,
        warmup_tasks=() if tasks is not None else None,
        endpoint_information_epoch=result.endpoint_epoch,
        partitions_by_user_endpoint=_endpoints(ctx, streams_groups, request.group_id, result.endpoints),
    )


def _endpoints(
    ctx: RequestContext, streams_groups: StreamsGroups, group_id: str, endpoints: Any
) -> tuple[heartbeat.EndpointToPartitions, ...] | None:
    """Interactive Queries' map: each member endpoint with the source partitions its tasks read."""
    if endpoints is None:
        return None
    group = streams_groups.groups.get(group_id)
    if group is None or group.topology is None:
        return ()
    topics_of = {
        sub.subtopology_id: [*sub.source_topics, *(t.name for t in sub.repartition_source_topics)]
        for sub in group.topology.subtopologies
    }

    def partitions(tasks: frozenset[tuple[str, int]]) -> tuple[heartbeat.TopicPartition, ...]:
        by_topic: dict[str, set[int]] = {}
        for subtopology, partition in tasks:
            for topic in topics_of.get(subtopology, []):
                count = _partitions_of(ctx, topic) or 0
                if partition < count:
                    by_topic.setdefault(topic, set()).add(partition)
        return tuple(
            heartbeat.TopicPartition(topic=t, partitions=tuple(sorted(p)))
            for t, p in sorted(by_topic.items())
        )

    return tuple(
        heartbeat.EndpointToPartitions(
            user_endpoint=heartbeat.Endpoint(host=host, port=port),
            active_partitions=partitions(tasks.active),
            standby_partitions=partitions(tasks.standby),
        )
        for (host, port), tasks in endpoints
    )


async def streams_group_describe(ctx: RequestContext, request: Any) -> describe.StreamsGroupDescribeResponse:
    streams_groups = _streams_groups(ctx)
    described = []
    for group_id in request.group_ids:
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
            described.append(_undescribed(group_id, ErrorCode.group_authorization_failed))
            continue
        unavailable, group = streams_groups.describe(group_id) if streams_groups is not None else (None, None)
        if unavailable is not None:
            described.append(_undescribed(group_id, ErrorCode(unavailable)))
            continue
        if group is None:
            described.append(
                _undescribed(group_id, ErrorCode.group_id_not_found, f"Group {group_id} not found.")
            )
            continue
        described.append(
            describe.DescribedGroup(
                error_code=ErrorCode.none,
                group_id=group_id,
                group_state=group.state,
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                topology=_wire_topology(group.topology) if group.topology is not None else None,
                members=tuple(_wire_member(group, member) for member in group.members.values()),
            )
        )
    return describe.StreamsGroupDescribeResponse(throttle_time=NOT_THROTTLED, groups=tuple(described))


def _undescribed(group_id: str, error: ErrorCode, message: str | None = None) -> describe.DescribedGroup:
    return describe.DescribedGroup(
        error_code=error,
        error_message=message,
        group_id=group_id,
        group_state="",
        group_epoch=0,
        assignment_epoch=0,
        topology=None,
        members=(),
    )


def _key_values(pairs: Iterable[tuple[str, str]]) -> tuple[describe.KeyValue, ...]:
    return tuple(describe.KeyValue(key=key, value=value) for key, value in pairs)


def _wire_topology(topology: StreamsTopology) -> describe.Topology:
    def topic_info(topic: Any) -> describe.TopicInfo:
        return describe.TopicInfo(
            name=topic.name,
            partitions=topic.partitions,
            replication_factor=topic.replication_factor,
            topic_configs=_key_values(topic.configs),
        )

    return describe.Topology(
        epoch=topology.epoch,
        subtopologies=tuple(
            describe.Subtopology(
                subtopology_id=sub.subtopology_id,
                source_topics=tuple(sub.source_topics),
                repartition_sink_topics=tuple(sub.repartition_sink_topics),
                state_changelog_topics=tuple(topic_info(t) for t in sub.state_changelog_topics),
                repartition_source_topics=tuple(topic_info(t) for t in sub.repartition_source_topics),
            )
            for sub in topology.subtopologies
        ),
    )


def _wire_member(group: Any, member: Any) -> describe.Member:
    target = group.target.get(member.member_id, MemberTasks())

    def assignment(tasks: MemberTasks) -> describe.Assignment:
        return describe.Assignment(
            active_tasks=_task_ids(describe.TaskIds, tasks.active),
            standby_tasks=_task_ids(describe.TaskIds, tasks.standby),
            warmup_tasks=(),
        )

    return describe.Member(
        member_id=member.member_id,
        member_epoch=member.member_epoch,
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        client_id=member.client_id,
        client_host=member.client_host,
        topology_epoch=member.topology_epoch,
        process_id=member.process_id,
        user_endpoint=(
            describe.Endpoint(host=member.user_endpoint[0], port=member.user_endpoint[1])
            if member.user_endpoint
            else None
        ),
        client_tags=_key_values(sorted(member.client_tags.items())),
        task_offsets=(),
        task_end_offsets=(),
        assignment=assignment(member.assigned),
        target_assignment=assignment(target),
        is_classic=False,
    )
