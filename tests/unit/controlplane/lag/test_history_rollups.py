"""Rollups aggregate raw samples into minute buckets; the chart picks its resolution from the span."""

from datetime import UTC, datetime, timedelta

from controlplane.lag.history import GroupSample, PartitionSample, pick_resolution, rollup_rows


def _sample(time: float, lags: tuple[int, int], seconds: tuple[float | None, float | None]) -> GroupSample:
    return GroupSample(
        time=time,
        partitions=(
            PartitionSample("orders", 0, 10, 10 + lags[0], lags[0], seconds[0]),
            PartitionSample("orders", 1, 20, 20 + lags[1], lags[1], seconds[1]),
        ),
    )


def test_it_rolls_samples_into_minutes_keeping_the_worst_and_mean_totals() -> None:
    minute = 1_800_000_000 - 1_800_000_000 % 60
    samples = [
        _sample(minute + 0, (5, 1), (2.0, None)),
        _sample(minute + 15, (9, 3), (4.0, 1.0)),
        _sample(minute + 75, (1, 1), (0.5, 0.5)),
    ]
    first, second = rollup_rows(7, samples, "1m", 60)
    assert first.bucket_start == datetime.fromtimestamp(minute, tz=UTC)
    assert first.samples == 2
    assert first.lag_messages_max == 12
    assert first.lag_messages_avg == 9.0
    assert first.lag_seconds_max == 4.0
    assert first.partitions == {"orders/0": [9, 4.0], "orders/1": [3, 1.0]}
    assert second.bucket_start == datetime.fromtimestamp(minute + 60, tz=UTC)
    assert second.lag_messages_max == 2


def test_a_sample_survives_its_compact_encoding() -> None:
    sample = _sample(1234.5, (3, 0), (1.25, None))
    assert GroupSample.decode(sample.encode()) == sample


def test_the_chart_uses_raw_samples_for_an_hour_minutes_for_a_week_and_hours_beyond() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert pick_resolution(now - timedelta(minutes=60), now) == "raw"
    assert pick_resolution(now - timedelta(hours=24), now) == "1m"
    assert pick_resolution(now - timedelta(days=30), now) == "1h"
