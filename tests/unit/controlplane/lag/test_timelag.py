"""Lag in time by interpolation on the log-end history, rates and time to catch up."""

import pytest

from controlplane.lag.timelag import appended_at, rate, time_to_catch_up

HISTORY = [(100.0, 1000), (110.0, 1100), (120.0, 1300)]


def test_it_interpolates_when_the_record_at_an_offset_was_appended() -> None:
    # The log end passed offset 1049 (reached 1050) halfway between the first two samples.
    assert appended_at(1049, HISTORY) == (pytest.approx(105.0), False)
    assert appended_at(1199, HISTORY) == (pytest.approx(115.0), False)


def test_it_gives_only_a_lower_bound_for_an_offset_older_than_the_history() -> None:
    assert appended_at(500, HISTORY) == (100.0, True)


def test_it_never_extrapolates_past_the_newest_sample() -> None:
    assert appended_at(1300, HISTORY) == (None, False)
    assert appended_at(10, []) == (None, False)


def test_it_measures_rates_between_the_oldest_and_newest_points() -> None:
    assert rate([(0.0, 100), (5.0, 150), (10.0, 300)]) == 20.0
    assert rate([(0.0, 100)]) is None
    assert rate([(0.0, 300), (10.0, 100)]) == 0.0  # a rewind is not negative consumption


def test_it_estimates_time_to_catch_up_only_when_the_consumer_gains() -> None:
    assert time_to_catch_up(1000, consume_rate=60.0, produce_rate=50.0) == 100.0
    assert time_to_catch_up(1000, consume_rate=40.0, produce_rate=50.0) is None
    assert time_to_catch_up(0, consume_rate=None, produce_rate=None) == 0.0
