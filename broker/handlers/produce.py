"""Produce (0)."""

from __future__ import annotations

import time
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.records.errors import StorageError
from broker.server.context import RequestContext


def _partition_error(index: int, error: ErrorCode | int, message: str | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "error_code": error,
        "base_offset": -1,
        "log_append_time": -1,
        "log_start_offset": -1,
        "record_errors": [],
        "error_message": message,
    }


def append_partition(
    ctx: RequestContext, topic_name: str, index: int, records: bytes | None, acks: int
) -> dict:
    """Append one partition's batches as leader and answer that partition's part."""
    state = ctx.broker
    topic = state.metadata.get(topic_name)
    if topic is None or not 0 <= index < topic.partitions:
        return _partition_error(index, ErrorCode.unknown_topic_or_partition)
    if topic.internal:
        return _partition_error(index, ErrorCode.invalid_topic_exception, "Cannot append to internal topic")
    partition_log = state.logs.get(topic_name, index)
    if partition_log is None:
        return _partition_error(index, ErrorCode.not_leader_or_follower)
    if not records:
        return _partition_error(index, ErrorCode.invalid_record, "no record batches")
    # The only in-sync replica is this one: acks=all cannot be honoured if more are required.
    if acks == -1 and partition_log.config.min_insync_replicas > 1:
        return _partition_error(
            index,
            ErrorCode.not_enough_replicas,
            f"min.insync.replicas={partition_log.config.min_insync_replicas} but only 1 replica is in sync",
        )
    try:
        result = partition_log.append_as_leader(
            records, leader_epoch=topic.leader_epoch(index), now_ms=int(time.time() * 1000)
        )
    except StorageError as exc:
        return _partition_error(index, ErrorCode(exc.error_code), str(exc))
    # One replica: the record is fully replicated as soon as the leader has it.
    partition_log.high_watermark = partition_log.log_end_offset
    state.metrics.record_produce(topic_name, result.size_bytes, result.record_count)
    return {
        "index": index,
        "error_code": ErrorCode.none,
        "base_offset": result.base_offset,
        "log_append_time": result.log_append_time_ms,
        "log_start_offset": result.log_start_offset,
        "record_errors": [],
        "error_message": None,
    }


async def handle_produce(ctx: RequestContext, request: Any) -> dict[str, Any] | None:
    acks = request.acks
    responses = []
    for topic_data in request.topic_data:
        partitions = []
        writable = ctx.allowed(Operation.WRITE, ResourceType.TOPIC, topic_data.name)
        for partition in topic_data.partition_data:
            if not writable:
                partitions.append(_partition_error(partition.index, ErrorCode.topic_authorization_failed))
            elif acks not in (0, 1, -1):
                partitions.append(_partition_error(partition.index, ErrorCode.invalid_required_acks))
            elif request.transactional_id is not None:
                # Transactions are not served (AddPartitionsToTxn is not advertised).
                partitions.append(
                    _partition_error(partition.index, ErrorCode.transactional_id_authorization_failed)
                )
            else:
                partitions.append(
                    append_partition(ctx, topic_data.name, partition.index, partition.records, acks)
                )
        responses.append({"name": topic_data.name, "partition_responses": partitions})
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time": 0}


APIS = {0: (3, 10, handle_produce)}
