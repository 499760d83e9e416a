"""DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91), DeleteShareGroupOffsets (92): a share
group's start offsets (SPSO) per partition, as the admin tools read, reset and forget them.

Answered by the group's coordinator from the share-partitions it knows: those in its memory, else their
`__share_group_state` snapshot where it leads that partition of the topic. On a single node that is every
partition; in a cluster, a partition whose state is elsewhere is described as not initialized (start offset
-1; see README: share groups).
"""

from __future__ import annotations

import uuid
from typing import Any

from kio.schema.alter_share_group_offsets.v0 import response as alter
from kio.schema.delete_share_group_offsets.v0 import response as delete
from kio.schema.describe_share_group_offsets.v1 import response as describe
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.handlers.share_groups import coordinator_error, share_groups_enabled
from broker.protocol.responses import NOT_THROTTLED
from broker.share.share_partition import SharePartition

NOT_INITIALIZED = -1
# Kafka's default message of UNKNOWN_TOPIC_OR_PARTITION, which AlterShareGroupOffsets answers with.
UNKNOWN_PARTITION_MESSAGE = "This server does not host this topic-partition."


def _share_partition(ctx: RequestContext, key: tuple[str, uuid.UUID, int]) -> SharePartition | None:
    found = ctx.broker.share.partitions.get(key)
    if found is not None:
        return found
    store = ctx.broker.share.store
    if store is None:
        return None
    config = ctx.broker.config
    return store.restore(
        key,
        delivery_count_limit=config.get_int("group.share.delivery.count.limit"),
        max_in_flight=config.get_int("group.share.partition.max.record.locks"),
    )


def _lag(ctx: RequestContext, topic: str, index: int, share: SharePartition) -> int:
    """Kafka 4.2's share-group lag: records between the SPSO and the high watermark not yet delivered to
    completion (acknowledged or archived records inside the window do not count)."""
    partition, _error = ctx.broker.partitions.leader(topic, index)
    if partition is None:
        return -1
    return max(0, partition.high_watermark - share.start_offset - share.done_count())


def _group_topics(ctx: RequestContext, group_id: str) -> dict[str, list[int]]:
    """Every topic partition the group has share state for, by topic name."""
    found: dict[str, list[int]] = {}
    for group, topic_id, index in ctx.broker.share.partitions:
        topic = ctx.broker.metadata.get_by_id(topic_id)
        if group == group_id and topic is not None:
            found.setdefault(topic.name, []).append(index)
    return {name: sorted(indexes) for name, indexes in found.items()}


def _described_partition(
    ctx: RequestContext, group_id: str, name: str, record: Any, index: int
) -> describe.DescribeShareGroupOffsetsResponsePartition:
    start_offset, leader_epoch, lag, error = NOT_INITIALIZED, -1, -1, ErrorCode.none
    if record is None:
        error = ErrorCode.unknown_topic_or_partition
    elif not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        error = ErrorCode.topic_authorization_failed
    else:
        share = _share_partition(ctx, (group_id, record.topic_id, index))
        if share is not None:
            start_offset, leader_epoch = share.start_offset, record.leader_epoch(index)
            lag = _lag(ctx, name, index, share)
    return describe.DescribeShareGroupOffsetsResponsePartition(
        partition_index=index,
        start_offset=start_offset,
        leader_epoch=leader_epoch,
        lag=lag,
        error_code=error,
        error_message=None,
    )


async def describe_share_group_offsets(
    ctx: RequestContext, request: Any
) -> describe.DescribeShareGroupOffsetsResponse:
    groups = []
    for group in request.groups:
        group_id = group.group_id
        failed = _group_error(ctx, group_id, Operation.DESCRIBE)
        if failed is not None:
            groups.append(
                describe.DescribeShareGroupOffsetsResponseGroup(
                    group_id=group_id, topics=(), error_code=failed, error_message=None
                )
            )
            continue
        wanted = (
            _group_topics(ctx, group_id)
            if group.topics is None
            else {t.topic_name: [int(p) for p in t.partitions] for t in group.topics}
        )
        topics = []
        for name, indexes in wanted.items():
            record = ctx.broker.metadata.get(name)
            topics.append(
                describe.DescribeShareGroupOffsetsResponseTopic(
                    topic_name=name,
                    topic_id=record.topic_id if record else None,
                    partitions=tuple(
                        _described_partition(ctx, group_id, name, record, index) for index in indexes
                    ),
                )
            )
        groups.append(
            describe.DescribeShareGroupOffsetsResponseGroup(
                group_id=group_id, topics=tuple(topics), error_code=ErrorCode.none, error_message=None
            )
        )
    return describe.DescribeShareGroupOffsetsResponse(throttle_time=NOT_THROTTLED, groups=tuple(groups))


