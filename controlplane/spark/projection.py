"""Which of the topic source's columns a read materializes and ships to Spark.

By default all of them, as Spark's Kafka source. A user-supplied schema names a subset, the way Spark's own
sources accept one:

    spark.read.format("topics").schema("partition INT, offset BIGINT")

PySpark's Python data sources get no column pruning from Spark, and moving every column from Python into the
JVM is what a read costs most (bench/spark_read.py), so a query that needs two columns can ask for two.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.types import StructType

from controlplane.spark.options import InvalidOptions

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
# Spark reads TimestampType from Arrow as microseconds in UTC.
TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")

# name: (Spark's simple type string, Arrow type), in the order of Spark's Kafka source.
COLUMNS: dict[str, tuple[str, pa.DataType]] = {
    "key": ("binary", pa.binary()),
    "value": ("binary", pa.binary()),
    "topic": ("string", pa.string()),
    "partition": ("int", pa.int32()),
    "offset": ("bigint", pa.int64()),
    "timestamp": ("timestamp", TIMESTAMP_TYPE),
    "timestampType": ("int", pa.int32()),
    "headers": ("array<struct<key:string,value:binary>>", HEADER_TYPE),
}
_BY_LOWER_NAME = {name.lower(): name for name in COLUMNS}
# Columns that need nothing from inside a record: a batch wholly in the range is counted, not decoded.
_BATCH_LEVEL = {"topic", "partition"}


@dataclass(frozen=True)
class Projection:
    """The source columns a read produces, in output order, and the Arrow schema of its batches (the names as
    the user spelled them)."""

    columns: tuple[str, ...]
    schema: pa.Schema

    @property
    def include_headers(self) -> bool:
        return "headers" in self.columns

    @property
    def counts_only(self) -> bool:
        """True when no column depends on a record's contents or offset."""
        return set(self.columns) <= _BATCH_LEVEL

    def wants(self, column: str) -> bool:
        return column in self.columns

    def source_column(self, name: str) -> str | None:
        """The source column behind a name in this projection's schema (Spark's names are case-insensitive)."""
        column = _BY_LOWER_NAME.get(name.lower())
        return column if column in self.columns else None


def full_projection(include_headers: bool) -> Projection:
    names = [name for name in COLUMNS if include_headers or name != "headers"]
    return Projection(tuple(names), pa.schema([(name, COLUMNS[name][1]) for name in names]))


def projection_for(schema: StructType | None, include_headers: bool) -> Projection:
    """The projection a schema handed to DataSource.reader asks for: every field must be one of the source's
    columns, with its type. Asking for `headers` reads them as includeHeaders=true would."""
    if schema is None:
        return full_projection(include_headers)
    if not schema.fields:
        raise InvalidOptions("the schema names no column; the topics source has " + _column_list())
    columns: list[str] = []
    fields: list[pa.Field] = []
    for field in schema.fields:
        column = _BY_LOWER_NAME.get(field.name.lower())
        if column is None:
            raise InvalidOptions(
                f"column '{field.name}' is not a column of the topics source ({_column_list()})"
            )
        spark_type, arrow_type = COLUMNS[column]
        if field.dataType.simpleString() != spark_type:
            raise InvalidOptions(
                f"column '{field.name}' must have type {spark_type}, not {field.dataType.simpleString()}"
            )
        if column in columns:
            raise InvalidOptions(f"column '{field.name}' is named twice in the schema")
        columns.append(column)
        fields.append(pa.field(field.name, arrow_type, nullable=field.nullable))
    return Projection(tuple(columns), pa.schema(fields))


def _column_list() -> str:
    return ", ".join(f"{name} {spark_type}" for name, (spark_type, _) in COLUMNS.items())
