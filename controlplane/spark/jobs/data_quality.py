"""Data-quality checks over a topic range: parse failures, null keys and values, duplicates, timestamp skew,
size outliers. Each check reports its failing records and whether it passed its threshold."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Window
from pyspark.sql import functions as F

from controlplane.spark.jobs.runtime import Chart, JobContext, Result, Table, TopicRange


@dataclass(frozen=True)
class Parameters:
    source: TopicRange
    expect_json: bool = True
    max_timestamp_skew_seconds: int = 300
    size_outlier_stddevs: float = 3.0
    max_failing_share: float = 0.0  # a check passes when at most this share of records fails it


def run(spark: Any, parameters: Parameters, context: JobContext) -> Result:
    frame = context.read(spark, parameters.source).cache()
    now_ms = int(time.time() * 1000)
    skew_ms = parameters.max_timestamp_skew_seconds * 1000
    earlier = Window.partitionBy("partition").orderBy("offset").rowsBetween(Window.unboundedPreceding, -1)
    stamp_ms = F.unix_millis("timestamp")
    size = F.coalesce(F.length("value"), F.lit(0))
    stats = frame.agg(
        F.count("*").alias("n"), F.avg(size).alias("mean"), F.stddev_pop(size).alias("sd")
    ).first()
    total = stats.n
    limit = (stats.mean or 0) + parameters.size_outlier_stddevs * (stats.sd or 0)
    flagged = frame.select(
        F.col("key").isNull().alias("null_key"),
        F.col("value").isNull().alias("null_value"),
        (
            F.col("value").isNotNull() & F.get_json_object(F.col("value").cast("string"), "$").isNull()
            if parameters.expect_json
            else F.lit(False)
        ).alias("parse_failure"),
        (
            (stamp_ms > F.lit(now_ms + skew_ms))
            | F.coalesce(
                stamp_ms < F.unix_millis(F.max("timestamp").over(earlier)) - F.lit(skew_ms), F.lit(False)
            )
        ).alias("timestamp_skew"),
        ((size > F.lit(limit)) & F.lit((stats.sd or 0) > 0)).alias("size_outlier"),
    )
    failing = flagged.agg(*[F.sum(F.col(c).cast("int")).alias(c) for c in flagged.columns]).first().asDict()
    duplicate_row = (
        frame.groupBy("key", "value").count().agg(F.sum(F.col("count") - 1).alias("duplicates")).first()
    )
    failing["duplicates"] = duplicate_row.duplicates or 0
    frame.unpersist()
    rows = []
    for check in ("parse_failure", "null_key", "null_value", "duplicates", "timestamp_skew", "size_outlier"):
        count = int(failing[check] or 0)
        share = round(count / total, 4) if total else 0.0
        rows.append([check, count, share, share <= parameters.max_failing_share])
    return Result(
        tables={"checks": Table(["check", "failing", "share", "passed"], rows)},
        charts={
            "failing_per_check": Chart(
                "bar", [r[0] for r in rows], {"failing": [r[1] for r in rows]}, "check"
            )
        },
        metrics={
            "records_read": total,
            "size_outlier_limit_bytes": round(limit, 1),
            "passed": all(r[3] for r in rows),
        },
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "data_quality", *sys.argv[1:]]))
