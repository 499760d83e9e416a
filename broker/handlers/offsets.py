"""ListOffsets (2), OffsetForLeaderEpoch (23) and DeleteRecords (21)."""

from __future__ import annotations

from typing import Any

from kio.schema.delete_records.v2 import response as delete_records
from kio.schema.errors import ErrorCode
from kio.schema.list_offsets.v11 import response as list_offsets
from kio.schema.offset_for_leader_epoch.v4 import response as leader_epoch

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.protocol.responses import NOT_THROTTLED
from broker.replication.partition import Partition
from broker.wire.legacy_schemas import (
    ListOffsetsPartitionResponseV0,
    ListOffsetsResponseV0,
    ListOffsetsTopicResponseV0,
)

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
# v8+ (KIP-405) and v9+ (KIP-1005). Without tiered storage the whole log is local: the earliest local
# offset is the log start, and nothing is tiered, which Kafka answers with offset -1 and no error.
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
# v11+ (KIP-1023): the earliest offset not yet uploaded to tiered storage; with none, Kafka answers -1.
EARLIEST_PENDING_UPLOAD = -6
# How long a ListOffsets before v10 (no timeout of its own) waits for logs still being created: well within the
# clients' request timeouts (30 s), far above the milliseconds creating a log takes.
LOG_OPENING_WAIT_S = 10.0


def _locate(
    ctx: RequestContext, name: str, index: int, requested_epoch: int = -1
) -> tuple[Partition | None, ErrorCode]:
    """The partition if this broker leads it; a stale or newer `requested_epoch` is fenced
    (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH)."""
    topic = ctx.broker.metadata.get(name)
    if topic is None or not 0 <= index < topic.partitions:
        return None, ErrorCode.unknown_topic_or_partition
    return ctx.broker.partitions.leader(name, index, requested_epoch)


def _offset_error(index: int, error: ErrorCode) -> list_offsets.ListOffsetsPartitionResponse:
    return list_offsets.ListOffsetsPartitionResponse(
        partition_index=index, error_code=error, timestamp=-1, offset=-1
    )


def list_offset(
    ctx: RequestContext, name: str, part: Any, isolation_level: int
) -> list_offsets.ListOffsetsPartitionResponse:
    index = part.partition_index
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return _offset_error(index, ErrorCode.topic_authorization_failed)
    partition, error = _locate(ctx, name, index, getattr(part, "current_leader_epoch", -1))
    if partition is None:
        return _offset_error(index, error)
    timestamp = part.timestamp
    if timestamp == LATEST:
        found: tuple[int, int] | None = (partition.fetch_bound(isolation_level, follower=False), -1)
    elif timestamp == EARLIEST or (timestamp == EARLIEST_LOCAL and ctx.api_version >= 8):
        found = (partition.log_start_offset, -1)
    elif (timestamp == LATEST_TIERED and ctx.api_version >= 9) or (
        timestamp == EARLIEST_PENDING_UPLOAD and ctx.api_version >= 11
    ):
        found = None
    elif timestamp == MAX_TIMESTAMP:
        if ctx.api_version < 7:
            # KIP-734 added it at v7; Kafka refuses it before as an unsupported version.
            return _offset_error(index, ErrorCode.unsupported_version)
        found = partition.max_timestamp()
    elif timestamp < 0:
        return _offset_error(index, ErrorCode.invalid_request)
    else:
        found = partition.offset_for_timestamp(timestamp, isolation_level)
    if found is None:
        return _offset_error(index, ErrorCode.none)
    offset, found_timestamp = found
    return list_offsets.ListOffsetsPartitionResponse(
        partition_index=index,
        error_code=ErrorCode.none,
        timestamp=found_timestamp,
        offset=offset,
        leader_epoch=partition.leader_epoch,
    )


def legacy_list_offset(ctx: RequestContext, name: str, part: Any) -> ListOffsetsPartitionResponseV0:
    """ListOffsets v0 (while `legacy.api.versions.enable`): up to `max_num_offsets` offsets, newest
    first, as Kafka answered: the base offsets of the segments last modified at or before the
    timestamp (and the high watermark when the newest records qualify); -1 starts from the high
    watermark, -2 from the log start (`Partition.legacy_offsets_before`)."""
    index = part.partition_index
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return ListOffsetsPartitionResponseV0(
            partition_index=index, error_code=ErrorCode.topic_authorization_failed, old_style_offsets=()
        )
    partition, error = _locate(ctx, name, index)
    if partition is None:
        return ListOffsetsPartitionResponseV0(partition_index=index, error_code=error, old_style_offsets=())
    offsets = partition.legacy_offsets_before(part.timestamp, part.max_num_offsets)
    return ListOffsetsPartitionResponseV0(
        partition_index=index, error_code=ErrorCode.none, old_style_offsets=tuple(offsets)
    )