def _group_error(ctx: RequestContext, group_id: str, operation: Operation) -> ErrorCode | None:
    if not share_groups_enabled(ctx):
        return ErrorCode.unsupported_version
    if not ctx.allowed(operation, ResourceType.GROUP, group_id):
        return ErrorCode.group_authorization_failed
    unavailable = coordinator_error(ctx, group_id)
    return None if unavailable is None else unavailable[0]


def _empty_group_error(
    ctx: RequestContext, group_id: str, operation: Operation
) -> tuple[ErrorCode, str | None]:
    failed = _group_error(ctx, group_id, operation)
    if failed is not None:
        return failed, None
    group = ctx.broker.share.groups.groups.get(group_id)
    if group is not None and group.members:
        return ErrorCode.non_empty_group, "The group is not empty."
    return ErrorCode.none, None


async def alter_share_group_offsets(
    ctx: RequestContext, request: Any
) -> alter.AlterShareGroupOffsetsResponse:
    group_id = request.group_id
    error, message = _empty_group_error(ctx, group_id, Operation.READ)
    if error != ErrorCode.none:
        return alter.AlterShareGroupOffsetsResponse(
            throttle_time=NOT_THROTTLED, error_code=error, error_message=message, responses=()
        )
    store = ctx.broker.share.store
    config = ctx.broker.config
    responses = []
    for topic in request.topics:
        record = ctx.broker.metadata.get(topic.topic_name)
        partitions = []
        for entry in topic.partitions:
            index = int(entry.partition_index)
            error, message = ErrorCode.none, None
            if record is None or not 0 <= index < record.partitions:
                error, message = ErrorCode.unknown_topic_or_partition, UNKNOWN_PARTITION_MESSAGE
            elif not ctx.allowed(Operation.READ, ResourceType.TOPIC, topic.topic_name):
                error = ErrorCode.topic_authorization_failed
            else:
                # An unknown group is created empty by its first offset set (Kafka: not when every topic of the
                # request is refused).
                ctx.broker.share.groups.get_or_create(group_id)
                key = (group_id, record.topic_id, index)
                share = _share_partition(ctx, key) or SharePartition(
                    int(entry.start_offset),
                    delivery_count_limit=config.get_int("group.share.delivery.count.limit"),
                    max_in_flight=config.get_int("group.share.partition.max.record.locks"),
                )
                share.reset_to(int(entry.start_offset))
                ctx.broker.share.partitions[key] = share
                # Kept in memory here; the leader of the partition reads the reset state on its next fetch.
                ctx.broker.share.loaded_epochs.pop(key, None)
                if store is not None and not await store.reset(key, int(entry.start_offset)):
                    error = ErrorCode.coordinator_not_available
                else:
                    # Initialized by the reset: assigned to the group's members as soon as they join.
                    ctx.broker.share.groups.initialized(group_id, {record.topic_id: frozenset({index})})
            partitions.append(
                alter.AlterShareGroupOffsetsResponsePartition(
                    partition_index=index, error_code=error, error_message=message
                )
            )
        responses.append(
            alter.AlterShareGroupOffsetsResponseTopic(
                topic_name=topic.topic_name,
                topic_id=record.topic_id if record else None,
                partitions=tuple(partitions),
            )
        )
    return alter.AlterShareGroupOffsetsResponse(
        throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, error_message=None, responses=tuple(responses)
    )


async def delete_share_group_offsets(
    ctx: RequestContext, request: Any
) -> delete.DeleteShareGroupOffsetsResponse:
    group_id = request.group_id
    error, message = _empty_group_error(ctx, group_id, Operation.DELETE)
    if error == ErrorCode.none and group_id not in ctx.broker.share.groups.groups:
        error, message = ErrorCode.group_id_not_found, f"Group {group_id} not found."
    if error != ErrorCode.none:
        return delete.DeleteShareGroupOffsetsResponse(
            throttle_time=NOT_THROTTLED, error_code=error, error_message=message, responses=()
        )
    store = ctx.broker.share.store
    responses = []
    for topic in request.topics:
        record = ctx.broker.metadata.get(topic.topic_name)
        topic_error = ErrorCode.none
        if record is None:
            topic_error = ErrorCode.unknown_topic_or_partition
        elif not ctx.allowed(Operation.READ, ResourceType.TOPIC, topic.topic_name):
            topic_error = ErrorCode.topic_authorization_failed
        else:
            for index in range(record.partitions):
                key = (group_id, record.topic_id, index)
                ctx.broker.share.partitions.pop(key, None)
                if store is not None:
                    await store.forget(key)
            # Initialized again before members are next assigned its partitions.
            ctx.broker.share.groups.uninitialized(group_id, record.topic_id)
        responses.append(
            delete.DeleteShareGroupOffsetsResponseTopic(
                topic_name=topic.topic_name,
                topic_id=record.topic_id if record else None,
                error_code=topic_error,
                error_message=None,
            )
        )
    return delete.DeleteShareGroupOffsetsResponse(
        throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, error_message=None, responses=tuple(responses)
    )
