"""Incremental fetch sessions (KIP-227): the broker remembers what a fetcher follows.

A fetcher (a follower's replica fetcher, or a consumer whose client supports sessions) sends the
full list of its partitions once, with session epoch 0, and gets a session id. After that each
request carries the id and the next epoch, lists only partitions whose fetch position changed, and
names partitions to forget; the response lists only partitions with something new: records, a
moved high watermark or log start, or an error.

What makes an idle partition free on the leader: each session listens to the logs of its
partitions (the same append / high watermark listeners a long-poll uses) and keeps the set of
partitions that changed since they were last answered. An incremental fetch reads only that set,
the partitions the request names, those whose leadership changed (the ReplicaManager says which),
and everything once after the topic registry changed.
Waiting for data is one event per session, not a listener per partition per request.

The cache holds at most `max.incremental.fetch.session.cache.slots` sessions (Kafka's name and
default, 1000). When it is full, a new session takes the slot of the least recently used one that
has been idle for `EVICTION_IDLE_S` (Kafka's 120 s), or of a consumer's session when the newcomer is a
follower (followers are privileged, as in Kafka); otherwise the fetch is answered without a
session (session id 0), which every client handles by fetching in full.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field

from broker.replication.partition import Partition

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_EPOCH = 2**31 - 1
EVICTION_IDLE_S = 120.0
# Partitions all sessions together may hold (each costs a listener on its log): one client opening
# every slot on every partition must not bloat the broker; beyond it fetches go without a session.
MAX_SESSION_PARTITIONS = 200_000

# (topic name, partition) in a session opened before Fetch v13, (topic id, partition) from v13.
PartitionKey = tuple[str | uuid.UUID, int]
# `FetchSession.in_order` scans the whole session for a subset of at least 1/SCAN_FRACTION of it
# (cheaper than sorting that many), and sorts smaller ones.
SCAN_FRACTION = 4


@dataclass(slots=True)
class SessionPartition:
    """A partition a session follows: the fetcher's position and what it was last told."""

    current_leader_epoch: int
    fetch_offset: int
    max_bytes: int
    # The last values a response carried (an incremental response leaves out what did not change).
    sent_high_watermark: int = -2
    sent_log_start: int = -2
    # Its place in the session's order: grows along `FetchSession.partitions` (see `FetchSession.add`).
    order: int = 0


@dataclass(eq=False)
class FetchSession:
    session_id: int
    # Who opened it: another principal (or a consumer posing as a follower) cannot use the id.
    owner: tuple[str, int]
    # Opened at Fetch v13+: partitions are keyed by topic id (a request of the other kind is refused).
    uses_topic_ids: bool = False
    partitions: dict[PartitionKey, SessionPartition] = field(default_factory=dict)
    # The epoch the next incremental request must carry.
    epoch: int = 1
    last_used: float = field(default_factory=time.monotonic)
    # Partitions whose log changed since they were last read, and a wake-up for a waiting fetch.
    dirty: set[PartitionKey] = field(default_factory=set)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    # The metadata generation the partitions were last all read at: a change reads them all again.
    generation: object = None
    _watched: dict[PartitionKey, tuple[Partition, Callable[[], None]]] = field(default_factory=dict)
    _orders: Iterator[int] = field(default_factory=itertools.count)

    def add(self, key: PartitionKey, partition: SessionPartition) -> None:
        """Follow `key` from `partition`'s position, last in the session's order."""
        self.partitions.pop(key, None)
        partition.order = next(self._orders)
        self.partitions[key] = partition

    def move_to_end(self, key: PartitionKey) -> None:
        """`key` goes last in the session's order (it was just served)."""
        partition = self.partitions.pop(key)
        partition.order = next(self._orders)
        self.partitions[key] = partition

    def in_order(self, keys: Collection[PartitionKey]) -> list[tuple[PartitionKey, SessionPartition]]:
        """The partitions of `keys` this session follows, in the session's order. Costs what `keys`
        holds, not what the session holds: a follower's fetch after one append names a few of its
        thousands of partitions, and scanning all of them for it was most of a leader's CPU while a
        producer spread records over 10,000 partitions."""
        partitions = self.partitions
        if len(keys) * SCAN_FRACTION >= len(partitions):
            return [(key, partition) for key, partition in partitions.items() if key in keys]
        found = [(key, partition) for key in keys if (partition := partitions.get(key)) is not None]
        found.sort(key=_by_order)
        return found

    @property
    def privileged(self) -> bool:
        """A follower's session (replica id >= 0)."""
        return self.owner[1] >= 0

    def advance_epoch(self) -> None:
        self.epoch = 1 if self.epoch >= MAX_EPOCH else self.epoch + 1
        self.last_used = time.monotonic()

    def watch(self, key: PartitionKey, partition: Partition) -> None:
        """Be told when `partition` (the one `key` is read from) is appended to."""
        watched = self._watched.get(key)
        if watched is not None:
            if watched[0] is partition:
                return
            watched[0].remove_append_listener(watched[1])

        def changed() -> None:
            self.dirty.add(key)
            self.wakeup.set()

        partition.add_append_listener(changed)
        self._watched[key] = (partition, changed)

    def forget(self, key: PartitionKey) -> None:
        self.partitions.pop(key, None)
        self.dirty.discard(key)
        watched = self._watched.pop(key, None)
        if watched is not None:
            watched[0].remove_append_listener(watched[1])

    def close(self) -> None:
        for key in list(self._watched):
            self.forget(key)
        self.partitions.clear()
        self.wakeup.set()  # a fetch waiting on this session returns


