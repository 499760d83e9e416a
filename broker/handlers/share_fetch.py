"""ShareFetch (78) and ShareAcknowledge (79): share-partitions on their leader (KIP-932).

A member opens a share session (epoch 0) naming its partitions, then continues it with increasing epochs,
adding partitions and forgetting others; epoch -1 closes it and gives back what the member still holds.
ShareFetch first applies the acknowledgements it carries, then acquires records for the member from each
partition of the session and answers the whole batches that hold them with the acquired offset ranges; the
client delivers only those. The delivery state rules are `broker.share.share_partition`'s.
"""

from __future__ import annotations

import asyncio
import datetime
import re
import struct
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kio.schema.errors import ErrorCode
from kio.schema.share_acknowledge.v2 import response as acknowledged
from kio.schema.share_fetch.v2 import response as fetched
from kio.static.primitive import i16, i32Timedelta

from broker.auth.authorizer import Operation, ResourceType
from broker.context import RequestContext
from broker.handlers.share_groups import group_int_config, share_groups_enabled
from broker.log.transaction_index import AbortedTxn
from broker.protocol.responses import NOT_THROTTLED
from broker.replication.partition import Partition
from broker.share.share_partition import AcknowledgementBatch, AcquiredRange, BatchBounds, SharePartition
from broker.share.share_state import ShareSession, TopicPartitionId, next_session_epoch
from broker.wire.records.errors import StorageError

READ_COMMITTED = 1
# One partition's answer, of ShareFetch or of ShareAcknowledge.
_Answer = TypeVar("_Answer")
# A record batch's header: base offset (8), length (4), leader epoch (4), magic (1), crc (4), attributes (2),
# last offset delta (4), base and max timestamps (8 + 8), producer id (8).
_BATCH_HEAD = struct.Struct(">qiibIhiqqq")
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
_ISO_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")
# The most a partition returns in one ShareFetch when the request allows more.
PARTITION_MAX_BYTES = 1024 * 1024
BATCH_OPTIMIZED = 0


def record_batches(records: bytes, aborted: Iterable[AbortedTxn] = ()) -> list[tuple[BatchBounds, int, int]]:
    """(bounds, start, end) of each whole batch in a log read. Control batches, and under read_committed
    the batches of `aborted` transactions (from their first offset up to their abort marker), are never
    delivered."""
    aborted_by_producer: dict[int, list[AbortedTxn]] = {}
    for txn in aborted:
        aborted_by_producer.setdefault(txn.producer_id, []).append(txn)
    batches = []
    position = 0
    while position + _BATCH_HEAD.size <= len(records):
        base, length, _epoch, _magic, _crc, attributes, last_delta, _t0, _t1, producer_id = (
            _BATCH_HEAD.unpack_from(records, position)
        )
        end = position + 12 + length
        if end > len(records):
            break
        undeliverable = bool(attributes & _CONTROL_BIT) or (
            bool(attributes & _TRANSACTIONAL_BIT)
            and any(
                txn.first_offset <= base <= txn.last_offset
                for txn in aborted_by_producer.get(producer_id, ())
            )
        )
        batches.append((BatchBounds(base, base + last_delta, undeliverable), position, end))
        position = end
    return batches


def _batches_holding(
    batches: list[tuple[BatchBounds, int, int]], acquired: list[AcquiredRange]
) -> list[tuple[int, int]]:
    """(start, end) of the batches that hold an acquired record; both lists are in offset order, so one walk
    over the two finds them (a fetch can carry hundreds of batches and of ranges)."""
    kept: list[tuple[int, int]] = []
    index = 0
    for bounds, start, end in batches:
        while index < len(acquired) and acquired[index].last_offset < bounds.base_offset:
            index += 1
        if index == len(acquired):
            break
        if acquired[index].first_offset <= bounds.last_offset:
            kept.append((start, end))
    return kept


