"""The fetch session cache's bounds and eviction (Kafka's rules for max.incremental.fetch.session.cache.slots)."""

from __future__ import annotations

import random

from broker.handlers.fetch_sessions import EVICTION_IDLE_S, MAX_EPOCH, FetchSessionCache, SessionPartition

CONSUMER = ("User:app", -1)
FOLLOWER = ("User:broker", 2)


class FakeLog:
    """Only the listener registry of a PartitionLog."""

    def __init__(self) -> None:
        self.listeners: list = []

    def add_append_listener(self, callback) -> None:
        self.listeners.append(callback)

    def remove_append_listener(self, callback) -> None:
        self.listeners.remove(callback)

    def append(self) -> None:
        for listener in list(self.listeners):
            listener()


def test_a_full_cache_evicts_only_a_session_idle_for_the_eviction_time() -> None:
    cache = FetchSessionCache(slots=2)
    first = cache.create(CONSUMER, now=0)
    second = cache.create(CONSUMER, now=10)
    assert first is not None
    assert second is not None
    assert cache.create(CONSUMER, now=EVICTION_IDLE_S - 1) is None  # both in use
    third = cache.create(CONSUMER, now=EVICTION_IDLE_S + 5)  # the first is idle long enough
    assert third is not None
    assert cache.get(first.session_id) is None
    assert cache.get(second.session_id) is second
    assert len(cache) == 2
    assert cache.evictions == 1


def test_a_follower_takes_the_slot_of_a_consumer_but_not_of_another_follower() -> None:
    cache = FetchSessionCache(slots=2)
    consumer = cache.create(CONSUMER, now=0)
    follower = cache.create(FOLLOWER, now=0)
    assert consumer is not None
    assert follower is not None
    assert cache.create(CONSUMER, now=1) is None
    newcomer = cache.create(FOLLOWER, now=1)
    assert newcomer is not None
    assert cache.get(consumer.session_id) is None
    assert cache.get(follower.session_id) is follower
    assert cache.create(FOLLOWER, now=2) is None  # only followers left, none idle


def test_no_slots_means_no_sessions() -> None:
    assert FetchSessionCache(slots=0).create(CONSUMER) is None


def test_a_session_listens_to_its_logs_until_it_forgets_them_or_closes() -> None:
    cache = FetchSessionCache(slots=1)
    session = cache.create(CONSUMER, now=0)
    assert session is not None
    one, two = FakeLog(), FakeLog()
    session.watch(("t", 0), one)
    session.watch(("t", 0), one)  # watching twice registers once
    session.watch(("t", 1), two)
    assert len(one.listeners) == 1
    one.append()
    assert session.dirty == {("t", 0)}
    assert session.wakeup.is_set()
    session.forget(("t", 0))
    assert one.listeners == []
    assert session.dirty == set()
    cache.remove(session.session_id)
    assert two.listeners == []
    assert cache.get(session.session_id) is None


def test_the_epoch_wraps_to_one() -> None:
    session = FetchSessionCache(slots=1).create(CONSUMER, now=0)
    assert session is not None
    assert session.epoch == 1
    session.epoch = MAX_EPOCH
    session.advance_epoch()
    assert session.epoch == 1


def test_sessions_hold_a_bounded_number_of_partitions_in_all() -> None:
    cache = FetchSessionCache(slots=10, max_partitions=3)
    session = cache.create(CONSUMER, now=0)
    assert session is not None
    assert cache.has_room(3)
    for partition in range(2):
        session.watch(("t", partition), FakeLog())
        session.partitions[("t", partition)] = None  # type: ignore[assignment]
    assert cache.has_room(1)
    assert not cache.has_room(2)


def test_a_subset_of_a_session_comes_in_the_session_order_after_rotations() -> None:
    cache = FetchSessionCache(slots=1)
    session = cache.create(FOLLOWER, now=0)
    assert session is not None
    keys = [("wide", index) for index in range(2000)]
    for key in keys:
        session.add(key, SessionPartition(0, 0, 1024))
    shuffle = random.Random(7)
    for key in shuffle.sample(keys, 500):  # served partitions go last, as fetches rotate them
        session.move_to_end(key)
    session.add(keys[3], SessionPartition(0, 5, 1024))  # a new position goes last too
    session_order = list(session.partitions)
    assert session_order[-1] == keys[3]
    for size in (0, 1, 7, 499, 500, 501, 1999, 2000):  # sorted below a quarter, scanned above
        subset = set(shuffle.sample(keys, size)) | {("gone", 1)}  # a key the session does not hold
        in_order = session.in_order(subset)
        assert [key for key, _ in in_order] == [key for key in session_order if key in subset]
        assert all(part is session.partitions[key] for key, part in in_order)
