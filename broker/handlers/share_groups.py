"""Share groups (KIP-932): ShareGroupHeartbeat (76) and ShareGroupDescribe (77).

The membership rules live in `broker.share.share_groups`; the groups are served by the broker that
coordinates the group id (the same `__consumer_offsets` partition leader as any other group).
"""

from __future__ import annotations

import datetime
import logging
import time
import uuid
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.share_group_describe.v1 import response as describe
from kio.schema.share_group_heartbeat.v1 import response as heartbeat

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.groups.coordinator import GROUP_AUTHORIZED_OPERATIONS
from broker.handlers.groups import OPERATIONS_OMITTED, undescribed_group
from broker.metadata.features import SHARE_VERSION
from broker.protocol.responses import NOT_THROTTLED
from broker.share.share_groups import LEAVE_EPOCH, SIMPLE_ASSIGNOR, Assignment, ShareGroup

log = logging.getLogger(__name__)

# Kafka 4.2 lists a share group's config operations too (share groups have GROUP configs).
SHARE_GROUP_AUTHORIZED_OPERATIONS = (
    GROUP_AUTHORIZED_OPERATIONS | (1 << Operation.DESCRIBE_CONFIGS) | (1 << Operation.ALTER_CONFIGS)
)


def share_groups_enabled(ctx: RequestContext) -> bool:
    return ctx.broker.feature_level(SHARE_VERSION) >= 1


def group_int_config(ctx: RequestContext, group_id: str, name: str, broker_name: str) -> int:
    """A share group's config: set on the group (GROUP resource), else the broker's default."""
    value = ctx.broker.group_configs(group_id).get(name)
    return int(value) if value is not None else ctx.broker.config.get_int(broker_name)


def coordinator_error(ctx: RequestContext, group_id: str) -> tuple[ErrorCode, str | None] | None:
    """Why this broker cannot serve share group `group_id`: not its coordinator, or another kind of group."""
    coordinator = ctx.broker.groups
    if coordinator is None:
        return ErrorCode.coordinator_not_available, None
    error = coordinator.availability_error(group_id)
    if error is not None:
        return ErrorCode(error), None
    if group_id in coordinator.groups or coordinator.group_type_of(group_id) is not None:
        return ErrorCode.group_id_not_found, f"Group {group_id} is not a share group."
    return None


def _sorted_assignment(assignment: Assignment) -> list[tuple[uuid.UUID, tuple[int, ...]]]:
    return [
        (topic_id, tuple(sorted(partitions)))
        for topic_id, partitions in sorted(assignment.items(), key=lambda entry: str(entry[0]))
    ]


async def share_group_heartbeat(ctx: RequestContext, request: Any) -> heartbeat.ShareGroupHeartbeatResponse:
    def refused(error: ErrorCode, message: str | None = None) -> heartbeat.ShareGroupHeartbeatResponse:
        return heartbeat.ShareGroupHeartbeatResponse(
            throttle_time=NOT_THROTTLED,
            error_code=error,
            error_message=message,
            member_id=None,
            member_epoch=0,
            heartbeat_interval=datetime.timedelta(0),
            assignment=None,
        )

    if not share_groups_enabled(ctx):
        # share.version 0 (share groups off): Kafka 4.2 answers UNSUPPORTED_VERSION without a message.
        return refused(ErrorCode.unsupported_version)
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return refused(ErrorCode.group_authorization_failed)
    names = request.subscribed_topic_names
    if names and not all(ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, n) for n in names):
        return refused(ErrorCode.topic_authorization_failed)
    unavailable = coordinator_error(ctx, request.group_id)
    if unavailable is not None:
        return refused(*unavailable)
    group_id = request.group_id
    answer = ctx.broker.share.groups.heartbeat(
        group_id=group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        rack_id=request.rack_id,
        subscribed_topic_names=names,
        client_id=ctx.client_id or "",
        client_host=f"/{ctx.client_host}",
        now_ms=int(time.time() * 1000),
        session_timeout_ms=group_int_config(
            ctx, group_id, "share.session.timeout.ms", "group.share.session.timeout.ms"
        ),
    )
    if answer.error_code != ErrorCode.none:
        # Kafka 4.2 answers INVALID_REQUEST without its reason (which we keep for the log line).
        message = None if answer.error_code == ErrorCode.invalid_request else answer.error_message
        if message is None:
            log.debug("share group heartbeat of %s refused: %s", request.group_id, answer.error_message)
        return refused(ErrorCode(answer.error_code), message)
    if answer.initialize:
        # After the answer, as Kafka's coordinator: the partitions are assigned on a heartbeat after this.
        store = ctx.broker.share.store
        if store is None:
            ctx.broker.share.groups.initialized(group_id, answer.initialize)
        else:
            store.start_initializing(group_id, answer.state_epoch, answer.initialize)
    # A member that left is told no interval (Kafka 4.2 answers 0).
    interval = (
        0
        if answer.member_epoch == LEAVE_EPOCH
        else group_int_config(
            ctx, group_id, "share.heartbeat.interval.ms", "group.share.heartbeat.interval.ms"
        )
    )
    return heartbeat.ShareGroupHeartbeatResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode.none,
        error_message=None,
        member_id=answer.member_id,
        member_epoch=answer.member_epoch,
        heartbeat_interval=datetime.timedelta(milliseconds=interval),
        assignment=None
        if answer.assignment is None
        else heartbeat.Assignment(
            topic_partitions=tuple(
                heartbeat.TopicPartitions(topic_id=topic_id, partitions=partitions)
                for topic_id, partitions in _sorted_assignment(answer.assignment)
            )
        ),
    )


