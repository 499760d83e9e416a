"""Metadata (3) and DescribeCluster (60)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.metadata.topic_names import topic_name_problem
from broker.metadata.topic_registry import TopicRecord
from broker.protocol.frames import FramedResponse, encode_body, frame_body
from broker.protocol.responses import build_response
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
    local = {"node_id": ctx.broker.node_id, "host": host, "port": port, "rack": _own_rack(ctx)}
    replication = ctx.broker.replication
    if replication is None:
        return [local]
    # Only unfenced brokers, this one included, as in Kafka: a broker that serves before the controller
    # has unfenced it must not make a client (or the control plane) count it as available yet.
    entries = {}
    for broker in replication.live_brokers():
        if broker.broker_id == ctx.broker.node_id:
            entries[broker.broker_id] = local
            continue
        endpoint = replication.endpoint(broker.broker_id, ctx.listener_name)
        if endpoint is not None:
            entries[broker.broker_id] = {
                "node_id": broker.broker_id,
                "host": endpoint.host,
                "port": endpoint.port,
                "rack": broker.rack,
            }
    return [entries[node] for node in sorted(entries)]


def _own_rack(ctx: RequestContext) -> str | None:
    return ctx.broker.config.get_str("broker.rack") or None


def _partition_entries(ctx: RequestContext, topic: TopicRecord) -> list[dict[str, Any]]:
    node = ctx.broker.node_id
    replication = ctx.broker.replication
    if replication is None or not replication.manages(topic.name):
        return [
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
        ]
    entries = []
    for partition in range(topic.partitions):
        assignment = replication.assignment(topic.name, partition)
        if assignment is None:
            entries.append(
                {
                    "error_code": ErrorCode.leader_not_available,
                    "partition_index": partition,
                    "leader_id": -1,
                    "leader_epoch": -1,
                    "replica_nodes": [],
                    "isr_nodes": [],
                    "offline_replicas": [],
                }
            )
            continue
        offline = replication.offline_replicas(assignment)
        leaderless = assignment.leader < 0 or assignment.leader in offline
        entries.append(
            {
                # Kafka's answer for a partition without a live leader: clients retry later.
                "error_code": ErrorCode.leader_not_available if leaderless else ErrorCode.none,
                "partition_index": partition,
                "leader_id": assignment.leader,
                "leader_epoch": assignment.leader_epoch,
                "replica_nodes": list(assignment.replicas),
                "isr_nodes": list(replication.isr_of(topic.name, partition)),
                "offline_replicas": offline,
            }
        )
    return entries


def topic_entry(ctx: RequestContext, topic: TopicRecord, include_operations: bool) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.none,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.internal,
        "partitions": _partition_entries(ctx, topic),
        "topic_authorized_operations": (
            ctx.authorized_operations(ResourceType.TOPIC, topic.name, ALL_TOPIC_OPERATIONS)
            if include_operations
            else OPERATIONS_OMITTED
        ),
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


class MetadataCache:
    """Encoded Metadata bodies, valid while the registry's version is unchanged.

    Clients ask the same question over and over (every topic, or their own topics);
    encoding with kio costs tens of µs per topic, a cache hit costs a dict lookup.
    """

    MAX_ENTRIES = 256

    def __init__(self) -> None:
        self.version = -1
        self.bodies: dict[tuple[Any, ...], bytes] = {}

    def get(self, metadata_version: int, key: tuple[Any, ...]) -> bytes | None:
        if metadata_version != self.version:
            self.version = metadata_version
            self.bodies.clear()
            return None
        return self.bodies.get(key)

    def put(self, metadata_version: int, key: tuple[Any, ...], body: bytes) -> None:
        if metadata_version == self.version and len(self.bodies) < self.MAX_ENTRIES:
            self.bodies[key] = body


async def handle_metadata(ctx: RequestContext, request: Any) -> dict[str, Any] | FramedResponse:
    state = ctx.broker
    include_operations = bool(getattr(request, "include_topic_authorized_operations", False))
    # v8-10 only: librdkafka's describe_cluster asks through Metadata.
    include_cluster_operations = bool(getattr(request, "include_cluster_authorized_operations", False))
    allow_auto_create = bool(getattr(request, "allow_auto_topic_creation", True))
    requested = request.topics
    # v0 used an empty list for "all topics"; v1+ uses null.
    all_topics = requested is None or (ctx.api_version == 0 and not requested)
    wanted = None if all_topics else tuple((t.name, getattr(t, "topic_id", None)) for t in requested)
    key: tuple[Any, ...] = (
        ctx.api_version,
        ctx.listener_name,
        include_operations,
        include_cluster_operations,
        allow_auto_create,
        wanted,
    )
    if state.authorizer is not None:
        # The answer depends on who asks and on the ACLs in force.
        assert state.security is not None
        key += (ctx.principal, ctx.client_host, state.security.version)
    if state.replication is not None:
        # Leaders, ISRs and brokers change without the topic registry changing.
        key += (state.replication.version,)
    version_before = state.metadata.version
    cache = state.response_caches.setdefault("metadata", MetadataCache())
    cached = cache.get(version_before, key)
    if cached is not None:
        return frame_body(3, ctx.api_version, ctx.correlation_id, cached)
    topics: list[dict[str, Any]] = []
    if all_topics:
        topics = [
            topic_entry(ctx, t, include_operations)
            for t in state.metadata.topics()
            if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t.name)
        ]
    else:
        for wanted in requested:
            topics.append(await _lookup(ctx, wanted, allow_auto_create, include_operations))
    body = {
        "throttle_time": 0,
        "brokers": broker_entries(ctx),
        "cluster_id": state.cluster_id,
        "controller_id": state.node_id,
        "topics": topics,
        "cluster_authorized_operations": _cluster_operations(ctx, include_cluster_operations),
    }
    encoded = encode_body(3, ctx.api_version, build_response(3, ctx.api_version, body))
    # Auto-creation bumps the version: such an answer is cached under the new version only.
    cache.put(state.metadata.version, key, encoded)
    return frame_body(3, ctx.api_version, ctx.correlation_id, encoded)


def _cluster_operations(ctx: RequestContext, include_operations: bool) -> int:
    if not include_operations:
        return OPERATIONS_OMITTED
    return ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME, ALL_CLUSTER_OPERATIONS)


async def _lookup(
    ctx: RequestContext, wanted: Any, allow_auto_create: bool, include_operations: bool
) -> dict:
    state = ctx.broker
    name = wanted.name
    topic_id = getattr(wanted, "topic_id", None)
    if name is None:
        if topic_id is None:
            return error_entry(None, None, ErrorCode.invalid_request)
        topic = state.metadata.get_by_id(topic_id)
        if topic is None:
            return error_entry(None, topic_id, ErrorCode.unknown_topic_id)
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic.name):
            return error_entry(None, topic_id, ErrorCode.topic_authorization_failed)
        return topic_entry(ctx, topic, include_operations)
    topic = state.metadata.get(name)
    describable = ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name)
    if topic is not None:
        if not describable:
            return error_entry(name, None, ErrorCode.topic_authorization_failed)
        return topic_entry(ctx, topic, include_operations)
    if topic_name_problem(name):
        return error_entry(name, None, ErrorCode.invalid_topic_exception)
    # Kafka: creating needs CREATE on the cluster or the topic; otherwise the client is told
    # it is not authorized rather than that the topic does not exist.
    may_create = ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME) or ctx.allowed(
        Operation.CREATE, ResourceType.TOPIC, name
    )
    if allow_auto_create and state.config.auto_create_topics_enable and not may_create:
        return error_entry(name, None, ErrorCode.topic_authorization_failed)
    if not describable:
        return error_entry(name, None, ErrorCode.topic_authorization_failed)
    if allow_auto_create:
        try:
            created = await state.topics.auto_create_topic(name)
        except TopicError as exc:
            return error_entry(name, None, exc.error_code)
        if created is not None:
            return topic_entry(ctx, created, include_operations)
    return error_entry(name, None, ErrorCode.unknown_topic_or_partition)


async def handle_describe_cluster(ctx: RequestContext, request: Any) -> dict[str, Any]:
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return {
            "throttle_time": 0,
            "error_code": ErrorCode.cluster_authorization_failed,
            "error_message": "DESCRIBE on the cluster is required",
            "cluster_id": ctx.broker.cluster_id,
            "controller_id": -1,
            "brokers": [],
            "cluster_authorized_operations": OPERATIONS_OMITTED,
        }
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "endpoint_type": 1,
        "cluster_id": ctx.broker.cluster_id,
        "controller_id": ctx.broker.node_id,
        "brokers": [
            {"broker_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": b["rack"]}
            for b in broker_entries(ctx)
        ],
        "cluster_authorized_operations": _cluster_operations(
            ctx, request.include_cluster_authorized_operations
        ),
    }


APIS = {
    3: (0, 13, handle_metadata),
    60: (0, 1, handle_describe_cluster),
}
