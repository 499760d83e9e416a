"""Transactions in the log: markers, the last stable offset, the aborted-transaction index, recovery."""

from pathlib import Path

import pytest

from broker.log.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    TransactionCoordinatorFencedError,
)
from broker.log.partition_log import PartitionLog
from broker.log.transaction_index import ENTRY, AbortedTxn
from broker.wire.records.batch import iter_batches
from broker.wire.records.control import read_txn_marker
from broker.wire.records.errors import InvalidRecordError

from .conftest import LogFactory
from .helpers import NOW_MS, batch_of, crash

A, B, C = 1000, 2000, 3000


def txn_produce(log: PartitionLog, pid: int, sequence: int, count: int = 2, *, epoch: int = 0) -> int:
    """Append a transactional batch of `count` records; returns its base offset (high watermark follows)."""
    values = [b"%d-%d" % (pid, sequence + i) for i in range(count)]
    raw = batch_of(*values, producer_id=pid, producer_epoch=epoch, base_sequence=sequence, transactional=True)
    result = log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)
    log.advance_high_watermark(log.log_end_offset)
    return result.base_offset


def end_txn(log: PartitionLog, pid: int, *, commit: bool, epoch: int = 0, coordinator_epoch: int = 0) -> int:
    offset = log.append_txn_marker(
        producer_id=pid,
        producer_epoch=epoch,
        commit=commit,
        coordinator_epoch=coordinator_epoch,
        leader_epoch=0,
        now_ms=NOW_MS,
    )
    log.advance_high_watermark(log.log_end_offset)
    return offset


def test_a_marker_is_a_control_batch_in_kafkas_format(open_log: LogFactory) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    offset = end_txn(log, A, commit=True, epoch=0, coordinator_epoch=7)
    (marker,) = [b for b in iter_batches(log.read(offset, 1 << 20)) if b.base_offset == offset]
    marker.check_crc()
    assert marker.is_control
    assert marker.is_transactional
    assert (marker.producer_id, marker.producer_epoch, marker.record_count) == (A, 0, 1)
    assert read_txn_marker(marker) == (True, 7)


def test_the_last_stable_offset_waits_for_the_oldest_open_transaction(open_log: LogFactory) -> None:
    log = open_log()
    first_a = txn_produce(log, A, 0)
    first_b = txn_produce(log, B, 0)
    txn_produce(log, A, 2)
    assert log.high_watermark == 6
    assert log.last_stable_offset == first_a == 0
    end_txn(log, A, commit=True)
    assert log.last_stable_offset == first_b == 2
    end_txn(log, B, commit=False)
    assert log.last_stable_offset == log.high_watermark == log.log_end_offset == 8


def test_a_closed_transaction_is_unstable_until_the_high_watermark_passes_its_marker(
    open_log: LogFactory,
) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    marker = log.append_txn_marker(
        producer_id=A, producer_epoch=0, commit=True, coordinator_epoch=0, leader_epoch=0, now_ms=NOW_MS
    )
    assert log.high_watermark == marker  # the followers do not have the marker yet
    assert log.last_stable_offset == 0
    log.advance_high_watermark(marker + 1)
    assert log.last_stable_offset == marker + 1
    assert not log.producer_state.unreplicated


def test_an_abort_is_indexed_with_its_range_and_the_stable_offset_at_abort(
    open_log: LogFactory, log_dir: Path
) -> None:
    log = open_log()
    txn_produce(log, B, 0)  # offsets 0-1, stays open
    txn_produce(log, A, 0)  # 2-3
    txn_produce(log, A, 2)  # 4-5
    marker = end_txn(log, A, commit=False)  # 6
    assert log.last_stable_offset == 0
    expected = AbortedTxn(A, 2, 6, 0)  # B's open transaction is the next unstable offset
    assert log.active_segment.txn_index.entries == [expected]
    index_file = log_dir / f"{0:020d}.txnindex"
    assert index_file.stat().st_size == ENTRY.size == 34
    assert log.collect_aborted_transactions(0, 100) == [expected]
    assert log.collect_aborted_transactions(marker, 100) == [expected]  # the marker itself overlaps
    assert log.collect_aborted_transactions(marker + 1, 100) == []
    assert log.collect_aborted_transactions(0, 2) == []  # ends before the transaction starts


