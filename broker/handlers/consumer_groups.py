"""The consumer group protocol (KIP-848): ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69).

Each handler translates the kio request into a call on the coordinator's `ConsumerGroups` component; the
rules live in `broker.groups.consumer_groups`. Topics travel by id here, as on the wire.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from kio.schema.consumer_group_describe.v1 import response as describe
from kio.schema.consumer_group_heartbeat.v1 import response as heartbeat
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.groups.assignors import Assignment
from broker.groups.consumer_config import ConsumerGroupDescription
from broker.groups.consumer_groups import ConsumerGroups
from broker.groups.coordinator import GROUP_AUTHORIZED_OPERATIONS
from broker.handlers.groups import OPERATIONS_OMITTED, undescribed_group
from broker.metadata.features import GROUP_VERSION
from broker.protocol.responses import NOT_THROTTLED

# Kafka's UNSUPPORTED_VERSION message, answered while group.version is 0 (the consumer protocol is off).
PROTOCOL_OFF_MESSAGE = "The version of API is not supported."


def _consumer_groups(ctx: RequestContext) -> ConsumerGroups:
    coordinator = ctx.broker.groups
    consumer_groups = coordinator.group_type(ConsumerGroups) if coordinator is not None else None
    assert consumer_groups is not None, "the group coordinator is not loaded"
    return consumer_groups


def _ms(value: datetime.timedelta) -> int:
    return value // datetime.timedelta(milliseconds=1)


def _protocol_enabled(ctx: RequestContext) -> bool:
    """group.version 1 turns the consumer protocol on (Kafka 4.0's default); 0 leaves classic groups only."""
    return ctx.broker.feature_level(GROUP_VERSION) >= 1


def _owned(request: Any) -> Assignment | None:
    if request.topic_partitions is None:
        return None
    owned: Assignment = {}
    for entry in request.topic_partitions:
        if entry.topic_id is not None and entry.partitions:
            owned[entry.topic_id] = owned.get(entry.topic_id, frozenset()) | frozenset(entry.partitions)
    return owned


def _wire_assignment(assignment: Assignment) -> heartbeat.Assignment:
    return heartbeat.Assignment(
        topic_partitions=tuple(
            heartbeat.TopicPartitions(topic_id=topic_id, partitions=tuple(sorted(partitions)))
            for topic_id, partitions in sorted(assignment.items(), key=lambda entry: str(entry[0]))
        )
    )


def _describable_topics(ctx: RequestContext) -> Callable[[str], bool] | None:
    """The requester's DESCRIBE right on topics, by name; None when ACLs are off."""
    if ctx.broker.authorizer is None:
        return None
    return lambda name: ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name)


async def consumer_group_heartbeat(
    ctx: RequestContext, request: Any
) -> heartbeat.ConsumerGroupHeartbeatResponse:
    def refused(error: ErrorCode, message: str | None = None) -> heartbeat.ConsumerGroupHeartbeatResponse:
        # Kafka answers a refused heartbeat with its schema's defaults: member epoch 0, no member id, no interval.
        return heartbeat.ConsumerGroupHeartbeatResponse(
            throttle_time=NOT_THROTTLED,
            error_code=error,
            error_message=message,
            member_id=None,
            member_epoch=0,
            heartbeat_interval=datetime.timedelta(0),
            assignment=None,
        )

    if not _protocol_enabled(ctx):
        return refused(ErrorCode.unsupported_version, PROTOCOL_OFF_MESSAGE)
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return refused(ErrorCode.group_authorization_failed)
    names = request.subscribed_topic_names
    if names and not all(ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, n) for n in names):
        # Kafka 4.0 (KAFKA-18813): a member may only name topics it may describe.
        return refused(ErrorCode.topic_authorization_failed)
    result = await _consumer_groups(ctx).heartbeat(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=_ms(request.rebalance_timeout),
        subscribed_topic_names=names,
        subscribed_topic_regex=getattr(request, "subscribed_topic_regex", None),  # v1+ in kio's schema
        server_assignor=request.server_assignor,
        owned=_owned(request),
        client_id=ctx.client_id or "",
        client_host=f"/{ctx.client_host}",
        may_describe=_describable_topics(ctx),
        api_version=ctx.api_version,
    )
    error = ErrorCode(result.error_code)
    return heartbeat.ConsumerGroupHeartbeatResponse(
        throttle_time=NOT_THROTTLED,
        error_code=error,
        error_message=result.error_message,
        member_id=result.member_id,
        member_epoch=result.member_epoch if error == ErrorCode.none else 0,
        heartbeat_interval=datetime.timedelta(milliseconds=result.heartbeat_interval_ms),
        assignment=None if result.assignment is None else _wire_assignment(result.assignment),
    )


