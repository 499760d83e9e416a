"""Protobuf: `.proto` text or a base64 FileDescriptorProto in, one canonical `.proto` text stored.

Imports are references (the reference name is the import path); the well-known types (google/protobuf/…,
google/type/…) are built in. The schema is checked by building it in a DescriptorPool.

Compatibility follows Confluent's Protobuf rules: a message the writer has must still exist; a field's
number keeps its kind (scalar, message, enum) and its scalar type stays within a wire-compatible group
(int32/uint32/int64/uint64/bool, sint32/sint64, fixed32/sfixed32, fixed64/sfixed64, string/bytes, enum with
the varint group); required fields are neither added nor removed; a field may not move into an existing
oneof, nor several fields into a new one. Adding and removing optional fields is compatible.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import re
from collections.abc import Iterable
from functools import lru_cache

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError

from controlplane.schemas.formats.base import Incompatibility, InvalidSchema, ParsedSchema
from controlplane.schemas.formats.proto_text import FDP, FIELD, ProtoSyntaxError, parse_proto, print_proto

WELL_KNOWN_MODULES = (
    "google.protobuf.any_pb2",
    "google.protobuf.api_pb2",
    "google.protobuf.descriptor_pb2",
    "google.protobuf.duration_pb2",
    "google.protobuf.empty_pb2",
    "google.protobuf.field_mask_pb2",
    "google.protobuf.source_context_pb2",
    "google.protobuf.struct_pb2",
    "google.protobuf.timestamp_pb2",
    "google.protobuf.type_pb2",
    "google.protobuf.wrappers_pb2",
    "google.type.calendar_period_pb2",
    "google.type.color_pb2",
    "google.type.date_pb2",
    "google.type.datetime_pb2",
    "google.type.dayofweek_pb2",
    "google.type.expr_pb2",
    "google.type.fraction_pb2",
    "google.type.latlng_pb2",
    "google.type.money_pb2",
    "google.type.month_pb2",
    "google.type.postal_address_pb2",
    "google.type.quaternion_pb2",
    "google.type.timeofday_pb2",
)
_IMPORT = re.compile(r"""^\s*import\s+(?:public\s+|weak\s+)?["']([^"']+)["']""", re.MULTILINE)
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")
VARINT_GROUP = {FIELD.TYPE_INT32, FIELD.TYPE_UINT32, FIELD.TYPE_INT64, FIELD.TYPE_UINT64, FIELD.TYPE_BOOL}
COMPATIBLE_GROUPS = [
    VARINT_GROUP | {FIELD.TYPE_ENUM},
    {FIELD.TYPE_SINT32, FIELD.TYPE_SINT64},
    {FIELD.TYPE_FIXED32, FIELD.TYPE_SFIXED32},
    {FIELD.TYPE_FIXED64, FIELD.TYPE_SFIXED64},
    {FIELD.TYPE_STRING, FIELD.TYPE_BYTES},
]


@lru_cache(maxsize=1)
def well_known_files() -> dict[str, FDP]:
    files: dict[str, FDP] = {}
    for module_name in WELL_KNOWN_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # google.type comes with googleapis-common-protos
            continue
        file = FDP.FromString(module.DESCRIPTOR.serialized_pb)
        files[file.name] = file
    return files


def is_well_known(import_path: str) -> bool:
    return import_path in well_known_files()


class ProtoModel:
    def __init__(self, file: FDP) -> None:
        self.file = file

    def serialized(self) -> str:
        return base64.standard_b64encode(self.file.SerializeToString()).decode("ascii")

    def messages(self) -> dict[str, descriptor_pb2.DescriptorProto]:
        found: dict[str, descriptor_pb2.DescriptorProto] = {}

        def visit(messages: Iterable[descriptor_pb2.DescriptorProto], scope: str) -> None:
            for message in messages:
                name = f"{scope}.{message.name}" if scope else message.name
                found[name] = message  # map entries too: a map's value type is their field 2
                visit(message.nested_type, name)

        visit(self.file.message_type, self.file.package)
        return found


def _decode(text: str, dependencies: list[tuple[str, FDP]]) -> FDP:
    stripped = text.strip()
    if (
        stripped
        and _BASE64.fullmatch(stripped)
        and not re.search(r"\s(message|syntax|package)\s", f" {stripped} ")
    ):
        try:
            return FDP.FromString(base64.b64decode(stripped, validate=False))
        except (binascii.Error, DecodeError, ValueError) as error:
            raise InvalidSchema(f"Invalid schema: not a serialized FileDescriptorProto ({error})") from error
    try:
        return parse_proto(text, [file for _, file in dependencies] + list(well_known_files().values()))
    except ProtoSyntaxError as error:
        # An undefined type usually means a missing reference: say which import has none.
        known = {name for name, _ in dependencies} | set(well_known_files())
        for path in _IMPORT.findall(text):
            if path not in known:
                raise InvalidSchema(
                    f"Invalid schema: the import {path!r} is neither a reference nor a well-known type"
                ) from error
        raise InvalidSchema(f"Invalid schema: {error}") from error


MAIN_FILE_NAME = "__registry_schema__.proto"


def build_pool(file: FDP, dependencies: list[tuple[str, FDP]]) -> descriptor_pool.DescriptorPool:
    """A fresh pool holding the file as `MAIN_FILE_NAME` with its imports (named by their reference names)
    and the well-known types. Building it refuses undefined types and missing imports."""
    pool = descriptor_pool.DescriptorPool()
    available = dict(well_known_files())
    for name, dependency in dependencies:
        named = FDP()
        named.CopyFrom(dependency)
        named.name = name
        available[name] = named
    added: set[str] = set()

    def add(name: str, trail: tuple[str, ...]) -> None:
        if name in added:
            return
        if name not in available:
            raise InvalidSchema(
                f"Invalid schema: the import {name!r} is neither a reference nor a well-known type"
            )
        for import_path in available[name].dependency:
            if import_path not in trail:
                add(import_path, (*trail, import_path))
        pool.Add(available[name])
        added.add(name)

    main = FDP()
    main.CopyFrom(file)
    main.name = MAIN_FILE_NAME
    available[main.name] = main
    try:
        add(main.name, (main.name,))
        pool.FindFileByName(main.name)
    except InvalidSchema:
        raise
    except (TypeError, KeyError, ValueError) as error:
        raise InvalidSchema(f"Invalid schema: {error}") from error
    return pool


def parse(text: str, dependencies: Iterable[tuple[str, ParsedSchema]]) -> ParsedSchema:
    files = [(name, dependency.model.file) for name, dependency in dependencies]
    decoded = _decode(text, files)
    decoded.ClearField("name")
    decoded.ClearField("source_code_info")
    build_pool(decoded, files)
    canonical = print_proto(decoded)
    try:
        stored = parse_proto(canonical, [file for _, file in files] + list(well_known_files().values()))
    except ProtoSyntaxError as error:  # the printer and the parser disagree: refuse rather than store it
        raise InvalidSchema(f"Invalid schema: cannot store it in canonical form ({error})") from error
    return ParsedSchema("PROTOBUF", canonical, canonical, ProtoModel(stored))


def _kind(field: descriptor_pb2.FieldDescriptorProto) -> str:
    if field.type == FIELD.TYPE_MESSAGE:
        return "message"
    return "enum" if field.type == FIELD.TYPE_ENUM else "scalar"


def _type_label(field: descriptor_pb2.FieldDescriptorProto) -> str:
    if field.type_name:
        return field.type_name.lstrip(".")
    return FIELD.Type.Name(field.type)[5:].lower()


def _compatible_types(
    reader: descriptor_pb2.FieldDescriptorProto, writer: descriptor_pb2.FieldDescriptorProto
) -> bool:
    if reader.type == writer.type:
        return True
    return any(reader.type in group and writer.type in group for group in COMPATIBLE_GROUPS)


def _real_oneof(field: descriptor_pb2.FieldDescriptorProto) -> int | None:
    return field.oneof_index if field.HasField("oneof_index") and not field.proto3_optional else None


def check_compatibility(reader: ParsedSchema, writer: ParsedSchema) -> list[Incompatibility]:
    problems: list[Incompatibility] = []
    reader_file, writer_file = reader.model.file, writer.model.file
    if reader_file.package != writer_file.package:
        problems.append(
            Incompatibility(
                "PACKAGE_CHANGED",
                "#/",
                f"The package changed from '{writer_file.package}' to '{reader_file.package}'",
            )
        )
    reader_messages = reader.model.messages()
    for name, writer_message in writer.model.messages().items():
        reader_message = reader_messages.get(name)
        if reader_message is None:
            problems.append(
                Incompatibility("MESSAGE_REMOVED", f"#/{name}", f"The message '{name}' was removed")
            )
            continue
        problems.extend(_check_message(name, reader_message, writer_message))
    return problems


def _check_message(
    name: str, reader: descriptor_pb2.DescriptorProto, writer: descriptor_pb2.DescriptorProto
) -> list[Incompatibility]:
    problems: list[Incompatibility] = []
    reader_fields = {field.number: field for field in reader.field}
    writer_fields = {field.number: field for field in writer.field}
    for number, writer_field in writer_fields.items():
        path = f"#/{name}/{number}"
        reader_field = reader_fields.get(number)
        if reader_field is None:
            if writer_field.label == FIELD.LABEL_REQUIRED:
                problems.append(
                    Incompatibility(
                        "REQUIRED_FIELD_REMOVED",
                        path,
                        f"The required field '{writer_field.name}' of '{name}' was removed",
                    )
                )
            elif _real_oneof(writer_field) is not None:
                problems.append(
                    Incompatibility(
                        "ONEOF_FIELD_REMOVED",
                        path,
                        f"The field '{writer_field.name}' was removed from oneof "
                        f"'{writer.oneof_decl[writer_field.oneof_index].name}' of '{name}'",
                    )
                )
            continue
        if (_kind(reader_field) == "message") != (_kind(writer_field) == "message"):
            problems.append(
                Incompatibility(
                    "FIELD_KIND_CHANGED",
                    path,
                    f"The field number {number} of '{name}' changed from {_kind(writer_field)} "
                    f"'{_type_label(writer_field)}' to {_kind(reader_field)} '{_type_label(reader_field)}'",
                )
            )
        elif _kind(reader_field) == "message" and reader_field.type_name != writer_field.type_name:
            problems.append(
                Incompatibility(
                    "FIELD_NAMED_TYPE_CHANGED",
                    path,
                    f"The field number {number} of '{name}' changed type from '{_type_label(writer_field)}' to "
                    f"'{_type_label(reader_field)}'",
                )
            )
        elif not _compatible_types(reader_field, writer_field):
            problems.append(
                Incompatibility(
                    "FIELD_SCALAR_KIND_CHANGED",
                    path,
                    f"The field number {number} of '{name}' changed from '{_type_label(writer_field)}' to "
                    f"'{_type_label(reader_field)}', which is not wire-compatible",
                )
            )
        if (reader_field.label == FIELD.LABEL_REPEATED) != (writer_field.label == FIELD.LABEL_REPEATED):
            problems.append(
                Incompatibility(
                    "FIELD_LABEL_CHANGED",
                    path,
                    f"The field number {number} of '{name}' changed between repeated and singular",
                )
            )
        if reader_field.label == FIELD.LABEL_REQUIRED and writer_field.label != FIELD.LABEL_REQUIRED:
            problems.append(
                Incompatibility(
                    "REQUIRED_FIELD_ADDED",
                    path,
                    f"The field '{reader_field.name}' of '{name}' became required",
                )
            )
        reader_oneof, writer_oneof = _real_oneof(reader_field), _real_oneof(writer_field)
        if reader_oneof is not None and writer_oneof is None:
            members = [field for field in reader.field if _real_oneof(field) == reader_oneof]
            oneof_name = reader.oneof_decl[reader_oneof].name
            existed = any(
                _real_oneof(writer_fields[field.number]) is not None
                for field in members
                if field.number in writer_fields
            )
            moved = [
                field
                for field in members
                if field.number in writer_fields and _real_oneof(writer_fields[field.number]) is None
            ]
            if existed:
                problems.append(
                    Incompatibility(
                        "FIELD_MOVED_TO_EXISTING_ONEOF",
                        path,
                        f"The field '{reader_field.name}' of '{name}' moved into the existing oneof '{oneof_name}'",
                    )
                )
            elif len(moved) > 1 and moved[0].number == number:
                problems.append(
                    Incompatibility(
                        "MULTIPLE_FIELDS_MOVED_TO_ONEOF",
                        path,
                        f"The fields {[field.name for field in moved]} of '{name}' moved into the new oneof "
                        f"'{oneof_name}'",
                    )
                )
    for number, reader_field in reader_fields.items():
        if number not in writer_fields and reader_field.label == FIELD.LABEL_REQUIRED:
            problems.append(
                Incompatibility(
                    "REQUIRED_FIELD_ADDED",
                    f"#/{name}/{number}",
                    f"The required field '{reader_field.name}' was added to '{name}'",
                )
            )
    return problems
