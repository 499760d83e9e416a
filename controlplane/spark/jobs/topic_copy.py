"""Topic → topic copy through a SQL transform over the view `source` (filter, mask, re-key).

The query must be one SELECT (or WITH … SELECT) producing a `value` column and optionally `key`, `partition`
and `headers`; reading files from SQL is switched off for it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from controlplane.spark.jobs.runtime import JobContext, Result, TopicRange, transform_sql

# What the topic sink writes from: the control plane checks the transform's output has them at creation too.
REQUIRED_COLUMNS = ("value",)


@dataclass(frozen=True)
class Parameters:
    source: TopicRange
    target_topic: str
    sql: str = "SELECT key, value FROM source"


def run(spark: Any, parameters: Parameters, context: JobContext) -> Result:
    sql = transform_sql(spark, parameters.sql)
    # Cached so counting and writing read the source topic once.
    source = context.read(spark, parameters.source).cache()
    source.createOrReplaceTempView("source")
    transformed = spark.sql(sql)
    missing = [name for name in REQUIRED_COLUMNS if name not in transformed.columns]
    if missing:
        raise ValueError(f"the transform must produce a {missing[0]!r} column")
    read = source.count()
    copied = transformed.count()
    transformed.write.format("topics").options(**context.sink_options(parameters.target_topic)).mode(
        "append"
    ).save()
    source.unpersist()
    return Result(
        metrics={"records_read": read, "records_written": copied, "target_topic": parameters.target_topic}
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "topic_copy", *sys.argv[1:]]))
