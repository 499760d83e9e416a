"""Spark's own Kafka source and sink (spark-sql-kafka-0-10_2.13 4.2.0, the newest Maven Central serves here; pyspark
is 4.3.0) on our broker with SASL/SCRAM and ACLs, on one node and on three, side by side with our `topics` source
on the same data: batch read, batch write, and a streaming query from topic to topic.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.jvm_ecosystem import JvmDriver, SecureTarget
from tests.integration.jvm.test_kafka_tools import create_topic

pytestmark = pytest.mark.integration

RECORDS = 400


@pytest.fixture(params=["single", "cluster"], scope="module")
def target(request: pytest.FixtureRequest) -> SecureTarget:
    return request.getfixturevalue(f"secure_{request.param}_target")


def kafka_options(target: SecureTarget) -> dict[str, str]:
    """The same `kafka.*` options for Spark's connector and for ours (it reads the Java JAAS form too)."""
    return {f"kafka.{key}": value for key, value in target.client_properties().items()}


def rows(frame: Any) -> list[tuple[int, int, bytes, bytes]]:
    return sorted(
        (row.partition, row.offset, bytes(row.key), bytes(row.value))
        for row in frame.select("partition", "offset", "key", "value").collect()
    )


def test_spark_kafka_source_and_sink_match_our_reader(
    spark: Any, jvm_driver: JvmDriver, target: SecureTarget, tmp_path: Path
) -> None:
    source, written, streamed = (f"spark-{name}-{uuid.uuid4().hex[:8]}" for name in ("in", "batch", "stream"))
    for topic in (source, written, streamed):
        create_topic(jvm_driver, target, topic, 3)
    jvm_driver.check(
        "produce", properties=target.client_properties(), topic=source, count=RECORDS, keys=8
    ).ok()
    options = kafka_options(target)

    def read(fmt: str, topic: str) -> Any:
        return (
            spark.read.format(fmt)
            .options(**options)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .load()
        )

    theirs = rows(read("kafka", source))
    assert len(theirs) == RECORDS
    assert rows(read("topics", source)) == theirs

    # Spark's sink writes; both readers see the same records.
    read("kafka", source).selectExpr("key", "value").write.format("kafka").options(**options).option(
        "topic", written
    ).save()
    copied = rows(read("topics", written))
    assert rows(read("kafka", written)) == copied
    assert sorted((key, value) for _, _, key, value in copied) == sorted(
        (key, value) for _, _, key, value in theirs
    )

    # A streaming query of Spark's source into Spark's sink, everything available, then stopped.
    query = (
        spark.readStream.format("kafka")
        .options(**options)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "value")
        .writeStream.format("kafka")
        .options(**options)
        .option("topic", streamed)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    assert sorted((key, value) for _, _, key, value in rows(read("topics", streamed))) == sorted(
        (key, value) for _, _, key, value in theirs
    )
