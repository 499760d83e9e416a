"""The transaction APIs a producer and admin tools call: AddPartitionsToTxn (24), AddOffsetsToTxn (25),
EndTxn (26), TxnOffsetCommit (28), DescribeTransactions (65), ListTransactions (66).

InitProducerId (22) is in producers.py, FindCoordinator key type 1 in groups.py, WriteTxnMarkers (27)
with the partition layer's marker writing.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import re2
from kio.schema.add_offsets_to_txn.v4.response import AddOffsetsToTxnResponse
from kio.schema.add_partitions_to_txn.v3 import response as add_partitions_v3
from kio.schema.add_partitions_to_txn.v5 import response as add_partitions
from kio.schema.describe_transactions.v0 import response as describe
from kio.schema.end_txn.v5.response import EndTxnResponse
from kio.schema.errors import ErrorCode
from kio.schema.list_transactions.v2 import response as listing
from kio.schema.txn_offset_commit.v5 import response as offset_commit

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.groups.coordinator import PartitionOffset
from broker.groups.offsets_replay import coordinator_error_for_append
from broker.handlers.transaction_version import transaction_v2
from broker.metadata.topic_names import OFFSETS_TOPIC_NAME
from broker.protocol.responses import NOT_THROTTLED
from broker.transactions.coordinator import TransactionCoordinator

# KIP-588: versions below these do not know PRODUCER_FENCED and get INVALID_PRODUCER_EPOCH instead.
FIRST_VERSION_WITH_PRODUCER_FENCED = {22: 4, 24: 2, 25: 2, 26: 2, 28: 3}
FIRST_BATCHED_ADD_PARTITIONS_VERSION = 4


def client_error(ctx: RequestContext, error: int) -> ErrorCode:
    """The error as this request's version can understand it."""
    if error == ErrorCode.producer_fenced and ctx.api_version < FIRST_VERSION_WITH_PRODUCER_FENCED.get(
        ctx.api_key, 0
    ):
        return ErrorCode.invalid_producer_epoch
    return ErrorCode(error)


def coordinator_of(ctx: RequestContext) -> TransactionCoordinator | None:
    return ctx.broker.transactions


# Kafka's -1 "no time" in a non-nullable timestamp field (kio encodes datetimes, not ints).
_NO_TIME = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) - datetime.timedelta(milliseconds=1)


def _timestamp(ms: int) -> datetime.datetime:
    return _NO_TIME if ms < 0 else datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)


def _ms(value: datetime.timedelta | int) -> int:
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(milliseconds=1)
    return int(value)


# --- AddPartitionsToTxn (24) ---------------------------------------------------------------------


async def _add_partitions_for(
    ctx: RequestContext,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    topics: Any,
    verify_only: bool,
) -> dict[str, list[tuple[int, ErrorCode]]]:
    """One transaction's per-topic results (partition, error), Kafka's checks in Kafka's order."""
    requested = [(topic.name, int(p)) for topic in topics for p in topic.partitions]
    errors: dict[tuple[str, int], int] = {}
    coordinator = coordinator_of(ctx)
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        errors = dict.fromkeys(requested, ErrorCode.transactional_id_authorization_failed)
    elif coordinator is None:
        errors = dict.fromkeys(requested, ErrorCode.coordinator_not_available)
    else:
        refused: dict[tuple[str, int], int] = {}
        for topic, index in requested:
            if not ctx.allowed(Operation.WRITE, ResourceType.TOPIC, topic):
                refused[(topic, index)] = ErrorCode.topic_authorization_failed
                continue
            record = ctx.broker.metadata.get(topic)
            if record is None or not 0 <= index < record.partitions:
                refused[(topic, index)] = ErrorCode.unknown_topic_or_partition
        if refused:
            # Nothing is added when one partition is refused: the others were not attempted.
            errors = {tp: refused.get(tp, ErrorCode.operation_not_attempted) for tp in requested}
        elif verify_only:
            errors = coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, requested)
        else:
            error = await coordinator.add_partitions(transactional_id, producer_id, producer_epoch, requested)
            errors = dict.fromkeys(requested, error)
    by_topic: dict[str, list[tuple[int, ErrorCode]]] = {}
    for (topic, index), error in errors.items():
        by_topic.setdefault(topic, []).append((index, client_error(ctx, error)))
    return by_topic


