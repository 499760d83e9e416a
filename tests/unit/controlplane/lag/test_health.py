"""Health classification of one partition over the window (no cluster involved)."""

from controlplane.lag.health import PartitionState, classify
from controlplane.lag.observations import Health, worst_health


def _state(window, *, log_start=0, has_members=True, assigned=True, window_seconds=30.0) -> PartitionState:
    return PartitionState(
        window=window,
        log_start_offset=log_start,
        has_members=has_members,
        assigned=assigned,
        window_seconds=window_seconds,
        lagging_min_messages=100,
    )


def test_it_calls_a_group_that_reached_zero_lag_in_the_window_ok() -> None:
    verdict = classify(_state([(0, 100, 50), (15, 150, 0), (30, 200, 20)]))
    assert verdict.status == Health.OK


def test_it_calls_a_steadily_growing_lag_above_the_warning_level_lagging() -> None:
    verdict = classify(_state([(0, 100, 150), (15, 120, 300), (30, 140, 450)]))
    assert verdict.status == Health.LAGGING
    assert verdict.reason == "Lag grew from 150 to 450 records over the last 30 s."


def test_it_does_not_call_a_growing_lag_below_the_warning_level_lagging() -> None:
    assert classify(_state([(0, 100, 10), (15, 120, 30), (30, 140, 50)])).status == Health.OK


def test_it_calls_a_committed_offset_that_does_not_move_while_lag_waits_stalled() -> None:
    verdict = classify(_state([(0, 100, 10), (15, 100, 40), (30, 100, 70)]))
    assert verdict.status == Health.STALLED
    assert "Committed offset 100 has not moved" in verdict.reason


def test_it_needs_half_a_window_of_no_movement_before_calling_a_stall() -> None:
    assert classify(_state([(0, 90, 10), (10, 100, 20), (20, 100, 30)])).status == Health.OK


def test_it_calls_a_group_without_members_and_commits_stopped() -> None:
    verdict = classify(_state([(0, 100, 10), (15, 100, 40)], has_members=False))
    assert verdict.status == Health.STOPPED
    # The partition has a commit: the reason says it did not move, not that there is none.
    assert verdict.reason == "No members, and the committed offset 100 has not moved; 40 records unread."


def test_it_calls_a_caught_up_group_without_members_ok() -> None:
    assert classify(_state([(0, 100, 0), (15, 100, 0)], has_members=False)).status == Health.OK


def test_it_calls_an_unassigned_partition_whose_offset_stands_still_stopped() -> None:
    verdict = classify(_state([(0, 100, 10), (15, 100, 40), (30, 100, 70)], assigned=False))
    assert verdict.status == Health.STOPPED


def test_it_calls_an_offset_that_went_backwards_rewind() -> None:
    verdict = classify(_state([(0, 100, 10), (15, 40, 80)], has_members=False))
    assert verdict.status == Health.REWIND
    assert verdict.reason == "Committed offset went back from 100 to 40."


def test_it_calls_a_committed_offset_below_the_log_start_data_loss() -> None:
    verdict = classify(_state([(0, 100, 10), (15, 100, 40)], log_start=130))
    assert verdict.status == Health.DATA_LOSS
    assert "retention deleted 30 unread records" in verdict.reason


def test_it_calls_an_assigned_partition_without_a_commit_no_commit() -> None:
    assert classify(_state([(0, None, 0), (15, None, 0)])).status == Health.NO_COMMIT


def test_a_group_takes_its_worst_partition() -> None:
    assert worst_health([Health.OK, Health.STALLED, Health.LAGGING]) == Health.STALLED
    assert worst_health([Health.REWIND, Health.DATA_LOSS]) == Health.DATA_LOSS
    assert worst_health([]) == Health.OK


def test_a_never_committed_partition_says_how_many_records_wait_from_the_log_start() -> None:
    assigned = classify(_state([(0, None, 40)], log_start=10))
    assert assigned.status == Health.NO_COMMIT
    assert assigned.reason == (
        "Assigned to a member but the group has never committed an offset; "
        "the 40 records from the log start 10 are unread."
    )
    unassigned = classify(_state([(0, None, 40)], log_start=10, assigned=False))
    assert unassigned.status == Health.NO_COMMIT
    assert "the 40 records from the log start 10 are unread" in unassigned.reason
    empty = classify(_state([(0, None, 0)], assigned=False))
    assert (empty.status, empty.reason) == (Health.OK, "No committed offset; the partition holds no records.")
