"""Metadata (3) and DescribeCluster (60)."""

from __future__ import annotations

import struct
import uuid
from types import ModuleType
from typing import Any, NamedTuple

from kio.schema.describe_cluster.v2.response import DescribeClusterBroker, DescribeClusterResponse
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v10 import response as with_cluster_operations
from kio.schema.metadata.v13 import response as newest
from kio.schema.types import BrokerId

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.metadata.topic_names import topic_name_problem
from broker.metadata.topic_registry import TopicRecord
from broker.partitions.manager import PartitionState
from broker.protocol.frames import FramedResponse, encode_body, frame_body
from broker.protocol.responses import NOT_THROTTLED, build_response
from broker.topics import TopicError

# Kafka's "authorized operations not requested" marker.
OPERATIONS_OMITTED = -(2**31)
# Every topic operation bit (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS,
# ALTER_CONFIGS): without ACLs everybody may do everything.
ALL_TOPIC_OPERATIONS = sum(1 << bit for bit in (3, 4, 5, 6, 7, 8, 10, 11))
ALL_CLUSTER_OPERATIONS = sum(1 << bit for bit in (4, 5, 7, 8, 9, 10, 11, 12))
# Metadata v11 dropped the cluster's authorized operations (v8-10 have them) and v13 added a top-level error:
# answers are v13's entities from v11, v10's before, each rebuilt for older versions by `build_response`.
_WITHOUT_CLUSTER_OPERATIONS_FROM = 11
MetadataAnswer = newest.MetadataResponse | with_cluster_operations.MetadataResponse
TopicAnswer = newest.MetadataResponseTopic | with_cluster_operations.MetadataResponseTopic


def _schema(api_version: int) -> ModuleType:
    return newest if api_version >= _WITHOUT_CLUSTER_OPERATIONS_FROM else with_cluster_operations


class BrokerEndpoint(NamedTuple):
    """A live broker as this listener's clients reach it (Metadata, DescribeCluster, Fetch's leader hints)."""

    node_id: int
    host: str
    port: int
    rack: str | None


def broker_entries(ctx: RequestContext) -> list[BrokerEndpoint]:
    host, port = ctx.broker.advertised_endpoint(ctx.listener_name)
    local = BrokerEndpoint(ctx.broker.node_id, host, port, _own_rack(ctx))
    partitions = ctx.broker.partitions
    # Only unfenced brokers, this one included, as in Kafka: a broker that serves before the controller
    # has unfenced it must not make a client (or the control plane) count it as available yet.
    entries = {}
    for broker in partitions.live_brokers():
        if broker.broker_id == ctx.broker.node_id:
            entries[broker.broker_id] = local
            continue
        endpoint = partitions.endpoint(broker.broker_id, ctx.listener_name)
        if endpoint is not None:
            entries[broker.broker_id] = BrokerEndpoint(
                broker.broker_id, endpoint.host, endpoint.port, broker.rack
            )
    return [entries[node] for node in sorted(entries)]


def _own_rack(ctx: RequestContext) -> str | None:
    return ctx.broker.config.get_str("broker.rack") or None


def partition_entry(api_version: int, state: PartitionState) -> Any:
    """A partition as Metadata describes it, as the entity of `api_version`'s schema (`_schema`)."""
    return _schema(api_version).MetadataResponsePartition(
        error_code=state.error,
        partition_index=state.index,
        leader_id=BrokerId(state.leader),
        leader_epoch=state.leader_epoch,
        replica_nodes=state.replicas,
        isr_nodes=state.isr,
        offline_replicas=state.offline_replicas,
    )


def topic_entry_without_partitions(
    ctx: RequestContext, topic: TopicRecord, include_operations: bool
) -> TopicAnswer:
    return _schema(ctx.api_version).MetadataResponseTopic(  # type: ignore[no-any-return]
        error_code=ErrorCode.none,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.internal,
        partitions=(),
        topic_authorized_operations=(
            ctx.authorized_operations(ResourceType.TOPIC, topic.name, ALL_TOPIC_OPERATIONS)
            if include_operations
            else OPERATIONS_OMITTED
        ),
    )