def test_neither_a_committed_transaction_nor_an_empty_abort_is_indexed(
    open_log: LogFactory, log_dir: Path
) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    end_txn(log, A, commit=True)
    assert not (log_dir / f"{0:020d}.txnindex").exists()
    # A producer that wrote nothing here: the marker is written, but there is nothing to abort, so a read_committed
    # fetch is told of no aborted transaction (Apache Kafka 4.2 answers so: tests/integration/conformance).
    end_txn(log, B, commit=False)
    assert log.collect_aborted_transactions(0, 100) == []


def test_stale_markers_are_fenced_and_write_nothing(open_log: LogFactory) -> None:
    log = open_log()
    txn_produce(log, A, 0, epoch=3)
    end_txn(log, A, commit=True, epoch=3, coordinator_epoch=5)
    end_before = log.log_end_offset
    with pytest.raises(InvalidProducerEpochError) as stale_producer:
        end_txn(log, A, commit=False, epoch=2, coordinator_epoch=5)
    assert stale_producer.value.error_code == 47
    with pytest.raises(TransactionCoordinatorFencedError) as stale_coordinator:
        end_txn(log, A, commit=False, epoch=3, coordinator_epoch=4)
    assert stale_coordinator.value.error_code == 52
    assert log.log_end_offset == end_before


def test_a_marker_with_a_newer_epoch_bumps_the_producer(open_log: LogFactory) -> None:
    """A coordinator aborting a timed-out transaction fences the producer with epoch + 1."""
    log = open_log()
    txn_produce(log, A, 0, epoch=1)
    end_txn(log, A, commit=False, epoch=2)
    with pytest.raises(InvalidProducerEpochError):
        txn_produce(log, A, 2, epoch=1)
    assert txn_produce(log, A, 0, epoch=2) == log.log_end_offset - 2


def test_a_plain_batch_inside_an_open_transaction_is_refused(open_log: LogFactory) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    plain = batch_of(b"x", producer_id=A, producer_epoch=0, base_sequence=2)
    with pytest.raises(InvalidTxnStateError):
        log.append_as_leader(plain, leader_epoch=0, now_ms=NOW_MS)
    mixed = batch_of(b"y", producer_id=B, producer_epoch=0, base_sequence=0, transactional=True) + batch_of(
        b"z", producer_id=C, producer_epoch=0, base_sequence=0
    )
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(mixed, leader_epoch=0, now_ms=NOW_MS)
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(batch_of(b"w", transactional=True), leader_epoch=0, now_ms=NOW_MS)


def test_a_retried_transactional_batch_is_a_duplicate(open_log: LogFactory) -> None:
    log = open_log()
    first = txn_produce(log, A, 0)
    raw = batch_of(b"again", b"again", producer_id=A, producer_epoch=0, base_sequence=0, transactional=True)
    assert log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS).base_offset == first
    assert log.log_end_offset == 2


def test_open_transactions_and_aborts_survive_a_clean_restart(open_log: LogFactory) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    end_txn(log, A, commit=False, coordinator_epoch=3)
    txn_produce(log, B, 0)
    log.close()
    reopened = open_log()
    assert reopened.last_stable_offset == 3
    assert reopened.producer_state.producers[B].current_txn_first_offset == 3
    assert reopened.producer_state.producers[A].coordinator_epoch == 3
    assert reopened.collect_aborted_transactions(0, 100) == [AbortedTxn(A, 0, 2, 3)]


def test_recovery_after_a_crash_rebuilds_open_transactions_and_a_lost_index(
    open_log: LogFactory, log_dir: Path
) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    txn_produce(log, B, 0)
    end_txn(log, A, commit=False)  # 4: aborts 0-1 while B (2) is open
    txn_produce(log, C, 0)  # 5-6
    crash(log)
    (log_dir / f"{0:020d}.txnindex").unlink()
    reopened = open_log()
    assert reopened.last_stable_offset == 2
    assert reopened.producer_state.ongoing == {B: 2, C: 5}
    assert reopened.collect_aborted_transactions(0, 100) == [AbortedTxn(A, 0, 4, 2)]


