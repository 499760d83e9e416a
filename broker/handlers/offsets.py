"""ListOffsets (2), OffsetForLeaderEpoch (23) and DeleteRecords (21)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.handlers.partition_checks import leader_epoch_error
from broker.records.errors import StorageError
from broker.server.context import RequestContext

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
READ_COMMITTED = 1


def _locate(ctx: RequestContext, name: str, index: int) -> tuple[Any, Any, ErrorCode]:
    topic = ctx.broker.metadata.get(name)
    if topic is None or not 0 <= index < topic.partitions:
        return None, None, ErrorCode.unknown_topic_or_partition
    partition_log = ctx.broker.logs.get(name, index)
    if partition_log is None:
        return topic, None, ErrorCode.not_leader_or_follower
    return topic, partition_log, ErrorCode.none


def list_offset(ctx: RequestContext, name: str, part: Any, isolation_level: int) -> dict[str, Any]:
    index = part.partition_index
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return {
            "partition_index": index,
            "error_code": ErrorCode.topic_authorization_failed,
            "timestamp": -1,
            "offset": -1,
        }
    topic, partition_log, error = _locate(ctx, name, index)
    if error == ErrorCode.none:
        error = leader_epoch_error(getattr(part, "current_leader_epoch", -1), topic.leader_epoch(index))
    if error != ErrorCode.none:
        return {"partition_index": index, "error_code": error, "timestamp": -1, "offset": -1}
    epoch = topic.leader_epoch(index)
    timestamp = part.timestamp
    # Without transactions the last stable offset equals the high watermark.
    latest = partition_log.high_watermark
    if timestamp == LATEST:
        found: tuple[int, int] | None = (latest, -1)
    elif timestamp == EARLIEST:
        found = (partition_log.log_start_offset, -1)
    elif timestamp == MAX_TIMESTAMP:
        found = partition_log.max_timestamp()
    elif timestamp < 0:
        return {
            "partition_index": index,
            "error_code": ErrorCode.invalid_request,
            "timestamp": -1,
            "offset": -1,
        }
    else:
        hit = partition_log.offset_for_timestamp(timestamp)
        found = None if hit is None or hit[0] >= latest else (hit[0], hit[1])
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
        "leader_epoch": epoch,
    }


async def handle_list_offsets(ctx: RequestContext, request: Any) -> dict[str, Any]:
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


def _epoch_end_offset(ctx: RequestContext, name: str, part: Any) -> dict[str, Any]:
    index = part.partition
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
        return {
            "error_code": ErrorCode.topic_authorization_failed,
            "partition": index,
            "leader_epoch": -1,
            "end_offset": -1,
        }
    topic, partition_log, error = _locate(ctx, name, index)
    if error == ErrorCode.none:
        error = leader_epoch_error(part.current_leader_epoch, topic.leader_epoch(index))
    if error != ErrorCode.none:
        return {"error_code": error, "partition": index, "leader_epoch": -1, "end_offset": -1}
    epoch, end_offset = partition_log.end_offset_for_leader_epoch(part.leader_epoch)
    return {"error_code": ErrorCode.none, "partition": index, "leader_epoch": epoch, "end_offset": end_offset}


async def handle_offset_for_leader_epoch(ctx: RequestContext, request: Any) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "topics": [
            {"topic": t.topic, "partitions": [_epoch_end_offset(ctx, t.topic, p) for p in t.partitions]}
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
    _topic, partition_log, error = _locate(ctx, name, index)
    if error != ErrorCode.none:
        return {"partition_index": index, "low_watermark": -1, "error_code": error}
    offset = part.offset
    # -1 means "up to the high watermark".
    if offset == -1:
        offset = partition_log.high_watermark
    if offset < 0 or offset > partition_log.high_watermark:
        return {"partition_index": index, "low_watermark": -1, "error_code": ErrorCode.offset_out_of_range}
    try:
        partition_log.delete_records_before(offset)
    except StorageError as exc:
        return {"partition_index": index, "low_watermark": -1, "error_code": ErrorCode(exc.error_code)}
    return {
        "partition_index": index,
        "low_watermark": partition_log.log_start_offset,
        "error_code": ErrorCode.none,
    }


async def handle_delete_records(ctx: RequestContext, request: Any) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "topics": [
            {"name": t.name, "partitions": [_delete_records(ctx, t.name, p) for p in t.partitions]}
            for t in request.topics
        ],
    }


APIS = {
    2: (1, 7, handle_list_offsets),
    21: (0, 2, handle_delete_records),
    23: (2, 4, handle_offset_for_leader_epoch),
}