def error_entry(
    api_version: int, name: str | None, topic_id: uuid.UUID | None, error: ErrorCode
) -> TopicAnswer:
    return _schema(api_version).MetadataResponseTopic(  # type: ignore[no-any-return]
        error_code=error,
        name=name,
        topic_id=topic_id,
        is_internal=False,
        partitions=(),
        topic_authorized_operations=OPERATIONS_OMITTED,
    )


def metadata_answer(
    api_version: int,
    brokers: list[BrokerEndpoint],
    cluster_id: str | None,
    controller_id: int,
    cluster_operations: int,
    topics: tuple[TopicAnswer, ...],
) -> MetadataAnswer:
    """The whole answer (the handler's has no topics: their encoded entries are spliced in, `_splice_topics`)."""
    schema = _schema(api_version)
    wire_brokers = tuple(
        schema.MetadataResponseBroker(node_id=BrokerId(b.node_id), host=b.host, port=b.port, rack=b.rack)
        for b in brokers
    )
    if schema is newest:
        return newest.MetadataResponse(
            throttle_time=NOT_THROTTLED,
            brokers=wire_brokers,
            cluster_id=cluster_id,
            controller_id=BrokerId(controller_id),
            topics=topics,  # type: ignore[arg-type]
            error_code=ErrorCode.none,
        )
    return with_cluster_operations.MetadataResponse(
        throttle_time=NOT_THROTTLED,
        brokers=wire_brokers,
        cluster_id=cluster_id,
        controller_id=BrokerId(controller_id),
        topics=topics,  # type: ignore[arg-type]
        cluster_authorized_operations=cluster_operations,
    )


class TopicEntryCache:
    """Encoded topic entries of Metadata responses, reused while the topic does not change.

    A 10,000-partition topic costs ~150 ms to describe and encode; a cluster's leaders and ISRs
    change all the time while it is being created, and each change used to re-encode every topic
    for the next Metadata request. Entries are encoded with kio inside a one-topic response and
    cut out of it (`_encoded_topic`); responses are put together around them (`_splice_topics`).
    """

    MAX_ENTRIES = 4096

    def __init__(self) -> None:
        self.entries: dict[tuple[int, str], tuple[tuple[Any, ...], bytes]] = {}
        # Per version: the encoded response without topics (see _response_without_topics).
        self.empty: dict[int, bytes] = {}
        # Per version and topic: each partition's state and encoded entry, so that a change of one
        # partition's leader or ISR re-encodes that partition, not the whole topic (see _assembled_topic).
        self.partitions: dict[tuple[int, str], list[tuple[PartitionState, bytes]]] = {}

    def get(self, api_version: int, name: str, stamp: tuple[Any, ...]) -> bytes | None:
        entry = self.entries.get((api_version, name))
        return entry[1] if entry is not None and entry[0] == stamp else None

    def put(self, api_version: int, name: str, stamp: tuple[Any, ...], encoded: bytes) -> None:
        if len(self.entries) >= self.MAX_ENTRIES:
            self.entries.clear()
            self.partitions.clear()
        self.entries[(api_version, name)] = (stamp, encoded)


def _topics_array_layout(api_version: int) -> tuple[int, int]:
    """(bytes of an empty topics array's length, bytes that follow the topics array) in a
    Metadata response body: compact arrays and a tagged-field section from v9, the cluster's
    authorized operations after the topics in v8-10, a top-level error code in v13
    (tests/unit/broker/handlers/test_metadata_topic_entries.py checks every version against kio)."""
    length = 1 if api_version >= 9 else 4
    tail = (
        (4 if 8 <= api_version <= 10 else 0)
        + (2 if api_version >= 13 else 0)
        + (1 if api_version >= 9 else 0)
    )
    return length, tail


