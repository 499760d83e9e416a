"""Key cardinality and skew: per partition records, distinct keys, null-key share and bytes; the top keys."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from pyspark.sql import functions as F

from controlplane.spark.jobs.runtime import Chart, JobContext, Result, Table, TopicRange


@dataclass(frozen=True)
class Parameters:
    source: TopicRange
    top: int = 10


def run(spark: Any, parameters: Parameters, context: JobContext) -> Result:
    frame = context.read(spark, parameters.source).select("partition", "key", "value").cache()
    size = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    partitions = (
        frame.groupBy("partition")
        .agg(
            F.count("*").alias("records"),
            F.countDistinct("key").alias("distinct_keys"),
            F.sum(F.col("key").isNull().cast("int")).alias("null_keys"),
            F.sum(size).alias("bytes"),
        )
        .orderBy("partition")
        .collect()
    )
    top_keys = (
        frame.where(F.col("key").isNotNull())
        .groupBy("key")
        .count()
        .orderBy(F.desc("count"), F.asc("key"))
        .limit(parameters.top)
        .collect()
    )
    distinct_keys = frame.where(F.col("key").isNotNull()).select("key").distinct().count()
    frame.unpersist()
    rows = [
        [r.partition, r.records, r.distinct_keys, r.null_keys, round(r.null_keys / r.records, 4), r.bytes]
        for r in partitions
    ]
    total = sum(r[1] for r in rows)
    mean = total / len(rows) if rows else 0
    return Result(
        tables={
            "partitions": Table(
                ["partition", "records", "distinct_keys", "null_keys", "null_key_share", "bytes"], rows
            ),
            "top_keys": Table(
                ["key", "records"], [[bytes(r.key).decode(errors="replace"), r["count"]] for r in top_keys]
            ),
        },
        charts={
            "records_per_partition": Chart(
                "bar", [r[0] for r in rows], {"records": [r[1] for r in rows]}, x_label="partition"
            )
        },
        metrics={
            "records_read": total,
            "distinct_keys": distinct_keys,
            "null_key_share": round(sum(r[3] for r in rows) / total, 4) if total else 0.0,
            # How much more the busiest partition holds than the average one (1.0 is perfectly even).
            "skew": round(max(r[1] for r in rows) / mean, 3) if mean else 0.0,
        },
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "key_skew", *sys.argv[1:]]))
