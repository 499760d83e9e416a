"""The transaction coordinator's state machine over an in-memory `__transaction_state`, and its
record format checked against byte layouts derived from Kafka's TransactionLogKey/Value.json."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator, Sequence

import pytest
from kio.schema.errors import ErrorCode

from broker.metadata.coordinator_records import LogEntry
from broker.transactions.coordinator import (
    TransactionCoordinator,
    TransactionCoordinatorConfig,
    TransactionStateAppendError,
)
from broker.transactions.state import TxnState
from broker.transactions.state_format import (
    TransactionLogValue,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    partition_for_transactional_id,
)
from tests.fixtures.coordinators import lead_every_partition

PARTITIONS = 3
OFFSETS = ("__consumer_offsets", 1)


class MemoryStateLog:
    """`__transaction_state` in memory: every append is committed at once (or fails on demand)."""

    def __init__(self) -> None:
        self.num_partitions = PARTITIONS
        self.partitions: dict[int, list[LogEntry]] = {p: [] for p in range(PARTITIONS)}
        self.fail_with: int | None = None

    async def append(self, partition: int, records: Sequence[tuple[bytes, bytes | None]]) -> int:
        await asyncio.sleep(0)
        if self.fail_with is not None:
            raise TransactionStateAppendError(self.fail_with)
        stored = self.partitions[partition]
        for key, value in records:
            stored.append(LogEntry(len(stored), key, value))
        return len(stored) - 1

    def read(self, partition: int) -> Iterator[LogEntry]:
        return iter(list(self.partitions[partition]))

    async def wait_until_committed(self, partition: int) -> None:
        """Everything is committed."""

    def coordinator_epoch(self, partition: int) -> int:
        return 5

    def states(self, transactional_id: str) -> list[TxnState]:
        partition = partition_for_transactional_id(transactional_id, PARTITIONS)
        return [
            TxnState(decode_value(e.value).status)
            for e in self.partitions[partition]
            if e.key is not None and e.value is not None and decode_key(e.key) == transactional_id
        ]


class RecordingMarkers:
    """Marker delivery that records what it was asked to write; partitions in `failing` fail as many
    times as their count says (a leader that cannot take the marker yet)."""

    def __init__(self) -> None:
        self.written: list[tuple[int, int, bool, int, tuple[str, int]]] = []
        self.failing: dict[tuple[str, int], int] = {}

    async def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        partitions: Sequence[tuple[str, int]],
    ) -> dict[tuple[str, int], int]:
        answers = {}
        for tp in partitions:
            if self.failing.get(tp, 0) > 0:
                self.failing[tp] -= 1
                answers[tp] = ErrorCode.not_leader_or_follower
            else:
                self.written.append((producer_id, producer_epoch, commit, coordinator_epoch, tp))
                answers[tp] = ErrorCode.none
        return answers


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def make_coordinator(
    state_log: MemoryStateLog, markers: RecordingMarkers, clock: Clock, **config: int
) -> TransactionCoordinator:
    ids = itertools.count(1000)

    async def allocate() -> int:
        return next(ids)

    return TransactionCoordinator(
        state_log,
        markers,
        allocate,
        lambda group: OFFSETS,
        TransactionCoordinatorConfig(**config),
        now_ms=clock,
    )


@pytest.fixture
def state_log() -> MemoryStateLog:
    return MemoryStateLog()


@pytest.fixture
def markers() -> RecordingMarkers:
    return RecordingMarkers()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def coordinator(state_log: MemoryStateLog, markers: RecordingMarkers, clock: Clock) -> TransactionCoordinator:
    """Started before the test and closed after it (conftest.py)."""
    return make_coordinator(state_log, markers, clock, max_timeout_ms=60_000, id_expiration_ms=3_600_000)


# --- the record format ---------------------------------------------------------------------------


def test_the_key_is_version_0_with_a_classic_string() -> None:
    assert encode_key("tx") == bytes.fromhex("0000" + "0002" + "7478")
    assert decode_key(encode_key("tx")) == "tx"


def test_a_flexible_value_writes_tagged_fields_only_when_they_are_not_defaults() -> None:
    value = TransactionLogValue(
        producer_id=7,
        producer_epoch=2,
        timeout_ms=60_000,
        status=int(TxnState.ONGOING),
        partitions=(("t", (0, 1)),),
        last_update_ms=10,
        start_ms=9,
    )
    assert encode_value(value) == bytes.fromhex(
        "0001"  # version 1
        "0000000000000007"  # producer id
        "0002"  # epoch
        "0000ea60"  # timeout 60000
        "01"  # Ongoing
        "02"  # one topic (compact array: n + 1)
        "0274"  # "t"
        "03"
        "00000000"
        "00000001"  # partitions 0 and 1
        "00"  # topic tagged fields
        "000000000000000a"  # last update
        "0000000000000009"  # start
        "00"  # no tagged fields
    )


@pytest.mark.parametrize("version", [0, 1])
def test_values_round_trip_in_both_versions(version: int) -> None:
    value = TransactionLogValue(
        producer_id=123456789,
        producer_epoch=4,
        timeout_ms=1000,
        status=int(TxnState.PREPARE_COMMIT),
        partitions=(("a", (2,)), ("b", (0, 5))),
        last_update_ms=55,
        start_ms=50,
        previous_producer_id=12 if version else -1,
    )
    assert decode_value(encode_value(value, version)) == value


def test_an_empty_id_writes_a_null_partition_list_as_kafka_does() -> None:
    value = TransactionLogValue(7, 0, 1000, int(TxnState.EMPTY), (), 1, -1)
    encoded = encode_value(value, 0)
    assert encoded[2 + 8 + 2 + 4 + 1 :][:4] == bytes.fromhex("ffffffff")
    assert decode_value(encoded).partitions == ()


def test_the_partition_is_abs_of_java_hash_code_modulo_the_count() -> None:
    # "my-group".hashCode() == -1906497762 in Java.
    assert partition_for_transactional_id("my-group", 50) == 1906497762 % 50


# --- InitProducerId ------------------------------------------------------------------------------


async def test_a_new_transactional_id_gets_a_producer_id_with_epoch_0_and_reinit_bumps_it(
    coordinator: TransactionCoordinator, state_log: MemoryStateLog
) -> None:
    first = await coordinator.init_producer_id("app", 10_000)
    assert (first.error, first.producer_epoch) == (ErrorCode.none, 0)
    second = await coordinator.init_producer_id("app", 10_000)
    assert (second.error, second.producer_id, second.producer_epoch) == (ErrorCode.none, first.producer_id, 1)
    assert state_log.states("app") == [TxnState.EMPTY, TxnState.EMPTY]


async def test_a_timeout_above_the_maximum_is_refused(coordinator: TransactionCoordinator) -> None:
    result = await coordinator.init_producer_id("app", 60_001)
    assert result.error == ErrorCode.invalid_transaction_timeout


async def test_reinit_during_a_transaction_fences_the_producer_and_aborts_it(
    coordinator: TransactionCoordinator, markers: RecordingMarkers, state_log: MemoryStateLog
) -> None:
    old = await coordinator.init_producer_id("app", 10_000)
    pid = old.producer_id
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0), ("t", 1)]) == ErrorCode.none

    retry = await coordinator.init_producer_id("app", 10_000)
    assert retry.error == ErrorCode.concurrent_transactions
    await coordinator.drain()
    # Aborted with the bumped epoch, so the zombie's late writes are fenced by the partitions too.
    assert sorted(markers.written) == [(pid, 1, False, 5, ("t", 0)), (pid, 1, False, 5, ("t", 1))]
    fresh = await coordinator.init_producer_id("app", 10_000)
    assert (fresh.error, fresh.producer_epoch) == (ErrorCode.none, 2)
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0)]) == ErrorCode.producer_fenced
    result = await coordinator.end_transaction("app", pid, 0, True)
    assert result.error == ErrorCode.producer_fenced
    assert state_log.states("app")[-3:] == [TxnState.PREPARE_ABORT, TxnState.COMPLETE_ABORT, TxnState.EMPTY]


async def test_an_unknown_producer_id_is_refused(coordinator: TransactionCoordinator) -> None:
    await coordinator.init_producer_id("app", 10_000)
    assert await coordinator.add_partitions("app", 99, 0, [("t", 0)]) == ErrorCode.invalid_producer_id_mapping


# --- AddPartitionsToTxn / EndTxn ------------------------------------------------------------------


async def test_commit_writes_markers_to_every_partition_then_completes(
    coordinator: TransactionCoordinator, markers: RecordingMarkers, state_log: MemoryStateLog
) -> None:
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0)]) == ErrorCode.none
    assert await coordinator.add_offsets("app", pid, 0, "group") == ErrorCode.none
    assert coordinator.verify_partitions("app", pid, 0, [("t", 0), ("t", 1)]) == {
        ("t", 0): ErrorCode.none,
        ("t", 1): ErrorCode.invalid_txn_state,
    }
    assert (await coordinator.end_transaction("app", pid, 0, True)).error == ErrorCode.none
    # Until its markers are written the transaction is still being completed.
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0)]) == ErrorCode.concurrent_transactions
    await coordinator.drain()
    assert sorted(m[4] for m in markers.written) == [OFFSETS, ("t", 0)]
    assert all(m[2] for m in markers.written)
    assert state_log.states("app")[-3:] == [
        TxnState.ONGOING,
        TxnState.PREPARE_COMMIT,
        TxnState.COMPLETE_COMMIT,
    ]
    # A retried EndTxn whose answer was lost gets the same answer; the other outcome does not.
    assert (await coordinator.end_transaction("app", pid, 0, True)).error == ErrorCode.none
    assert (await coordinator.end_transaction("app", pid, 0, False)).error == ErrorCode.invalid_txn_state


async def test_markers_are_retried_until_every_leader_has_them(
    coordinator: TransactionCoordinator, markers: RecordingMarkers, state_log: MemoryStateLog
) -> None:
    markers.failing[("t", 1)] = 2
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    await coordinator.add_partitions("app", pid, 0, [("t", 0), ("t", 1)])
    await coordinator.end_transaction("app", pid, 0, False)
    await asyncio.wait_for(coordinator.drain(), 5)
    assert sorted(m[4] for m in markers.written) == [("t", 0), ("t", 1)]
    assert state_log.states("app")[-1] == TxnState.COMPLETE_ABORT


async def test_a_failed_state_write_changes_nothing(
    coordinator: TransactionCoordinator, state_log: MemoryStateLog
) -> None:
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    state_log.fail_with = ErrorCode.not_enough_replicas
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0)]) == ErrorCode.coordinator_not_available
    state_log.fail_with = None
    assert coordinator.describe("app")[1].state == "Empty"


# --- load, timeouts, expiry ---------------------------------------------------------------------


async def test_a_new_coordinator_replays_the_state_and_finishes_prepared_transactions(
    coordinator: TransactionCoordinator,
    state_log: MemoryStateLog,
    markers: RecordingMarkers,
    clock: Clock,
) -> None:
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    await coordinator.add_partitions("app", pid, 0, [("t", 0)])
    markers.failing[("t", 0)] = 10**9  # the leader never answers this coordinator
    await coordinator.end_transaction("app", pid, 0, True)
    await coordinator.close()  # crashed with PrepareCommit written and no marker

    successor_markers = RecordingMarkers()
    successor = make_coordinator(state_log, successor_markers, clock)
    await lead_every_partition(successor)
    successor.start_sweeps()
    await successor.drain()
    assert successor_markers.written == [(pid, 0, True, 5, ("t", 0))]
    assert successor.describe("app")[1].state == "CompleteCommit"
    # The producer carries on with the epoch it had.
    assert await successor.add_partitions("app", pid, 0, [("t", 1)]) == ErrorCode.none
    await successor.close()


async def test_a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced(
    coordinator: TransactionCoordinator, markers: RecordingMarkers, clock: Clock
) -> None:
    pid = (await coordinator.init_producer_id("app", 1_000)).producer_id
    await coordinator.add_partitions("app", pid, 0, [("t", 0)])
    clock.now += 999
    assert await coordinator.abort_timed_out() == 0
    clock.now += 2
    assert await coordinator.abort_timed_out() == 1
    await coordinator.drain()
    assert markers.written == [(pid, 1, False, 5, ("t", 0))]
    assert coordinator.describe("app")[1].state == "CompleteAbort"
    assert (await coordinator.end_transaction("app", pid, 0, True)).error == ErrorCode.producer_fenced


async def test_idle_transactional_ids_expire_with_a_tombstone(
    coordinator: TransactionCoordinator, state_log: MemoryStateLog, clock: Clock, markers: RecordingMarkers
) -> None:
    await coordinator.init_producer_id("idle", 1_000)
    clock.now += 3_600_001
    await coordinator.init_producer_id("busy", 1_000)
    assert await coordinator.remove_expired() == 1
    assert coordinator.describe("idle")[0] == ErrorCode.transactional_id_not_found
    replayed = make_coordinator(state_log, markers, clock)
    await lead_every_partition(replayed)
    replayed.start_sweeps()
    assert set(replayed.transactions) == {"busy"}
    await replayed.close()


async def test_list_filters_by_state_producer_and_duration(
    coordinator: TransactionCoordinator, clock: Clock
) -> None:
    a = (await coordinator.init_producer_id("a", 10_000)).producer_id
    b = (await coordinator.init_producer_id("b", 10_000)).producer_id
    await coordinator.add_partitions("a", a, 0, [("t", 0)])
    clock.now += 5_000
    await coordinator.add_partitions("b", b, 0, [("t", 0)])
    listed, unknown = coordinator.list_transactions(["Ongoing", "Bogus"], [], -1)
    assert sorted(t.transactional_id for t in listed) == ["a", "b"]
    assert unknown == ["Bogus"]
    assert [t.transactional_id for t in coordinator.list_transactions([], [b], -1)[0]] == ["b"]
    assert [t.transactional_id for t in coordinator.list_transactions([], [], 4_000)[0]] == ["a"]


async def test_an_unloaded_partition_answers_not_coordinator(coordinator: TransactionCoordinator) -> None:
    await coordinator.init_producer_id("app", 10_000)
    coordinator.unload_partition(coordinator.partition_for("app"))
    assert (await coordinator.init_producer_id("app", 10_000)).error == ErrorCode.not_coordinator
    assert coordinator.describe("app")[0] == ErrorCode.not_coordinator


async def test_no_producer_id_to_be_had_is_retriable_and_leaves_nothing_behind(
    state_log: MemoryStateLog, markers: RecordingMarkers, clock: Clock
) -> None:
    async def unavailable() -> int:
        raise ConnectionError("no controller reachable")

    coordinator = TransactionCoordinator(state_log, markers, unavailable, lambda group: OFFSETS, now_ms=clock)
    await lead_every_partition(coordinator)
    coordinator.start_sweeps()
    try:
        assert (
            await coordinator.init_producer_id("app", 10_000)
        ).error == ErrorCode.coordinator_not_available
        assert coordinator.transactions == {}
        assert state_log.states("app") == []
    finally:
        await coordinator.close()


async def test_concurrent_first_inits_of_one_id_get_one_producer_id(
    coordinator: TransactionCoordinator,
) -> None:
    first, second = await asyncio.gather(
        coordinator.init_producer_id("app", 10_000), coordinator.init_producer_id("app", 10_000)
    )
    assert sorted([first.error, second.error]) == [ErrorCode.none, ErrorCode.concurrent_transactions]


# --- a coordinator cut off from the cluster and back ----------------------------------------------


class EpochedStateLog(MemoryStateLog):
    """A `__transaction_state` whose leader epoch (the coordinator epoch) the test moves."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch = 5

    def coordinator_epoch(self, partition: int) -> int:
        return self.epoch


