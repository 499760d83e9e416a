"""The JVM reader's planner: filters from the JVM as PySpark's, answers and errors as JSON lines."""

import datetime
import json

from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, In
from pyspark.sql.types import BinaryType, StructField, StructType

from controlplane.spark import jvm_planning


def test_jvm_filters_become_the_filters_pyspark_gives_python_sources():
    assert jvm_planning.to_filter(
        {"op": "In", "column": "partition", "values": [{"int": 1}, {"int": 3}]}
    ) == In(("partition",), (1, 3))
    stamp = jvm_planning.to_filter(
        {
            "op": "GreaterThanOrEqual",
            "column": "timestamp",
            "values": [{"timestamp_us": 1_700_000_000_123_456}],
        }
    )
    assert stamp == GreaterThanOrEqual(
        ("timestamp",), datetime.datetime(2023, 11, 14, 22, 13, 20, 123_456, tzinfo=datetime.UTC)
    )
    assert jvm_planning.to_filter({"op": "EqualTo", "column": "offset", "values": [{"int": 7}]}) == EqualTo(
        ("offset",), 7
    )
    assert jvm_planning.to_filter({"op": "StringStartsWith", "column": "topic", "values": []}) is None


def test_bad_options_are_answered_as_an_error_naming_them():
    request = {"options": {"subscribe": "orders"}, "schema": "{}", "filters": []}
    answer = jvm_planning.answer(json.dumps(request))
    assert answer == {
        "error": {"type": "InvalidOptions", "message": "option 'kafka.bootstrap.servers' is required"}
    }


def test_settings_the_jvm_reader_cannot_honour_are_refused():
    schema = StructType([StructField("value", BinaryType())]).json()
    options = {"kafka.bootstrap.servers": "h:1", "subscribe": "t", "kafka.security.protocol": "SSL"}
    answer = jvm_planning.answer(json.dumps({"options": options, "schema": schema, "filters": []}))
    assert answer["error"]["type"] == "InvalidOptions"
    assert "cannot honour these connection settings" in answer["error"]["message"]
