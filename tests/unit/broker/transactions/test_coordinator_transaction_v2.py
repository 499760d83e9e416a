"""Transaction version 2 (KIP-890 part 2) in the coordinator: every EndTxn bumps the epoch, the markers carry
the bumped epoch, and past the last epoch the producer moves to a new producer id once the transaction is
complete, also when another coordinator has to finish it."""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from broker.transactions.coordinator import TransactionCoordinator
from broker.transactions.state import MAX_PRODUCER_EPOCH
from tests.fixtures.coordinators import lead_every_partition
from tests.unit.broker.transactions.test_coordinator import (
    Clock,
    MemoryStateLog,
    RecordingMarkers,
    clock,
    coordinator,
    make_coordinator,
    markers,
    state_log,
)

LAST_EPOCH = MAX_PRODUCER_EPOCH - 1
# The coordinator harness's fixtures, used here by name.
FIXTURES = (clock, coordinator, markers, state_log)


async def test_each_end_bumps_the_epoch_and_the_markers_carry_it(
    coordinator: TransactionCoordinator, markers: RecordingMarkers
) -> None:
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0)]) == ErrorCode.none
    ended = await coordinator.end_transaction_v2("app", pid, 0, True)
    assert (ended.error, ended.producer_id, ended.producer_epoch) == (ErrorCode.none, pid, 1)
    await coordinator.drain()
    assert markers.written == [(pid, 1, True, 5, ("t", 0))]
    # The old epoch is fenced; a retry of the same EndTxn is answered with the bumped epoch.
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0)]) == ErrorCode.producer_fenced
    retried = await coordinator.end_transaction_v2("app", pid, 0, True)
    assert (retried.error, retried.producer_epoch) == (ErrorCode.none, 1)
    assert (await coordinator.end_transaction_v2("app", pid, 0, False)).error == ErrorCode.invalid_txn_state
    # An abort with nothing added bumps it too (no markers to write).
    aborted = await coordinator.end_transaction_v2("app", pid, 1, False)
    assert (aborted.error, aborted.producer_epoch) == (ErrorCode.none, 2)
    await coordinator.drain()
    assert len(markers.written) == 1
    assert (await coordinator.end_transaction_v2("app", pid, 2, True)).error == ErrorCode.invalid_txn_state


async def test_past_the_last_epoch_the_producer_moves_to_a_new_id(
    coordinator: TransactionCoordinator, markers: RecordingMarkers
) -> None:
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    coordinator.transactions["app"].producer_epoch = LAST_EPOCH  # as after 32,766 transactions
    assert await coordinator.add_partitions("app", pid, LAST_EPOCH, [("t", 0)]) == ErrorCode.none
    ended = await coordinator.end_transaction_v2("app", pid, LAST_EPOCH, True)
    new_pid = ended.producer_id
    assert ended.error == ErrorCode.none
    assert new_pid != pid
    assert ended.producer_epoch == 0
    await coordinator.drain()
    # The markers fence the old id for good (its epoch past the last one a producer may use).
    assert markers.written == [(pid, MAX_PRODUCER_EPOCH, True, 5, ("t", 0))]
    described = coordinator.describe("app")[1]
    assert (described.state, described.producer_id, described.producer_epoch) == (
        "CompleteCommit",
        new_pid,
        0,
    )
    retried = await coordinator.end_transaction_v2("app", pid, LAST_EPOCH, True)
    assert (retried.error, retried.producer_id, retried.producer_epoch) == (ErrorCode.none, new_pid, 0)
    assert await coordinator.add_partitions("app", new_pid, 0, [("t", 1)]) == ErrorCode.none


async def test_a_successor_finishes_an_overflowing_transaction_onto_the_new_id(
    coordinator: TransactionCoordinator, state_log: MemoryStateLog, markers: RecordingMarkers, clock: Clock
) -> None:
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    coordinator.transactions["app"].producer_epoch = LAST_EPOCH
    await coordinator.add_partitions("app", pid, LAST_EPOCH, [("t", 0)])
    markers.failing[("t", 0)] = 10**9  # crashed with PrepareCommit written and no marker
    new_pid = (await coordinator.end_transaction_v2("app", pid, LAST_EPOCH, True)).producer_id
    await coordinator.close()

    successor_markers = RecordingMarkers()
    successor = make_coordinator(state_log, successor_markers, clock)
    await lead_every_partition(successor)
    successor.start_sweeps()
    await successor.drain()
    assert successor_markers.written == [(pid, MAX_PRODUCER_EPOCH, True, 5, ("t", 0))]
    described = successor.describe("app")[1]
    assert (described.state, described.producer_id, described.producer_epoch) == (
        "CompleteCommit",
        new_pid,
        0,
    )
    await successor.close()


async def test_the_next_end_while_markers_are_written_waits_instead_of_fencing(
    coordinator: TransactionCoordinator, markers: RecordingMarkers
) -> None:
    """The Java producer commits, then at once aborts its next transaction (its sends still queued, so nothing was
    added): the abort comes with the bumped epoch while the commit's markers are still being written. Kafka
    answers CONCURRENT_TRANSACTIONS while the PrepareCommit -> CompleteCommit transition is pending (checked before
    the epoch), the producer retries, and the abort then goes through; fencing it killed the producer."""
    pid = (await coordinator.init_producer_id("app", 10_000)).producer_id
    assert await coordinator.add_partitions("app", pid, 0, [("t", 0)]) == ErrorCode.none
    markers.failing[("t", 0)] = 2  # the partition's leader takes the marker only on the third try
    assert (await coordinator.end_transaction_v2("app", pid, 0, True)).producer_epoch == 1
    assert coordinator.describe("app")[1].state == "PrepareCommit"
    waited = await coordinator.end_transaction_v2("app", pid, 1, False)
    assert waited.error == ErrorCode.concurrent_transactions
    # A retry of the commit itself waits the same way until it is complete.
    assert (
        await coordinator.end_transaction_v2("app", pid, 0, True)
    ).error == ErrorCode.concurrent_transactions
    await coordinator.drain()
    aborted = await coordinator.end_transaction_v2("app", pid, 1, False)
    assert (aborted.error, aborted.producer_epoch) == (ErrorCode.none, 2)