class PartitionedMarkers(RecordingMarkers):
    """Data partition leaders that cannot be reached while `cut_off`, and that refuse markers of a
    coordinator epoch older than the newest they have seen (TRANSACTION_COORDINATOR_FENCED)."""

    def __init__(self) -> None:
        super().__init__()
        self.cut_off = False
        self.newest_epoch = -1

    async def write_markers(self, producer_id, producer_epoch, commit, coordinator_epoch, partitions):  # type: ignore[no-untyped-def, override]
        await asyncio.sleep(0)
        if self.cut_off:
            return dict.fromkeys(partitions, ErrorCode.network_exception)
        if coordinator_epoch < self.newest_epoch:
            return dict.fromkeys(partitions, ErrorCode.transaction_coordinator_fenced)
        self.newest_epoch = coordinator_epoch
        return await super().write_markers(producer_id, producer_epoch, commit, coordinator_epoch, partitions)


async def stuck_abort(reload_by_listener: bool) -> None:
    """A transaction times out while its coordinator is cut off; meanwhile another broker led the
    `__transaction_state` partition (epoch 6) and this one leads it again (epoch 7) once healed."""
    state_log, markers, clock = EpochedStateLog(), PartitionedMarkers(), Clock()
    coordinator = make_coordinator(state_log, markers, clock, max_timeout_ms=60_000)
    coordinator.start_sweeps()
    partition = partition_for_transactional_id("app", PARTITIONS)
    await coordinator.load_partition(partition)
    pid = (await coordinator.init_producer_id("app", 1_000)).producer_id
    await coordinator.add_partitions("app", pid, 0, [("t", 0)])
    markers.cut_off = True
    clock.now += 2_000
    assert await coordinator.abort_timed_out() == 1
    await asyncio.sleep(0.3)  # marker rounds fail: the leader is unreachable
    assert coordinator.describe("app")[1].state == "PrepareAbort"
    markers.newest_epoch = 6  # the other coordinator reached the partition's leader meanwhile
    state_log.epoch = 7
    markers.cut_off = False
    if reload_by_listener:
        coordinator.load_partition(partition)  # the metadata listener: this broker leads it again
    deadline = asyncio.get_running_loop().time() + 5
    while coordinator.describe("app")[1] is None or coordinator.describe("app")[1].state != "CompleteAbort":
        assert asyncio.get_running_loop().time() < deadline, coordinator.describe("app")
        await asyncio.sleep(0.05)
    assert markers.written == [(pid, 1, False, 7, ("t", 0))]
    # The producer can start again instead of getting CONCURRENT_TRANSACTIONS for ever.
    assert (await coordinator.init_producer_id("app", 1_000)).error == ErrorCode.none
    await coordinator.close()


async def test_a_coordinator_led_again_at_a_new_epoch_reloads_and_finishes_the_abort() -> None:
    await stuck_abort(reload_by_listener=True)


async def test_markers_fenced_by_an_old_coordinator_epoch_are_sent_again_with_the_new_one() -> None:
    await stuck_abort(reload_by_listener=False)
