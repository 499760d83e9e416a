"""Streaming topic → topic through a SQL transform over the view `source`: filter, project, or aggregate
over event-time windows with a watermark (`watermark_delay`, e.g. "10 seconds", on `event_time_column`).

The query must be one SELECT producing a `value` column and optionally `key`, `partition` and `headers`.
Each micro-batch is produced once into `target_topic`, also across driver restarts (streaming.TopicBatchSink):
in one transaction per batch where the cluster supports transactions, else with the idempotent producer.
An aggregate needs a watermark: its windows are written once, when the watermark passes them (append mode).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from controlplane.spark.jobs.runtime import transform_sql
from controlplane.spark.streaming import (
    StreamContext,
    StreamSource,
    TopicBatchSink,
    trigger_interval,
)

# What the topic sink writes from: the control plane checks the transform's output has them at creation too.
REQUIRED_COLUMNS = ("value",)


@dataclass(frozen=True)
class Parameters:
    source: StreamSource
    target_topic: str
    sql: str = "SELECT key, value FROM source"
    watermark_delay: str | None = None
    event_time_column: str = "timestamp"
    trigger_seconds: float = 1.0


def start(spark: Any, parameters: Parameters, context: StreamContext) -> Any:
    sql = transform_sql(spark, parameters.sql)
    source = context.read_stream(spark, parameters.source)
    if parameters.watermark_delay:
        source = source.withWatermark(parameters.event_time_column, parameters.watermark_delay)
    source.createOrReplaceTempView("source")
    transformed = spark.sql(sql)
    missing = [name for name in REQUIRED_COLUMNS if name not in transformed.columns]
    if missing:
        raise ValueError(f"the transform must produce a {missing[0]!r} column")
    sink = TopicBatchSink(
        stream_id=context.stream_id,
        topic=parameters.target_topic,
        kafka_config=context.kafka_config,
        checkpoint_dir=context.checkpoint_dir,
        # Idempotent path: a replayed aggregate batch holds the same rows, not necessarily in the same order.
        sort_columns=[c for c in ("key", "value") if c in transformed.columns]
        if parameters.watermark_delay
        else [],
        status=context.sink_status,
    )
    return (
        transformed.writeStream.foreachBatch(sink)
        .outputMode("append")
        .option("checkpointLocation", str(context.spark_checkpoint))
        .trigger(processingTime=trigger_interval(parameters.trigger_seconds))
        .queryName(f"streamhub-stream-{context.stream_id}")
        .start()
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "stream_topic_sql", *sys.argv[1:]]))
