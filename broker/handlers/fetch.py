"""Fetch (1), v4-17 (v0-3 too while `legacy.api.versions.enable`), with long-polling.

A fetch that finds fewer than min_bytes waits up to max_wait for an append to any of the
requested partitions (PartitionLog append listeners), then reads again. Only the fetching
connection waits; the event loop keeps serving everyone else.

From v7 a fetcher may open an incremental fetch session (KIP-227, `broker.handlers.fetch_sessions`):
then a request names only partitions whose position changed, the broker reads only those and the
ones whose log moved, and answers only partitions with news. Errors as Kafka's:
FETCH_SESSION_ID_NOT_FOUND (unknown, evicted, or another principal's id) and
INVALID_FETCH_SESSION_EPOCH (a request out of order); the fetcher then starts a new session.

From v13 topics are named by their ids (the topic registry's, the same in a cluster's metadata image):
an id that names no topic (never did, or the topic was deleted, maybe recreated under the same name
with a new id) is answered UNKNOWN_TOPIC_ID, and a partition whose replica belongs to another
incarnation of the topic than the id INCONSISTENT_TOPIC_ID, as Kafka's ReplicaManager does. A
session opened at v13+ keys its partitions by topic id, an older one by name; continuing a session
across that line is FETCH_SESSION_TOPIC_ID_ERROR, as in Kafka. v15 moves the replica id into
`replica_state`; from v16 NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH answers carry the current
leader and its endpoint (KIP-951). v17 adds the follower's directory id, which this broker (one
log directory per replica, no JBOD reassignment by directory) does not use.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.auth.principal import principal_user
from broker.context import RequestContext
from broker.handlers.fetch_sessions import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    FetchSession,
    FetchSessionCache,
    PartitionKey,
    SessionPartition,
)
from broker.handlers.metadata import broker_entries
from broker.protocol.fetch_encoding import (
    LEADER_HINTS_FROM,
    TOPIC_IDS_FROM,
    encode_fetch_response,
)
from broker.protocol.frames import FramedResponse
from broker.quotas.manager import CONSUMER_BYTE_RATE
from broker.replication.partition import READ_COMMITTED, Partition
from broker.wire.records.errors import StorageError
from broker.wire.records.legacy import down_convert


def _error_partition(index: int, error: ErrorCode, high_watermark: int = -1) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": error,
        "high_watermark": high_watermark,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        # Kafka sends an empty list (not null) with an error, in either isolation level.
        "aborted_transactions": [],
        "preferred_read_replica": -1,
        # Kafka sends empty (not null) records with an error; librdkafka cannot parse null here.
        "records": b"",
    }


@dataclass(frozen=True, slots=True)
class FetchPosition:
    """One partition to read: from the request itself, or from the fetch session."""

    topic: str
    partition: int
    current_leader_epoch: int
    fetch_offset: int
    max_bytes: int
    # From v13 the id the fetcher named the topic by; `topic` is then the name it resolved to when
    # the position was made ("" when it names no topic).
    topic_id: uuid.UUID | None = None

    @property
    def key(self) -> PartitionKey:
        """How a fetch session knows this partition: by topic id from v13, by name before."""
        return (self.partition_key_topic, self.partition)

    @property
    def partition_key_topic(self) -> str | uuid.UUID:
        return self.topic if self.topic_id is None else self.topic_id


# The zero id is never a topic's: a v13+ fetch naming it is answered UNKNOWN_TOPIC_ID.
ZERO_TOPIC_ID = uuid.UUID(int=0)


# v15 moves the replica id into the `replica_state` tagged field.
REPLICA_STATE_FROM = 15


def _replica_id(ctx: RequestContext, request: Any) -> int:
    """The fetching follower's broker id, -1 for a consumer."""
    return request.replica_state.replica_id if ctx.api_version >= REPLICA_STATE_FROM else request.replica_id


