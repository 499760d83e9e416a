"""A partition leader's rules, on one Partition over a real log: follower progress, the ISR, the high
watermark, AlterPartition answers and leadership changes."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path

import pytest
from kio.schema.errors import ErrorCode

from broker.controller.api import PartitionAssignment
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.replication.partition import UNKNOWN_OFFSET, Partition
from broker.replication.throttle import ReplicationThrottle
from tests.unit.broker.log.helpers import NOW_MS, batch_of

LAG_MS = 30_000
TOPIC_ID = uuid.UUID(int=7)


class Host:
    """Broker 1's side of the partition: which brokers may join the ISR, and the proposals it sent."""

    node_id = 1

    def __init__(self) -> None:
        self.leader_throttle = ReplicationThrottle(None, 0.0)
        self.eligible = False
        self.proposals: list[tuple[int, ...]] = []

    def isr_eligible(self, broker_id: int) -> bool:
        return self.eligible

    def send_alter_partition(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        self.proposals.append(new_isr)


def assignment(**changes: object) -> PartitionAssignment:
    values: dict[str, object] = {
        "topic": "t",
        "partition": 0,
        "topic_id": TOPIC_ID,
        "leader": 1,
        "leader_epoch": 0,
        "partition_epoch": 0,
        "replicas": (1, 2, 3),
        "isr": (1, 2, 3),
        **changes,
    }
    return PartitionAssignment(**values)  # type: ignore[arg-type]


def grow(partition: Partition, records: int) -> None:
    """The leader appends `records` records (one batch)."""
    if records:
        assert partition.append(batch_of(*[b"v"] * records), acks=1, now_ms=NOW_MS).error == ErrorCode.none


@pytest.fixture
def host() -> Host:
    return Host()


def lead(
    tmp_path: Path,
    host: Host,
    isr: tuple[int, ...] = (1, 2, 3),
    replicas: tuple[int, ...] = (1, 2, 3),
    epoch_start: int = 0,
    now: int = 0,
) -> Partition:
    """A Partition that becomes leader (epoch 1) once its log holds `epoch_start` records written under
    an older leader."""
    partition_log = PartitionLog.open(tmp_path / "t-0", LogConfig.from_properties({}), topic="t", partition=0)
    if epoch_start:
        partition_log.append_as_leader(batch_of(*[b"old"] * epoch_start), leader_epoch=0, now_ms=NOW_MS)
    partition = Partition(assignment(isr=isr, replicas=replicas), partition_log, host)
    assert partition.make_leader(assignment(isr=isr, replicas=replicas, leader_epoch=1), now)
    return partition


def test_the_high_watermark_waits_for_every_isr_member_to_report_its_log_end(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, epoch_start=10)
    assert partition.high_watermark_candidate() == UNKNOWN_OFFSET
    partition.record_follower_fetch(2, 7, now=1)
    assert partition.high_watermark_candidate() == UNKNOWN_OFFSET
    partition.record_follower_fetch(3, 4, now=1)
    assert partition.high_watermark_candidate() == 4
    assert partition.high_watermark == 4  # advanced by the fetch that made it known


def test_the_high_watermark_is_the_smallest_log_end_in_the_isr_only(tmp_path: Path, host: Host) -> None:
    partition = lead(tmp_path, host, isr=(1, 2), epoch_start=10)
    partition.record_follower_fetch(2, 8, now=1)
    partition.record_follower_fetch(3, 1, now=1)  # not in the ISR: does not hold the watermark back
    assert partition.high_watermark == 8


def test_a_single_replica_isr_makes_the_leaders_log_end_the_high_watermark(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, isr=(1,), replicas=(1,))
    grow(partition, 42)
    assert partition.high_watermark == 42


def test_a_follower_that_keeps_reaching_the_log_end_stays_in_sync(tmp_path: Path, host: Host) -> None:
    partition = lead(tmp_path, host, epoch_start=10)
    for now in range(0, 100_000, 10_000):
        partition.record_follower_fetch(2, 10, now=now)
        partition.record_follower_fetch(3, 10, now=now)
    assert partition.out_of_sync(100_000, LAG_MS, {}) == frozenset()


def test_a_follower_that_stops_fetching_falls_out_of_sync_after_the_lag_time(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, epoch_start=10, now=0)
    partition.record_follower_fetch(2, 10, now=1_000)
    partition.record_follower_fetch(3, 10, now=1_000)
    for now in range(2_000, 40_000, 1_000):
        partition.record_follower_fetch(2, 10, now=now)
    assert partition.out_of_sync(30_000, LAG_MS, {}) == frozenset()
    assert partition.out_of_sync(31_001, LAG_MS, {}) == {3}


def test_a_follower_that_fetches_but_never_reaches_the_log_end_falls_out_of_sync(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, epoch_start=100, now=0)
    for second in range(1, 40):
        grow(partition, 50)
        # Follower 2 copies 10 records a second while the leader takes 50: it falls further behind.
        partition.record_follower_fetch(2, 100 + 10 * second, now=second * 1_000)
        partition.record_follower_fetch(3, partition.log_end_offset, now=second * 1_000)
    assert partition.out_of_sync(40_000, LAG_MS, {}) == {2}


def test_reaching_the_previous_fetchs_log_end_counts_as_caught_up_at_that_fetch(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, epoch_start=10, now=0)
    partition.record_follower_fetch(2, 5, now=20_000)
    grow(partition, 5)
    partition.record_follower_fetch(2, 10, now=25_000)  # had everything the leader had at 20 s
    assert partition.followers[2].last_caught_up_ms == 20_000


def test_the_leader_is_never_out_of_sync_with_itself(tmp_path: Path, host: Host) -> None:
    partition = lead(tmp_path, host, isr=(1,), replicas=(1, 2))
    assert partition.out_of_sync(10**9, LAG_MS, {}) == frozenset()


def test_a_follower_may_join_once_it_reaches_the_high_watermark_and_the_epoch_start(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, isr=(1, 2), epoch_start=20)
    grow(partition, 10)
    partition.record_follower_fetch(3, 15, now=1)
    assert not partition.may_join(3)  # below this leader's epoch start
    partition.record_follower_fetch(2, 28, now=1)
    assert partition.high_watermark == 28
    partition.record_follower_fetch(3, 25, now=2)
    assert not partition.may_join(3)  # below the high watermark
    partition.record_follower_fetch(3, 28, now=3)
    assert partition.may_join(3)
    assert not partition.may_join(2)  # already a member
    assert not partition.may_join(9)  # not a replica at all


def test_a_caught_up_follower_is_proposed_for_the_isr_only_while_its_broker_may_join(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, isr=(1, 2), epoch_start=10)
    partition.record_follower_fetch(3, 10, now=1)
    assert host.proposals == []  # fenced or shutting down: not proposed
    host.eligible = True
    partition.record_follower_fetch(3, 10, now=2)
    assert host.proposals == [(1, 2, 3)]
    partition.record_follower_fetch(3, 10, now=3)
    assert host.proposals == [(1, 2, 3)]  # one proposal in flight at a time


def test_a_pending_isr_change_keeps_both_isrs_in_the_high_watermark(tmp_path: Path, host: Host) -> None:
    partition = lead(tmp_path, host, isr=(1, 2), epoch_start=10)
    partition.record_follower_fetch(3, 5, now=1)
    partition.propose_isr((1, 2, 3))
    partition.record_follower_fetch(2, 9, now=1)
    assert partition.high_watermark_candidate() == 5
    assert partition.high_watermark == 5
    committed = dataclasses.replace(partition.assignment, isr=(1, 2, 3), partition_epoch=1)
    assert partition.alter_partition_answered(committed)
    assert partition.in_sync == {1, 2, 3}
    assert partition.followers[3].last_caught_up_ms > 0
    assert partition.high_watermark_candidate() == 5


def test_a_refused_proposal_keeps_the_isr_and_holds_back_the_next_one(tmp_path: Path, host: Host) -> None:
    host.eligible = True
    partition = lead(tmp_path, host, isr=(1, 2), epoch_start=10)
    partition.record_follower_fetch(3, 10, now=1)
    assert host.proposals == [(1, 2, 3)]
    assert not partition.alter_partition_answered(None)
    assert partition.in_sync == {1, 2}
    assert not partition.alter_in_flight
    assert partition.proposed_isr is None
    partition.record_follower_fetch(3, 10, now=2)
    assert host.proposals == [(1, 2, 3)]  # retried only after ALTER_PARTITION_RETRY_S


def test_an_answer_older_than_the_leaders_state_or_after_leadership_moved_is_not_taken(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, isr=(1, 2))
    partition.propose_isr((1,))
    # A fencing's ISR change arrived from the metadata log while the answer was on its way.
    assert not partition.make_leader(
        dataclasses.replace(partition.assignment, isr=(1, 2, 3), partition_epoch=2), 5
    )
    assert not partition.alter_partition_answered(
        dataclasses.replace(partition.assignment, isr=(1,), partition_epoch=1)
    )
    assert partition.in_sync == {1, 2, 3}
    partition.propose_isr((1,))
    assert partition.make_follower(assignment(leader=2, leader_epoch=2))
    assert not partition.alter_partition_answered(assignment(leader_epoch=1, isr=(1,), partition_epoch=3))
    assert not partition.is_leader
    assert partition.isr == (1, 2, 3)


def test_a_replica_outside_the_assignment_is_not_recorded(tmp_path: Path, host: Host) -> None:
    partition = lead(tmp_path, host, epoch_start=10)
    assert not partition.record_follower_fetch(7, 10, now=1)
    assert partition.record_follower_fetch(2, 10, now=1)


def test_followers_of_a_new_empty_partition_are_in_sync_while_they_keep_fetching_other_partitions(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, epoch_start=0, now=0)
    # Nothing to replicate: the watermark may sit at 0 before any follower fetched this partition.
    assert partition.high_watermark_candidate() == 0
    # Both followers fetch (other partitions, through their fetch sessions) but never name this one.
    assert partition.out_of_sync(100_000, LAG_MS, {2: 99_000, 3: 99_500}) == frozenset()
    # Follower 3 stopped fetching altogether.
    assert partition.out_of_sync(100_000, LAG_MS, {2: 99_000, 3: 50_000}) == {3}
    # Records arrive: a follower that has not fetched them is lagging once its lag time is up.
    grow(partition, 5)
    assert partition.out_of_sync(100_000, LAG_MS, {2: 99_000, 3: 99_500}) == {2, 3}
    partition.record_follower_fetch(2, 5, now=99_800)
    assert partition.out_of_sync(100_000, LAG_MS, {2: 99_800, 3: 99_500}) == {3}


def test_a_reassignment_tracks_added_replicas_outside_the_isr_until_they_catch_up(
    tmp_path: Path, host: Host
) -> None:
    partition = lead(tmp_path, host, isr=(1, 2), replicas=(1, 2), epoch_start=5)
    adding = dataclasses.replace(partition.assignment, replicas=(3, 1, 2), partition_epoch=1)
    assert not partition.make_leader(adding, 10)  # same leader epoch: still leading
    assert partition.record_follower_fetch(3, 5, now=20)
    partition.record_follower_fetch(2, 5, now=20)
    assert partition.may_join(3)
    removed = dataclasses.replace(partition.assignment, replicas=(3, 1), isr=(1, 3), partition_epoch=2)
    partition.make_leader(removed, 30)
    assert not partition.record_follower_fetch(2, 5, now=40)


def test_losing_leadership_answers_the_waiting_acks_all_requests(tmp_path: Path, host: Host) -> None:
    async def run() -> None:
        partition = lead(tmp_path, host, isr=(1, 2), epoch_start=0)
        outcome = partition.append(batch_of(b"a"), acks=-1)
        assert outcome.acks_pending is not None
        assert not outcome.acks_pending.done()
        assert partition.make_follower(assignment(leader=2, leader_epoch=2))
        assert outcome.acks_pending.result() == ErrorCode.not_leader_or_follower
        assert partition.append(batch_of(b"b"), acks=1).error == ErrorCode.not_leader_or_follower

    asyncio.run(run())
