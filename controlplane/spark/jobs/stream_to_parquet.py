"""Streaming topic → Parquet files under the stream's output directory, partitioned by record date.

`sql` (a SELECT over the view `source`) picks and shapes the columns; by default every column of the topic.
Spark's file sink logs each batch's files, so a restarted query neither loses nor repeats a batch's rows.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from pyspark.sql import functions as F

from controlplane.spark.jobs.runtime import transform_sql
from controlplane.spark.streaming import StreamContext, StreamSource, trigger_interval


@dataclass(frozen=True)
class Parameters:
    source: StreamSource
    sql: str = "SELECT * FROM source"
    trigger_seconds: float = 5.0


def start(spark: Any, parameters: Parameters, context: StreamContext) -> Any:
    sql = transform_sql(spark, parameters.sql)
    context.read_stream(spark, parameters.source).createOrReplaceTempView("source")
    frame = spark.sql(sql)
    partition_by = []
    if "timestamp" in frame.columns:
        frame = frame.withColumn("date", F.to_date("timestamp"))
        partition_by = ["date"]
    return (
        frame.writeStream.format("parquet")
        .option("path", str(context.output_dir / "parquet"))
        .option("checkpointLocation", str(context.spark_checkpoint))
        .partitionBy(*partition_by)
        .trigger(processingTime=trigger_interval(parameters.trigger_seconds))
        .queryName(f"streamhub-stream-{context.stream_id}")
        .start()
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "stream_to_parquet", *sys.argv[1:]]))
