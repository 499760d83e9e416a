"""Metadata (3) and DescribeCluster (60)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.metadata.topic_names import topic_name_problem
from broker.metadata.topic_registry import TopicRecord
from broker.server.context import RequestContext
from broker.server.topics import TopicError

# Kafka's "authorized operations not requested" marker.
OPERATIONS_OMITTED = -(2**31)
# Every topic operation bit (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS,
# ALTER_CONFIGS): without ACLs everybody may do everything.
ALL_TOPIC_OPERATIONS = sum(1 << bit for bit in (3, 4, 5, 6, 7, 8, 10, 11))
ALL_CLUSTER_OPERATIONS = sum(1 << bit for bit in (4, 5, 7, 8, 9, 10, 11, 12))


def broker_entries(ctx: RequestContext) -> list[dict[str, Any]]:
    host, port = ctx.broker.advertised_endpoint(ctx.listener_name)
    return [{"node_id": ctx.broker.node_id, "host": host, "port": port, "rack": None}]


def topic_entry(ctx: RequestContext, topic: TopicRecord, include_operations: bool) -> dict[str, Any]:
    node = ctx.broker.node_id
    return {
        "error_code": ErrorCode.none,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.internal,
        "partitions": [
            {
                "error_code": ErrorCode.none,
                "partition_index": partition,
                "leader_id": node,
                "leader_epoch": topic.leader_epoch(partition),
                "replica_nodes": [node],
                "isr_nodes": [node],
                "offline_replicas": [],
            }
            for partition in range(topic.partitions)
        ],
        "topic_authorized_operations": ALL_TOPIC_OPERATIONS if include_operations else OPERATIONS_OMITTED,
    }


def error_entry(name: str | None, topic_id: Any, error: ErrorCode) -> dict[str, Any]:
    return {
        "error_code": error,
        "name": name,
        "topic_id": topic_id,
        "is_internal": False,
        "partitions": [],
        "topic_authorized_operations": OPERATIONS_OMITTED,
    }


async def handle_metadata(ctx: RequestContext, request: Any) -> dict[str, Any]:
    state = ctx.broker
    include_operations = bool(getattr(request, "include_topic_authorized_operations", False))
    allow_auto_create = bool(getattr(request, "allow_auto_topic_creation", True))
    requested = request.topics
    # v0 used an empty list for "all topics"; v1+ uses null.
    all_topics = requested is None or (ctx.api_version == 0 and not requested)
    topics: list[dict[str, Any]] = []
    if all_topics:
        topics = [topic_entry(ctx, t, include_operations) for t in state.metadata.topics()]
    else:
        for wanted in requested:
            topics.append(_lookup(ctx, wanted, allow_auto_create, include_operations))
    return {
        "throttle_time": 0,
        "brokers": broker_entries(ctx),
        "cluster_id": state.cluster_id,
        "controller_id": state.node_id,
        "topics": topics,
        "cluster_authorized_operations": ALL_CLUSTER_OPERATIONS if include_operations else OPERATIONS_OMITTED,
    }


def _lookup(ctx: RequestContext, wanted: Any, allow_auto_create: bool, include_operations: bool) -> dict:
    state = ctx.broker
    name = wanted.name
    topic_id = getattr(wanted, "topic_id", None)
    if name is None:
        if topic_id is None:
            return error_entry(None, None, ErrorCode.invalid_request)
        topic = state.metadata.get_by_id(topic_id)
        if topic is None:
            return error_entry(None, topic_id, ErrorCode.unknown_topic_id)
        return topic_entry(ctx, topic, include_operations)
    topic = state.metadata.get(name)
    if topic is not None:
        return topic_entry(ctx, topic, include_operations)
    if topic_name_problem(name):
        return error_entry(name, None, ErrorCode.invalid_topic_exception)
    if allow_auto_create:
        try:
            created = state.topics.auto_create(name)
        except TopicError as exc:
            return error_entry(name, None, exc.error_code)
        if created is not None:
            return topic_entry(ctx, created, include_operations)
    return error_entry(name, None, ErrorCode.unknown_topic_or_partition)


async def handle_describe_cluster(ctx: RequestContext, request: Any) -> dict[str, Any]:
    host, port = ctx.broker.advertised_endpoint(ctx.listener_name)
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "endpoint_type": 1,
        "cluster_id": ctx.broker.cluster_id,
        "controller_id": ctx.broker.node_id,
        "brokers": [{"broker_id": ctx.broker.node_id, "host": host, "port": port, "rack": None}],
        "cluster_authorized_operations": (
            ALL_CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else OPERATIONS_OMITTED
        ),
    }


APIS = {
    3: (0, 13, handle_metadata),
    60: (0, 1, handle_describe_cluster),
}