async def add_partitions_to_txn(
    ctx: RequestContext, request: Any
) -> add_partitions.AddPartitionsToTxnResponse | add_partitions_v3.AddPartitionsToTxnResponse:
    if ctx.api_version < FIRST_BATCHED_ADD_PARTITIONS_VERSION:
        results = await _add_partitions_for(
            ctx,
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            request.v3_and_below_topics,
            verify_only=False,
        )
        # v4 replaced the one transaction's results by per-transaction ones: older versions get v3's entity.
        return add_partitions_v3.AddPartitionsToTxnResponse(
            throttle_time=NOT_THROTTLED,
            results_by_topic_v3_and_below=tuple(
                add_partitions_v3.AddPartitionsToTxnTopicResult(
                    name=topic,
                    results_by_partition=tuple(
                        add_partitions_v3.AddPartitionsToTxnPartitionResult(
                            partition_index=index, partition_error_code=error
                        )
                        for index, error in partitions
                    ),
                )
                for topic, partitions in results.items()
            ),
        )
    # The batched form is sent by brokers (KIP-890 verification), never by clients.
    if not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return add_partitions.AddPartitionsToTxnResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.cluster_authorization_failed,
            results_by_transaction=(),
        )
    answers = []
    for transaction in request.transactions:
        results = await _add_partitions_for(
            ctx,
            transaction.transactional_id,
            transaction.producer_id,
            transaction.producer_epoch,
            transaction.topics,
            verify_only=transaction.verify_only,
        )
        answers.append(
            add_partitions.AddPartitionsToTxnResult(
                transactional_id=transaction.transactional_id,
                topic_results=tuple(
                    add_partitions.AddPartitionsToTxnTopicResult(
                        name=topic,
                        results_by_partition=tuple(
                            add_partitions.AddPartitionsToTxnPartitionResult(
                                partition_index=index, partition_error_code=error
                            )
                            for index, error in partitions
                        ),
                    )
                    for topic, partitions in results.items()
                ),
            )
        )
    return add_partitions.AddPartitionsToTxnResponse(
        throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, results_by_transaction=tuple(answers)
    )


# --- AddOffsetsToTxn (25) ------------------------------------------------------------------------


async def add_offsets_to_txn(ctx: RequestContext, request: Any) -> AddOffsetsToTxnResponse:
    coordinator = coordinator_of(ctx)
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        error = ErrorCode.transactional_id_authorization_failed
    elif not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        error = ErrorCode.group_authorization_failed
    elif coordinator is None:
        error = ErrorCode.coordinator_not_available
    else:
        error = await coordinator.add_offsets(
            request.transactional_id, request.producer_id, request.producer_epoch, request.group_id
        )
    return AddOffsetsToTxnResponse(throttle_time=NOT_THROTTLED, error_code=client_error(ctx, error))


# --- EndTxn (26) ---------------------------------------------------------------------------------


async def end_txn(ctx: RequestContext, request: Any) -> EndTxnResponse:
    coordinator = coordinator_of(ctx)
    producer_id, producer_epoch = -1, -1
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        error = ErrorCode.transactional_id_authorization_failed
    elif coordinator is None:
        error = ErrorCode.coordinator_not_available
    else:
        end = coordinator.end_transaction_v2 if transaction_v2(ctx) else coordinator.end_transaction
        result = await end(
            request.transactional_id, request.producer_id, request.producer_epoch, request.committed
        )
        error, producer_id, producer_epoch = result.error, result.producer_id, result.producer_epoch
    # v5 adds the producer id and epoch (older versions drop them).
    return EndTxnResponse(
        throttle_time=NOT_THROTTLED,
        error_code=client_error(ctx, error),
        producer_id=producer_id,
        producer_epoch=producer_epoch,
    )


# --- TxnOffsetCommit (28) ------------------------------------------------------------------------