async def handle_list_offsets(
    ctx: RequestContext, request: Any
) -> list_offsets.ListOffsetsResponse | ListOffsetsResponseV0:
    # As Produce does: a partition created a moment ago may be named this broker's in Metadata before its log
    # exists. A consumer refused there retries its offset reset later, and a reset to "latest" then skips
    # what was produced meanwhile. v10+ carries its own timeout.
    replication = ctx.broker.partitions.replication
    if replication.opening_logs():
        timeout = getattr(request, "timeout", None)
        await replication.wait_to_lead(
            [(t.name, p.partition_index) for t in request.topics for p in t.partitions],
            timeout.total_seconds() if timeout is not None else LOG_OPENING_WAIT_S,
        )
    if ctx.api_version == 0:
        # v0's old_style_offsets are in no later version: its own (legacy) entity.
        return ListOffsetsResponseV0(
            topics=tuple(
                ListOffsetsTopicResponseV0(
                    name=t.name, partitions=tuple(legacy_list_offset(ctx, t.name, p) for p in t.partitions)
                )
                for t in request.topics
            )
        )
    isolation_level = getattr(request, "isolation_level", 0)
    return list_offsets.ListOffsetsResponse(
        throttle_time=NOT_THROTTLED,
        topics=tuple(
            list_offsets.ListOffsetsTopicResponse(
                name=t.name,
                partitions=tuple(list_offset(ctx, t.name, p, isolation_level) for p in t.partitions),
            )
            for t in request.topics
        ),
    )


def _epoch_error(index: int, error: ErrorCode) -> leader_epoch.EpochEndOffset:
    return leader_epoch.EpochEndOffset(error_code=error, partition=index, leader_epoch=-1, end_offset=-1)


def _epoch_end_offset(
    ctx: RequestContext, name: str, part: Any, from_follower: bool
) -> leader_epoch.EpochEndOffset:
    index = part.partition
    if not from_follower and not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return _epoch_error(index, ErrorCode.topic_authorization_failed)
    partition, error = _locate(ctx, name, index, part.current_leader_epoch)
    if partition is None:
        return _epoch_error(index, error)
    epoch, end_offset = partition.end_offset_for_leader_epoch(part.leader_epoch)
    return leader_epoch.EpochEndOffset(
        error_code=ErrorCode.none, partition=index, leader_epoch=epoch, end_offset=end_offset
    )


async def handle_offset_for_leader_epoch(
    ctx: RequestContext, request: Any
) -> leader_epoch.OffsetForLeaderEpochResponse:
    # A follower (replica_id >= 0, v3+) truncating its log: a cluster action, as for its Fetch,
    # whether or not this broker replicates (a client must not pose as a follower anywhere).
    from_follower = getattr(request, "replica_id", -1) >= 0
    denied = from_follower and not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    return leader_epoch.OffsetForLeaderEpochResponse(
        throttle_time=NOT_THROTTLED,
        topics=tuple(
            leader_epoch.OffsetForLeaderTopicResult(
                topic=t.topic,
                partitions=tuple(
                    _epoch_error(p.partition, ErrorCode.cluster_authorization_failed)
                    if denied
                    else _epoch_end_offset(ctx, t.topic, p, from_follower)
                    for p in t.partitions
                ),
            )
            for t in request.topics
        ),
    )


def _delete_records(ctx: RequestContext, name: str, part: Any) -> delete_records.DeleteRecordsPartitionResult:
    index = part.partition_index
    if not ctx.allowed(Operation.DELETE, ResourceType.TOPIC, name):
        return delete_records.DeleteRecordsPartitionResult(
            partition_index=index, low_watermark=-1, error_code=ErrorCode.topic_authorization_failed
        )
    partition, error = _locate(ctx, name, index)
    if partition is None:
        return delete_records.DeleteRecordsPartitionResult(
            partition_index=index, low_watermark=-1, error_code=error
        )
    error, low_watermark = partition.delete_records_before(part.offset)
    return delete_records.DeleteRecordsPartitionResult(
        partition_index=index, low_watermark=low_watermark, error_code=ErrorCode(error)
    )


async def handle_delete_records(ctx: RequestContext, request: Any) -> delete_records.DeleteRecordsResponse:
    # As Produce does (broker/handlers/produce.py): a partition created a moment ago may be led here before
    # its log exists (logs are created off the event loop), while Metadata already names this broker its
    # leader. Wait for it, within the request's timeout, rather than answer NOT_LEADER_OR_FOLLOWER.
    replication = ctx.broker.partitions.replication
    opening = [
        (topic.name, part.partition_index)
        for topic in request.topics
        for part in topic.partitions
        if replication.opening_to_lead(topic.name, part.partition_index)
    ]
    if opening:
        await replication.wait_to_lead(opening, request.timeout.total_seconds())
    return delete_records.DeleteRecordsResponse(
        throttle_time=NOT_THROTTLED,
        topics=tuple(
            delete_records.DeleteRecordsTopicResult(
                name=t.name, partitions=tuple(_delete_records(ctx, t.name, p) for p in t.partitions)
            )
            for t in request.topics
        ),
    )