def _duration_ms(spec: str) -> int:
    match = _ISO_DURATION.fullmatch(spec)
    if match is None:
        return 0
    days, hours, minutes, seconds = (float(part) if part else 0.0 for part in match.groups())
    return int((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000)


@dataclass(slots=True)
class _PartitionAnswer:
    index: int
    error: ErrorCode = ErrorCode.none
    ack_error: ErrorCode | None = None
    records: bytes = b""
    acquired: list[fetched.AcquiredRecords] = field(default_factory=list)
    leader: tuple[int, int] = (-1, -1)


class _ShareReader:
    """The share-partitions of one request's group on this broker, read and acquired for one member."""

    def __init__(
        self, ctx: RequestContext, group_id: str, member_id: str, whole_batches: bool = True
    ) -> None:
        self.ctx = ctx
        self.whole_batches = whole_batches
        self.group_id = group_id
        self.member_id = member_id
        state = ctx.broker
        self.lock_ms = group_int_config(
            ctx, group_id, "share.record.lock.duration.ms", "group.share.record.lock.duration.ms"
        )
        configs = state.group_configs(group_id)
        self.isolation = READ_COMMITTED if configs.get("share.isolation.level") == "read_committed" else 0
        self.reset = configs.get("share.auto.offset.reset", "latest")
        self.readable: dict[str, bool] = {}
        # Share-partitions this request read or changed, with their leader epoch: persisted before answering.
        self.touched: dict[tuple[str, uuid.UUID, int], tuple[SharePartition, int]] = {}
        # Share-partitions whose state could not be read from their share coordinator: not served this time
        # (starting them afresh would deliver accepted records again).
        self.unavailable: dict[tuple[str, uuid.UUID, int], ErrorCode] = {}

    async def load(self, keys: Iterable[TopicPartitionId]) -> None:
        """Read from its share coordinator the state of each share-partition this broker leads but has not
        loaded under the partition's current leader epoch (another broker may have led it meanwhile)."""
        state = self.ctx.broker
        share = state.share
        for topic_id, index in keys:
            topic = state.metadata.get_by_id(topic_id)
            if topic is None or not 0 <= index < topic.partitions:
                continue
            partition, _error = state.partitions.leader(topic.name, index)
            if partition is None:
                continue
            key = (self.group_id, topic_id, index)
            epoch = topic.leader_epoch(index)
            if key in share.partitions and share.loaded_epochs.get(key) == epoch:
                continue
            share.partitions.pop(key, None)
            error = ErrorCode.none if share.store is None else await share.store.prepare(key, epoch)
            if error == ErrorCode.none:
                share.loaded_epochs[key] = epoch
            else:
                self.unavailable[key] = ErrorCode.coordinator_not_available

    def locate(
        self, topic_id: uuid.UUID, index: int
    ) -> tuple[Partition | None, SharePartition | None, _PartitionAnswer]:
        answer = _PartitionAnswer(index)
        topic = self.ctx.broker.metadata.get_by_id(topic_id)
        if topic is None:
            answer.error = ErrorCode.unknown_topic_id
            return None, None, answer
        name = topic.name
        if name not in self.readable:
            self.readable[name] = self.ctx.allowed(Operation.READ, ResourceType.TOPIC, name)
        if not self.readable[name]:
            answer.error = ErrorCode.topic_authorization_failed
            return None, None, answer
        if not 0 <= index < topic.partitions:
            answer.error = ErrorCode.unknown_topic_or_partition
            return None, None, answer
        partition, error = self.ctx.broker.partitions.leader(name, index)
        if partition is None:
            answer.error = error
            return None, None, answer
        answer.leader = (self.ctx.broker.config.node_id, topic.leader_epoch(index))
        key = (self.group_id, topic_id, index)
        if key in self.unavailable:
            answer.error = self.unavailable[key]
            return None, None, answer
        share = self.ctx.broker.share.partition(key, lambda: self._initialized(key, partition))
        share.move_start(partition.log_start_offset)
        self.touched[key] = (share, answer.leader[1])
        return partition, share, answer

    async def persist(self) -> None:
        store = self.ctx.broker.share.store
        if store is not None:
            for key, (share, leader_epoch) in self.touched.items():
                await store.save(key, share, leader_epoch)

    def _initialized(self, key: tuple[str, uuid.UUID, int], partition: Partition) -> SharePartition:
        """A share-partition starts from its persisted state, else where `share.auto.offset.reset` says."""
        config = self.ctx.broker.config
        limit = config.get_int("group.share.delivery.count.limit")
        max_in_flight = config.get_int("group.share.partition.max.record.locks")
        store = self.ctx.broker.share.store
        restored = (
            None
            if store is None
            else store.restore(key, delivery_count_limit=limit, max_in_flight=max_in_flight)
        )
        if restored is not None:
            return restored
        if self.reset == "earliest":
            start = partition.log_start_offset
        elif self.reset.startswith("by_duration:"):
            hit = partition.offset_for_timestamp(
                int(time.time() * 1000) - _duration_ms(self.reset.removeprefix("by_duration:")),
                self.isolation,
            )
            start = hit[0] if hit is not None else partition.fetch_bound(self.isolation, False)
        else:
            start = partition.fetch_bound(self.isolation, False)
        return SharePartition(start, delivery_count_limit=limit, max_in_flight=max_in_flight)

    def acknowledge(self, topic_id: uuid.UUID, index: int, batches: Iterable[Any]) -> _PartitionAnswer:
        _partition, share, answer = self.locate(topic_id, index)
        if share is None:
            answer.ack_error = answer.error
            return answer
        answer.ack_error = share.acknowledge(
            self.member_id,
            [
                AcknowledgementBatch(
                    b.first_offset, b.last_offset, tuple(int(t) for t in b.acknowledge_types)
                )
                for b in batches
            ],
            self.lock_ms,
            int(time.time() * 1000),
        )
        return answer

    def acquire(self, topic_id: uuid.UUID, index: int, max_records: int, max_bytes: int) -> _PartitionAnswer:
        partition, share, answer = self.locate(topic_id, index)
        if partition is None or share is None or max_records <= 0:
            return answer
        now = int(time.time() * 1000)
        offset = share.next_fetch_offset(now)
        bound = partition.fetch_bound(self.isolation, False)
        if offset >= bound:
            return answer
        try:
            records = partition.read(offset, max_bytes, bound, True)
        except StorageError as exc:
            answer.error = ErrorCode(exc.error_code)
            return answer
        aborted = partition.aborted_transactions(offset, bound) if self.isolation == READ_COMMITTED else ()
        batches = record_batches(records, aborted)
        acquired = share.acquire(
            self.member_id,
            [bounds for bounds, _s, _e in batches],
            max_records,
            self.lock_ms,
            now,
            whole_batches=self.whole_batches,
        )
        if not acquired:
            return answer
        answer.records = b"".join(records[start:end] for start, end in _batches_holding(batches, acquired))
        answer.acquired = [
            fetched.AcquiredRecords(
                first_offset=r.first_offset, last_offset=r.last_offset, delivery_count=i16(r.delivery_count)
            )
            for r in acquired
        ]
        return answer

    def next_lock_deadline_ms(self, keys: Iterable[TopicPartitionId]) -> int | None:
        deadlines = []
        for topic_id, index in keys:
            share = self.ctx.broker.share.partitions.get((self.group_id, topic_id, index))
            if share is not None and (deadline := share.next_lock_deadline_ms()) is not None:
                deadlines.append(deadline)
        return min(deadlines) if deadlines else None


def _partition_body(answer: _PartitionAnswer) -> fetched.PartitionData:
    return fetched.PartitionData(
        partition_index=answer.index,
        error_code=answer.error,
        error_message=None,
        acknowledge_error_code=i16(answer.ack_error or ErrorCode.none),
        acknowledge_error_message=None,
        current_leader=fetched.LeaderIdAndEpoch(leader_id=answer.leader[0], leader_epoch=answer.leader[1]),
        records=answer.records,
        acquired_records=tuple(answer.acquired),
    )


def _lock_timeout(lock_ms: int) -> i32Timedelta:
    return i32Timedelta.parse(datetime.timedelta(milliseconds=lock_ms))


def _fetch_answer(
    error: ErrorCode,
    lock_ms: int = 0,
    message: str | None = None,
    answers: dict[TopicPartitionId, fetched.PartitionData] | None = None,
) -> fetched.ShareFetchResponse:
    return fetched.ShareFetchResponse(
        throttle_time=NOT_THROTTLED,
        error_code=error,
        error_message=message,
        acquisition_lock_timeout=_lock_timeout(lock_ms),
        responses=tuple(
            fetched.ShareFetchableTopicResponse(topic_id=topic_id, partitions=tuple(partitions))
            for topic_id, partitions in _by_topic(answers or {}).items()
        ),
        node_endpoints=(),
    )


def _acknowledge_answer(
    error: ErrorCode,
    lock_ms: int = 0,
    answers: dict[TopicPartitionId, acknowledged.PartitionData] | None = None,
) -> acknowledged.ShareAcknowledgeResponse:
    return acknowledged.ShareAcknowledgeResponse(
        throttle_time=NOT_THROTTLED,
        error_code=error,
        error_message=None,
        acquisition_lock_timeout=_lock_timeout(lock_ms),
        responses=tuple(
            acknowledged.ShareAcknowledgeTopicResponse(topic_id=topic_id, partitions=tuple(partitions))
            for topic_id, partitions in _by_topic(answers or {}).items()
        ),
        node_endpoints=(),
    )


def _by_topic(answers: dict[TopicPartitionId, _Answer]) -> dict[uuid.UUID, list[_Answer]]:
    topics: dict[uuid.UUID, list[_Answer]] = {}
    for (topic_id, _index), body in answers.items():
        topics.setdefault(topic_id, []).append(body)
    return topics


def _request_error(ctx: RequestContext, request: Any) -> ErrorCode | None:
    if not share_groups_enabled(ctx):
        return ErrorCode.unsupported_version
    if not request.group_id or not request.member_id:
        return ErrorCode.invalid_request
    if not ctx.allowed(Operation.READ, ResourceType.GROUP, request.group_id):
        return ErrorCode.group_authorization_failed
    return None


def _acknowledgements(request_topics: Iterable[Any]) -> dict[TopicPartitionId, Any]:
    found = {}
    for topic in request_topics:
        for partition in topic.partitions:
            if partition.acknowledgement_batches:
                found[(topic.topic_id, int(partition.partition_index))] = partition.acknowledgement_batches
    return found


async def handle_share_fetch(ctx: RequestContext, request: Any) -> fetched.ShareFetchResponse:
    refused = _request_error(ctx, request)
    if refused is not None:
        return _fetch_answer(refused)
    share = ctx.broker.share
    group_id, member_id, epoch = request.group_id, request.member_id, int(request.share_session_epoch)
    mode = getattr(request, "share_acquire_mode", BATCH_OPTIMIZED)  # v2+
    reader = _ShareReader(ctx, group_id, member_id, whole_batches=mode == BATCH_OPTIMIZED)
    requested = [(t.topic_id, int(p.partition_index)) for t in request.topics for p in t.partitions]
    acknowledgements = _acknowledgements(request.topics)
    session: ShareSession | ErrorCode
    if epoch == 0:
        if acknowledgements:
            return _fetch_answer(
                ErrorCode.invalid_request, message="Acknowledge data present in initial fetch request"
            )
        session = share.open_session(
            group_id,
            member_id,
            ctx.broker.config.get_int("group.share.max.share.sessions"),
            connection=ctx.session,
        )
        if ctx.session is not None and not isinstance(session, ErrorCode):
            ctx.session.share_sessions.add((group_id, member_id))
    else:
        session = share.session(group_id, member_id, epoch)
    if isinstance(session, ErrorCode):
        return _fetch_answer(session)
    await reader.load({*requested, *acknowledgements, *session.partitions})
    answers: dict[TopicPartitionId, _PartitionAnswer] = {}
    for key, batches in acknowledgements.items():
        answers[key] = reader.acknowledge(key[0], key[1], batches)
    if epoch == -1:
        share.close_session(group_id, member_id)
        await reader.persist()
        return _fetch_answer(
            ErrorCode.none,
            reader.lock_ms,
            answers={key: _partition_body(answer) for key, answer in answers.items()},
        )
    for topic in request.forgotten_topics_data:
        for index in topic.partitions:
            session.partitions.pop((topic.topic_id, int(index)), None)
    added = [key for key in requested if key not in session.partitions]
    for key in requested:
        session.partitions[key] = None
    session.next_epoch = next_session_epoch(epoch) if epoch > 0 else 1
    fetched = await _acquire_all(ctx, reader, session, request, answers)
    await reader.persist()
    must_answer = set(requested) if epoch == 0 else set(added) | set(acknowledgements)
    bodies = {
        key: _partition_body(answer)
        for key, answer in fetched.items()
        if key in must_answer or answer.records or answer.error != ErrorCode.none
    }
    return _fetch_answer(ErrorCode.none, reader.lock_ms, answers=bodies)


async def _acquire_all(
    ctx: RequestContext,
    reader: _ShareReader,
    session: ShareSession,
    request: Any,
    answers: dict[TopicPartitionId, _PartitionAnswer],
) -> dict[TopicPartitionId, _PartitionAnswer]:
    """Acquire from every partition of the session, waiting up to MaxWait for records when none came."""
    deadline = time.monotonic() + max(0, request.max_wait // datetime.timedelta(milliseconds=1)) / 1000
    while True:
        # A request that allows no bytes acquires nothing: Kafka 4.2 answers a share consumer with
        # fetch.max.bytes=0 no records (librdkafka's 0180 pins that), where a plain Fetch would still carry one
        # batch.
        budget_records = max(1, int(request.max_records)) if int(request.max_bytes) > 0 else 0
        budget_bytes = max(1, int(request.max_bytes))
        result = dict(answers)
        leaders: list[Partition] = []
        for key in list(session.partitions):
            previous = answers.get(key)
            answer = reader.acquire(key[0], key[1], budget_records, min(budget_bytes, PARTITION_MAX_BYTES))
            if previous is not None:
                answer.ack_error = previous.ack_error
            result[key] = answer
            budget_records -= sum(r.last_offset - r.first_offset + 1 for r in answer.acquired)
            budget_bytes -= len(answer.records)
            partition, _error = ctx.broker.partitions.leader(*_name_and_index(ctx, key))
            if partition is not None:
                leaders.append(partition)
        got = any(answer.records for answer in result.values())
        remaining = deadline - time.monotonic()
        if got or remaining <= 0 or ctx.broker.stopping.is_set() or not session.partitions:
            return result
        lock_deadline = reader.next_lock_deadline_ms(session.partitions)
        if lock_deadline is not None:
            remaining = min(remaining, max(0.0, lock_deadline / 1000 - time.time()) + 0.01)
        await _wait_for_append(leaders, remaining, ctx.broker.stopping)


def _name_and_index(ctx: RequestContext, key: TopicPartitionId) -> tuple[str, int]:
    topic = ctx.broker.metadata.get_by_id(key[0])
    return (topic.name if topic is not None else "", key[1])


async def _wait_for_append(partitions: list[Partition], timeout_s: float, stopping: asyncio.Event) -> None:
    woken = asyncio.Event()

    def on_append(*_args: Any) -> None:
        woken.set()

    for partition in partitions:
        partition.add_append_listener(on_append)
    waiters = {asyncio.ensure_future(stopping.wait()), asyncio.ensure_future(woken.wait())}
    try:
        await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        for partition in partitions:
            partition.remove_append_listener(on_append)


async def handle_share_acknowledge(
    ctx: RequestContext, request: Any
) -> acknowledged.ShareAcknowledgeResponse:
    refused = _request_error(ctx, request)
    if refused is not None:
        return _acknowledge_answer(refused)
    share = ctx.broker.share
    group_id, member_id, epoch = request.group_id, request.member_id, int(request.share_session_epoch)
    if epoch == 0:
        return _acknowledge_answer(ErrorCode.invalid_share_session_epoch)
    session = share.session(group_id, member_id, epoch)
    if isinstance(session, ErrorCode):
        return _acknowledge_answer(session)
    reader = _ShareReader(ctx, group_id, member_id)
    await reader.load((t.topic_id, int(p.partition_index)) for t in request.topics for p in t.partitions)
    bodies: dict[TopicPartitionId, acknowledged.PartitionData] = {}
    for topic in request.topics:
        for partition in topic.partitions:
            answer = reader.acknowledge(
                topic.topic_id, int(partition.partition_index), partition.acknowledgement_batches
            )
            bodies[(topic.topic_id, answer.index)] = acknowledged.PartitionData(
                partition_index=answer.index,
                error_code=answer.ack_error or ErrorCode.none,
                error_message=None,
                current_leader=acknowledged.LeaderIdAndEpoch(
                    leader_id=answer.leader[0], leader_epoch=answer.leader[1]
                ),
            )
    if epoch == -1:
        share.close_session(group_id, member_id)
    else:
        session.next_epoch = next_session_epoch(epoch)
    await reader.persist()
    return _acknowledge_answer(ErrorCode.none, reader.lock_ms, answers=bodies)
