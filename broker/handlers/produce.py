"""Produce (0)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import struct
import time
from types import ModuleType
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.produce.v8 import response as v8
from kio.schema.produce.v9 import response as v9
from kio.schema.produce.v10 import response as v10
from kio.schema.produce.v11 import response as v11
from kio.schema.produce.v12 import response as by_name
from kio.schema.produce.v13 import response as by_id

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext, TransactionVerifier
from broker.handlers.transaction_version import transaction_v2
from broker.protocol.responses import NOT_THROTTLED

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


# Answers are entities of the requested version from v8 (whose answers have every field this handler gives:
# they go out untouched), or v12's (the last version with topic names) for v3-7, which `build_response`
# rebuilds for that version. The partition answers of v8 to v13 have the same fields.
Schema = ModuleType
_SCHEMAS: dict[int, Schema] = {8: v8, 9: v9, 10: v10, 11: v11, 12: by_name, 13: by_id}
PartitionAnswer = by_id.PartitionProduceResponse | by_name.PartitionProduceResponse
ProduceAnswer = (
    by_id.ProduceResponse
    | by_name.ProduceResponse
    | v11.ProduceResponse
    | v10.ProduceResponse
    | v9.ProduceResponse
    | v8.ProduceResponse
)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _schema(ctx: RequestContext) -> Schema:
    return _SCHEMAS.get(ctx.api_version, by_name)


def _partition_error(
    schema: Schema, index: int, error: ErrorCode, message: str | None = None
) -> PartitionAnswer:
    return schema.PartitionProduceResponse(  # type: ignore[no-any-return]
        index=index,
        error_code=error,
        base_offset=-1,
        log_append_time=None,
        log_start_offset=-1,
        record_errors=(),
        error_message=message,
    )


# Errors of Kafka's RecordValidationException / InvalidRecordException.
_RECORD_VALIDATION_ERRORS = frozenset({ErrorCode.invalid_record, ErrorCode.invalid_timestamp})

# acks=all: (the topic's partition answers, the position of the provisional one, future for the ISR).
Waits = list[tuple[list[PartitionAnswer], int, asyncio.Future[ErrorCode]]]


def append_partition(
    ctx: RequestContext,
    topic_name: str,
    index: int,
    records: bytes | None,
    acks: int,
    waits: tuple[Waits, list[PartitionAnswer]] | None = None,
) -> PartitionAnswer:
    """Append one partition's batches as leader and answer that partition's part.

    With acks=all the answer is only provisional until the ISR has the batches: a future for
    the ISR is added to `waits` (with the list the answer goes to, at its position there) and
    decides the final error code.
    """
    state = ctx.broker
    schema = _schema(ctx)
    topic = state.metadata.get(topic_name)
    if topic is None or not 0 <= index < topic.partitions:
        return _partition_error(schema, index, ErrorCode.unknown_topic_or_partition)
    if topic.internal:
        return _partition_error(
            schema, index, ErrorCode.invalid_topic_exception, "Cannot append to internal topic"
        )
    partition, error = state.partitions.leader(topic_name, index)
    if partition is None:
        return _partition_error(schema, index, error)
    if not records:
        return _partition_error(schema, index, ErrorCode.invalid_record, "no record batches")
    outcome = partition.append(records, acks)
    result = outcome.result
    if result is None:
        error = ErrorCode(outcome.error)
        return schema.PartitionProduceResponse(  # type: ignore[no-any-return]
            index=index,
            error_code=error,
            base_offset=-1,
            log_append_time=None,
            # Kafka answers a batch its validation refused with the partition's log start (other refusals: -1).
            log_start_offset=partition.log_start_offset if error in _RECORD_VALIDATION_ERRORS else -1,
            record_errors=tuple(
                schema.BatchIndexAndErrorMessage(batch_index=batch_index, batch_index_error_message=message)
                for batch_index, message in outcome.record_errors
            ),
            error_message=outcome.message,
        )
    state.metrics.record_produce(topic_name, result.size_bytes, result.record_count)
    append_time = result.log_append_time_ms
    answer: PartitionAnswer = schema.PartitionProduceResponse(
        index=index,
        error_code=ErrorCode.none,
        base_offset=result.base_offset,
        # -1: the batch keeps its CreateTime (kio writes None as -1).
        log_append_time=None if append_time < 0 else _EPOCH + datetime.timedelta(milliseconds=append_time),
        log_start_offset=result.log_start_offset,
        record_errors=(),
        error_message=None,
    )
    if outcome.acks_pending is not None:
        if waits is not None:
            pending, answers = waits
            # The answer goes next into `answers`: the caller appends it on return.
            pending.append((answers, len(answers), outcome.acks_pending))
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
    partitions = [(name, index) for name, index, _ in transactional]
    if transaction_v2(ctx):
        answers = await _add_to_transaction(
            ctx, verifier, transactional_id, producer_id, producer_epoch, partitions
        )
    else:
        answers = dict(await verifier.verify(transactional_id, producer_id, producer_epoch, partitions))
    return {key: error for key, error in answers.items() if error != ErrorCode.none}


async def _add_to_transaction(
    ctx: RequestContext,
    verifier: TransactionVerifier,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: list[tuple[str, int]],
) -> dict[tuple[str, int], ErrorCode]:
    """Transaction version 2: the coordinator adds the partitions to the transaction. Right after EndTxn it
    answers CONCURRENT_TRANSACTIONS until the previous transaction's markers are written (milliseconds): ask
    again every add.partitions.to.txn.retry.backoff.ms for up to add.partitions.to.txn.retry.backoff.max.ms
    (at most request.timeout.ms), as Kafka's leader does, rather than send the producer into its own retry
    backoff (franz-go: 250 ms at least, per transaction). Past that, CONCURRENT_TRANSACTIONS is the answer."""
    config = ctx.broker.config
    retry_ms = config.get_int("add.partitions.to.txn.retry.backoff.max.ms")
    retry_window_s = min(retry_ms, config.get_int("request.timeout.ms")) / 1000
    backoff_s = config.get_int("add.partitions.to.txn.retry.backoff.ms") / 1000
    started = time.monotonic()
    answers = dict(
        await verifier.verify(transactional_id, producer_id, producer_epoch, partitions, add_partitions=True)
    )
    while time.monotonic() - started < retry_window_s:
        busy = [tp for tp, error in answers.items() if error == ErrorCode.concurrent_transactions]
        if not busy:
            break
        await asyncio.sleep(backoff_s)
        answers.update(
            await verifier.verify(transactional_id, producer_id, producer_epoch, busy, add_partitions=True)
        )
    return answers


async def handle_produce(ctx: RequestContext, request: Any) -> ProduceAnswer | None:
    acks = request.acks
    schema = _schema(ctx)
    topics: list[tuple[Any, list[PartitionAnswer]]] = []
    waits: Waits = []
    refused = await _transaction_refusals(ctx, request)
    await _wait_for_new_leader_logs(ctx, request)
    # A request naming thousands of partitions (a client spreading over a wide topic) lets the
    # event loop run every APPEND_SLICE_S: heartbeats, Raft and other clients must not wait for it.
    slice_end = time.monotonic() + APPEND_SLICE_S
    for name, topic_data in _named_topics(ctx, request):
        partitions: list[PartitionAnswer] = []
        writable = name is not None and ctx.allowed(Operation.WRITE, ResourceType.TOPIC, name)
        for partition in topic_data.partition_data:
            if name is None:
                partitions.append(_partition_error(schema, partition.index, ErrorCode.unknown_topic_id))
            elif not writable:
                partitions.append(
                    _partition_error(schema, partition.index, ErrorCode.topic_authorization_failed)
                )
            elif acks not in (0, 1, -1):
                partitions.append(_partition_error(schema, partition.index, ErrorCode.invalid_required_acks))
            elif refused and (name, partition.index) in refused:
                partitions.append(_partition_error(schema, partition.index, refused[(name, partition.index)]))
            else:
                partitions.append(
                    append_partition(ctx, name, partition.index, partition.records, acks, (waits, partitions))
                )
                if time.monotonic() >= slice_end:
                    await asyncio.sleep(0)
                    slice_end = time.monotonic() + APPEND_SLICE_S
        topics.append((topic_data, partitions))
    if waits:
        await _wait_for_replicas(waits, request.timeout.total_seconds())
    if acks == 0:
        return None
    if ctx.api_version >= TOPIC_IDS_FROM:
        return by_id.ProduceResponse(
            responses=tuple(
                by_id.TopicProduceResponse(
                    topic_id=topic.topic_id,
                    partition_responses=tuple(partitions),  # type: ignore[arg-type]
                )
                for topic, partitions in topics
            ),
            throttle_time=NOT_THROTTLED,
        )
    # Topic names are gone from v13: older versions get an entity that has them.
    return schema.ProduceResponse(  # type: ignore[no-any-return]
        responses=tuple(
            schema.TopicProduceResponse(name=topic.name, partition_responses=tuple(partitions))
            for topic, partitions in topics
        ),
        throttle_time=NOT_THROTTLED,
    )


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
    futures = [future for _, _, future in waits]
    await asyncio.wait(futures, timeout=max(timeout_s, 0.0))
    for answers, position, future in waits:
        if future.done():
            error = ErrorCode(future.result())
        else:
            future.cancel()  # the partition drops cancelled waiters
            error = ErrorCode.request_timed_out
        if error != ErrorCode.none:
            answers[position] = dataclasses.replace(answers[position], error_code=error, base_offset=-1)
