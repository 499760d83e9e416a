"""Produce (0)."""

from __future__ import annotations

import asyncio
import struct
import time
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.handlers.transactions import transaction_v2

APPEND_SLICE_S = 0.01
# In a v2 batch header: the low byte of the attributes, and the producer id and epoch.
_ATTRIBUTES_LOW_BYTE = 22
_TRANSACTIONAL_FLAG = 0x10
_PRODUCER = struct.Struct(">qh")
_PRODUCER_AT = 43


def _is_transactional(records: bytes | None) -> bool:
    """Whether the first batch is transactional (the log refuses a request mixing both kinds)."""
    return (
        records is not None
        and len(records) > _ATTRIBUTES_LOW_BYTE
        and bool(records[_ATTRIBUTES_LOW_BYTE] & _TRANSACTIONAL_FLAG)
    )


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


# Errors of Kafka's RecordValidationException / InvalidRecordException.
_RECORD_VALIDATION_ERRORS = frozenset({ErrorCode.invalid_record, ErrorCode.invalid_timestamp})

# acks=all: (provisional partition answer, future for the ISR).
Waits = list[tuple[dict[str, Any], asyncio.Future[ErrorCode]]]


def append_partition(
    ctx: RequestContext,
    topic_name: str,
    index: int,
    records: bytes | None,
    acks: int,
    waits: Waits | None = None,
) -> dict:
    """Append one partition's batches as leader and answer that partition's part.

    With acks=all the answer is only provisional until the ISR has the batches: a future for
    the ISR is added to `waits` and decides the final error code.
    """
    state = ctx.broker
    topic = state.metadata.get(topic_name)
    if topic is None or not 0 <= index < topic.partitions:
        return _partition_error(index, ErrorCode.unknown_topic_or_partition)
    if topic.internal:
        return _partition_error(index, ErrorCode.invalid_topic_exception, "Cannot append to internal topic")
    partition, error = state.partitions.leader(topic_name, index)
    if partition is None:
        return _partition_error(index, error)
    if not records:
        return _partition_error(index, ErrorCode.invalid_record, "no record batches")
    outcome = partition.append(records, acks)
    result = outcome.result
    if result is None:
        answer = _partition_error(index, outcome.error, outcome.message)
        if outcome.error in _RECORD_VALIDATION_ERRORS:
            # Kafka answers a batch its validation refused with the partition's log start (other refusals: -1).
            answer["log_start_offset"] = partition.log_start_offset
        answer["record_errors"] = [
            {"batch_index": batch_index, "batch_index_error_message": message}
            for batch_index, message in outcome.record_errors
        ]
        return answer
    state.metrics.record_produce(topic_name, result.size_bytes, result.record_count)
    answer = {
        "index": index,
        "error_code": ErrorCode.none,
        "base_offset": result.base_offset,
        "log_append_time": result.log_append_time_ms,
        "log_start_offset": result.log_start_offset,
        "record_errors": [],
        "error_message": None,
    }
    if outcome.acks_pending is not None:
        if waits is not None:
            waits.append((answer, outcome.acks_pending))
        else:
            outcome.acks_pending.cancel()  # nobody waits: the partition drops cancelled waiters
    return answer


# v13 names topics by id (KIP-516).
TOPIC_IDS_FROM = 13


def _named_topics(ctx: RequestContext, request: Any) -> list[tuple[str | None, Any]]:
    """Each topic of the request with its name: v13+ names topics by id (KIP-516), None when unknown."""
    if ctx.api_version < TOPIC_IDS_FROM:
        return [(topic.name, topic) for topic in request.topic_data]
    named = []
    for topic in request.topic_data:
        record = ctx.broker.metadata.get_by_id(topic.topic_id)
        named.append((record.name if record is not None else None, topic))
    return named