def _array_length(api_version: int, count: int) -> bytes:
    if api_version < 9:
        return struct.pack(">i", count)
    value, out = count + 1, bytearray()  # compact arrays carry length + 1 as an unsigned varint
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _encode(api_version: int, answer: MetadataAnswer) -> bytes:
    return encode_body(3, api_version, build_response(3, api_version, answer))


def _splice_topics(api_version: int, answer: MetadataAnswer, topics: list[bytes]) -> bytes:
    """The encoded `answer` (without topics of its own) carrying the encoded `topics`."""
    empty = _encode(api_version, answer)
    length, tail = _topics_array_layout(api_version)
    head_end = len(empty) - tail - length
    return b"".join(
        [empty[:head_end], _array_length(api_version, len(topics)), *topics, empty[head_end + length :]]
    )


def _encoded_topic(cache: TopicEntryCache, api_version: int, entry: TopicAnswer) -> bytes:
    """One topic entry as it appears inside a Metadata response's topics array."""
    empty = cache.empty.get(api_version)
    if empty is None:
        empty = cache.empty[api_version] = _encode(api_version, _bare(api_version, ()))
    one = _encode(api_version, _bare(api_version, (entry,)))
    _, tail = _topics_array_layout(api_version)
    start = len(empty) - tail  # the one-element array's length takes as many bytes as the empty one's
    return one[start : len(one) - tail]


def _bare(api_version: int, topics: tuple[TopicAnswer, ...]) -> MetadataAnswer:
    """A response of nothing but `topics`: what a topic entry is cut out of."""
    return metadata_answer(api_version, [], None, -1, OPERATIONS_OMITTED, topics)


def _encoded_partition(api_version: int, state: PartitionState) -> bytes:
    """One partition entry of a Metadata response, as kio would encode it (in every version: see
    tests/unit/broker/handlers/test_metadata_topic_entries.py), without building kio's objects:
    error code, index, leader, leader epoch (v7+), replicas, ISR, offline replicas (v5+), no tagged
    fields (v9+)."""
    parts = [struct.pack(">hii", state.error, state.index, state.leader)]
    if api_version >= 7:
        parts.append(struct.pack(">i", state.leader_epoch))
    arrays = (
        (state.replicas, state.isr, state.offline_replicas)
        if api_version >= 5
        else (state.replicas, state.isr)
    )
    for nodes in arrays:
        parts.append(_array_length(api_version, len(nodes)))
        parts.append(struct.pack(f">{len(nodes)}i", *nodes))
    if api_version >= 9:
        parts.append(b"\x00")
    return b"".join(parts)


def _assembled_topic(
    ctx: RequestContext, cache: TopicEntryCache, topic: TopicRecord, include_operations: bool
) -> bytes:
    """A topic entry: the topic's own fields encoded by kio around its partitions' entries, each reused
    from the last answer while that partition's state is the same."""
    api_version = ctx.api_version
    frame = _encoded_topic(cache, api_version, topic_entry_without_partitions(ctx, topic, include_operations))
    length, tail = _array_length(api_version, 0), _topic_tail_length(api_version)
    head_end = len(frame) - tail - len(length)
    known = cache.partitions.get((api_version, topic.name), [])
    current = []
    for state in ctx.broker.partitions.describe(topic.name, topic.partitions):
        index = state.index
        if index < len(known) and known[index][0] == state:
            current.append(known[index])
        else:
            current.append((state, _encoded_partition(api_version, state)))
    cache.partitions[(api_version, topic.name)] = current
    return b"".join(
        [
            frame[:head_end],
            _array_length(api_version, len(current)),
            *(encoded for _, encoded in current),
            frame[len(frame) - tail :],
        ]
    )


