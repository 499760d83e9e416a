"""DescribeProducers (61): the producers a partition leader remembers, with their open transaction.

Kafka's answer: per partition, every producer with its epoch, last sequence, last timestamp,
coordinator epoch and the first offset of its open transaction (-1 when none). Read on the topic
is required; every broker holding a replica answers (a follower knows the producers from the batches
it copies), NOT_LEADER_OR_FOLLOWER elsewhere, as Kafka.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext

# Kafka words an unknown topic (its exception's message); an unknown partition of a known topic has no message.
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."


async def handle_describe_producers(ctx: RequestContext, request: Any) -> dict[str, Any]:
    topics = []
    for topic in request.topics:
        readable = ctx.allowed(Operation.READ, ResourceType.TOPIC, topic.name)
        topics.append(
            {
                "name": topic.name,
                "partitions": [
                    _describe(ctx, topic.name, index)
                    if readable
                    else _error(index, ErrorCode.topic_authorization_failed)
                    for index in topic.partition_indexes
                ],
            }
        )
    return {"throttle_time": 0, "topics": topics}


def _describe(ctx: RequestContext, topic: str, index: int) -> dict[str, Any]:
    producers, error = ctx.broker.partitions.hosted_producers(topic, index)
    if producers is None:
        answer = _error(index, error)
        if ctx.broker.metadata.get(topic) is None:
            answer["error_message"] = UNKNOWN_TOPIC_MESSAGE
        return answer
    return {
        "partition_index": index,
        "error_code": ErrorCode.none,
        "error_message": None,
        "active_producers": [
            {
                "producer_id": entry.producer_id,
                "producer_epoch": entry.epoch,
                "last_sequence": entry.last_sequence,
                "last_timestamp": entry.last_timestamp,
                "coordinator_epoch": entry.coordinator_epoch,
                "current_txn_start_offset": entry.current_txn_first_offset,
            }
            for entry in producers
        ],
    }


def _error(index: int, error: ErrorCode) -> dict[str, Any]:
    return {"partition_index": index, "error_code": error, "error_message": None, "active_producers": []}


APIS = {61: (0, 0, handle_describe_producers)}