async def _transaction_refusals(ctx: RequestContext, request: Any) -> dict[tuple[str, int], ErrorCode]:
    """The partitions a transactional request may not append to, with their error: transactional
    batches need a transactional id the principal may write (TransactionalId Write ACL), and the
    transaction verifier (KIP-890, when one is set) must know the partition is in the transaction."""
    transactional_id = request.transactional_id
    transactional = [
        (name, part.index, part.records)
        for name, topic in _named_topics(ctx, request)
        if name is not None
        for part in topic.partition_data
        if _is_transactional(part.records)
    ]
    if not transactional:
        return {}
    if transactional_id is None or not ctx.allowed(
        Operation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
    ):
        return {
            (name, index): ErrorCode.transactional_id_authorization_failed for name, index, _ in transactional
        }
    verifier = ctx.broker.txn_verifier
    if verifier is None:
        return {}
    producer_id, producer_epoch = _PRODUCER.unpack_from(transactional[0][2], _PRODUCER_AT)
    answers = await verifier.verify(
        transactional_id,
        producer_id,
        producer_epoch,
        [(name, index) for name, index, _ in transactional],
        add_partitions=transaction_v2(ctx),
    )
    return {key: error for key, error in answers.items() if error != ErrorCode.none}


async def handle_produce(ctx: RequestContext, request: Any) -> dict[str, Any] | None:
    acks = request.acks
    responses = []
    waits: Waits = []
    refused = await _transaction_refusals(ctx, request)
    await _wait_for_new_leader_logs(ctx, request)
    # A request naming thousands of partitions (a client spreading over a wide topic) lets the
    # event loop run every APPEND_SLICE_S: heartbeats, Raft and other clients must not wait for it.
    slice_end = time.monotonic() + APPEND_SLICE_S
    for name, topic_data in _named_topics(ctx, request):
        partitions = []
        writable = name is not None and ctx.allowed(Operation.WRITE, ResourceType.TOPIC, name)
        for partition in topic_data.partition_data:
            if name is None:
                partitions.append(_partition_error(partition.index, ErrorCode.unknown_topic_id))
            elif not writable:
                partitions.append(_partition_error(partition.index, ErrorCode.topic_authorization_failed))
            elif acks not in (0, 1, -1):
                partitions.append(_partition_error(partition.index, ErrorCode.invalid_required_acks))
            elif refused and (name, partition.index) in refused:
                partitions.append(_partition_error(partition.index, refused[(name, partition.index)]))
            else:
                partitions.append(
                    append_partition(ctx, name, partition.index, partition.records, acks, waits)
                )
                if time.monotonic() >= slice_end:
                    await asyncio.sleep(0)
                    slice_end = time.monotonic() + APPEND_SLICE_S
        topic_key = (
            {"topic_id": topic_data.topic_id}
            if ctx.api_version >= TOPIC_IDS_FROM
            else {"name": topic_data.name}
        )
        responses.append({**topic_key, "partition_responses": partitions})
    if waits:
        await _wait_for_replicas(waits, request.timeout.total_seconds())
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time": 0}


async def _wait_for_new_leader_logs(ctx: RequestContext, request: Any) -> None:
    """A partition created a moment ago may be led here before its log exists (logs are created off the
    event loop): wait for it, within the request's timeout, rather than answer NOT_LEADER_OR_FOLLOWER, which
    a producer without idempotence retries after its later batches, out of order."""
    replication = ctx.broker.partitions.replication
    opening = [
        (name, partition.index)
        for name, topic_data in _named_topics(ctx, request)
        if name is not None
        for partition in topic_data.partition_data
        if replication.opening_to_lead(name, partition.index)
    ]
    if opening:
        await replication.wait_to_lead(opening, request.timeout.total_seconds())


async def _wait_for_replicas(waits: Waits, timeout_s: float) -> None:
    """Hold the response until the ISR has every batch, or the request's timeout passes."""
    futures = [future for _, future in waits]
    await asyncio.wait(futures, timeout=max(timeout_s, 0.0))
    for answer, future in waits:
        if future.done():
            answer["error_code"] = future.result()
        else:
            future.cancel()  # the partition drops cancelled waiters
            answer["error_code"] = ErrorCode.request_timed_out
        if answer["error_code"] != ErrorCode.none:
            answer["base_offset"] = -1


# v11 adds TRANSACTION_ABORTABLE (KIP-890); v12 is v11 unless transaction.version 2 is finalized, when a
# transactional batch to a partition not yet in the transaction adds it (the producer sends no
# AddPartitionsToTxn).
APIS = {0: (3, 13, handle_produce)}
