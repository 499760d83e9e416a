"""Filters Spark pushes into the topic source, turned into narrower offset ranges (no cluster, no Spark)."""

import datetime

from pyspark.sql.datasource import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)

from controlplane.spark.offset_range import OffsetRange
from controlplane.spark.projection import full_projection
from controlplane.spark.pushdown import RangeFilter, push_filters

SOURCE_COLUMN = full_projection(False).source_column
RANGES = [OffsetRange("orders", p, 0, 100) for p in range(4)] + [OffsetRange("refunds", 1, 50, 60)]


def narrowed(*filters):
    range_filter, remaining = push_filters(list(filters), SOURCE_COLUMN)
    return range_filter.narrow(RANGES), remaining


def test_partition_equality_and_in_keep_only_those_partitions_and_are_handled():
    ranges, remaining = narrowed(In(("partition",), (1, 3, 7)))
    assert ranges == [RANGES[1], RANGES[3], RANGES[4]]
    assert remaining == []
    ranges, remaining = narrowed(EqualTo(("partition",), 2))
    assert ranges == [RANGES[2]]
    assert remaining == []


def test_filters_on_one_column_are_anded():
    ranges, _ = narrowed(In(("partition",), (1, 2)), In(("partition",), (2, 3)))
    assert ranges == [RANGES[2]]
    ranges, _ = narrowed(EqualTo(("partition",), 1), EqualTo(("partition",), 2))
    assert ranges == []


def test_offset_bounds_shorten_every_range_exactly():
    ranges, remaining = narrowed(GreaterThan(("offset",), 9), LessThanOrEqual(("offset",), 54))
    assert [(r.topic, r.partition, r.start, r.end) for r in ranges] == [
        *[("orders", p, 10, 55) for p in range(4)],
        ("refunds", 1, 50, 55),
    ]
    assert remaining == []
    ranges, _ = narrowed(
        GreaterThanOrEqual(("offset",), 10), LessThan(("offset",), 20), LessThan(("offset",), 15)
    )
    assert {(r.start, r.end) for r in ranges} == {(10, 15)}


def test_offset_equality_reads_one_record_per_partition_that_has_it():
    ranges, _ = narrowed(EqualTo(("offset",), 57), EqualTo(("partition",), 1))
    assert ranges == [OffsetRange("orders", 1, 57, 58), OffsetRange("refunds", 1, 57, 58)]
    ranges, _ = narrowed(EqualTo(("offset",), 100))
    assert ranges == []


def test_filters_it_cannot_use_are_left_to_spark():
    unusable = [
        EqualTo(("key",), b"k"),
        Not(EqualTo(("partition",), 1)),
        IsNotNull(("offset",)),
        EqualTo(("partition",), "1"),
        In(("partition",), ()),
        GreaterThan(("offset",), 1.5),
        StringStartsWith(("topic",), "ord"),
        LessThan(("timestamp",), datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)),
        GreaterThan(("timestamp",), datetime.datetime(2026, 1, 1)),  # no zone: not an instant
    ]
    range_filter, remaining = push_filters(unusable, SOURCE_COLUMN)
    assert range_filter == RangeFilter()
    assert remaining == unusable


def test_a_timestamp_lower_bound_moves_the_start_but_spark_still_checks_it():
    later = GreaterThanOrEqual(
        ("timestamp",), datetime.datetime(2026, 1, 1, 0, 0, 0, 2500, tzinfo=datetime.UTC)
    )
    earlier = GreaterThan(("timestamp",), datetime.datetime(2025, 12, 31, tzinfo=datetime.UTC))
    range_filter, remaining = push_filters([later, earlier], SOURCE_COLUMN)
    # Rounded down to the millisecond: the records of that millisecond are read and Spark filters them.
    assert range_filter.min_timestamp_ms == 1_767_225_600_002
    assert remaining == [later, earlier]


def test_column_names_follow_the_reads_schema_case_insensitively():
    range_filter, remaining = push_filters([EqualTo(("Partition",), 3)], SOURCE_COLUMN)
    assert range_filter.partitions == frozenset({3})
    assert remaining == []
