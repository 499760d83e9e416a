"""Log operations replication relies on: the high watermark, verbatim follower appends, truncation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kio.schema.errors import ErrorCode

from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.replication.delayed_produce import PendingAcks
from broker.replication.truncation import decide_truncation
from tests.unit.broker.log.helpers import NOW_MS, batch_of, read_records


def open_log(directory: Path) -> PartitionLog:
    return PartitionLog.open(directory, LogConfig.from_properties({}), topic="t", partition=0)


def append(log: PartitionLog, *values: bytes, epoch: int) -> None:
    log.append_as_leader(batch_of(*values), leader_epoch=epoch, now_ms=NOW_MS)


def test_the_high_watermark_only_moves_forward_and_never_past_the_log_end(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p")
    append(log, b"a", b"b", b"c", epoch=0)
    log.high_watermark = 0
    woken = []
    log.add_append_listener(lambda: woken.append(True))
    assert log.advance_high_watermark(2)
    assert not log.advance_high_watermark(1)
    assert log.advance_high_watermark(99)
    assert log.high_watermark == 3
    assert len(woken) == 2  # a parked consumer fetch wakes when more becomes visible


def test_a_replica_reopens_with_its_checkpointed_high_watermark(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p")
    append(log, b"a", b"b", b"c", epoch=0)
    log.close()
    reopened = open_log(tmp_path / "p")
    assert reopened.high_watermark == 3  # a single node trusts its whole log
    reopened.restore_high_watermark(2)
    assert reopened.high_watermark == 2
    reopened.restore_high_watermark(99)
    assert reopened.high_watermark == 3  # never past the log end
    reopened.restore_high_watermark(None)
    assert reopened.high_watermark == 0  # never checkpointed: nothing is known committed


def test_a_follower_copy_is_byte_identical_and_keeps_epochs_and_producer_state(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "leader")
    follower = open_log(tmp_path / "follower")
    leader.append_as_leader(
        batch_of(b"a", b"b", producer_id=7, producer_epoch=0, base_sequence=0), leader_epoch=2, now_ms=NOW_MS
    )
    append(leader, b"c", epoch=5)
    follower.append_as_follower(leader.read(0, 1 << 20))
    assert follower.read(0, 1 << 20) == leader.read(0, 1 << 20)
    assert follower.leader_epochs.epochs == [2, 5]
    assert follower.leader_epochs.start_offsets == [0, 2]
    assert follower.producer_state.producers[7].batches[-1].last_sequence == 1


def test_a_follower_with_a_divergent_tail_converges_on_the_leader(tmp_path: Path) -> None:
    old_leader = open_log(tmp_path / "old")
    new_leader = open_log(tmp_path / "new")
    append(old_leader, b"1", b"2", epoch=0)
    new_leader.append_as_follower(old_leader.read(0, 1 << 20))
    append(old_leader, b"lost-1", b"lost-2", epoch=0)  # never replicated
    new_leader.leader_epochs.assign(1, new_leader.log_end_offset)  # it becomes leader at epoch 1
    append(new_leader, b"3", epoch=1)

    epoch, end_offset = new_leader.end_offset_for_leader_epoch(old_leader.leader_epochs.latest_epoch)
    decision = decide_truncation(
        old_leader.leader_epochs,
        log_end_offset=old_leader.log_end_offset,
        high_watermark=2,
        leader_epoch=epoch,
        leader_end_offset=end_offset,
    )
    assert (decision.offset, decision.complete) == (2, True)
    old_leader.truncate_to(decision.offset)
    old_leader.append_as_follower(new_leader.read(old_leader.log_end_offset, 1 << 20))
    assert old_leader.read(0, 1 << 20) == new_leader.read(0, 1 << 20)
    assert [value for _, _, value in read_records(old_leader)] == [b"1", b"2", b"3"]


def test_a_follower_behind_the_leaders_log_start_restarts_there(tmp_path: Path) -> None:
    log = open_log(tmp_path / "p")
    append(log, b"a", b"b", epoch=0)
    log.truncate_fully_and_start_at(500)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (500, 500, 500)
    assert log.leader_epochs.epochs == []
    log.close()
    reopened = open_log(tmp_path / "p")
    assert (reopened.log_start_offset, reopened.log_end_offset) == (500, 500)


def test_pending_acks_complete_in_offset_order_and_report_a_shrunken_isr() -> None:
    async def scenario() -> list[ErrorCode]:
        acks = PendingAcks()
        first, second, third = acks.wait_for(1), acks.wait_for(5), acks.wait_for(9)
        assert acks.complete_up_to(4, enough_replicas=True) == 1
        assert acks.complete_up_to(5, enough_replicas=False) == 1
        acks.fail_all(ErrorCode.not_leader_or_follower)
        return [first.result(), second.result(), third.result()]

    assert asyncio.run(scenario()) == [
        ErrorCode.none,
        ErrorCode.not_enough_replicas_after_append,
        ErrorCode.not_leader_or_follower,
    ]
