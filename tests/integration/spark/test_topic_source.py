"""The `topics` data source against a real broker on local[2]."""

from __future__ import annotations

import json

import pytest

from tests.integration.spark.conftest import create_topic, produce

pytestmark = pytest.mark.integration


def read(spark, bootstrap: str, **options: str):
    reader = spark.read.format("topics").option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def test_it_reads_exactly_the_requested_offset_ranges(spark, broker, topic_name):
    create_topic(broker.bootstrap, topic_name, partitions=3)
    records = [(p, b"k%d" % i, b"p%d-%d" % (p, i)) for p in range(3) for i in range(50)]
    produce(broker.bootstrap, topic_name, records)
    frame = read(
        spark,
        broker.bootstrap,
        subscribe=topic_name,
        startingOffsets=json.dumps({topic_name: {"0": 10, "1": -2, "2": 49}}),
        endingOffsets=json.dumps({topic_name: {"0": 20, "1": 5, "2": -1}}),
    )
    rows = frame.select("partition", "offset", "key", "value", "topic").collect()
    got = sorted((r.partition, r.offset, bytes(r.key), bytes(r.value), r.topic) for r in rows)
    expected = sorted(
        [(0, i, b"k%d" % i, b"p0-%d" % i, topic_name) for i in range(10, 20)]
        + [(1, i, b"k%d" % i, b"p1-%d" % i, topic_name) for i in range(0, 5)]
        + [(2, 49, b"k49", b"p2-49", topic_name)]
    )
    assert got == expected
    assert frame.rdd.getNumPartitions() == 3