def _txn_offset_commit_answer(
    ctx: RequestContext, request: Any, error_of: Callable[[str, int], int]
) -> offset_commit.TxnOffsetCommitResponse:
    return offset_commit.TxnOffsetCommitResponse(
        throttle_time=NOT_THROTTLED,
        topics=tuple(
            offset_commit.TxnOffsetCommitResponseTopic(
                name=topic.name,
                partitions=tuple(
                    offset_commit.TxnOffsetCommitResponsePartition(
                        partition_index=p.partition_index,
                        error_code=client_error(ctx, error_of(topic.name, p.partition_index)),
                    )
                    for p in topic.partitions
                ),
            )
            for topic in request.topics
        ),
    )


async def txn_offset_commit(ctx: RequestContext, request: Any) -> offset_commit.TxnOffsetCommitResponse:
    def answer_all(error: int) -> offset_commit.TxnOffsetCommitResponse:
        return _txn_offset_commit_answer(ctx, request, lambda _topic, _index: error)

    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        return answer_all(ErrorCode.transactional_id_authorization_failed)
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return answer_all(ErrorCode.group_authorization_failed)
    groups = ctx.broker.groups
    if groups is None:
        return answer_all(ErrorCode.coordinator_not_available)
    if transaction_v2(ctx):
        # The producer sent no AddOffsetsToTxn: the group's offsets partition joins the transaction here.
        error = await _add_offsets_partition(ctx, request, groups.partition_for(request.group_id))
        if error != ErrorCode.none:
            return answer_all(error)
    offsets: list[PartitionOffset] = []
    refused: dict[tuple[str, int], int] = {}
    for topic in request.topics:
        readable = ctx.allowed(Operation.READ, ResourceType.TOPIC, topic.name)
        record = ctx.broker.metadata.get(topic.name)
        for p in topic.partitions:
            if not readable:
                refused[(topic.name, p.partition_index)] = ErrorCode.topic_authorization_failed
            elif record is None or not 0 <= p.partition_index < record.partitions:
                refused[(topic.name, p.partition_index)] = ErrorCode.unknown_topic_or_partition
            else:
                offsets.append(
                    PartitionOffset(
                        topic=topic.name,
                        partition=p.partition_index,
                        offset=p.committed_offset,
                        metadata=p.committed_metadata,
                        leader_epoch=getattr(p, "committed_leader_epoch", -1),
                    )
                )
    results = await groups.commit_transactional_offsets(
        group_id=request.group_id,
        producer_id=request.producer_id,
        producer_epoch=request.producer_epoch,
        generation_id=getattr(request, "generation_id", -1),
        member_id=getattr(request, "member_id", ""),
        group_instance_id=getattr(request, "group_instance_id", None),
        offsets=offsets,
    )
    errors = dict(refused)
    # A fenced producer's offsets are refused by the log with INVALID_PRODUCER_EPOCH; TxnOffsetCommit
    # answers PRODUCER_FENCED (INVALID_PRODUCER_EPOCH again for versions before 3).
    errors.update(
        {
            (o.topic, o.partition): ErrorCode.producer_fenced
            if code == ErrorCode.invalid_producer_epoch
            else code
            for o, code in zip(offsets, results, strict=True)
        }
    )
    return _txn_offset_commit_answer(ctx, request, lambda topic, index: errors[(topic, index)])


async def _add_offsets_partition(ctx: RequestContext, request: Any, partition: int) -> int:
    verifier = ctx.broker.txn_verifier
    if verifier is None:
        return ErrorCode.coordinator_not_available
    offsets_partition = (OFFSETS_TOPIC_NAME, partition)
    answers = await verifier.verify(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        [offsets_partition],
        add_partitions=True,
        for_produce=False,
    )
    return txn_offset_commit_error(answers.get(offsets_partition, ErrorCode.none))