def _topic_name(ctx: RequestContext, topic_key: str | uuid.UUID) -> str:
    """The name of a session's or request's topic: its key before v13, what its id names from v13."""
    if isinstance(topic_key, str):
        return topic_key
    return _resolve(ctx, topic_key)[0]


def _resolve(ctx: RequestContext, topic_id: uuid.UUID) -> tuple[str, uuid.UUID]:
    """(name, id) of the topic `topic_id` names: the registry's own id object, which later checks
    compare by identity first (see `_read_all`); ("", `topic_id`) when it names no topic."""
    topic = ctx.broker.metadata.get_by_id(topic_id)
    return ("", topic_id) if topic is None else (topic.name, topic.topic_id)


def _positions_of(ctx: RequestContext, request: Any) -> list[FetchPosition]:
    if ctx.api_version < TOPIC_IDS_FROM:
        return [
            FetchPosition(
                t.topic,
                p.partition,
                # current_leader_epoch exists from v9; older clients skip the fencing check.
                getattr(p, "current_leader_epoch", -1),
                p.fetch_offset,
                p.partition_max_bytes,
            )
            for t in request.topics
            for p in t.partitions
        ]
    positions = []
    for t in request.topics:
        name, topic_id = _resolve(ctx, t.topic_id or ZERO_TOPIC_ID)
        positions.extend(
            FetchPosition(
                name, p.partition, p.current_leader_epoch, p.fetch_offset, p.partition_max_bytes, topic_id
            )
            for p in t.partitions
        )
    return positions


def _request_topic_key(ctx: RequestContext, topic: Any) -> str | uuid.UUID:
    """A request topic's (or forgotten topic's) key in a fetch session."""
    return topic.topic if ctx.api_version < TOPIC_IDS_FROM else topic.topic_id or ZERO_TOPIC_ID


@dataclass(slots=True)
class ReadResult:
    """What one pass over some partitions found."""

    partitions: list[tuple[FetchPosition, dict[str, Any]]]
    total: int
    partitions_read: list[Partition]
    # Partitions with data to read that this pass did not return (byte budget, throttle).
    cut_short: list[FetchPosition]


