"""Backlog profile of a consumer group: how old its unconsumed records are (a histogram), per partition lag.

Partitions the group never committed count from the start of the log, as a new consumer would read them.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from pyspark.sql import functions as F

from controlplane.spark.jobs.runtime import Chart, JobContext, Result, Table, TopicRange
from controlplane.spark.options import TopicSelection
from controlplane.spark.planning import METADATA_TIMEOUT_S, planning_consumer, select_partitions


@dataclass(frozen=True)
class Parameters:
    topic: str
    group_id: str
    bucket_seconds: list[int] = field(default_factory=lambda: [60, 300, 3600, 86400])


def committed_offsets(kafka_config: dict[str, str], topic: str, group_id: str) -> dict[int, int]:
    """The group's committed offset per partition (-2, the log start, where it has none)."""
    planner = planning_consumer(kafka_config)
    try:
        partitions = [p for _, p in select_partitions(planner, TopicSelection(topics=(topic,)))]
    finally:
        planner.close()
    consumer = Consumer({**kafka_config, "group.id": group_id, "enable.auto.commit": False})
    try:
        answers = consumer.committed(
            [TopicPartition(topic, p) for p in partitions], timeout=METADATA_TIMEOUT_S
        )
    finally:
        consumer.close()
    return {a.partition: a.offset if a.offset >= 0 else -2 for a in answers}


def run(spark: Any, parameters: Parameters, context: JobContext) -> Result:
    committed = committed_offsets(context.kafka_config, parameters.topic, parameters.group_id)
    starting = json.dumps({parameters.topic: {str(p): o for p, o in committed.items()}})
    frame = context.read(spark, TopicRange(parameters.topic, starting_offsets=starting)).cache()
    now = time.time()
    bounds = sorted(parameters.bucket_seconds)
    age = F.lit(now) - F.unix_millis("timestamp") / 1000
    bucket = F.lit(len(bounds))
    for index in reversed(range(len(bounds))):
        bucket = F.when(age < bounds[index], index).otherwise(bucket)
    counts = dict(frame.groupBy(bucket.alias("bucket")).count().collect())
    labels = [f"< {b}s" for b in bounds] + [f">= {bounds[-1]}s"]
    histogram = [[labels[i], counts.get(i, 0)] for i in range(len(labels))]
    lag = {
        r.partition: (r["count"], r.oldest)
        for r in frame.groupBy("partition")
        .agg(F.count("*").alias("count"), F.min("timestamp").alias("oldest"))
        .collect()
    }
    frame.unpersist()
    partition_rows = [
        [p, committed[p], lag.get(p, (0, None))[0], lag[p][1].isoformat() if p in lag else None]
        for p in sorted(committed)
    ]
    total = sum(row[1] for row in histogram)
    return Result(
        tables={
            "age_histogram": Table(["age", "records"], histogram),
            "partitions": Table(
                ["partition", "committed_offset", "unconsumed", "oldest_unconsumed"], partition_rows
            ),
        },
        charts={
            "age_histogram": Chart("bar", labels, {"records": [row[1] for row in histogram]}, x_label="age")
        },
        metrics={"records_read": total, "unconsumed": total},
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "backlog_profile", *sys.argv[1:]]))
