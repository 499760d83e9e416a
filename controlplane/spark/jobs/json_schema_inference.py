"""JSON schema inference: which fields the values have, how often, with which types (and conflicts), and a
suggested JSON Schema and Avro schema."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from controlplane.spark.jobs.runtime import Chart, JobContext, Result, Table, TopicRange

PARSE_ERROR = "$parse_error"


@dataclass(frozen=True)
class Parameters:
    source: TopicRange
    max_depth: int = 5


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def field_types(document: Any, prefix: str = "", depth: int = 5) -> Iterator[tuple[str, str]]:
    """(dotted path, JSON type) for every field of an object, nested objects included up to `depth`."""
    if not isinstance(document, dict):
        return
    for name, value in document.items():
        path = f"{prefix}{name}"
        yield path, json_type(value)
        if isinstance(value, dict) and depth > 1:
            yield from field_types(value, path + ".", depth - 1)


def value_fields(value: bytes | None, max_depth: int) -> list[tuple[tuple[str, str], int]]:
    try:
        document = json.loads(value) if value is not None else None
    except (ValueError, UnicodeDecodeError):
        return [((PARSE_ERROR, "error"), 1)]
    if not isinstance(document, dict):
        return [(("$", json_type(document)), 1)]
    return [(pair, 1) for pair in field_types(document, depth=max_depth)]


def _object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "required": []}


def suggest_json_schema(fields: dict[str, dict[str, int]], documents: int) -> dict[str, Any]:
    root = _object_schema()
    for path in sorted(fields):  # parents sort before their children
        node = root
        *parents, name = path.split(".")
        for parent in parents:
            node = node["properties"].setdefault(parent, _object_schema())
            node.setdefault("properties", {})
            node.setdefault("required", [])
        types = sorted(t for t in fields[path] if t != "null")
        schema: dict[str, Any] = _object_schema() if types == ["object"] else {}
        if "null" in fields[path]:
            types.append("null")
        schema["type"] = types[0] if len(types) == 1 else types
        node["properties"][name] = schema
        if sum(fields[path].values()) == documents and not parents:
            node["required"].append(name)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **root}


_AVRO = {"string": "string", "integer": "long", "number": "double", "boolean": "boolean", "array": "bytes"}


def suggest_avro(fields: dict[str, dict[str, int]], documents: int, name: str = "Value") -> dict[str, Any]:
    def record(prefix: str, record_name: str) -> dict[str, Any]:
        members = []
        for path in sorted(fields):
            if not path.startswith(prefix) or "." in path[len(prefix) :]:
                continue
            field_name = path[len(prefix) :]
            types = [t for t in fields[path] if t != "null"]
            if "object" in types:
                avro_type: Any = record(path + ".", field_name.capitalize())
            else:
                # A conflict (e.g. integer and string) widens to string, the type every value can be written as.
                avro_type = _AVRO.get(types[0], "string") if len(types) == 1 else "string"
            optional = sum(fields[path].values()) < documents or "null" in fields[path]
            member: dict[str, Any] = {
                "name": field_name,
                "type": ["null", avro_type] if optional else avro_type,
            }
            if optional:
                member["default"] = None
            members.append(member)
        return {"type": "record", "name": record_name, "fields": members}

    return record("", name)


def run(spark: Any, parameters: Parameters, context: JobContext) -> Result:
    frame = context.read(spark, parameters.source).select("value")
    depth = parameters.max_depth
    counted = (
        frame.rdd.flatMap(lambda row: value_fields(row.value, depth))
        .reduceByKey(lambda a, b: a + b)
        .collect()
    )
    total = frame.count()
    fields: dict[str, dict[str, int]] = {}
    for (path, kind), count in counted:
        fields.setdefault(path, {})[kind] = count
    parse_errors = fields.pop(PARSE_ERROR, {}).get("error", 0)
    non_objects = sum(fields.pop("$", {}).values())
    documents = total - parse_errors - non_objects
    rows = [
        [
            path,
            sum(types.values()),
            round(sum(types.values()) / documents, 4) if documents else 0.0,
            ",".join(sorted(types)),
            len([t for t in types if t != "null"]) > 1,
        ]
        for path, types in sorted(fields.items())
    ]
    return Result(
        tables={"fields": Table(["field", "present", "presence", "types", "type_conflict"], rows)},
        charts={"presence": Chart("bar", [r[0] for r in rows], {"presence": [r[2] for r in rows]}, "field")},
        documents={
            "json_schema": suggest_json_schema(fields, documents),
            "avro_schema": suggest_avro(fields, documents),
        },
        metrics={
            "records_read": total,
            "objects": documents,
            "parse_errors": parse_errors,
            "non_objects": non_objects,
        },
    )


if __name__ == "__main__":
    from controlplane.spark.submit import main

    sys.exit(main(["--job", "json_schema_inference", *sys.argv[1:]]))
