"""The replica fetcher: a follower pulls its partitions from their leaders with the real Fetch API.

One `LeaderFetcher` per leader broker, one connection each, every partition followed from that
leader in one Fetch request (replica_id = our node id, so the leader reads up to its log end and
records our progress). Batches are appended verbatim — offsets, producer ids and sequences, leader
epochs — and the follower's high watermark follows the leader's.

A partition starts (and restarts after every leader epoch change) in the *truncating* state: the
follower asks the leader OffsetForLeaderEpoch about its latest epoch and cuts off a divergent tail
(`broker.replication.truncation`) before it fetches again.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import request as fetch_v12
from kio.schema.offset_for_leader_epoch.v4 import request as epoch_v4
from kio.static.primitive import i32, i32Timedelta, i64

from broker.controller.api import Endpoint
from broker.log.leader_epoch import UNDEFINED_EPOCH
from broker.raft.tasks import cancel_tasks
from broker.replication.config import ReplicationConfig
from broker.replication.partition import FollowerFetch, Partition
from broker.replication.peer_connection import PeerAuthenticationError, PeerConnection, PeerConnectionError
from broker.replication.throttle import ReplicationThrottle
from broker.replication.truncation import decide_truncation
from broker.wire.records.errors import StorageError


class FollowerHost(Protocol):
    """What a replica fetcher needs of the broker's replica manager (broker.replication.manager)."""

    config: ReplicationConfig
    node_id: int
    follower_throttle: ReplicationThrottle

    def endpoint(self, broker_id: int, listener_name: str | None = None) -> Endpoint | None: ...


log = logging.getLogger(__name__)

# Errors after which the leader (or our view of it) must change before fetching makes sense.
RETRY_LATER = frozenset(
    {
        ErrorCode.not_leader_or_follower,
        ErrorCode.fenced_leader_epoch,
        ErrorCode.unknown_leader_epoch,
        ErrorCode.unknown_topic_or_partition,
        ErrorCode.unknown_topic_id,
        ErrorCode.kafka_storage_error,
    }
)
IDLE_WAIT_S = 0.05
# Appending a response's partitions takes turns with the event loop this often.
APPEND_SLICE_S = 0.01
CLOSE_TIMEOUT_S = 5.0


SESSION_ERRORS = frozenset({ErrorCode.fetch_session_id_not_found, ErrorCode.invalid_fetch_session_epoch})
MAX_SESSION_EPOCH = 2**31 - 1


@dataclass(frozen=True, slots=True)
class FetchState:
    """What the leader's fetch session holds for one partition (we name it again when it changes)."""

    leader_epoch: int
    fetch_offset: int
    log_start_offset: int
    max_bytes: int


@dataclass
class FetchSessionState:
    """Our side of the incremental fetch session (KIP-227) with one leader."""

    session_id: int = 0
    # 0 asks the leader for a new session with a full fetch.
    epoch: int = 0
    partitions: dict[tuple[str, int], FetchState] = field(default_factory=dict)

    def advance(
        self,
        session_id: int,
        full: bool,
        named: dict[tuple[str, int], FetchState],
        forgotten: list[tuple[str, int]],
    ) -> None:
        """The leader answered: remember what its session now holds."""
        if full:
            self.partitions = dict(named)
            self.session_id = session_id
            # No session (the leader's cache is full): keep fetching in full, asking again each time.
            self.epoch = 1 if session_id else 0
            return
        self.partitions.update(named)
        for key in forgotten:
            self.partitions.pop(key, None)
        self.epoch = 1 if self.epoch >= MAX_SESSION_EPOCH else self.epoch + 1


