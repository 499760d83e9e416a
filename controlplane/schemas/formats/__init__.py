"""Schema formats behind one interface: `parse_schema` and `find_incompatibilities`.

`dependencies` are the parsed schemas a schema references, as (reference name, parsed schema), with the
references of references first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from controlplane.schemas.formats import avro, json_schema, protobuf
from controlplane.schemas.formats.base import Incompatibility, InvalidSchema, ParsedSchema
from controlplane.schemas.formats.proto_text import ProtoSyntaxError, tokenize

__all__ = ["Incompatibility", "InvalidSchema", "ParsedSchema", "find_incompatibilities", "parse_schema"]


# The parsers (fastavro, jsonschema, our .proto parser, protobuf's descriptor pool) and the compatibility
# rules recurse once or more per level: Avro arrays 500 deep or JSON Schema properties 200 deep exhausted
# Python's stack (a 500), and the descriptor pool gives up near 100 nested messages. A real schema nests a
# few dozen levels at most; anything deeper is refused as invalid (42201) before any parser runs.
MAX_JSON_SCHEMA_DEPTH = 128  # JSON levels of an Avro or JSON Schema text (an Avro record takes three)
MAX_PROTOBUF_DEPTH = 64  # nested braces: messages, enums, oneofs, option aggregates


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_BRACKETS = re.compile(r"[\[\]{}]")


def _json_depth(text: str) -> int:
    """The deepest level of arrays and objects in a JSON text, counted on the text (parsing it would recurse):
    strings, which may hold brackets, are cut out first."""
    depth = deepest = 0
    for bracket in _JSON_BRACKETS.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _refuse_deep_nesting(schema_type: str, text: str) -> None:
    if schema_type == "PROTOBUF":
        try:
            tokens = tokenize(text)
        except ProtoSyntaxError:
            return  # not a .proto text (a serialized descriptor, or garbage the parser will refuse)
        depth = deepest = 0
        for token in tokens:
            if token.kind == "symbol" and token.text in "{}":
                depth += 1 if token.text == "{" else -1
                deepest = max(deepest, depth)
        limit = MAX_PROTOBUF_DEPTH
    else:
        deepest, limit = _json_depth(text), MAX_JSON_SCHEMA_DEPTH
    if deepest > limit:
        raise InvalidSchema(f"Invalid schema: nested {deepest} levels deep; at most {limit} are accepted")


def parse_schema(
    schema_type: str, text: str, dependencies: Sequence[tuple[str, ParsedSchema]] = ()
) -> ParsedSchema:
    try:
        _refuse_deep_nesting(schema_type, text)
        return _parse(schema_type, text, dependencies)
    except RecursionError as error:  # a nesting the bounds above did not foresee: a refusal, never a 500
        raise InvalidSchema("Invalid schema: nested too deeply to parse") from error


def _parse(schema_type: str, text: str, dependencies: Sequence[tuple[str, ParsedSchema]]) -> ParsedSchema:
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
