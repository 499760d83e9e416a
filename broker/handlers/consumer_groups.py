"""The consumer group protocol (KIP-848): ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69).

Each handler translates the kio request into a call on the ConsumerGroupCoordinator; the rules
live in `broker.groups.consumer_coordinator`. Topics travel by id here, as on the wire.
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.groups.assignors import Assignment
from broker.groups.consumer_coordinator import ConsumerGroupCoordinator, ConsumerGroupDescription
from broker.groups.coordinator import GROUP_AUTHORIZED_OPERATIONS
from broker.handlers.groups import OPERATIONS_OMITTED
from broker.metadata.features import GROUP_VERSION

# Kafka's UNSUPPORTED_VERSION message, answered while group.version is 0 (the consumer protocol is off).
PROTOCOL_OFF_MESSAGE = "The version of API is not supported."

Handler = Callable[[RequestContext, Any], Awaitable[dict | None]]


def _coordinator(ctx: RequestContext) -> ConsumerGroupCoordinator:
    coordinator = ctx.broker.groups
    assert isinstance(coordinator, ConsumerGroupCoordinator), "the group coordinator is not loaded"
    return coordinator


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


def _wire_assignment(assignment: Assignment) -> list[dict[str, Any]]:
    return [
        {"topic_id": topic_id, "partitions": sorted(partitions)}
        for topic_id, partitions in sorted(assignment.items(), key=lambda entry: str(entry[0]))
    ]


def _describable_topics(ctx: RequestContext) -> Callable[[str], bool] | None:
    """The requester's DESCRIBE right on topics, by name; None when ACLs are off."""
    if ctx.broker.authorizer is None:
        return None
    return lambda name: ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name)


async def consumer_group_heartbeat(ctx: RequestContext, request: Any) -> dict[str, Any]:
    # Kafka answers a refused heartbeat with its schema's defaults: member epoch 0, no member id, no interval.
    answer: dict[str, Any] = {
        "error_message": None,
        "member_id": None,
        "member_epoch": 0,
        "heartbeat_interval": 0,
    }
    if not _protocol_enabled(ctx):
        return {**answer, "error_code": ErrorCode.unsupported_version, "error_message": PROTOCOL_OFF_MESSAGE}
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return {**answer, "error_code": ErrorCode.group_authorization_failed, "assignment": None}
    names = request.subscribed_topic_names
    if names and not all(ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, n) for n in names):
        # Kafka 4.0 (KAFKA-18813): a member may only name topics it may describe.
        return {**answer, "error_code": ErrorCode.topic_authorization_failed, "assignment": None}
    result = await _coordinator(ctx).consumer_heartbeat(
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
    return {
        "error_code": result.error_code,
        "error_message": result.error_message,
        "member_id": result.member_id,
        "member_epoch": result.member_epoch if result.error_code == ErrorCode.none else 0,
        "heartbeat_interval": datetime.timedelta(milliseconds=result.heartbeat_interval_ms),
        "assignment": None
        if result.assignment is None
        else {"topic_partitions": _wire_assignment(result.assignment)},
    }


def _described_assignment(assignment: Assignment, names: dict[Any, str]) -> dict[str, Any]:
    return {
        "topic_partitions": [
            {"topic_id": topic_id, "topic_name": names.get(topic_id, ""), "partitions": sorted(partitions)}
            for topic_id, partitions in sorted(assignment.items(), key=lambda entry: str(entry[0]))
        ]
    }


def _described_topics(group: ConsumerGroupDescription, names: dict[Any, str]) -> set[str]:
    """The topics a description names: subscriptions, assignments and target assignments."""
    topics: set[str] = set()
    for entry in group.members:
        topics.update(entry.member.subscribed_topic_names)
        topics.update(entry.regex_topics)
        for assignment in (entry.member.assigned, entry.target):
            topics.update(names[topic_id] for topic_id in assignment if topic_id in names)
    return topics


async def consumer_group_describe(ctx: RequestContext, request: Any) -> dict[str, Any]:
    coordinator = _coordinator(ctx)
    described = []
    enabled = _protocol_enabled(ctx)
    for group_id in request.group_ids:
        # Kafka describes a group it cannot with its schema's defaults (epochs 0).
        empty = {
            "group_state": "",
            "group_epoch": 0,
            "assignment_epoch": 0,
            "assignor_name": "",
            "members": [],
        }
        if not enabled:
            described.append(
                {
                    **empty,
                    "error_code": ErrorCode.unsupported_version,
                    "error_message": None,
                    "group_id": group_id,
                    "authorized_operations": OPERATIONS_OMITTED,
                }
            )
            continue
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
            described.append(
                {
                    **empty,
                    "error_code": ErrorCode.group_authorization_failed,
                    "error_message": None,
                    "group_id": group_id,
                    "authorized_operations": OPERATIONS_OMITTED,
                }
            )
            continue
        group = coordinator.describe_consumer_group(group_id)
        names = dict(group.topic_names or {})
        error, message = group.error_code, group.error_message
        if error == ErrorCode.none and not all(
            ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic)
            for topic in _described_topics(group, names)
        ):
            # Kafka 4.0 (KAFKA-18813): a group is described only to whom may describe all its topics.
            error = ErrorCode.topic_authorization_failed
            message = "The group has described topic(s) that the client is not authorized to describe."
        if error != ErrorCode.none:
            described.append(
                {
                    **empty,
                    "error_code": error,
                    "error_message": message,
                    "group_id": group_id,
                    "authorized_operations": OPERATIONS_OMITTED,
                }
            )
            continue
        described.append(
            {
                "error_code": ErrorCode.none,
                "error_message": None,
                "group_id": group_id,
                "group_state": group.state,
                "group_epoch": group.group_epoch,
                "assignment_epoch": group.assignment_epoch,
                "assignor_name": group.assignor_name,
                "members": [
                    {
                        "member_id": entry.member.member_id,
                        "instance_id": entry.member.instance_id,
                        "rack_id": entry.member.rack_id,
                        "member_epoch": entry.member.member_epoch,
                        "client_id": entry.member.client_id,
                        "client_host": entry.member.client_host,
                        "subscribed_topic_names": list(entry.member.subscribed_topic_names),
                        # Kafka describes a member without a regex with "" (not null).
                        "subscribed_topic_regex": entry.member.subscribed_topic_regex or "",
                        "assignment": _described_assignment(entry.member.assigned, names),
                        "target_assignment": _described_assignment(entry.target, names),
                        "member_type": 0 if entry.member.classic is not None else 1,  # 0: a classic member
                    }
                    for entry in group.members
                ],
                "authorized_operations": ctx.authorized_operations(
                    ResourceType.GROUP, group_id, GROUP_AUTHORIZED_OPERATIONS
                )
                if request.include_authorized_operations
                else OPERATIONS_OMITTED,
            }
        )
    return {"groups": described}


APIS: dict[int, tuple[int, int, Handler]] = {
    68: (0, 1, consumer_group_heartbeat),
    69: (0, 1, consumer_group_describe),
}
