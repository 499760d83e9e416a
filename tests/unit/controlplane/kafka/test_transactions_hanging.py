"""Which open transactions on partitions are hanging: stale (older than any transaction may live) and open
at no coordinator for that producer and partition, as kafka-transactions.sh find-hanging decides."""

from datetime import UTC, datetime

from controlplane.kafka.transactions import (
    ProducerOnPartition,
    TransactionDescription,
    hanging_among,
    stale_open_transactions,
)

NOW_MS = 1_800_000_000_000
MAX_TIMEOUT_MS = 900_000


def producer(
    producer_id: int, *, partition: int = 0, open_at: int = 100, idle_ms: int = 0
) -> ProducerOnPartition:
    return ProducerOnPartition(
        topic="ledger",
        partition=partition,
        producer_id=producer_id,
        producer_epoch=0,
        last_sequence=9,
        last_timestamp_ms=NOW_MS - idle_ms,
        coordinator_epoch=0,
        open_transaction_offset=open_at,
    )


def transaction(producer_id: int, state: str, partitions: list[tuple[str, int]]) -> TransactionDescription:
    return TransactionDescription(
        transactional_id=f"tx-{producer_id}",
        state=state,
        producer_id=producer_id,
        producer_epoch=0,
        timeout_ms=60_000,
        started_at=datetime(2027, 1, 15, tzinfo=UTC),
        partitions=partitions,
        coordinator_id=1,
    )


def test_only_open_transactions_idle_longer_than_the_longest_timeout_are_stale() -> None:
    producers = [
        producer(1, idle_ms=MAX_TIMEOUT_MS + 1),
        producer(2, idle_ms=MAX_TIMEOUT_MS - 1),
        producer(3, idle_ms=MAX_TIMEOUT_MS * 2, open_at=-1),  # no open transaction
    ]

    stale = stale_open_transactions(producers, now_ms=NOW_MS, max_transaction_timeout_ms=MAX_TIMEOUT_MS)

    assert [p.producer_id for p in stale] == [1]


def test_a_stale_transaction_is_hanging_unless_a_coordinator_has_it_open_on_that_partition() -> None:
    stale = [
        producer(1, partition=0, idle_ms=MAX_TIMEOUT_MS * 2),
        producer(2, partition=0, idle_ms=MAX_TIMEOUT_MS * 2),
        producer(3, partition=1, idle_ms=MAX_TIMEOUT_MS * 2),
        producer(4, partition=0, idle_ms=MAX_TIMEOUT_MS * 2),
    ]
    coordinators = [
        transaction(2, "Ongoing", [("ledger", 0)]),  # the coordinator will still finish it
        transaction(3, "Ongoing", [("ledger", 0)]),  # open, but not on the partition that holds it
        transaction(4, "CompleteAbort", [("ledger", 0)]),  # finished, the marker never arrived
    ]

    assert [p.producer_id for p in hanging_among(stale, coordinators)] == [1, 3, 4]