def _fetch_topics(named: dict[tuple[str, int], FetchState]) -> tuple[fetch_v12.FetchTopic, ...]:
    by_topic: dict[str, list[fetch_v12.FetchPartition]] = {}
    for (topic, partition), state in named.items():
        by_topic.setdefault(topic, []).append(
            fetch_v12.FetchPartition(
                partition=i32(partition),
                current_leader_epoch=i32(state.leader_epoch),
                fetch_offset=i64(state.fetch_offset),
                last_fetched_epoch=i32(-1),
                log_start_offset=i64(state.log_start_offset),
                partition_max_bytes=i32(state.max_bytes),
            )
        )
    return tuple(
        fetch_v12.FetchTopic(topic=topic, partitions=tuple(parts)) for topic, parts in by_topic.items()
    )


def _forgotten_topics(keys: list[tuple[str, int]]) -> tuple[fetch_v12.ForgottenTopic, ...]:
    by_topic: dict[str, list[i32]] = {}
    for topic, partition in keys:
        by_topic.setdefault(topic, []).append(i32(partition))
    return tuple(
        fetch_v12.ForgottenTopic(topic=topic, partitions=tuple(parts)) for topic, parts in by_topic.items()
    )


def _fetch_state_of(partition: Partition) -> FollowerFetch:
    """The follower state of a partition this fetcher follows (set by `LeaderFetcher.follow`)."""
    following = partition.following
    assert following is not None
    return following


