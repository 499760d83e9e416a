"""ListOffsets (2), OffsetForLeaderEpoch (23) and DeleteRecords (21)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.partitions.partition import Partition

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
# v8+ (KIP-405) and v9+ (KIP-1005). Without tiered storage the whole log is local: the earliest local
# offset is the log start, and nothing is tiered, which Kafka answers with offset -1 and no error.
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
# v11+ (KIP-1023): the earliest offset not yet uploaded to tiered storage; with none, Kafka answers -1.
EARLIEST_PENDING_UPLOAD = -6


def _locate(
    ctx: RequestContext, name: str, index: int, requested_epoch: int = -1
) -> tuple[Partition | None, ErrorCode]:
    """The partition if this broker leads it; a stale or newer `requested_epoch` is fenced
    (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH)."""
    topic = ctx.broker.metadata.get(name)
    if topic is None or not 0 <= index < topic.partitions:
        return None, ErrorCode.unknown_topic_or_partition
    return ctx.broker.partitions.leader(name, index, requested_epoch)


def list_offset(ctx: RequestContext, name: str, part: Any, isolation_level: int) -> dict[str, Any]:
    index = part.partition_index
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return {
            "partition_index": index,
            "error_code": ErrorCode.topic_authorization_failed,
            "timestamp": -1,
            "offset": -1,
        }
    partition, error = _locate(ctx, name, index, getattr(part, "current_leader_epoch", -1))
    if partition is None:
        return {"partition_index": index, "error_code": error, "timestamp": -1, "offset": -1}
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
            return {
                "partition_index": index,
                "error_code": ErrorCode.unsupported_version,
                "timestamp": -1,
                "offset": -1,
            }
        found = partition.max_timestamp()
    elif timestamp < 0:
        return {
            "partition_index": index,
            "error_code": ErrorCode.invalid_request,
            "timestamp": -1,
            "offset": -1,
        }
    else:
        found = partition.offset_for_timestamp(timestamp, isolation_level)
    if found is None:
        return {
            "partition_index": index,
            "error_code": ErrorCode.none,
            "timestamp": -1,
            "offset": -1,
            "leader_epoch": -1,
        }
    offset, found_timestamp = found
    return {
        "partition_index": index,
        "error_code": ErrorCode.none,
        "timestamp": found_timestamp,
        "offset": offset,
        "leader_epoch": partition.leader_epoch,
    }


def legacy_list_offset(ctx: RequestContext, name: str, part: Any) -> dict[str, Any]:
    """ListOffsets v0 (while `legacy.api.versions.enable`): up to `max_num_offsets` offsets, newest
    first, as Kafka answered: the base offsets of the segments last modified at or before the
    timestamp (and the high watermark when the newest records qualify); -1 starts from the high
    watermark, -2 from the log start (`Partition.legacy_offsets_before`)."""
    index = part.partition_index
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return {
            "partition_index": index,
            "error_code": ErrorCode.topic_authorization_failed,
            "old_style_offsets": [],
        }
    partition, error = _locate(ctx, name, index)
    if partition is None:
        return {"partition_index": index, "error_code": error, "old_style_offsets": []}
    offsets = partition.legacy_offsets_before(part.timestamp, part.max_num_offsets)
    return {"partition_index": index, "error_code": ErrorCode.none, "old_style_offsets": offsets}


async def handle_list_offsets(ctx: RequestContext, request: Any) -> dict[str, Any]:
    if ctx.api_version == 0:
        topics = [
            {"name": t.name, "partitions": [legacy_list_offset(ctx, t.name, p) for p in t.partitions]}
            for t in request.topics
        ]
        return {"topics": topics}
    isolation_level = getattr(request, "isolation_level", 0)
    return {
        "throttle_time": 0,
        "topics": [
            {
                "name": t.name,
                "partitions": [list_offset(ctx, t.name, p, isolation_level) for p in t.partitions],
            }
            for t in request.topics
        ],
    }


def _epoch_end_offset(ctx: RequestContext, name: str, part: Any, from_follower: bool) -> dict[str, Any]:
    index = part.partition
    if not from_follower and not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return {
            "error_code": ErrorCode.topic_authorization_failed,
            "partition": index,
            "leader_epoch": -1,
            "end_offset": -1,
        }
    partition, error = _locate(ctx, name, index, part.current_leader_epoch)
    if partition is None:
        return {"error_code": error, "partition": index, "leader_epoch": -1, "end_offset": -1}
    epoch, end_offset = partition.end_offset_for_leader_epoch(part.leader_epoch)
    return {"error_code": ErrorCode.none, "partition": index, "leader_epoch": epoch, "end_offset": end_offset}


async def handle_offset_for_leader_epoch(ctx: RequestContext, request: Any) -> dict[str, Any]:
    # A follower (replica_id >= 0, v3+) truncating its log: a cluster action, as for its Fetch,
    # whether or not this broker replicates (a client must not pose as a follower anywhere).
    from_follower = getattr(request, "replica_id", -1) >= 0
    if from_follower and not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return {
            "throttle_time": 0,
            "topics": [
                {
                    "topic": t.topic,
                    "partitions": [
                        {
                            "error_code": ErrorCode.cluster_authorization_failed,
                            "partition": p.partition,
                            "leader_epoch": -1,
                            "end_offset": -1,
                        }
                        for p in t.partitions
                    ],
                }
                for t in request.topics
            ],
        }
    return {
        "throttle_time": 0,
        "topics": [
            {
                "topic": t.topic,
                "partitions": [_epoch_end_offset(ctx, t.topic, p, from_follower) for p in t.partitions],
            }
            for t in request.topics
        ],
    }


def _delete_records(ctx: RequestContext, name: str, part: Any) -> dict[str, Any]:
    index = part.partition_index
    if not ctx.allowed(Operation.DELETE, ResourceType.TOPIC, name):
        return {
            "partition_index": index,
            "low_watermark": -1,
            "error_code": ErrorCode.topic_authorization_failed,
        }
    partition, error = _locate(ctx, name, index)
    if partition is None:
        return {"partition_index": index, "low_watermark": -1, "error_code": error}
    error, low_watermark = partition.delete_records_before(part.offset)
    return {"partition_index": index, "low_watermark": low_watermark, "error_code": error}


async def handle_delete_records(ctx: RequestContext, request: Any) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "topics": [
            {"name": t.name, "partitions": [_delete_records(ctx, t.name, p) for p in t.partitions]}
            for t in request.topics
        ],
    }


APIS = {
    2: (1, 11, handle_list_offsets),  # v10's timeout_ms bounds waits for remote storage: none here
    21: (0, 2, handle_delete_records),
    23: (2, 4, handle_offset_for_leader_epoch),
}