def _described(ctx: RequestContext, group: ShareGroup, include_operations: bool) -> describe.DescribedGroup:
    names = {topic_id: name for name, (topic_id, _count) in ctx.broker.share.groups.topic_catalog().items()}
    return describe.DescribedGroup(
        error_code=ErrorCode.none,
        error_message=None,
        group_id=group.group_id,
        group_state=group.state,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=SIMPLE_ASSIGNOR,
        members=tuple(
            describe.Member(
                member_id=member.member_id,
                rack_id=member.rack_id,
                member_epoch=member.member_epoch,
                client_id=member.client_id,
                client_host=member.client_host,
                subscribed_topic_names=tuple(member.subscribed_topic_names),
                assignment=describe.Assignment(
                    topic_partitions=tuple(
                        describe.TopicPartitions(
                            topic_id=topic_id, topic_name=names.get(topic_id, ""), partitions=partitions
                        )
                        for topic_id, partitions in _sorted_assignment(member.assigned)
                    )
                ),
            )
            for member in sorted(group.members.values(), key=lambda m: m.member_id)
        ),
        authorized_operations=ctx.authorized_operations(
            ResourceType.GROUP, group.group_id, SHARE_GROUP_AUTHORIZED_OPERATIONS
        )
        if include_operations
        else OPERATIONS_OMITTED,
    )


async def share_group_describe(ctx: RequestContext, request: Any) -> describe.ShareGroupDescribeResponse:
    described = []

    def undescribed(group_id: str, error: ErrorCode, message: str | None = None) -> describe.DescribedGroup:
        return undescribed_group(describe.DescribedGroup, group_id, error, message)

    for group_id in request.group_ids:
        if not share_groups_enabled(ctx):
            described.append(undescribed(group_id, ErrorCode.unsupported_version))
            continue
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.GROUP, group_id):
            described.append(undescribed(group_id, ErrorCode.group_authorization_failed))
            continue
        unavailable = coordinator_error(ctx, group_id)
        group = ctx.broker.share.groups.groups.get(group_id)
        if unavailable is not None:
            described.append(undescribed(group_id, *unavailable))
        elif group is None:
            described.append(
                undescribed(group_id, ErrorCode.group_id_not_found, f"Group {group_id} not found.")
            )
        else:
            ctx.broker.share.groups.expire_members(
                group,
                int(time.time() * 1000),
                group_int_config(ctx, group_id, "share.session.timeout.ms", "group.share.session.timeout.ms"),
            )
            described.append(_described(ctx, group, request.include_authorized_operations))
    return describe.ShareGroupDescribeResponse(throttle_time=NOT_THROTTLED, groups=tuple(described))