def test_a_torn_index_entry_is_cut_and_found_again(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    end_txn(log, A, commit=False)
    txn_produce(log, B, 0)
    end_txn(log, B, commit=False)
    crash(log)
    index_file = log_dir / f"{0:020d}.txnindex"
    index_file.write_bytes(index_file.read_bytes()[: ENTRY.size + 10])
    reopened = open_log()
    assert reopened.collect_aborted_transactions(0, 100) == [AbortedTxn(A, 0, 2, 3), AbortedTxn(B, 3, 5, 6)]
    assert index_file.stat().st_size == 2 * ENTRY.size


def test_a_marker_lost_with_a_torn_log_tail_reopens_its_transaction(
    open_log: LogFactory, log_dir: Path
) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    end_txn(log, A, commit=False)
    crash(log)
    segment_file = log_dir / f"{0:020d}.log"
    segment_file.write_bytes(segment_file.read_bytes()[:-5])  # the marker is torn
    reopened = open_log()
    assert reopened.log_end_offset == 2
    assert reopened.producer_state.ongoing == {A: 0}
    assert reopened.last_stable_offset == 0
    assert reopened.collect_aborted_transactions(0, 100) == []
    assert not (log_dir / f"{0:020d}.txnindex").exists()


def test_each_segment_has_its_own_index_removed_with_it(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log(retention_bytes=1)
    txn_produce(log, A, 0)
    end_txn(log, A, commit=False)
    log.roll()
    txn_produce(log, B, 0)
    end_txn(log, B, commit=False)
    log.roll()
    first, second, _ = log.segments_snapshot()[0]
    assert [len(s.txn_index) for s in (first, second)] == [1, 1]
    assert log.collect_aborted_transactions(3, 100) == [AbortedTxn(B, 3, 5, 6)]
    log.apply_retention(NOW_MS)
    log._delete_expired_files(0, everything=True)
    assert not (log_dir / f"{0:020d}.txnindex").exists()
    assert log.log_start_offset == 3
    assert log.collect_aborted_transactions(0, 100) == [AbortedTxn(B, 3, 5, 6)]
    assert (log_dir / f"{3:020d}.txnindex").exists()


def test_truncation_drops_aborts_whose_marker_is_cut(open_log: LogFactory) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    end_txn(log, A, commit=False)
    txn_produce(log, B, 0)
    end_txn(log, B, commit=False)
    log.truncate_to(5)  # B's marker
    assert log.collect_aborted_transactions(0, 100) == [AbortedTxn(A, 0, 2, 3)]
    assert log.producer_state.ongoing == {B: 3}


def test_a_follower_keeps_the_same_transactions_as_its_leader(tmp_path: Path) -> None:
    from .conftest import make_config

    leader = PartitionLog.open(tmp_path / "leader", make_config(), topic="t", partition=0)
    follower = PartitionLog.open(tmp_path / "follower", make_config(), topic="t", partition=0)
    try:
        txn_produce(leader, A, 0)
        txn_produce(leader, B, 0)
        end_txn(leader, A, commit=False)
        follower.append_as_follower(leader.read(0, 1 << 20))
        follower.advance_high_watermark(follower.log_end_offset)
        assert follower.read(0, 1 << 20) == leader.read(0, 1 << 20)
        assert follower.last_stable_offset == leader.last_stable_offset == 2
        assert follower.collect_aborted_transactions(0, 100) == leader.collect_aborted_transactions(0, 100)
        assert follower.producer_state.producers[B].current_txn_first_offset == 2
    finally:
        leader.close()
        follower.close()


def test_producers_with_open_transactions_do_not_expire(open_log: LogFactory) -> None:
    log = open_log()
    txn_produce(log, A, 0)
    txn_produce(log, B, 0)
    end_txn(log, B, commit=True)
    assert log.producer_state.remove_expired(NOW_MS + 10**12) == 1
    assert set(log.producer_state.producers) == {A}


def test_a_torn_producer_snapshot_falls_back_and_replays_open_transactions(
    open_log: LogFactory, log_dir: Path
) -> None:
    log = open_log()
    txn_produce(log, A, 0)  # 0-1, stays open across the roll
    log.roll()  # snapshot at 2 (A open)
    txn_produce(log, B, 0)  # 2-3
    end_txn(log, B, commit=False)  # 4
    log.close()  # snapshot at 5
    (log_dir / f"{5:020d}.snapshot").write_text('{"producers": [{"id": ')
    reopened = open_log()
    assert reopened.producer_state.ongoing == {A: 0}
    assert reopened.last_stable_offset == 0
    assert reopened.collect_aborted_transactions(0, 100) == [AbortedTxn(B, 2, 4, 0)]
