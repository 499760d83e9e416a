"""Topic → Parquet: a range of a topic written as Parquet, partitioned by record date and topic partition."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from pyspark.sql import functions as F

from controlplane.spark.jobs.runtime import Chart, JobContext, Result, Table, TopicRange


@dataclass(frozen=True)
class Parameters:
    source: TopicRange
    directory: str = "parquet"  # under the run's output directory


def run(spark: Any, parameters: Parameters, context: JobContext) -> Result:
    target = context.output_dir / parameters.directory
    frame = context.read(spark, parameters.source).withColumn("date", F.to_date("timestamp"))
    frame.write.mode("overwrite").partitionBy("date", "partition").parquet(str(target))
    # Counting what landed in the files checks the export itself and does not read the topic twice.
    written = (
        spark.read.parquet(str(target))
        .groupBy("partition")
        .agg(F.count("*").alias("records"), F.min("offset").alias("first"), F.max("offset").alias("last"))
        .orderBy("partition")
        .collect()
    )
    rows = [[r.partition, r.records, r.first, r.last] for r in written]
    files = sorted(str(p.relative_to(context.output_dir)) for p in target.rglob("*.parquet"))
    total = sum(r[1] for r in rows)
    return Result(
        tables={"partitions": Table(["partition", "records", "first_offset", "last_offset"], rows)},
        charts={
            "records_per_partition": Chart(
                "bar", [r[0] for r in rows], {"records": [r[1] for r in rows]}, "partition"
            )
        },
        files=files,
        metrics={"records_read": total, "files": len(files)},
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "export_parquet", *sys.argv[1:]]))