class LeaderFetcher:
    def __init__(
        self, manager: FollowerHost, leader_id: int, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self.manager = manager
        self.leader_id = leader_id
        self.ssl_context = ssl_context
        self.partitions: dict[tuple[str, int], Partition] = {}
        self._changed = asyncio.Event()
        self._connection: PeerConnection | None = None
        self._endpoint_changed = False
        self._closing = False
        self.session = FetchSessionState()
        # Partitions whose fetch position (or whether they are fetched at all) may differ from what
        # the leader's session holds: an incremental fetch looks at these only, so a round costs
        # nothing per idle partition. Truncating and backing-off partitions have sets of their own.
        self._moved: set[tuple[str, int]] = set()
        self._truncating: set[tuple[str, int]] = set()
        self._backing_off: set[tuple[str, int]] = set()
        self._task = asyncio.create_task(self._run(), name=f"replica-fetcher-{leader_id}")

    def follow(self, partition: Partition) -> None:
        partition.following = FollowerFetch()
        self.partitions[partition.key] = partition
        self._truncating.add(partition.key)
        self._moved.add(partition.key)
        self._changed.set()

    def unfollow(self, key: tuple[str, int]) -> None:
        self.partitions.pop(key, None)
        self._truncating.discard(key)
        self._backing_off.discard(key)
        self._moved.add(key)  # the session forgets it

    def reconnect(self) -> None:
        """The leader's endpoint changed: drop the connection, the next round opens a new one."""
        self._endpoint_changed = True

    async def close(self) -> None:
        # Python 3.11's wait_for can swallow a cancellation that races a completed fetch, so the
        # loop also checks `_closing`, and the wait is bounded: a stuck fetcher never holds up shutdown.
        self._closing = True
        self._changed.set()
        if self._connection is not None:
            await self._connection.close()
        await cancel_tasks([self._task], CLOSE_TIMEOUT_S)
        if self._connection is not None:
            await self._connection.close()

    # ---- the fetch loop -----------------------------------------------------------------------

    async def _run(self) -> None:
        config = self.manager.config
        backoff_s = config.replica_fetch_backoff_ms / 1000
        while not self._closing:
            if not self.partitions:
                self._changed.clear()
                await self._changed.wait()
                continue
            connection = await self._connect()
            if connection is None:
                await asyncio.sleep(backoff_s)
                continue
            try:
                now = time.monotonic()
                self._end_backoffs(now)
                truncating = [
                    followed
                    for key in self._truncating
                    if (followed := self.partitions.get(key)) is not None
                    and _fetch_state_of(followed).retry_at <= now
                ]
                if truncating:
                    await self._truncate(connection, truncating)
                if len(self._truncating | self._backing_off) < len(self.partitions):
                    await self._fetch(connection)
                else:
                    await asyncio.sleep(IDLE_WAIT_S)
            except PeerAuthenticationError as exc:
                # Once per backoff: a wrong password or a missing SCRAM user stops replication entirely.
                log.warning(
                    "replica fetcher for broker %d cannot authenticate: %s; retrying in %d ms",
                    self.leader_id,
                    exc,
                    config.replica_fetch_backoff_ms,
                )
                await asyncio.sleep(backoff_s)
            except PeerConnectionError as exc:
                log.info("replica fetcher for broker %d: %s; retrying", self.leader_id, exc)
                await asyncio.sleep(backoff_s)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("replica fetcher for broker %d failed; retrying", self.leader_id)
                await asyncio.sleep(backoff_s)

    async def _connect(self) -> PeerConnection | None:
        if self._endpoint_changed and self._connection is not None:
            await self._connection.close()
            self._connection = None
        self._endpoint_changed = False
        if self._connection is not None:
            return self._connection
        inter_broker = self.manager.config.inter_broker
        endpoint = self.manager.endpoint(self.leader_id, inter_broker.listener_name)
        if endpoint is None:
            return None
        self._connection = PeerConnection(
            endpoint.host,
            endpoint.port,
            client_id=f"broker-{self.manager.node_id}-fetcher",
            timeout_s=self.manager.config.replica_socket_timeout_ms / 1000,
            ssl_context=self.ssl_context,
            sasl=inter_broker.sasl,
        )
        return self._connection

    def _back_off(self, followed: Partition) -> None:
        _fetch_state_of(followed).retry_at = (
            time.monotonic() + self.manager.config.replica_fetch_backoff_ms / 1000
        )
        self._backing_off.add(followed.key)
        self._moved.add(followed.key)

    def _end_backoffs(self, now: float) -> None:
        for key in [
            k
            for k in self._backing_off
            if (f := self.partitions.get(k)) is None or _fetch_state_of(f).retry_at <= now
        ]:
            self._backing_off.discard(key)
            self._moved.add(key)

    def _set_truncating(self, followed: Partition, truncating: bool) -> None:
        _fetch_state_of(followed).truncating = truncating
        if truncating:
            self._truncating.add(followed.key)
        else:
            self._truncating.discard(followed.key)
        self._moved.add(followed.key)

    def _fetchable(self, followed: Partition | None, now: float) -> bool:
        if followed is None:
            return False
        state = _fetch_state_of(followed)
        return not state.truncating and state.retry_at <= now

    # ---- truncation ---------------------------------------------------------------------------

    async def _truncate(self, connection: PeerConnection, partitions: list[Partition]) -> None:
        asking: list[tuple[Partition, FollowerFetch]] = []
        for followed in partitions:
            partition_log = followed.log
            if partition_log.leader_epochs.latest_epoch == UNDEFINED_EPOCH:
                # No epochs: nothing was ever appended under a leader, or only what is committed.
                partition_log.truncate_to(partition_log.high_watermark)
                self._set_truncating(followed, False)
            else:
                asking.append((followed, _fetch_state_of(followed)))
        if not asking:
            return
        by_topic: dict[str, list[epoch_v4.OffsetForLeaderPartition]] = {}
        for followed, _ in asking:
            assignment = followed.assignment
            by_topic.setdefault(assignment.topic, []).append(
                epoch_v4.OffsetForLeaderPartition(
                    partition=i32(assignment.partition),
                    current_leader_epoch=i32(assignment.leader_epoch),
                    leader_epoch=i32(followed.log.leader_epochs.latest_epoch),
                )
            )
        request = epoch_v4.OffsetForLeaderEpochRequest(
            replica_id=i32(self.manager.node_id),
            topics=tuple(
                epoch_v4.OffsetForLeaderTopic(topic=topic, partitions=tuple(parts))
                for topic, parts in by_topic.items()
            ),
        )
        response = await connection.request(request)
        answers = {(t.topic, p.partition): p for t in response.topics for p in t.partitions}
        for followed, state in asking:
            answer = answers.get(followed.key)
            if self.partitions.get(followed.key) is not followed or followed.following is not state:
                continue  # unfollowed or re-followed while we waited
            if answer is None or answer.error_code != ErrorCode.none:
                self._back_off(followed)
                continue
            partition_log = followed.log
            decision = decide_truncation(
                partition_log.leader_epochs,
                log_end_offset=partition_log.log_end_offset,
                high_watermark=partition_log.high_watermark,
                leader_epoch=answer.leader_epoch,
                leader_end_offset=answer.end_offset,
            )
            if decision.offset < partition_log.log_end_offset:
                log.info(
                    "truncating %s-%d from %d to %d (leader %d: epoch %d ends at %d)",
                    *followed.key,
                    partition_log.log_end_offset,
                    decision.offset,
                    self.leader_id,
                    answer.leader_epoch,
                    answer.end_offset,
                )
                partition_log.truncate_to(decision.offset)
            self._set_truncating(followed, not decision.complete)

    # ---- fetching -----------------------------------------------------------------------------

    def _fetch_state(self, followed: Partition, allowance: float) -> FetchState | None:
        """Where to fetch `followed` from now; None when the follower throttle holds it back."""
        config = self.manager.config
        throttle = self.manager.follower_throttle
        max_bytes = config.replica_fetch_max_bytes
        if throttle.enabled and self.manager.node_id not in followed.assignment.isr:
            if allowance <= 0:
                return None
            max_bytes = max(1, min(max_bytes, int(allowance)))
        return FetchState(
            followed.assignment.leader_epoch,
            followed.log.log_end_offset,
            followed.log.log_start_offset,
            max_bytes,
        )

    async def _fetch(self, connection: PeerConnection) -> None:
        config = self.manager.config
        throttle = self.manager.follower_throttle
        now = time.monotonic()
        allowance = throttle.allowance(now)
        session = self.session
        full = session.session_id == 0 or not config.fetch_sessions
        # A full fetch names every fetchable partition. An incremental one only those whose position
        # changed, and forgets those no longer fetched (moved, truncating, backing off); with the
        # follower throttle on, max_bytes changes with the allowance, so every partition is looked at.
        examined = self.partitions.keys() if full or throttle.enabled else self._moved
        self._moved = set()
        named: dict[tuple[str, int], FetchState] = {}
        forgotten: list[tuple[str, int]] = []
        for key in examined:
            followed = self.partitions.get(key)
            state = self._fetch_state(followed, allowance) if self._fetchable(followed, now) else None
            if state is not None:
                if full or session.partitions.get(key) != state:
                    named[key] = state
            elif not full and key in session.partitions:
                forgotten.append(key)
        if not named and not session.partitions:
            await asyncio.sleep(IDLE_WAIT_S)
            return
        wait = datetime.timedelta(milliseconds=config.replica_fetch_wait_max_ms)
        request = fetch_v12.FetchRequest(
            cluster_id=None,
            replica_id=i32(self.manager.node_id),
            max_wait=i32Timedelta.parse(wait),
            min_bytes=i32(config.replica_fetch_min_bytes),
            max_bytes=i32(config.replica_fetch_response_max_bytes),
            isolation_level=0,
            # Without sessions: a full, sessionless fetch every time (epoch -1).
            session_id=i32(session.session_id if config.fetch_sessions else 0),
            session_epoch=i32(session.epoch if config.fetch_sessions else -1),
            topics=_fetch_topics(named),
            forgotten_topics_data=_forgotten_topics(forgotten),
            rack_id="",
        )
        try:
            response = await connection.request(request, wait_s=wait.total_seconds())
        except BaseException:
            self._moved.update(named)  # not sent, or its answer lost: name them again
            self._moved.update(forgotten)
            raise
        if response.error_code != ErrorCode.none:
            if response.error_code in SESSION_ERRORS:
                log.info(
                    "fetch session %d with broker %d ended (error %s): starting a new one",
                    session.session_id,
                    self.leader_id,
                    response.error_code,
                )
            else:
                for key in named:
                    followed = self.partitions.get(key)
                    if followed is not None:
                        self._back_off(followed)
            self.session = FetchSessionState()  # the next fetch is a full one
            return
        session.advance(response.session_id, full, named, forgotten)
        slice_end = time.monotonic() + APPEND_SLICE_S
        for topic in response.responses:
            for answer in topic.partitions:
                if time.monotonic() >= slice_end:
                    # Thousands of partitions with data: let the event loop run in between.
                    await asyncio.sleep(0)
                    slice_end = time.monotonic() + APPEND_SLICE_S
                key = (topic.topic, answer.partition_index)
                followed = self.partitions.get(key)
                # Only partitions this session fetches (a response may carry any of them).
                if key in session.partitions and self._fetchable(followed, now):
                    assert followed is not None
                    self._handle_partition(followed, answer)
                    self._moved.add(key)  # its log end may have moved: compared on the next round

    def _handle_partition(self, followed: Partition, answer: Any) -> None:
        partition_log = followed.log
        error = answer.error_code
        if error == ErrorCode.offset_out_of_range:
            if partition_log.log_end_offset < answer.log_start_offset:
                log.info(
                    "%s-%d is behind the leader's log start %d: starting over there",
                    *followed.key,
                    answer.log_start_offset,
                )
                partition_log.truncate_fully_and_start_at(answer.log_start_offset)
            else:
                self._set_truncating(followed, True)  # we are ahead of the leader: find where we agree
            return
        if error != ErrorCode.none:
            if error not in RETRY_LATER:
                log.warning("fetching %s-%d from broker %d: error %s", *followed.key, self.leader_id, error)
            self._back_off(followed)
            return
        records = answer.records
        if records:
            try:
                partition_log.append_as_follower(records)
            except StorageError as exc:
                log.warning("cannot append %s-%d from the leader: %s", *followed.key, exc)
                self._set_truncating(followed, True)
                self._back_off(followed)
                return
            if self.manager.node_id not in followed.assignment.isr:
                self.manager.follower_throttle.record(len(records), time.monotonic())
        partition_log.advance_high_watermark(answer.high_watermark)
        leader_start = answer.log_start_offset
        if partition_log.log_start_offset < leader_start <= partition_log.high_watermark:
            # DeleteRecords and retention on the leader move our log start too.
            partition_log.delete_records_before(leader_start)


class FetcherPool:
    """The fetchers of one broker, one per leader it follows partitions from."""

    def __init__(self, manager: FollowerHost) -> None:
        self.manager = manager
        # One TLS context for every peer (None unless the inter-broker listener uses TLS).
        self.ssl_context = manager.config.inter_broker.client_ssl_context()
        self.fetchers: dict[int, LeaderFetcher] = {}
        self._leader_of: dict[tuple[str, int], int] = {}

    def follow(self, partition: Partition) -> None:
        """Fetch `partition` from its assignment's leader, starting with truncation."""
        self.unfollow(partition)
        leader = partition.assignment.leader
        if leader < 0 or leader == self.manager.node_id:
            return
        fetcher = self.fetchers.get(leader)
        if fetcher is None:
            fetcher = self.fetchers[leader] = LeaderFetcher(self.manager, leader, self.ssl_context)
        fetcher.follow(partition)
        self._leader_of[partition.key] = leader

    def unfollow(self, partition: Partition) -> None:
        leader = self._leader_of.pop(partition.key, None)
        if leader is not None and leader in self.fetchers:
            self.fetchers[leader].unfollow(partition.key)
        partition.following = None

    def is_following(self, partition: Partition) -> bool:
        return self._leader_of.get(partition.key) == partition.assignment.leader

    def broker_changed(self, broker_id: int) -> None:
        fetcher = self.fetchers.get(broker_id)
        if fetcher is not None:
            fetcher.reconnect()

    async def close(self) -> None:
        for fetcher in self.fetchers.values():
            await fetcher.close()
        self.fetchers.clear()