def _topic_tail_length(api_version: int) -> int:
    """Bytes after a topic entry's partitions array: its authorized operations (v8+), tagged fields (v9+)."""
    return (4 if api_version >= 8 else 0) + (1 if api_version >= 9 else 0)


def _topic_entries(ctx: RequestContext, topics: list[TopicRecord], include_operations: bool) -> list[bytes]:
    """Encoded entries of `topics`, from the cache where the topic did not change."""
    state = ctx.broker
    cache = state.response_caches.get(TopicEntryCache, TopicEntryCache)
    partitions = state.partitions
    encoded = []
    for topic in topics:
        operations = (
            ctx.authorized_operations(ResourceType.TOPIC, topic.name, ALL_TOPIC_OPERATIONS)
            if include_operations
            else OPERATIONS_OMITTED
        )
        stamp = (
            topic,
            state.metadata.version,
            operations,
            partitions.topic_version(topic.name),
            partitions.brokers_version,
        )
        entry = cache.get(ctx.api_version, topic.name, stamp)
        if entry is None:
            entry = _assembled_topic(ctx, cache, topic, include_operations)
            cache.put(ctx.api_version, topic.name, stamp, entry)
        encoded.append(entry)
    return encoded


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


# Metadata answers are spliced from cached encoded entries, not built as kio entities: a partition entry
# not cached costs 2.5 µs packed by hand against 8.6 µs as kio's entity and writer (per partition of a
# 100-partition v12 answer, bench/hand_framed_answers.py); a cached one costs nothing.
async def handle_metadata(ctx: RequestContext, request: Any) -> FramedResponse:
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
        key += (ctx.principal, ctx.client_host, state.security.version)
    # Leaders, ISRs and brokers change without the topic registry changing.
    key += (state.partitions.version,)
    version_before = state.metadata.version
    cache = state.response_caches.get(MetadataCache, MetadataCache)
    cached = cache.get(version_before, key)
    if cached is not None:
        return frame_body(3, ctx.api_version, ctx.correlation_id, cached)
    topics: list[bytes] = []
    if all_topics:
        described = [
            t for t in state.metadata.topics() if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t.name)
        ]
        topics = _topic_entries(ctx, described, include_operations)
    else:
        for wanted in requested:
            found = await _lookup(ctx, wanted, allow_auto_create)
            if isinstance(found, TopicRecord):
                topics.extend(_topic_entries(ctx, [found], include_operations))
            else:
                entries = state.response_caches.get(TopicEntryCache, TopicEntryCache)
                topics.append(_encoded_topic(entries, ctx.api_version, found))
    answer = metadata_answer(
        ctx.api_version,
        broker_entries(ctx),
        state.cluster_id,
        state.node_id,
        _cluster_operations(ctx, include_cluster_operations),
        (),
    )
    encoded = _splice_topics(ctx.api_version, answer, topics)
    # Auto-creation bumps the version: such an answer is cached under the new version only.
    cache.put(state.metadata.version, key, encoded)
    return frame_body(3, ctx.api_version, ctx.correlation_id, encoded)


def _cluster_operations(ctx: RequestContext, include_operations: bool) -> int:
    if not include_operations:
        return OPERATIONS_OMITTED
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        # Kafka answers "none" rather than an error to a principal that may not describe the cluster.
        return 0
    return ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME, ALL_CLUSTER_OPERATIONS)


