"""Partition.write_txn_marker: a leader's marker append, waited for as acks=all."""

from __future__ import annotations

from pathlib import Path

import pytest
from kio.schema.errors import ErrorCode

from broker.context import BrokerState
from broker.replication.partition import READ_COMMITTED, READ_UNCOMMITTED, Partition, PartitionError
from broker.wire.records.errors import StorageError
from broker.wire.records.records import Record, build_batch
from tests.unit.broker.partitions.test_manager_single_node import TOPIC, run_broker
from tests.unit.broker.running_state import create_topic

PRODUCER = 42


async def led_partition(state: BrokerState, **configs: str) -> Partition:
    await create_topic(state, TOPIC, 1, **{name.replace("_", "."): value for name, value in configs.items()})
    partition, _ = state.partitions.leader(TOPIC, 0)
    assert partition is not None
    return partition


def txn_batch(sequence: int, *values: bytes, epoch: int = 0) -> bytes:
    return build_batch(
        [Record(key=None, value=value, timestamp=1_000) for value in values],
        producer_id=PRODUCER,
        producer_epoch=epoch,
        base_sequence=sequence,
        transactional=True,
    )


def test_a_marker_closes_the_transaction_and_moves_the_last_stable_offset(tmp_path: Path) -> None:
    async def test(state: BrokerState) -> None:
        partition = await led_partition(state)
        assert partition.append(txn_batch(0, b"a", b"b"), acks=-1).error == ErrorCode.none
        assert partition.high_watermark == 2
        assert partition.last_stable_offset == 0
        assert partition.fetch_bound(READ_COMMITTED, follower=False) == 0
        assert partition.fetch_bound(READ_UNCOMMITTED, follower=False) == 2
        (producer,) = partition.producers()
        assert (producer.producer_id, producer.current_txn_first_offset, producer.last_sequence) == (
            PRODUCER,
            0,
            1,
        )
        offset = await partition.write_txn_marker(PRODUCER, 0, False, 4)
        assert offset == 2
        assert partition.last_stable_offset == partition.high_watermark == 3
        assert [(t.producer_id, t.first_offset) for t in partition.aborted_transactions(0, 3)] == [
            (PRODUCER, 0)
        ]
        (producer,) = partition.producers()
        assert (producer.current_txn_first_offset, producer.coordinator_epoch) == (-1, 4)

    run_broker(tmp_path, test)


def test_a_stale_producer_epoch_is_refused_with_invalid_producer_epoch(tmp_path: Path) -> None:
    async def test(state: BrokerState) -> None:
        partition = await led_partition(state)
        partition.append(txn_batch(0, b"a", epoch=5), acks=1)
        with pytest.raises(StorageError) as caught:
            await partition.write_txn_marker(PRODUCER, 4, True, 0)
        assert caught.value.error_code == ErrorCode.invalid_producer_epoch.value
        assert partition.log_end_offset == 1

    run_broker(tmp_path, test)


def test_a_marker_below_min_insync_replicas_is_refused(tmp_path: Path) -> None:
    async def test(state: BrokerState) -> None:
        partition = await led_partition(state, min_insync_replicas="2")
        with pytest.raises(PartitionError) as caught:
            await partition.write_txn_marker(PRODUCER, 0, True, 0)
        assert caught.value.error_code == ErrorCode.not_enough_replicas.value
        assert partition.log_end_offset == 0

    run_broker(tmp_path, test)
