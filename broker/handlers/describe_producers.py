"""DescribeProducers (61): the producers a partition leader remembers, with their open transaction.

Kafka's answer: per partition, every producer with its epoch, last sequence, last timestamp,
coordinator epoch and the first offset of its open transaction (-1 when none). Read on the topic
is required; every broker holding a replica answers (a follower knows the producers from the batches
it copies), NOT_LEADER_OR_FOLLOWER elsewhere, as Kafka.
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_producers.v0.response import (
    DescribeProducersResponse,
    PartitionResponse,
    ProducerState,
    TopicResponse,
)
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.protocol.responses import NOT_THROTTLED

# Kafka words an unknown topic (its exception's message); an unknown partition of a known topic has no message.
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."


async def handle_describe_producers(ctx: RequestContext, request: Any) -> DescribeProducersResponse:
    topics = []
    for topic in request.topics:
        readable = ctx.allowed(Operation.READ, ResourceType.TOPIC, topic.name)
        topics.append(
            TopicResponse(
                name=topic.name,
                partitions=tuple(
                    _describe(ctx, topic.name, index)
                    if readable
                    else _error(index, ErrorCode.topic_authorization_failed)
                    for index in topic.partition_indexes
                ),
            )
        )
    return DescribeProducersResponse(throttle_time=NOT_THROTTLED, topics=tuple(topics))


def _describe(ctx: RequestContext, topic: str, index: int) -> PartitionResponse:
    producers, error = ctx.broker.partitions.hosted_producers(topic, index)
    if producers is None:
        unknown = ctx.broker.metadata.get(topic) is None
        return _error(index, error, UNKNOWN_TOPIC_MESSAGE if unknown else None)
    return PartitionResponse(
        partition_index=index,
        error_code=ErrorCode.none,
        error_message=None,
        active_producers=tuple(
            ProducerState(
                producer_id=entry.producer_id,
                producer_epoch=entry.epoch,
                last_sequence=entry.last_sequence,
                last_timestamp=entry.last_timestamp,
                coordinator_epoch=entry.coordinator_epoch,
                current_txn_start_offset=entry.current_txn_first_offset,
            )
            for entry in producers
        ),
    )


def _error(index: int, error: ErrorCode, message: str | None = None) -> PartitionResponse:
    return PartitionResponse(
        partition_index=index, error_code=error, error_message=message, active_producers=()
    )
