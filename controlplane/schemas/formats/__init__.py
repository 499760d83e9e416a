"""Schema formats behind one interface: `parse_schema` and `find_incompatibilities`.

`dependencies` are the parsed schemas a schema references, as (reference name, parsed schema), with the
references of references first.
"""

from __future__ import annotations

from collections.abc import Sequence

from controlplane.schemas.formats import avro, json_schema, protobuf
from controlplane.schemas.formats.base import Incompatibility, InvalidSchema, ParsedSchema

__all__ = ["Incompatibility", "InvalidSchema", "ParsedSchema", "find_incompatibilities", "parse_schema"]


def parse_schema(
    schema_type: str, text: str, dependencies: Sequence[tuple[str, ParsedSchema]] = ()
) -> ParsedSchema:
    if schema_type == "AVRO":
        return avro.parse(text, [parsed for _, parsed in dependencies])
    if schema_type == "JSON":
        return json_schema.parse(text, dependencies)
    if schema_type == "PROTOBUF":
        return protobuf.parse(text, dependencies)
    raise InvalidSchema(f"Invalid schema type {schema_type!r}")


def find_incompatibilities(reader: ParsedSchema, writer: ParsedSchema) -> list[Incompatibility]:
    """Why the reader cannot read data written with the writer's schema; empty when it can."""
    if reader.schema_type != writer.schema_type:
        return [
            Incompatibility(
                "TYPE_MISMATCH",
                "/",
                f"The schema type changed from {writer.schema_type} to {reader.schema_type}",
            )
        ]
    if reader.schema_type == "AVRO":
        return avro.check_compatibility(reader, writer)
    if reader.schema_type == "JSON":
        return json_schema.check_compatibility(reader, writer)
    return protobuf.check_compatibility(reader, writer)
