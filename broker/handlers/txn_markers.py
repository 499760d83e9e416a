"""WriteTxnMarkers (27): a transaction coordinator asks the leaders to close a transaction.

For every (producer, partition) named, the partition appends a commit or abort marker as leader
and waits until the ISR has it (`Partition.write_txn_marker`); each partition answers its own
error. Only brokers may call it (ClusterAction on the cluster), as in Kafka.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.write_txn_markers.v2.response import (
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse,
)

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import BrokerState, RequestContext
from broker.metadata.topic_names import OFFSETS_TOPIC_NAME
from broker.wire.records.errors import StorageError


async def handle_write_txn_markers(ctx: RequestContext, request: Any) -> WriteTxnMarkersResponse:
    if not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return WriteTxnMarkersResponse(
            markers=tuple(
                _marker_answer(marker, lambda _topic, _index: ErrorCode.cluster_authorization_failed)
                for marker in request.markers
            )
        )
    answers = await asyncio.gather(*(_write_marker(ctx, marker) for marker in request.markers))
    return WriteTxnMarkersResponse(markers=tuple(answers))


async def _write_marker(ctx: RequestContext, marker: Any) -> WritableTxnMarkerResult:
    targets = [(topic.name, index) for topic in marker.topics for index in topic.partition_indexes]
    errors = await asyncio.gather(*(_write_to_partition(ctx, marker, name, index) for name, index in targets))
    by_partition = dict(zip(targets, errors, strict=True))
    return _marker_answer(marker, lambda name, index: by_partition[(name, index)])


async def _write_to_partition(ctx: RequestContext, marker: Any, topic: str, index: int) -> ErrorCode:
    return await write_marker_as_leader(
        ctx.broker,
        topic,
        index,
        marker.producer_id,
        marker.producer_epoch,
        marker.transaction_result,
        marker.coordinator_epoch,
    )


async def write_marker_as_leader(
    state: BrokerState,
    topic: str,
    index: int,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
) -> ErrorCode:
    """Writes one marker to a partition this broker leads (the coordinator calls it directly for
    its own partitions); the error code once the ISR has it."""
    partition, error = state.partitions.leader(topic, index)
    if partition is None:
        return error
    try:
        await partition.write_txn_marker(producer_id, producer_epoch, commit, coordinator_epoch)
    except StorageError as exc:
        return ErrorCode(exc.error_code)
    if topic == OFFSETS_TOPIC_NAME and state.groups is not None:
        # The group coordinator learns of a marker on `__consumer_offsets` here: the producer's
        # pending TxnOffsetCommit offsets in that partition's groups become visible (commit) or
        # are dropped (abort).
        state.groups.complete_transaction(index, producer_id, commit)
    return ErrorCode.none


def _marker_answer(marker: Any, error_of: Callable[[str, int], ErrorCode]) -> WritableTxnMarkerResult:
    return WritableTxnMarkerResult(
        producer_id=marker.producer_id,
        topics=tuple(
            WritableTxnMarkerTopicResult(
                name=topic.name,
                partitions=tuple(
                    WritableTxnMarkerPartitionResult(
                        partition_index=index, error_code=error_of(topic.name, index)
                    )
                    for index in topic.partition_indexes
                ),
            )
            for topic in marker.topics
        ),
    )