def _read_all(
    ctx: RequestContext, request: Any, positions: list[FetchPosition], byte_cap: int | None = None
) -> ReadResult:
    """One pass over `positions`: each partition's answer, bytes read, logs touched."""
    state = ctx.broker
    partitions = state.partitions
    # A follower's Fetch (replica_id >= 0, CLUSTER_ACTION checked in handle_fetch) reads up to
    # the log end and reports its progress.
    follower_id = _replica_id(ctx, request)
    follower = follower_id >= 0
    isolation_level = request.isolation_level
    read_committed = isolation_level == READ_COMMITTED
    budget = request.max_bytes if request.max_bytes > 0 else 0
    if byte_cap is not None:
        budget = min(budget, byte_cap)
    result = ReadResult([], 0, [], [])
    readable: dict[str, bool] = {}
    for position in positions:
        name, index = position.topic, position.partition
        topic_id = position.topic_id

        def answer(body: dict[str, Any], position: FetchPosition = position) -> None:
            result.partitions.append((position, body))

        topic = state.metadata.get(name)
        # Identity first: the position carries the registry's own id object (see `_resolve`); UUID's
        # __eq__ is Python code and this runs per partition.
        if topic_id is not None and (
            topic is None or (topic.topic_id is not topic_id and topic.topic_id != topic_id)
        ):
            # The id names no topic (any more): it cannot be authorized by name either.
            answer(_error_partition(index, ErrorCode.unknown_topic_id))
            continue
        if name not in readable:
            # Followers were authorized as a cluster action above.
            readable[name] = follower or ctx.allowed(Operation.READ, ResourceType.TOPIC, name)
        if not readable[name]:
            answer(_error_partition(index, ErrorCode.topic_authorization_failed))
            continue
        if topic is None or not 0 <= index < topic.partitions:
            answer(_error_partition(index, ErrorCode.unknown_topic_or_partition))
            continue
        partition, error = partitions.leader(name, index, position.current_leader_epoch)
        if partition is None:
            answer(_error_partition(index, error))
            continue
        replica_topic_id = partition.assignment.topic_id if topic_id is not None else None
        if replica_topic_id is not None and replica_topic_id is not topic_id and replica_topic_id != topic_id:
            # The replica here is another incarnation of the topic than the registry's (a cluster
            # member that has not applied a delete and re-create yet).
            answer(_error_partition(index, ErrorCode.inconsistent_topic_id))
            continue
        result.partitions_read.append(partition)
        offset = position.fetch_offset
        if follower and not partition.record_follower_fetch(follower_id, offset):
            answer(_error_partition(index, ErrorCode.not_leader_or_follower))
            continue
        high_watermark = partition.high_watermark
        stable = partition.last_stable_offset
        log_start = partition.log_start_offset
        if offset < log_start or offset > partition.log_end_offset:
            if follower:
                # Our followers start over at the leader's log start when they are behind it.
                answer(
                    {
                        **_error_partition(index, ErrorCode.offset_out_of_range, high_watermark),
                        "last_stable_offset": stable,
                        "log_start_offset": log_start,
                    }
                )
            else:
                # As Kafka: a consumer out of range learns no offsets here (it asks ListOffsets to reset), and
                # is told of no aborted transactions (null, unlike the other errors' empty list).
                answer(
                    {**_error_partition(index, ErrorCode.offset_out_of_range), "aborted_transactions": None}
                )
            continue
        records = b""
        limit = max(0, min(position.max_bytes, budget - result.total))
        max_offset = partition.fetch_bound(isolation_level, follower)
        first = result.total == 0
        if follower:
            limit, first = partition.follower_limit(follower_id, limit, first)
        # The first partition with data returns at least one whole batch, as in Kafka,
        # so a batch larger than max_bytes cannot stall a consumer.
        if offset < max_offset:
            if limit > 0 or first:
                try:
                    records = partition.read(offset, limit, max_offset, first)
                except StorageError as exc:
                    answer(_error_partition(index, ErrorCode(exc.error_code), high_watermark))
                    continue
            if not records:
                # Data is there but the byte budget or a replication throttle held it back: a
                # session must read this partition again although its log may not change.
                result.cut_short.append(position)
        result.total += len(records)
        if follower:
            partition.note_follower_read(follower_id, len(records))
        elif records:
            state.metrics.record_fetch(name, records)
        answer(
            {
                "partition_index": index,
                "error_code": ErrorCode.none,
                "high_watermark": high_watermark,
                "last_stable_offset": stable,
                "log_start_offset": log_start,
                "aborted_transactions": _aborted(partition, offset, max_offset, records)
                if read_committed
                else None,
                "preferred_read_replica": -1,
                "records": records,
            }
        )
    return result


def _aborted(
    partition: Partition, fetch_offset: int, upper_bound: int, records: bytes
) -> list[dict[str, int]]:
    """read_committed: the aborted transactions overlapping what may be returned (the consumer drops
    those producers' batches from each transaction's first offset up to its abort marker)."""
    if not records:
        return []
    return [
        {"producer_id": txn.producer_id, "first_offset": txn.first_offset}
        for txn in partition.aborted_transactions(fetch_offset, upper_bound)
    ]


