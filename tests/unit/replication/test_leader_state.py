"""High watermark and ISR rules of a partition leader (pure bookkeeping, no I/O)."""

from broker.replication.leader_state import UNKNOWN_OFFSET, LeaderState

LAG_MS = 30_000


def leader(isr=(1, 2, 3), replicas=(1, 2, 3), epoch_start=0, now=0) -> LeaderState:
    return LeaderState(local_id=1, replicas=replicas, isr=isr, epoch_start_offset=epoch_start, now_ms=now)


def test_the_high_watermark_waits_for_every_isr_member_to_report_its_log_end() -> None:
    state = leader(epoch_start=10)
    assert state.high_watermark_candidate(local_end_offset=10) == UNKNOWN_OFFSET
    state.record_fetch(2, 7, leader_end_offset=10, now_ms=1)
    assert state.high_watermark_candidate(10) == UNKNOWN_OFFSET
    state.record_fetch(3, 4, leader_end_offset=10, now_ms=1)
    assert state.high_watermark_candidate(10) == 4


def test_the_high_watermark_is_the_smallest_log_end_in_the_isr_only() -> None:
    state = leader(isr=(1, 2))
    state.record_fetch(2, 8, 10, now_ms=1)
    state.record_fetch(3, 1, 10, now_ms=1)  # not in the ISR: does not hold the watermark back
    assert state.high_watermark_candidate(10) == 8
    assert state.high_watermark_candidate(6) == 6  # the leader itself counts too


def test_a_single_replica_isr_makes_the_leaders_log_end_the_high_watermark() -> None:
    state = leader(isr=(1,), replicas=(1,))
    assert state.high_watermark_candidate(42) == 42


def test_a_follower_that_keeps_reaching_the_log_end_stays_in_sync() -> None:
    state = leader()
    for now in range(0, 100_000, 10_000):
        state.record_fetch(2, 10, 10, now_ms=now)
        state.record_fetch(3, 10, 10, now_ms=now)
    assert state.out_of_sync(100_000, LAG_MS) == frozenset()


def test_a_follower_that_stops_fetching_falls_out_of_sync_after_the_lag_time() -> None:
    state = leader(now=0)
    state.record_fetch(2, 10, 10, now_ms=1_000)
    state.record_fetch(3, 10, 10, now_ms=1_000)
    for now in range(2_000, 40_000, 1_000):
        state.record_fetch(2, 10, 10, now_ms=now)
    assert state.out_of_sync(30_000, LAG_MS) == frozenset()
    assert state.out_of_sync(31_001, LAG_MS) == {3}


def test_a_follower_that_fetches_but_never_reaches_the_log_end_falls_out_of_sync() -> None:
    state = leader(now=0)
    for second in range(1, 40):
        leader_end = 100 + 50 * second
        # Follower 2 copies 10 records a second while the leader takes 50: it falls further behind.
        state.record_fetch(2, 100 + 10 * second, leader_end, now_ms=second * 1_000)
        state.record_fetch(3, leader_end, leader_end, now_ms=second * 1_000)
    assert state.out_of_sync(40_000, LAG_MS) == {2}


def test_reaching_the_previous_fetchs_log_end_counts_as_caught_up_at_that_fetch() -> None:
    state = leader(now=0)
    state.record_fetch(2, 5, leader_end_offset=10, now_ms=20_000)
    state.record_fetch(2, 10, leader_end_offset=15, now_ms=25_000)  # had everything the leader had at 20 s
    assert state.followers[2].last_caught_up_ms == 20_000


def test_the_leader_is_never_out_of_sync_with_itself() -> None:
    state = leader(isr=(1,), replicas=(1, 2))
    assert state.out_of_sync(10**9, LAG_MS) == frozenset()


def test_a_follower_may_join_once_it_reaches_the_high_watermark_and_the_epoch_start() -> None:
    state = leader(isr=(1, 2), epoch_start=20)
    state.record_fetch(3, 15, 30, now_ms=1)
    assert not state.may_join(3, high_watermark=15)  # below this leader's epoch start
    state.record_fetch(3, 25, 30, now_ms=2)
    assert not state.may_join(3, high_watermark=28)  # below the high watermark
    assert state.may_join(3, high_watermark=25)
    assert not state.may_join(2, high_watermark=0)  # already a member
    assert not state.may_join(9, high_watermark=0)  # not a replica at all


def test_a_pending_isr_change_keeps_both_isrs_in_the_high_watermark() -> None:
    state = leader(isr=(1, 2))
    state.record_fetch(2, 9, 10, now_ms=1)
    state.record_fetch(3, 5, 10, now_ms=1)
    state.propose_isr((1, 2, 3))
    assert state.high_watermark_candidate(10) == 5
    state.propose_isr(None)
    state.set_isr((1, 2, 3), now_ms=2)
    assert state.isr == {1, 2, 3}
    assert state.followers[3].last_caught_up_ms == 2
    assert state.high_watermark_candidate(10) == 5


def test_a_replica_outside_the_assignment_is_not_recorded() -> None:
    state = leader()
    assert not state.record_fetch(7, 10, 10, now_ms=1)
    assert state.record_fetch(2, 10, 10, now_ms=1)


def test_followers_of_a_new_empty_partition_are_in_sync_while_they_keep_fetching_other_partitions() -> None:
    state = leader(epoch_start=0, now=0)
    # Nothing to replicate: the watermark may sit at 0 before any follower fetched this partition.
    assert state.high_watermark_candidate(0) == 0
    # Both followers fetch (other partitions, through their fetch sessions) but never name this one.
    assert state.out_of_sync(100_000, LAG_MS, 0, {2: 99_000, 3: 99_500}) == frozenset()
    # Follower 3 stopped fetching altogether.
    assert state.out_of_sync(100_000, LAG_MS, 0, {2: 99_000, 3: 50_000}) == {3}
    # Records arrive: a follower that has not fetched them is lagging once its lag time is up.
    assert state.out_of_sync(100_000, LAG_MS, 5, {2: 99_000, 3: 99_500}) == {2, 3}
    state.record_fetch(2, 5, 5, now_ms=99_800)
    assert state.out_of_sync(100_000, LAG_MS, 5, {2: 99_800, 3: 99_500}) == {3}