class FetchSessionCache:
    """The broker's fetch sessions, bounded by `slots`."""

    def __init__(
        self,
        slots: int,
        eviction_idle_s: float = EVICTION_IDLE_S,
        max_partitions: int = MAX_SESSION_PARTITIONS,
    ) -> None:
        self.slots = slots
        self.eviction_idle_s = eviction_idle_s
        self.max_partitions = max_partitions
        self.sessions: dict[int, FetchSession] = {}
        self.evictions = 0
        self._random = random.SystemRandom()

    def __len__(self) -> int:
        return len(self.sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def remove(self, session_id: int) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.close()

    def create(
        self, owner: tuple[str, int], now: float | None = None, *, uses_topic_ids: bool = False
    ) -> FetchSession | None:
        """A new session, or None when every slot is taken by a session that may not be evicted."""
        if self.slots <= 0:
            return None
        now = time.monotonic() if now is None else now
        if len(self.sessions) >= self.slots:
            victim = self._eviction_candidate(privileged=owner[1] >= 0, now=now)
            if victim is None:
                return None
            self.remove(victim.session_id)
            self.evictions += 1
        session = FetchSession(self._new_id(), owner, uses_topic_ids, last_used=now)
        self.sessions[session.session_id] = session
        return session

    def _eviction_candidate(self, *, privileged: bool, now: float) -> FetchSession | None:
        def evictable(session: FetchSession) -> bool:
            stale = now - session.last_used >= self.eviction_idle_s
            return stale or (privileged and not session.privileged)

        candidates: Iterable[FetchSession] = (s for s in self.sessions.values() if evictable(s))
        # Consumers' sessions go before followers', then the least recently used.
        return min(candidates, key=lambda s: (s.privileged, s.last_used), default=None)

    def _new_id(self) -> int:
        for _ in itertools.count():
            session_id = self._random.randint(1, MAX_EPOCH)
            if session_id not in self.sessions:
                return session_id
        raise AssertionError("unreachable")

    def has_room(self, more_partitions: int) -> bool:
        """Whether sessions may hold `more_partitions` more partitions in all."""
        held = sum(len(session.partitions) for session in self.sessions.values())
        return held + more_partitions <= self.max_partitions

    def partition_changed(self, key: PartitionKey) -> None:
        """A partition's leadership or assignment changed: sessions holding it read it again (called
        with its name key, and with its id key for sessions keyed by id)."""
        for session in self.sessions.values():
            if key in session.partitions:
                session.dirty.add(key)
                session.wakeup.set()

    def close(self) -> None:
        for session_id in list(self.sessions):
            self.remove(session_id)


def _by_order(item: tuple[PartitionKey, SessionPartition]) -> int:
    return item[1].order