def txn_offset_commit_error(error: int) -> int:
    """TxnOffsetCommit's answer when adding the group's offsets partition to the transaction failed, as
    Kafka's coordinator runtime maps it: not Produce's NOT_ENOUGH_REPLICAS for a busy or unreachable
    transaction coordinator (clients do not retry a TxnOffsetCommit on it: franz-go's TestTxnEtl failed so),
    but the coordinator's own error (CONCURRENT_TRANSACTIONS, NOT_COORDINATOR... which they retry), a
    network failure as COORDINATOR_LOAD_IN_PROGRESS (retried without looking the coordinator up again) and
    storage errors as for any group write; a fenced producer is PRODUCER_FENCED."""
    if error == ErrorCode.invalid_producer_epoch:
        return ErrorCode.producer_fenced
    if error == ErrorCode.network_exception:
        return ErrorCode.coordinator_load_in_progress
    return coordinator_error_for_append(error, offset_commit=False)


# --- DescribeTransactions (65), ListTransactions (66) ------------------------------------------------


async def describe_transactions(ctx: RequestContext, request: Any) -> describe.DescribeTransactionsResponse:
    coordinator = coordinator_of(ctx)
    states = []
    for transactional_id in request.transactional_ids:
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id):
            error, found = ErrorCode.transactional_id_authorization_failed, None
        elif coordinator is None:
            error, found = ErrorCode.coordinator_not_available, None
        else:
            error, found = coordinator.describe(transactional_id)
        if found is None:
            # Kafka answers zeros for an id it does not describe (and kio cannot read a negative time).
            states.append(
                describe.TransactionState(
                    error_code=ErrorCode(error),
                    transactional_id=transactional_id,
                    transaction_state="",
                    transaction_timeout=datetime.timedelta(0),
                    transaction_start_time=_timestamp(0),
                    producer_id=0,
                    producer_epoch=0,
                    topics=(),
                )
            )
            continue
        by_topic: dict[str, list[int]] = {}
        for topic, index in found.partitions:
            # Like Kafka: only the topics the caller may describe.
            if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic):
                by_topic.setdefault(topic, []).append(index)
        states.append(
            describe.TransactionState(
                error_code=ErrorCode(error),
                transactional_id=transactional_id,
                transaction_state=found.state,
                transaction_timeout=datetime.timedelta(milliseconds=found.timeout_ms),
                transaction_start_time=_timestamp(found.start_ms),
                producer_id=found.producer_id,
                producer_epoch=found.producer_epoch,
                topics=tuple(
                    describe.TopicData(topic=t, partitions=tuple(indexes)) for t, indexes in by_topic.items()
                ),
            )
        )
    return describe.DescribeTransactionsResponse(
        throttle_time=NOT_THROTTLED, transaction_states=tuple(states)
    )


_REGEX_OPTIONS = re2.Options()
_REGEX_OPTIONS.log_errors = False  # a client's bad pattern is answered, not logged by the library


async def list_transactions(ctx: RequestContext, request: Any) -> listing.ListTransactionsResponse:
    def answer(
        error: ErrorCode,
        unknown: tuple[str, ...] = (),
        states: tuple[listing.TransactionState, ...] = (),
    ) -> listing.ListTransactionsResponse:
        return listing.ListTransactionsResponse(
            throttle_time=NOT_THROTTLED,
            error_code=error,
            unknown_state_filters=unknown,
            transaction_states=states,
        )

    coordinator = coordinator_of(ctx)
    min_duration = _ms(request.duration_filter) if ctx.api_version >= 1 else -1
    pattern = request.transactional_id_pattern if ctx.api_version >= 2 else None
    try:
        # v2 (KIP-1152): the whole id must match, as Java's Pattern.matches; empty or null lists all. RE2: a
        # client's pattern runs in linear time, so no pattern can hold the event loop.
        id_filter = re2.compile(pattern, _REGEX_OPTIONS) if pattern else None
    except re2.error:
        return answer(ErrorCode.invalid_regular_expression)
    if coordinator is None:
        return answer(ErrorCode.coordinator_not_available)
    listed, unknown = coordinator.list_transactions(
        list(request.state_filters), [int(p) for p in request.producer_id_filters], min_duration
    )
    return answer(
        ErrorCode.none,
        tuple(unknown),
        tuple(
            listing.TransactionState(
                transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state
            )
            for t in listed
            if ctx.allowed(Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactional_id)
            and (id_filter is None or id_filter.fullmatch(t.transactional_id))
        ),
    )
