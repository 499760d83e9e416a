"""JSON Schema: the schema itself is validated against its draft's meta-schema with `jsonschema`.

Compatibility asks whether every document the writer's schema accepts is accepted by the reader's, the way
Confluent's rules do: types may widen (integer → number) but not narrow; an open content model (extra
properties allowed) may not gain a property schema and a closed one may not lose one; constraints may be
relaxed but not tightened (maxLength, maximum, minItems, enum, pattern…); required properties may not be added.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from controlplane.schemas.formats.base import Incompatibility, InvalidSchema, ParsedSchema

# Upper bounds: the reader may raise them, never lower them. Lower bounds the other way round.
UPPER_BOUNDS = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
LOWER_BOUNDS = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")


class JsonModel:
    def __init__(self, document: Any, dependencies: dict[str, Any]) -> None:
        self.document = document
        # Referenced documents by the reference name a `$ref` uses.
        self.dependencies = dependencies

    def resolve(self, node: Any) -> Any:
        """Follow `$ref`s to local definitions and to referenced schemas; unknown ones stay as they are."""
        for _ in range(32):
            if not isinstance(node, dict) or "$ref" not in node:
                return node
            target, _, pointer = node["$ref"].partition("#")
            document = self.document if not target else self.dependencies.get(target)
            if document is None:
                return node
            resolved = _follow_pointer(document, pointer)
            if resolved is None:
                return node
            node = resolved
        return node


def _follow_pointer(document: Any, pointer: str) -> Any:
    node = document
    for part in filter(None, pointer.split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def parse(text: str, dependencies: Iterable[tuple[str, ParsedSchema]]) -> ParsedSchema:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise InvalidSchema(f"Invalid schema: not JSON ({error})") from error
    if not isinstance(document, dict | bool):
        raise InvalidSchema("Invalid schema: a JSON Schema is an object or a boolean")
    validator = jsonschema.validators.validator_for(document, default=jsonschema.Draft7Validator)
    try:
        validator.check_schema(document)
    except SchemaError as error:
        where = "/".join(str(part) for part in error.path) or "(root)"
        raise InvalidSchema(f"Invalid schema: {error.message} at {where}") from error
    canonical = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    normalized = json.dumps(document, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    referenced = {name: dependency.model.document for name, dependency in dependencies}
    return ParsedSchema("JSON", canonical, normalized, JsonModel(document, referenced))


def _types(node: Any) -> set[str] | None:
    """The JSON types a schema node allows, or None for any."""
    if node is True or node == {}:
        return None
    if node is False:
        return set()
    declared = node.get("type")
    if declared is None:
        if "enum" in node:
            return {_json_type(value) for value in node["enum"]}
        if "const" in node:
            return {_json_type(node["const"])}
        if "properties" in node:
            return {"object"}
        if "items" in node:
            return {"array"}
        return None
    types = {declared} if isinstance(declared, str) else set(declared)
    if "number" in types:
        types.add("integer")
    return types


def _json_type(value: Any) -> str:
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
    return "array" if isinstance(value, list) else "object"


def _is_open(node: dict) -> bool:
    return node.get("additionalProperties", True) is not False


class _Checker:
    def __init__(self, reader: JsonModel, writer: JsonModel) -> None:
        self.reader = reader
        self.writer = writer
        self.problems: list[Incompatibility] = []
        self.depth = 0

    def fail(self, error_type: str, path: str, description: str) -> None:
        self.problems.append(Incompatibility(error_type, path or "#/", description))

    def accepts(self, reader: Any, writer: Any) -> bool:
        probe = _Checker(self.reader, self.writer)
        probe.depth = self.depth
        probe.check(reader, writer, "#")
        return not probe.problems

    def check(self, reader: Any, writer: Any, path: str) -> None:
        self.depth += 1
        try:
            if self.depth < 64:  # recursive definitions: compare a bounded depth
                self._check(self.reader.resolve(reader), self.writer.resolve(writer), path)
        finally:
            self.depth -= 1

    def _check(self, reader: Any, writer: Any, path: str) -> None:
        if reader is True or reader == {} or writer is False:
            return
        if reader is False:
            self.fail("SCHEMA_NARROWED", path, f"The reader at '{path}' accepts nothing, the writer does")
            return
        if writer is True:
            writer = {}
        if not isinstance(reader, dict) or not isinstance(writer, dict):
            return
        for keyword in ("anyOf", "oneOf"):
            if keyword in reader or keyword in writer:
                self.check_combined(keyword, reader, writer, path)
                return
        reader_types, writer_types = _types(reader), _types(writer)
        if reader_types is not None:
            if writer_types is None:
                self.fail(
                    "TYPE_NARROWED",
                    f"{path}/type",
                    f"The reader at '{path}' allows only {sorted(reader_types)}, the writer any type",
                )
                return
            lost = writer_types - reader_types
            if lost:
                self.fail(
                    "TYPE_NARROWED" if reader_types & writer_types else "TYPE_CHANGED",
                    f"{path}/type",
                    f"The writer at '{path}' allows {sorted(lost)}, which the reader's type "
                    f"{sorted(reader_types)} does not",
                )
                return
        self.check_constraints(reader, writer, path)
        if "enum" in reader:
            missing = [value for value in writer.get("enum", []) if value not in reader["enum"]]
            if "enum" not in writer:
                self.fail("ENUM_ARRAY_NARROWED", f"{path}/enum", f"The reader at '{path}' adds an enum")
            elif missing:
                self.fail(
                    "ENUM_ARRAY_NARROWED",
                    f"{path}/enum",
                    f"The reader's enum at '{path}' lacks the writer's values {missing}",
                )
        if "const" in reader and reader.get("const") != writer.get("const"):
            self.fail(
                "CONST_CHANGED", f"{path}/const", f"The value required at '{path}' changed or was added"
            )
        if reader.get("pattern") is not None and reader.get("pattern") != writer.get("pattern"):
            self.fail(
                "PATTERN_ADDED" if "pattern" not in writer else "PATTERN_CHANGED",
                f"{path}/pattern",
                f"The reader's pattern at '{path}' is {reader['pattern']!r}, the writer's "
                f"{writer.get('pattern')!r}",
            )
        if (writer_types is None or "object" in writer_types) and (
            reader_types is None or "object" in reader_types
        ):
            self.check_object(reader, writer, path)
        if (writer_types is None or "array" in writer_types) and "items" in reader:
            self.check(reader["items"], writer.get("items", {}), f"{path}/items")

    def check_constraints(self, reader: dict, writer: dict, path: str) -> None:
        for keyword in UPPER_BOUNDS:
            if keyword in reader and (keyword not in writer or reader[keyword] < writer[keyword]):
                self.fail(
                    f"{_snake(keyword)}_{'ADDED' if keyword not in writer else 'DECREASED'}",
                    f"{path}/{keyword}",
                    f"The reader's {keyword} at '{path}' is {reader[keyword]}, the writer's "
                    f"{writer.get(keyword, 'unbounded')}",
                )
        for keyword in LOWER_BOUNDS:
            if keyword in reader and (keyword not in writer or reader[keyword] > writer[keyword]):
                self.fail(
                    f"{_snake(keyword)}_{'ADDED' if keyword not in writer else 'INCREASED'}",
                    f"{path}/{keyword}",
                    f"The reader's {keyword} at '{path}' is {reader[keyword]}, the writer's "
                    f"{writer.get(keyword, 'unbounded')}",
                )
        if "multipleOf" in reader and reader["multipleOf"] != writer.get("multipleOf"):
            writer_step = writer.get("multipleOf")
            if writer_step is None or writer_step % reader["multipleOf"] != 0:
                self.fail(
                    "MULTIPLE_OF_CHANGED",
                    f"{path}/multipleOf",
                    f"The reader at '{path}' needs multiples of {reader['multipleOf']}, the writer "
                    f"{writer_step or 'any number'}",
                )

    def check_object(self, reader: dict, writer: dict, path: str) -> None:
        reader_properties = reader.get("properties", {})
        writer_properties = writer.get("properties", {})
        for name in sorted(set(reader.get("required", [])) - set(writer.get("required", []))):
            self.fail(
                "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
                if name not in writer_properties
                else "REQUIRED_ATTRIBUTE_ADDED",
                f"{path}/required",
                f"The reader requires the property '{name}' at '{path}', which the writer does not require",
            )
        for name, reader_property in reader_properties.items():
            property_path = f"{path}/properties/{name}"
            if name in writer_properties:
                self.check(reader_property, writer_properties[name], property_path)
            elif _is_open(writer):
                extra = writer.get("additionalProperties", True)
                if not self.accepts(reader_property, extra):
                    self.fail(
                        "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
                        property_path,
                        f"The reader adds the property '{name}' at '{path}', but the writer's open content "
                        "model may already carry it with any value",
                    )
        for name, writer_property in writer_properties.items():
            if name in reader_properties:
                continue
            property_path = f"{path}/properties/{name}"
            if not _is_open(reader):
                self.fail(
                    "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                    property_path,
                    f"The writer's property '{name}' at '{path}' is gone from the reader, whose content "
                    "model is closed",
                )
            elif isinstance(reader.get("additionalProperties"), dict) and not self.accepts(
                reader["additionalProperties"], writer_property
            ):
                self.fail(
                    "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                    property_path,
                    f"The writer's property '{name}' at '{path}' is not accepted by the reader's "
                    "additionalProperties",
                )
        if not _is_open(reader) and _is_open(writer):
            self.fail(
                "ADDITIONAL_PROPERTIES_REMOVED",
                f"{path}/additionalProperties",
                f"The reader closes the content model at '{path}' that the writer left open",
            )

    def check_combined(self, keyword: str, reader: dict, writer: dict, path: str) -> None:
        reader_branches = reader.get("anyOf") or reader.get("oneOf") or [reader]
        writer_branches = writer.get("anyOf") or writer.get("oneOf") or [writer]
        for index, branch in enumerate(writer_branches):
            if not any(self.accepts(candidate, branch) for candidate in reader_branches):
                self.fail(
                    "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
                    f"{path}/{keyword}/{index}",
                    f"The writer's alternative {index} at '{path}' is accepted by no alternative of the reader",
                )


def _snake(keyword: str) -> str:
    return "".join(f"_{char}" if char.isupper() else char for char in keyword).upper()


def check_compatibility(reader: ParsedSchema, writer: ParsedSchema) -> list[Incompatibility]:
    checker = _Checker(reader.model, writer.model)
    checker.check(reader.model.document, writer.model.document, "#")
    return checker.problems
