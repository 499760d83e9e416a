"""Avro: parsing with fastavro, canonical forms, and the Avro specification's schema resolution rules.

A reader can read data written with a writer schema when, recursively: primitive types match or the writer's
promotes to the reader's (int→long/float/double, long→float/double, float→double, string↔bytes); records
have the same name (or a reader alias) and every reader field is in the writer or has a default; enums have
the same name and the writer's symbols are the reader's or the reader has a default symbol; fixed types
agree on name and size; and every branch a writer union can produce is readable by the reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import fastavro
from fastavro.schema import SchemaParseException, UnknownType

from controlplane.schemas.formats.base import Incompatibility, InvalidSchema, ParsedSchema

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}


class AvroModel:
    """A parsed schema with its named types (its own and those of its references), by full name."""

    def __init__(self, schema: Any, named: dict[str, Any]) -> None:
        self.schema = schema
        self.named = named

    def resolve(self, node: Any) -> Any:
        if isinstance(node, str) and node not in PRIMITIVES:
            return self.named[node]
        if isinstance(node, dict) and node.get("type") in PRIMITIVES and len(node) == 1:
            return node["type"]
        return node


def _strip_internal(node: Any) -> Any:
    """fastavro marks parsed schemas with `__…` keys; they are not part of the schema."""
    if isinstance(node, dict):
        return {key: _strip_internal(value) for key, value in node.items() if not key.startswith("__")}
    if isinstance(node, list):
        return [_strip_internal(item) for item in node]
    return node


def _compact(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


def parse(text: str, dependencies: Iterable[ParsedSchema]) -> ParsedSchema:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise InvalidSchema(f"Invalid schema: not JSON ({error})") from error
    named: dict[str, Any] = {}
    for dependency in dependencies:
        named.update(dependency.model.named)
    try:
        parsed = fastavro.parse_schema(document, named_schemas=named, _write_hint=False)
    except UnknownType as error:
        raise InvalidSchema(
            f"Invalid schema: unknown type {error.name!r} (is a reference missing?)"
        ) from error
    except (SchemaParseException, TypeError, ValueError, KeyError, AttributeError) as error:
        raise InvalidSchema(f"Invalid schema: {error}") from error
    named = {name: _strip_internal(schema) for name, schema in named.items()}
    parsed = _strip_internal(parsed)
    return ParsedSchema(
        schema_type="AVRO",
        canonical=_compact(document),
        normalized=_compact(parsed),
        model=AvroModel(parsed, named),
    )


def _type_name(node: Any) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, list):
        return "union"
    return str(node.get("type"))


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _names_match(reader: dict, writer: dict) -> bool:
    aliases = {_short(alias) for alias in reader.get("aliases", [])}
    return _short(reader["name"]) == _short(writer["name"]) or _short(writer["name"]) in aliases


class _Checker:
    def __init__(self, reader: AvroModel, writer: AvroModel) -> None:
        self.reader = reader
        self.writer = writer
        self.problems: list[Incompatibility] = []
        self.seen: set[tuple[str, str]] = set()

    def fail(self, error_type: str, path: str, description: str) -> None:
        self.problems.append(Incompatibility(error_type, path or "/", description))

    def readable(self, reader_node: Any, writer_node: Any) -> bool:
        """Whether the reader reads the writer, without recording anything (for union branch matching)."""
        probe = _Checker(self.reader, self.writer)
        probe.seen = set(self.seen)
        probe.check(reader_node, writer_node, "")
        return not probe.problems

    def check(self, reader_node: Any, writer_node: Any, path: str) -> None:
        reader_node = self.reader.resolve(reader_node)
        writer_node = self.writer.resolve(writer_node)
        if isinstance(writer_node, list):
            self.check_writer_union(reader_node, writer_node, path)
            return
        if isinstance(reader_node, list):
            if not any(self.readable(branch, writer_node) for branch in reader_node):
                self.fail(
                    "MISSING_UNION_BRANCH",
                    path,
                    f"The new schema's union at '{path or '/'}' has no branch that reads the old type "
                    f"'{_type_name(writer_node)}'",
                )
            return
        reader_type, writer_type = _type_name(reader_node), _type_name(writer_node)
        if reader_type != writer_type:
            if writer_type not in PROMOTIONS or reader_type not in PROMOTIONS[writer_type]:
                self.fail(
                    "TYPE_MISMATCH",
                    path,
                    f"The type at '{path or '/'}' is '{reader_type}' in the reader and '{writer_type}' in the "
                    "writer, and the writer's type cannot be promoted to the reader's",
                )
            return
        if reader_type == "record":
            self.check_record(reader_node, writer_node, path)
        elif reader_type == "enum":
            self.check_enum(reader_node, writer_node, path)
        elif reader_type == "fixed":
            self.check_fixed(reader_node, writer_node, path)
        elif reader_type == "array":
            self.check(reader_node["items"], writer_node["items"], f"{path}/items")
        elif reader_type == "map":
            self.check(reader_node["values"], writer_node["values"], f"{path}/values")

    def check_writer_union(self, reader_node: Any, writer_branches: list, path: str) -> None:
        for index, branch in enumerate(writer_branches):
            resolved = self.writer.resolve(branch)
            if isinstance(reader_node, list):
                if not any(self.readable(candidate, resolved) for candidate in reader_node):
                    self.fail(
                        "MISSING_UNION_BRANCH",
                        f"{path}/{index}",
                        f"The old union at '{path or '/'}' can hold '{_type_name(resolved)}', "
                        "which no branch of the new union reads",
                    )
            elif not self.readable(reader_node, resolved):
                self.fail(
                    "MISSING_UNION_BRANCH",
                    f"{path}/{index}",
                    f"The old union at '{path or '/'}' can hold '{_type_name(resolved)}', "
                    f"which the new type '{_type_name(reader_node)}' cannot read",
                )

    def check_record(self, reader: dict, writer: dict, path: str) -> None:
        if not _names_match(reader, writer):
            self.fail(
                "NAME_MISMATCH",
                f"{path}/name",
                f"The record is named '{reader['name']}' in the reader and '{writer['name']}' in the writer",
            )
            return
        key = (reader["name"], writer["name"])
        if key in self.seen:  # a recursive type already being compared
            return
        self.seen.add(key)
        writer_fields = {field["name"]: field for field in writer["fields"]}
        for index, field in enumerate(reader["fields"]):
            candidates = [field["name"], *field.get("aliases", [])]
            match = next((writer_fields[name] for name in candidates if name in writer_fields), None)
            field_path = f"{path}/fields/{index}"
            if match is None:
                if "default" not in field:
                    self.fail(
                        "READER_FIELD_MISSING_DEFAULT_VALUE",
                        field_path,
                        f"The field '{field['name']}' of record '{reader['name']}' is missing in the writer's "
                        "schema and has no default value in the reader's",
                    )
                continue
            self.check(field["type"], match["type"], f"{field_path}/type")

    def check_enum(self, reader: dict, writer: dict, path: str) -> None:
        if not _names_match(reader, writer):
            self.fail(
                "NAME_MISMATCH",
                f"{path}/name",
                f"The enum is named '{reader['name']}' in the reader and '{writer['name']}' in the writer",
            )
            return
        missing = [symbol for symbol in writer["symbols"] if symbol not in reader["symbols"]]
        if missing and "default" not in reader:
            self.fail(
                "MISSING_ENUM_SYMBOLS",
                f"{path}/symbols",
                f"The reader's enum '{reader['name']}' lacks the writer's symbols {missing} and has no default",
            )

    def check_fixed(self, reader: dict, writer: dict, path: str) -> None:
        if not _names_match(reader, writer):
            self.fail(
                "NAME_MISMATCH",
                f"{path}/name",
                f"The fixed type is named '{reader['name']}' in the reader and '{writer['name']}' in the writer",
            )
        elif reader["size"] != writer["size"]:
            self.fail(
                "FIXED_SIZE_MISMATCH",
                f"{path}/size",
                f"The fixed type '{reader['name']}' has size {reader['size']} in the reader and "
                f"{writer['size']} in the writer",
            )


def check_compatibility(reader: ParsedSchema, writer: ParsedSchema) -> list[Incompatibility]:
    """Every rule the reader breaks when it reads data written with the writer's schema."""
    checker = _Checker(reader.model, writer.model)
    checker.check(reader.model.schema, writer.model.schema, "")
    return checker.problems
