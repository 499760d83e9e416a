"""Planning for the JVM reader of the `topics` source (jvm/src/streamhub/spark/TopicPlanner.java).

The JVM driver keeps one `python -m controlplane.spark.jvm_planning` process and writes it one JSON request per
line on its stdin (the read's options, which may carry credentials, never go in argv); it answers one line per
request on its stdout, and ends when its stdin closes:

    request: {"options": {...}, "schema": "<StructType JSON>", "filters": [{"op", "column", "values": [...]}]}
    answer:  {"ranges": [[topic, partition, start, end]], "settings": {...}, "fail_on_data_loss", "poll_timeout_ms"}
             or {"error": {"type": "InvalidOptions" | "TopicReadError" | another exception's name, "message": ...}}

The same code plans both readers (options.py, planning.py, pushdown.py, projection.py), so a read plans the same
ranges whichever reader runs it.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from typing import Any

from pyspark.sql.datasource import (
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StructType

from controlplane.spark.connection import connection_settings
from controlplane.spark.options import InvalidOptions, parse_read_options
from controlplane.spark.planning import plan_batch
from controlplane.spark.projection import projection_for
from controlplane.spark.pushdown import push_filters

_COMPARISONS = {
    "EqualTo": EqualTo,
    "GreaterThan": GreaterThan,
    "GreaterThanOrEqual": GreaterThanOrEqual,
    "LessThan": LessThan,
    "LessThanOrEqual": LessThanOrEqual,
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _value(encoded: dict[str, Any]) -> object:
    """A filter value as PySpark hands it to Python sources: ints, and instants as zoned datetimes."""
    if "int" in encoded:
        return int(encoded["int"])
    if "timestamp_us" in encoded:
        return _EPOCH + datetime.timedelta(microseconds=int(encoded["timestamp_us"]))
    return encoded.get("other")


def to_filter(encoded: dict[str, Any]) -> Filter | None:
    """The PySpark filter a JVM filter stands for, or None for one planning does not use."""
    column = (str(encoded["column"]),)
    values = [_value(v) for v in encoded.get("values", [])]
    if encoded["op"] == "In":
        return In(column, tuple(values))
    comparison = _COMPARISONS.get(encoded["op"])
    if comparison is None or len(values) != 1:
        return None
    return comparison(column, values[0])


def plan(request: dict[str, Any]) -> dict[str, Any]:
    options = parse_read_options(request["options"])
    schema = StructType.fromJson(json.loads(request["schema"]))
    projection = projection_for(schema, options.include_headers)
    settings = connection_settings(options.kafka_config)
    if settings is None:
        # TopicsProvider.unsupportedReason() sends such reads to the Python source: the two disagree.
        raise InvalidOptions(
            "the JVM reader cannot honour these connection settings; set "
            "spark.streamhub.topics.jvmReader=false"
        )
    filters = [f for f in map(to_filter, request.get("filters", [])) if f is not None]
    range_filter, _ = push_filters(filters, projection.source_column)
    ranges = plan_batch(options, range_filter)
    return {
        "ranges": [[r.topic, r.partition, r.start, r.end] for r in ranges],
        "settings": dataclasses.asdict(settings),
        "fail_on_data_loss": options.fail_on_data_loss,
        "poll_timeout_ms": options.poll_timeout_ms,
    }


def answer(line: str) -> dict[str, Any]:
    try:
        return plan(json.loads(line))
    except Exception as error:  # every failure is this read's error; the process serves the next one
        return {"error": {"type": type(error).__name__, "message": str(error)}}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(answer(line)) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