def _by_topic(partitions: Iterable[tuple[FetchPosition, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Response topics: named (before v13) or by id (v13+), as the fetcher named them."""
    topics: dict[str | uuid.UUID, list[dict[str, Any]]] = {}
    for position, body in partitions:
        topics.setdefault(position.topic if position.topic_id is None else position.topic_id, []).append(body)
    return [
        {"topic": key, "partitions": parts}
        if isinstance(key, str)
        else {"topic_id": key, "partitions": parts}
        for key, parts in topics.items()
    ]


def _all_failed(request: Any, error: ErrorCode) -> list[dict[str, Any]]:
    return [
        {
            "topic": getattr(t, "topic", None),
            "topic_id": getattr(t, "topic_id", None) or ZERO_TOPIC_ID,
            "partitions": [_error_partition(p.partition, error) for p in t.partitions],
        }
        for t in request.topics
    ]


def _with_leader_hints(ctx: RequestContext, body: dict[str, Any]) -> None:
    """v16+: partitions answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH name the current leader
    and its epoch, and the response carries those leaders' endpoints, so a consumer goes straight to
    the new leader instead of refreshing its metadata first (KIP-951)."""
    leaders = set()
    partitions = ctx.broker.partitions
    for topic in body["responses"]:
        name = topic.get("topic") or _topic_name(ctx, topic["topic_id"])
        for part in topic["partitions"]:
            error = part["error_code"]
            # `is` first: hashing an enum member for the set is Python code, and most answers are none.
            if error is ErrorCode.none or error not in _LEADER_HINT_ERRORS:
                continue
            leader, epoch = partitions.current_leader(name, part["partition_index"])
            part["current_leader"] = {"leader_id": leader, "leader_epoch": epoch}
            if leader >= 0:
                leaders.add(leader)
    if leaders:
        body["node_endpoints"] = [node._asdict() for node in broker_entries(ctx) if node.node_id in leaders]


_LEADER_HINT_ERRORS = frozenset({ErrorCode.not_leader_or_follower, ErrorCode.fenced_leader_epoch})


# Fetch answers are framed by hand (`encode_fetch_response`), not built as kio entities: per partition of a
# 100-partition v17 answer, 1.7 µs against 8.8 µs for kio's entities and writer (bench/hand_framed_answers.py).
async def handle_fetch(ctx: RequestContext, request: Any) -> FramedResponse:
    replica_id = _replica_id(ctx, request)
    if replica_id >= 0 and not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        # Only brokers fetch as replicas: a follower's Fetch reads past the high watermark and
        # moves the ISR, so a client posing as one is refused outright (as Kafka does).
        body = {
            "throttle_time": 0,
            "error_code": ErrorCode.cluster_authorization_failed,
            "session_id": 0,
            # v4-6 have no top-level error code: every partition carries it too.
            "responses": _all_failed(request, ErrorCode.cluster_authorization_failed),
        }
        return FramedResponse(encode_fetch_response(ctx.api_version, ctx.correlation_id, body))
    if replica_id >= 0:
        ctx.broker.partitions.note_follower_fetch(replica_id)
    quotas = ctx.broker.quotas
    user, client_id = principal_user(ctx.principal), ctx.client_id or ""
    byte_rate = quotas.limit(CONSUMER_BYTE_RATE, user, client_id) if quotas is not None else None
    byte_cap = None
    if byte_rate is not None:
        assert quotas is not None
        throttle = quotas.throttle(CONSUMER_BYTE_RATE, user, client_id, time.monotonic())
        if throttle > 0:
            # Kafka answers a throttled fetch with no data and the time to wait.
            return _throttled_response(ctx, throttle)
        # A response carries no more than the client may still receive (and at most one
        # window's worth); one batch always goes, so a consumer never stalls.
        headroom = quotas.headroom(CONSUMER_BYTE_RATE, user, client_id, time.monotonic()) or 0.0
        byte_cap = max(1, int(min(byte_rate * quotas.window_s, headroom)))
    replication = ctx.broker.partitions.replication
    if replication.opening_logs():
        # As Produce does: Metadata may name this broker the leader of a partition created a moment ago while its
        # log is still being created. Kafka has the log by then, so such a fetch long-polls as any empty one.
        await replication.wait_to_lead(
            [
                (_topic_name(ctx, _request_topic_key(ctx, topic)), part.partition)
                for topic in request.topics
                for part in topic.partitions
            ],
            request.max_wait.total_seconds(),
        )
    session_id = getattr(request, "session_id", 0)  # sessions exist from v7
    session_epoch = getattr(request, "session_epoch", FINAL_EPOCH)
    if session_epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        sessions = _session_cache(ctx)
        if session_id:
            sessions.remove(session_id)  # closed, or replaced by the new one
        session = None
        if session_epoch == INITIAL_EPOCH and sessions.has_room(_partition_count(request)):
            session = sessions.create(_owner(ctx, request), uses_topic_ids=_uses_topic_ids(ctx))
        answered, total = await _full_fetch(ctx, request, byte_cap, session)
        response_session_id = 0 if session is None else session.session_id
    else:
        session = _session_cache(ctx).get(session_id)
        if session is None or session.owner != _owner(ctx, request):
            return _session_error(ctx, ErrorCode.fetch_session_id_not_found)
        if session_epoch != session.epoch:
            return _session_error(ctx, ErrorCode.invalid_fetch_session_epoch)
        if session.uses_topic_ids != _uses_topic_ids(ctx):
            # Kafka's answer to a session continued across v13 (ids on one side, names on the other).
            return _session_error(ctx, ErrorCode.fetch_session_topic_id_error)
        added = sum(
            1
            for t in request.topics
            for part in t.partitions
            if (_request_topic_key(ctx, t), part.partition) not in session.partitions
        )
        if not _session_cache(ctx).has_room(added):
            # Growing past the cache's partition bound: the fetcher starts over (without a session).
            _session_cache(ctx).remove(session_id)
            return _session_error(ctx, ErrorCode.fetch_session_id_not_found)
        session.advance_epoch()
        answered, total = await _incremental_fetch(ctx, request, byte_cap, session)
        response_session_id = session.session_id
    throttle_ms = 0
    if byte_rate is not None and total:
        assert quotas is not None
        throttle_ms = int(quotas.record(CONSUMER_BYTE_RATE, user, client_id, total, time.monotonic()) * 1000)
    if ctx.api_version < 4:
        answered = _down_converted(answered, ctx.api_version)
    body = {
        "throttle_time": throttle_ms,
        "error_code": ErrorCode.none,
        "session_id": response_session_id,
        "responses": _by_topic(answered),
    }
    if ctx.api_version >= LEADER_HINTS_FROM:
        _with_leader_hints(ctx, body)
    return FramedResponse(encode_fetch_response(ctx.api_version, ctx.correlation_id, body))


def _down_converted(
    answered: list[tuple[FetchPosition, dict[str, Any]]], version: int
) -> list[tuple[FetchPosition, dict[str, Any]]]:
    """Fetch v0-3 read the old message format: magic 0 for v0-1, magic 1 for v2-3 (Kafka 3.9's conversion)."""
    magic = 0 if version < 2 else 1
    return [
        (position, {**body, "records": down_convert(body["records"], magic, position.fetch_offset)})
        if body["records"]
        else (position, body)
        for position, body in answered
    ]


def _session_cache(ctx: RequestContext) -> FetchSessionCache:
    metadata = ctx.broker.metadata

    def create() -> FetchSessionCache:
        cache = FetchSessionCache(ctx.broker.config.get_int("max.incremental.fetch.session.cache.slots"))

        def partition_changed(key: tuple[str, int]) -> None:
            cache.partition_changed(key)
            topic = metadata.get(key[0])
            if topic is not None:  # sessions opened at v13+ know it by id
                cache.partition_changed((topic.topic_id, key[1]))

        ctx.broker.partitions.add_partition_listener(partition_changed)
        return cache

    return ctx.broker.response_caches.get(FetchSessionCache, create)


def _partition_count(request: Any) -> int:
    return sum(len(topic.partitions) for topic in request.topics)


def _owner(ctx: RequestContext, request: Any) -> tuple[str, int]:
    return str(ctx.principal), _replica_id(ctx, request)


def _uses_topic_ids(ctx: RequestContext) -> bool:
    return ctx.api_version >= TOPIC_IDS_FROM


def _session_error(ctx: RequestContext, error: ErrorCode) -> FramedResponse:
    body = {"throttle_time": 0, "error_code": error, "session_id": 0, "responses": []}
    return FramedResponse(encode_fetch_response(ctx.api_version, ctx.correlation_id, body))


def _generation(ctx: RequestContext) -> int:
    """Changes whenever topics or partitions may have: sessions then read every partition (a change
    of leadership marks only that partition, see `FetchSessionCache.partition_changed`)."""
    return ctx.broker.metadata.version


async def _full_fetch(
    ctx: RequestContext, request: Any, byte_cap: int | None, session: FetchSession | None
) -> tuple[list[tuple[FetchPosition, dict[str, Any]]], int]:
    """Every requested partition, long-polling until min_bytes; a new session starts from them."""
    positions = _positions_of(ctx, request)
    generation = _generation(ctx)
    read = _read_all(ctx, request, positions, byte_cap)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + request.max_wait.total_seconds()
    # Wait for appends until min_bytes are available or max_wait has passed.
    while read.total < request.min_bytes and read.partitions_read and not ctx.broker.stopping.is_set():
        remaining = deadline - loop.time()
        if remaining <= 0:
            break
        await _wait_for_append(ctx, read.partitions_read, remaining)
        generation = _generation(ctx)
        read = _read_all(ctx, request, positions, byte_cap)
    if session is not None:
        for position in positions:
            session.add(
                position.key,
                SessionPartition(position.current_leader_epoch, position.fetch_offset, position.max_bytes),
            )
        _remember_sent(ctx, session, read)
        _rotate_served(session, read)
        # Partitions the byte budget cut short are read again by the next (incremental) fetch.
        session.dirty.update(p.key for p in read.cut_short)
        session.generation = generation
    return read.partitions, read.total


async def _incremental_fetch(
    ctx: RequestContext, request: Any, byte_cap: int | None, session: FetchSession
) -> tuple[list[tuple[FetchPosition, dict[str, Any]]], int]:
    """Reads what changed: the partitions the request names, those whose log moved since they were
    last answered, and all of them after a metadata change; answers only partitions with news."""
    named: set[PartitionKey] = set()
    for topic in request.topics:
        topic_key = _request_topic_key(ctx, topic)
        for part in topic.partitions:
            key = (topic_key, part.partition)
            named.add(key)
            epoch = getattr(part, "current_leader_epoch", -1)
            known = session.partitions.get(key)
            if known is None:
                session.add(key, SessionPartition(epoch, part.fetch_offset, part.partition_max_bytes))
            else:  # a new position; what the fetcher was last told stays
                known.current_leader_epoch = epoch
                known.fetch_offset = part.fetch_offset
                known.max_bytes = part.partition_max_bytes
    for forgotten in request.forgotten_topics_data:
        forgotten_key = _request_topic_key(ctx, forgotten)
        for index in forgotten.partitions:
            session.forget((forgotten_key, index))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + request.max_wait.total_seconds()
    answered: dict[PartitionKey, tuple[FetchPosition, dict[str, Any]]] = {}
    news: set[PartitionKey] = set()
    cut_short: set[PartitionKey] = set()
    pending = named
    while True:
        generation = _generation(ctx)
        if generation != session.generation:
            pending = set(session.partitions)
            session.generation = generation
        pending |= session.dirty
        session.dirty.clear()
        session.wakeup.clear()
        read = _read_all(ctx, request, _session_positions(ctx, session, pending), byte_cap)
        news |= _remember_sent(ctx, session, read)
        _rotate_served(session, read)
        for position, body in read.partitions:
            answered[position.key] = (position, body)
        cut_short.update(p.key for p in read.cut_short)
        total = sum(len(body["records"]) for _, body in answered.values())
        remaining = deadline - loop.time()
        if total >= request.min_bytes or remaining <= 0 or ctx.broker.stopping.is_set():
            break
        # Only a change to a log of the session (or its end) wakes this up: never a busy loop.
        await _wait_for_session(ctx, session, remaining)
        if not session.partitions:
            break
        pending = set()
    # Partitions the byte budget cut short are read again by the next fetch.
    session.dirty |= cut_short
    changed = [item for key, item in answered.items() if key in news]
    return changed, sum(len(body["records"]) for _, body in changed)


def _session_positions(
    ctx: RequestContext, session: FetchSession, keys: set[PartitionKey]
) -> list[FetchPosition]:
    """The positions of `keys`, in the session's order (see `_rotate_served`)."""
    if not session.uses_topic_ids:
        return [
            FetchPosition(key[0], key[1], part.current_leader_epoch, part.fetch_offset, part.max_bytes)
            for key, part in session.in_order(keys)
        ]
    resolved: dict[uuid.UUID, tuple[str, uuid.UUID]] = {}
    positions = []
    for (key_id, index), part in session.in_order(keys):
        assert isinstance(key_id, uuid.UUID)
        found = resolved.get(key_id)
        if found is None:
            found = resolved[key_id] = _resolve(ctx, key_id)
        name, topic_id = found
        positions.append(
            FetchPosition(name, index, part.current_leader_epoch, part.fetch_offset, part.max_bytes, topic_id)
        )
    return positions


def _rotate_served(session: FetchSession, read: ReadResult) -> None:
    """Partitions that returned records go to the end of the session's order, as Kafka's sessions do:
    when the response's byte budget runs out, the next fetch serves the others first instead of
    starving every partition after the first (KIP-74's fairness for session fetchers)."""
    for position, body in read.partitions:
        key = position.key
        if body["records"] and key in session.partitions:
            session.move_to_end(key)


def _remember_sent(ctx: RequestContext, session: FetchSession, read: ReadResult) -> set[PartitionKey]:
    """Note what this pass tells the fetcher, listen to the logs it read; returns the partitions
    whose answer is news (an incremental response carries only those)."""
    news = set()
    partitions = ctx.broker.partitions
    for position, body in read.partitions:
        key = position.key
        part = session.partitions.get(key)
        if part is None:
            continue
        if (
            body["records"]
            or body["error_code"] != ErrorCode.none
            or body["high_watermark"] != part.sent_high_watermark
            or body["log_start_offset"] != part.sent_log_start
        ):
            news.add(key)
        part.sent_high_watermark = body["high_watermark"]
        part.sent_log_start = body["log_start_offset"]
        partition, _ = partitions.leader(position.topic, position.partition)
        if partition is not None:
            session.watch(key, partition)
    return news


def _throttled_response(ctx: RequestContext, throttle_s: float) -> FramedResponse:
    body = {
        "throttle_time": int(throttle_s * 1000),
        "error_code": ErrorCode.none,
        "session_id": 0,
        "responses": [],
    }
    return FramedResponse(encode_fetch_response(ctx.api_version, ctx.correlation_id, body))


async def _wait_for_session(ctx: RequestContext, session: FetchSession, timeout_s: float) -> None:
    stopping = asyncio.ensure_future(ctx.broker.stopping.wait())
    woken = asyncio.ensure_future(session.wakeup.wait())
    try:
        await asyncio.wait({stopping, woken}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        woken.cancel()


async def _wait_for_append(ctx: RequestContext, partitions: list[Partition], timeout_s: float) -> None:
    woken = asyncio.Event()

    def on_append(*_args: Any) -> None:
        woken.set()

    for partition in partitions:
        partition.add_append_listener(on_append)
    stopping = asyncio.ensure_future(ctx.broker.stopping.wait())
    appended = asyncio.ensure_future(woken.wait())
    try:
        await asyncio.wait({stopping, appended}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        appended.cancel()
        for partition in partitions:
            partition.remove_append_listener(on_append)
