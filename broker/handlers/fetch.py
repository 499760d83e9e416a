"""Fetch (1), v4-12, with long-polling.

A fetch that finds fewer than min_bytes waits up to max_wait for an append to any of the
requested partitions (PartitionLog append listeners), then reads again. Only the fetching
connection waits; the event loop keeps serving everyone else.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.auth.principal import principal_user
from broker.handlers.partition_checks import leader_epoch_error
from broker.protocol.fetch_encoding import encode_fetch_response
from broker.protocol.frames import FramedResponse
from broker.quotas.manager import CONSUMER_BYTE_RATE
from broker.records.errors import StorageError
from broker.server.context import RequestContext

READ_COMMITTED = 1


def _error_partition(index: int, error: ErrorCode, high_watermark: int = -1) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": error,
        "high_watermark": high_watermark,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        "aborted_transactions": None,
        "preferred_read_replica": -1,
        # Kafka sends empty (not null) records with an error; librdkafka cannot parse null here.
        "records": b"",
    }


def _read_all(
    ctx: RequestContext, request: Any, byte_cap: int | None = None
) -> tuple[list[dict[str, Any]], int, list[Any]]:
    """One pass over every requested partition: (topic responses, bytes read, logs touched)."""
    state = ctx.broker
    replication = state.replication
    # A follower's Fetch (replica_id >= 0, CLUSTER_ACTION checked in handle_fetch) reads up to
    # the log end and reports its progress.
    follower = replication is not None and request.replica_id >= 0
    read_committed = request.isolation_level == READ_COMMITTED
    budget = request.max_bytes if request.max_bytes > 0 else 0
    if byte_cap is not None:
        budget = min(budget, byte_cap)
    total = 0
    logs = []
    responses = []
    for fetch_topic in request.topics:
        name = fetch_topic.topic
        topic = state.metadata.get(name)
        partitions = []
        # Followers were authorized as a cluster action above.
        readable = follower or ctx.allowed(Operation.READ, ResourceType.TOPIC, name)
        for part in fetch_topic.partitions:
            index = part.partition
            if not readable:
                partitions.append(_error_partition(index, ErrorCode.topic_authorization_failed))
                continue
            if topic is None or not 0 <= index < topic.partitions:
                partitions.append(_error_partition(index, ErrorCode.unknown_topic_or_partition))
                continue
            replica = None
            # current_leader_epoch exists from v9; older clients skip the fencing check.
            requested_epoch = getattr(part, "current_leader_epoch", -1)
            if replication is not None and replication.manages(name):
                replica, error = replication.leader_replica(name, index, requested_epoch)
                if replica is None:
                    partitions.append(_error_partition(index, error))
                    continue
                partition_log = replica.log
            else:
                partition_log = state.logs.get(name, index)
                if partition_log is None:
                    partitions.append(_error_partition(index, ErrorCode.not_leader_or_follower))
                    continue
                epoch_error = leader_epoch_error(requested_epoch, topic.leader_epoch(index))
                if epoch_error != ErrorCode.none:
                    partitions.append(_error_partition(index, epoch_error))
                    continue
            logs.append(partition_log)
            offset = part.fetch_offset
            if follower and (
                replica is None
                or (
                    partition_log.log_start_offset <= offset <= partition_log.log_end_offset
                    and not replication.record_follower_fetch(replica, request.replica_id, offset)
                )
            ):
                partitions.append(_error_partition(index, ErrorCode.not_leader_or_follower))
                continue
            high_watermark = partition_log.high_watermark
            # Without transactions the last stable offset is the high watermark.
            stable = high_watermark
            log_start = partition_log.log_start_offset
            if offset < log_start or offset > partition_log.log_end_offset:
                partitions.append(
                    {
                        **_error_partition(index, ErrorCode.offset_out_of_range, high_watermark),
                        "last_stable_offset": stable,
                        "log_start_offset": log_start,
                    }
                )
                continue
            records = b""
            limit = max(0, min(part.partition_max_bytes, budget - total))
            max_offset = stable if read_committed else high_watermark
            first = total == 0
            if follower:
                max_offset = partition_log.log_end_offset
                limit, first = _follower_limit(replication, replica, request.replica_id, limit, first)
            # The first partition with data returns at least one whole batch, as in Kafka,
            # so a batch larger than max_bytes cannot stall a consumer.
            if offset < max_offset and (limit > 0 or first):
                try:
                    records = partition_log.read(offset, limit, max_offset=max_offset, min_one_message=first)
                except StorageError as exc:
                    partitions.append(_error_partition(index, ErrorCode(exc.error_code), high_watermark))
                    continue
            total += len(records)
            if follower:
                if request.replica_id not in replica.leader.isr:  # only catching-up replicas count
                    replication.leader_throttle.record(len(records), time.monotonic())
            elif records:
                state.metrics.record_fetch(name, records)
            partitions.append(
                {
                    "partition_index": index,
                    "error_code": ErrorCode.none,
                    "high_watermark": high_watermark,
                    "last_stable_offset": stable,
                    "log_start_offset": log_start,
                    "aborted_transactions": [] if read_committed else None,
                    "preferred_read_replica": -1,
                    "records": records,
                }
            )
        responses.append({"topic": name, "partitions": partitions})
    return responses, total, logs


def _all_failed(request: Any, error: ErrorCode) -> list[dict[str, Any]]:
    return [
        {"topic": t.topic, "partitions": [_error_partition(p.partition, error) for p in t.partitions]}
        for t in request.topics
    ]


def _follower_limit(
    replication: Any, replica: Any, follower: int, limit: int, first: bool
) -> tuple[int, bool]:
    """leader.replication.throttled.rate: a follower outside the ISR gets what the rate allows."""
    throttle = replication.leader_throttle
    if not throttle.enabled or follower in replica.leader.isr:
        return limit, first
    # Whole batches within the allowance only: the rate must hold even for the first batch.
    return min(limit, throttle.allowance(time.monotonic())), False


async def handle_fetch(ctx: RequestContext, request: Any) -> dict[str, Any] | FramedResponse:
    if request.replica_id >= 0 and not ctx.allowed(
        Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        # Only brokers fetch as replicas: a follower's Fetch reads past the high watermark and
        # moves the ISR, so a client posing as one is refused outright (as Kafka does).
        body = {
            "throttle_time": 0,
            "error_code": ErrorCode.cluster_authorization_failed,
            "session_id": 0,
            # v4-6 have no top-level error code: every partition carries it too.
            "responses": _all_failed(request, ErrorCode.cluster_authorization_failed),
        }
        return FramedResponse(encode_fetch_response(ctx.api_version, ctx.correlation_id, body))
    if getattr(request, "session_id", 0) != 0:  # sessions exist from v7
        # We never create fetch sessions (we answer session_id 0), so any id is unknown.
        return {
            "throttle_time": 0,
            "error_code": ErrorCode.fetch_session_id_not_found,
            "session_id": 0,
            "responses": [],
        }
    quotas = ctx.broker.quotas
    user, client_id = principal_user(ctx.principal), ctx.client_id or ""
    byte_rate = quotas.limit(CONSUMER_BYTE_RATE, user, client_id) if quotas is not None else None
    byte_cap = None
    if byte_rate is not None:
        assert quotas is not None
        throttle = quotas.throttle(CONSUMER_BYTE_RATE, user, client_id, time.monotonic())
        if throttle > 0:
            # Kafka answers a throttled fetch with no data and the time to wait.
            return _throttled_response(ctx, throttle)
        # A response carries no more than the client may still receive (and at most one
        # window's worth); one batch always goes, so a consumer never stalls.
        headroom = quotas.headroom(CONSUMER_BYTE_RATE, user, client_id, time.monotonic()) or 0.0
        byte_cap = max(1, int(min(byte_rate * quotas.window_s, headroom)))
    responses, total, logs = _read_all(ctx, request, byte_cap)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + request.max_wait.total_seconds()
    # Wait for appends until min_bytes are available or max_wait has passed.
    while total < request.min_bytes and logs and not ctx.broker.stopping.is_set():
        remaining = deadline - loop.time()
        if remaining <= 0:
            break
        await _wait_for_append(ctx, logs, remaining)
        responses, total, logs = _read_all(ctx, request, byte_cap)
    throttle_ms = 0
    if byte_rate is not None and total:
        assert quotas is not None
        throttle_ms = int(quotas.record(CONSUMER_BYTE_RATE, user, client_id, total, time.monotonic()) * 1000)
    body = {
        "throttle_time": throttle_ms,
        "error_code": ErrorCode.none,
        "session_id": 0,
        "responses": responses,
    }
    return FramedResponse(encode_fetch_response(ctx.api_version, ctx.correlation_id, body))


def _throttled_response(ctx: RequestContext, throttle_s: float) -> FramedResponse:
    body = {
        "throttle_time": int(throttle_s * 1000),
        "error_code": ErrorCode.none,
        "session_id": 0,
        "responses": [],
    }
    return FramedResponse(encode_fetch_response(ctx.api_version, ctx.correlation_id, body))


async def _wait_for_append(ctx: RequestContext, logs: list[Any], timeout_s: float) -> None:
    woken = asyncio.Event()

    def on_append(*_args: Any) -> None:
        woken.set()

    for partition_log in logs:
        partition_log.add_append_listener(on_append)
    stopping = asyncio.ensure_future(ctx.broker.stopping.wait())
    appended = asyncio.ensure_future(woken.wait())
    try:
        await asyncio.wait({stopping, appended}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        appended.cancel()
        for partition_log in logs:
            partition_log.remove_append_listener(on_append)


APIS = {1: (4, 12, handle_fetch)}