def _described_assignment(assignment: Assignment, names: dict[Any, str]) -> describe.Assignment:
    return describe.Assignment(
        topic_partitions=tuple(
            describe.TopicPartitions(
                topic_id=topic_id, topic_name=names.get(topic_id, ""), partitions=tuple(sorted(partitions))
            )
            for topic_id, partitions in sorted(assignment.items(), key=lambda entry: str(entry[0]))
        )
    )


def _described_topics(group: ConsumerGroupDescription, names: dict[Any, str]) -> set[str]:
    """The topics a description names: subscriptions, assignments and target assignments."""
    topics: set[str] = set()
    for entry in group.members:
        topics.update(entry.member.subscribed_topic_names)
        topics.update(entry.regex_topics)
        for assignment in (entry.member.assigned, entry.target):
            topics.update(names[topic_id] for topic_id in assignment if topic_id in names)
    return topics


async def consumer_group_describe(
    ctx: RequestContext, request: Any
) -> describe.ConsumerGroupDescribeResponse:
    consumer_groups = _consumer_groups(ctx)
    described = []
    enabled = _protocol_enabled(ctx)

    def undescribed(group_id: str, error: ErrorCode, message: str | None = None) -> describe.DescribedGroup:
        return undescribed_group(describe.DescribedGroup, group_id, error, message)

    for group_id in request.group_ids:
        if not enabled:
            described.append(undescribed(group_id, ErrorCode.unsupported_version))
            continue
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
            described.append(undescribed(group_id, ErrorCode.group_authorization_failed))
            continue
        group = consumer_groups.describe(group_id)
        names = dict(group.topic_names or {})
        error, message = ErrorCode(group.error_code), group.error_message
        if error == ErrorCode.none and not all(
            ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic)
            for topic in _described_topics(group, names)
        ):
            # Kafka 4.0 (KAFKA-18813): a group is described only to whom may describe all its topics.
            error = ErrorCode.topic_authorization_failed
            message = "The group has described topic(s) that the client is not authorized to describe."
        if error != ErrorCode.none:
            described.append(undescribed(group_id, error, message))
            continue
        described.append(
            describe.DescribedGroup(
                error_code=ErrorCode.none,
                error_message=None,
                group_id=group_id,
                group_state=group.state,
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                assignor_name=group.assignor_name,
                members=tuple(
                    describe.Member(
                        member_id=entry.member.member_id,
                        instance_id=entry.member.instance_id,
                        rack_id=entry.member.rack_id,
                        member_epoch=entry.member.member_epoch,
                        client_id=entry.member.client_id,
                        client_host=entry.member.client_host,
                        subscribed_topic_names=tuple(entry.member.subscribed_topic_names),
                        # Kafka describes a member without a regex with "" (not null).
                        subscribed_topic_regex=entry.member.subscribed_topic_regex or "",
                        assignment=_described_assignment(entry.member.assigned, names),
                        target_assignment=_described_assignment(entry.target, names),
                        member_type=0 if entry.member.classic is not None else 1,  # 0: a classic member
                    )
                    for entry in group.members
                ),
                authorized_operations=ctx.authorized_operations(
                    ResourceType.GROUP, group_id, GROUP_AUTHORIZED_OPERATIONS
                )
                if request.include_authorized_operations
                else OPERATIONS_OMITTED,
            )
        )
    return describe.ConsumerGroupDescribeResponse(throttle_time=NOT_THROTTLED, groups=tuple(described))
