"""Offset arithmetic of the planner: clamping, splitting and rate limiting (no cluster needed)."""

import itertools

import pytest

from controlplane.spark.offset_range import OffsetRange
from controlplane.spark.options import EARLIEST, LATEST
from controlplane.spark.planning import (
    TopicReadError,
    limit_offsets,
    resolve_offset,
    split_ranges,
)

KEY = ("orders", 0)


def test_it_resolves_earliest_and_latest_to_the_watermarks():
    assert resolve_offset(KEY, EARLIEST, (10, 20), fail_on_data_loss=True) == 10
    assert resolve_offset(KEY, LATEST, (10, 20), fail_on_data_loss=True) == 20
    assert resolve_offset(KEY, 15, (10, 20), fail_on_data_loss=True) == 15


def test_it_refuses_deleted_or_future_offsets_unless_data_loss_is_accepted():
    with pytest.raises(TopicReadError, match="no longer available"):
        resolve_offset(KEY, 3, (10, 20), fail_on_data_loss=True)
    with pytest.raises(TopicReadError, match="beyond the end"):
        resolve_offset(KEY, 30, (10, 20), fail_on_data_loss=True)
    assert resolve_offset(KEY, 3, (10, 20), fail_on_data_loss=False) == 10
    assert resolve_offset(KEY, 30, (10, 20), fail_on_data_loss=False) == 20


def test_it_splits_ranges_in_proportion_to_their_size_without_losing_offsets():
    ranges = [OffsetRange("a", 0, 0, 900), OffsetRange("a", 1, 50, 150)]
    pieces = split_ranges(ranges, 10)
    assert len(pieces) >= 10
    for original in ranges:
        mine = [p for p in pieces if p.partition == original.partition]
        assert mine[0].start == original.start
        assert mine[-1].end == original.end
        assert all(a.end == b.start for a, b in itertools.pairwise(mine))
    assert split_ranges(ranges, None) == ranges


def test_max_offsets_per_trigger_shares_the_limit_by_backlog():
    start = {("a", 0): 0, ("a", 1): 100}
    latest = {("a", 0): 300, ("a", 1): 200}
    ends = limit_offsets(start, latest, 40)
    assert ends == {("a", 0): 30, ("a", 1): 110}
    assert limit_offsets(start, latest, 10_000) == latest
