"""DescribeTopicPartitions (75, KIP-966): Metadata's per-topic partition description, paged.

A client names topics (or none: every topic it may describe) and gets their partitions in topic-name
order, at most `response_partition_limit` of them; `next_cursor` says where the next page starts
(a topic and a partition index), the request's `cursor` where this one does. As in Kafka's
`DescribeTopicPartitionsRequestHandler`:
- topics the principal may not DESCRIBE are left out of an all-topics answer and answered with
  TOPIC_AUTHORIZATION_FAILED when named (after the described ones), without saying whether they exist;
- a named topic that does not exist gets UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an
  illegal name) and takes nothing from the limit; nothing is auto-created;
- a cursor naming a topic outside the requested ones is an INVALID_REQUEST on every requested topic;
- this broker has no eligible leader replicas (KIP-966 ELR is off, as by default in Kafka 4.0), so
  `eligible_leader_replicas` and `last_known_elr` are empty.
"""

from __future__ import annotations

from typing import Any

from kio.schema.describe_topic_partitions.v0.response import (
    Cursor,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.handlers.metadata import ALL_TOPIC_OPERATIONS, OPERATIONS_OMITTED
from broker.metadata.topic_names import OFFSETS_TOPIC_NAME, topic_name_problem
from broker.protocol.responses import NOT_THROTTLED

# Kafka's max.request.partition.size.limit default: the most partitions one response carries,
# whatever the client asks for.
MAX_PARTITIONS_PER_RESPONSE = 2000
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC_NAME, "__transaction_state"})


def _partitions(
    ctx: RequestContext, name: str, count: int, start: int, limit: int
) -> tuple[DescribeTopicPartitionsResponsePartition, ...]:
    """Partitions start..start+limit-1 of the topic (fewer at its end)."""
    states = ctx.broker.partitions.describe(name, min(count, start + limit), start)
    return tuple(
        DescribeTopicPartitionsResponsePartition(
            error_code=ErrorCode(state.error),
            partition_index=state.index,
            leader_id=state.leader,
            leader_epoch=state.leader_epoch,
            replica_nodes=tuple(state.replicas),
            isr_nodes=tuple(state.isr),
            # No eligible leader replicas: KIP-966's ELR is off here, as by default in Kafka 4.0.
            eligible_leader_replicas=(),
            last_known_elr=(),
            offline_replicas=tuple(state.offline_replicas),
        )
        for state in states
    )


def _topic(
    ctx: RequestContext,
    name: str,
    error: ErrorCode,
    topic_id: Any,
    internal: bool,
    partitions: tuple[DescribeTopicPartitionsResponsePartition, ...],
) -> DescribeTopicPartitionsResponseTopic:
    return DescribeTopicPartitionsResponseTopic(
        error_code=error,
        name=name,
        topic_id=topic_id,
        is_internal=internal,
        partitions=partitions,
        topic_authorized_operations=(
            OPERATIONS_OMITTED
            if error == ErrorCode.topic_authorization_failed
            else ctx.authorized_operations(ResourceType.TOPIC, name, ALL_TOPIC_OPERATIONS)
        ),
    )


def _missing(ctx: RequestContext, name: str) -> DescribeTopicPartitionsResponseTopic:
    error = (
        ErrorCode.invalid_topic_exception
        if topic_name_problem(name)
        else ErrorCode.unknown_topic_or_partition
    )
    return _topic(ctx, name, error, None, name in INTERNAL_TOPICS, ())


async def handle_describe_topic_partitions(
    ctx: RequestContext, request: Any
) -> DescribeTopicPartitionsResponse:
    registry = ctx.broker.metadata
    named = sorted({topic.name for topic in request.topics})
    all_topics = not named
    cursor = request.cursor
    if cursor is not None and not all_topics and cursor.topic_name not in named:
        return DescribeTopicPartitionsResponse(
            throttle_time=NOT_THROTTLED,
            topics=tuple(
                _topic(ctx, name, ErrorCode.invalid_request, None, name in INTERNAL_TOPICS, ())
                for name in named
            ),
            next_cursor=None,
        )
    candidates = sorted(t.name for t in registry.topics()) if all_topics else named
    if cursor is not None:
        candidates = [name for name in candidates if name >= cursor.topic_name]
    allowed = [name for name in candidates if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name)]
    allowed_names = set(allowed)
    refused = [] if all_topics else [name for name in candidates if name not in allowed_names]

    # At least one partition per page (Kafka would answer a limit <= 0 with an empty page whose cursor
    # never advances, and a client paging through would loop forever).
    remaining = max(1, min(int(request.response_partition_limit), MAX_PARTITIONS_PER_RESPONSE))
    topics: list[DescribeTopicPartitionsResponseTopic] = []
    next_cursor: Cursor | None = None
    for name in allowed:
        if remaining == 0:
            # The page is full: the next one starts at this topic's first partition.
            next_cursor = Cursor(topic_name=name, partition_index=0)
            break
        topic = registry.get(name)
        if topic is None:
            if not all_topics:
                topics.append(_missing(ctx, name))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        partitions = _partitions(ctx, name, topic.partitions, start, remaining)
        topics.append(_topic(ctx, name, ErrorCode.none, topic.topic_id, topic.internal, partitions))
        end = max(start, 0) + len(partitions)
        if end < topic.partitions:
            next_cursor = Cursor(topic_name=name, partition_index=end)
            break
        remaining -= len(partitions)
    topics.extend(
        _topic(ctx, name, ErrorCode.topic_authorization_failed, None, name in INTERNAL_TOPICS, ())
        for name in refused
    )
    return DescribeTopicPartitionsResponse(
        throttle_time=NOT_THROTTLED, topics=tuple(topics), next_cursor=next_cursor
    )
