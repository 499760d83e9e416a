import pytest

from controlplane.groups.resets import PlannedOffset, lag_of, plan_reset

T = "orders"
PARTITIONS = [(T, 0), (T, 1)]
EARLIEST = {(T, 0): 10, (T, 1): 0}
LATEST = {(T, 0): 100, (T, 1): 50}
COMMITTED = {(T, 0): 40}


def _plan(strategy: str, **kwargs) -> list[tuple[int | None, int]]:
    planned = plan_reset(
        strategy=strategy,
        partitions=PARTITIONS,
        committed=COMMITTED,
        earliest=EARLIEST,
        latest=LATEST,
        **kwargs,
    )
    return [(p.old_offset, p.new_offset) for p in planned]


def test_earliest_and_latest_go_to_the_ends_of_each_log() -> None:
    assert _plan("earliest") == [(40, 10), (None, 0)]
    assert _plan("latest") == [(40, 100), (None, 50)]


def test_a_shift_moves_from_the_committed_offset_and_stays_inside_the_log() -> None:
    assert _plan("shift", shift_by=-35) == [(40, 10), (None, 0)]
    assert _plan("shift", shift_by=5) == [(40, 45), (None, 5)]
    assert _plan("shift", shift_by=1000) == [(40, 100), (None, 50)]


def test_a_timestamp_after_every_record_means_the_end_of_the_log() -> None:
    assert _plan("timestamp", by_timestamp={(T, 0): 70, (T, 1): -1}) == [(40, 70), (None, 50)]


def test_exact_offsets_touch_only_the_partitions_named_and_are_clamped() -> None:
    planned = plan_reset(
        strategy="offset",
        partitions=PARTITIONS,
        committed=COMMITTED,
        earliest=EARLIEST,
        latest=LATEST,
        exact={(T, 0): 5},
    )
    assert planned == [PlannedOffset(T, 0, 40, 10)]


def test_an_unknown_strategy_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        _plan("sideways")


@pytest.mark.parametrize(
    ("committed", "log_end", "lag"), [(5, 10, 5), (10, 10, 0), (12, 10, 0), (None, 7, 7)]
)
def test_lag_is_log_end_minus_committed_never_negative(committed: int | None, log_end: int, lag: int) -> None:
    assert lag_of(committed, log_end) == lag