async def _lookup(ctx: RequestContext, wanted: Any, allow_auto_create: bool) -> TopicRecord | TopicAnswer:
    """The topic to describe, or the error entry answering for it."""
    state = ctx.broker
    name = wanted.name
    topic_id = getattr(wanted, "topic_id", None)
    if name is None:
        if topic_id is None:
            return error_entry(ctx.api_version, None, None, ErrorCode.invalid_request)
        topic = state.metadata.get_by_id(topic_id)
        if topic is None:
            return error_entry(ctx.api_version, None, topic_id, ErrorCode.unknown_topic_id)
        if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, topic.name):
            return error_entry(ctx.api_version, None, topic_id, ErrorCode.topic_authorization_failed)
        return topic
    topic = state.metadata.get(name)
    describable = ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name)
    if topic is not None:
        if not describable:
            return error_entry(ctx.api_version, name, None, ErrorCode.topic_authorization_failed)
        return topic
    if topic_name_problem(name):
        return error_entry(ctx.api_version, name, None, ErrorCode.invalid_topic_exception)
    # Kafka: creating needs CREATE on the cluster or the topic; otherwise the client is told
    # it is not authorized rather than that the topic does not exist.
    may_create = ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME) or ctx.allowed(
        Operation.CREATE, ResourceType.TOPIC, name
    )
    if allow_auto_create and state.config.auto_create_topics_enable and not may_create:
        return error_entry(ctx.api_version, name, None, ErrorCode.topic_authorization_failed)
    if not describable:
        return error_entry(ctx.api_version, name, None, ErrorCode.topic_authorization_failed)
    if allow_auto_create:
        try:
            created = await state.topics.auto_create_topic(name)
        except TopicError as exc:
            return error_entry(ctx.api_version, name, None, exc.error_code)
        if created is not None:
            return created
    return error_entry(ctx.api_version, name, None, ErrorCode.unknown_topic_or_partition)


BROKER_ENDPOINT = 1
_ENDPOINT_NAMES = {1: "BROKER", 2: "CONTROLLER"}


async def handle_describe_cluster(ctx: RequestContext, request: Any) -> DescribeClusterResponse:
    wanted = getattr(request, "endpoint_type", BROKER_ENDPOINT)  # v1+
    if wanted != BROKER_ENDPOINT:
        # Our listeners are broker endpoints (the controller quorum is reached elsewhere): as Kafka's broker, say so.
        return DescribeClusterResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.mismatched_endpoint_type,
            error_message=(
                f"The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type {_ENDPOINT_NAMES.get(wanted, wanted)}"
            ),
            endpoint_type=BROKER_ENDPOINT,
            cluster_id="",
            controller_id=-1,
            brokers=(),
            cluster_authorized_operations=OPERATIONS_OMITTED,
        )
    # As Kafka: anyone authenticated learns the brokers and the controller (as Metadata tells them anyway); only the
    # authorized operations need DESCRIBE on the cluster (see _cluster_operations).
    brokers = [
        DescribeClusterBroker(
            broker_id=BrokerId(b.node_id), host=b.host, port=b.port, rack=b.rack, is_fenced=False
        )
        for b in broker_entries(ctx)
    ]
    if getattr(request, "include_fenced_brokers", False):  # v2+
        brokers = sorted(
            brokers + _fenced_brokers(ctx, {b.broker_id for b in brokers}), key=lambda b: b.broker_id
        )
    return DescribeClusterResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode.none,
        error_message=None,
        endpoint_type=BROKER_ENDPOINT,
        cluster_id=ctx.broker.cluster_id,
        controller_id=ctx.broker.node_id,
        brokers=tuple(brokers),
        cluster_authorized_operations=_cluster_operations(ctx, request.include_cluster_authorized_operations),
    )


def _fenced_brokers(ctx: RequestContext, listed: set[int]) -> list[DescribeClusterBroker]:
    """DescribeCluster v2's include_fenced_brokers: the registered brokers the controller has fenced, with their
    endpoint on this listener."""
    fenced = []
    for broker in ctx.broker.cluster.image.brokers.values():
        if broker.broker_id in listed or not broker.fenced:
            continue
        endpoint = next((e for e in broker.endpoints if e.name == ctx.listener_name), None)
        if endpoint is not None:
            fenced.append(
                DescribeClusterBroker(
                    broker_id=broker.broker_id,
                    host=endpoint.host,
                    port=endpoint.port,
                    rack=broker.rack,
                    is_fenced=True,
                )
            )
    return fenced
