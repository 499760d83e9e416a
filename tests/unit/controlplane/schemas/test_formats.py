"""Parsing and canonical forms of the three formats, and the reasons given for invalid schemas."""

import base64
import json

import pytest
from google.protobuf import descriptor_pb2

from controlplane.schemas.formats import InvalidSchema, parse_schema
from controlplane.schemas.formats.proto_text import parse_proto, print_proto

ORDER_PROTO = """
syntax = "proto3";
package acme.orders;
import "google/protobuf/timestamp.proto";
option java_package = "com.acme.orders";

// An order, with nested lines.
message Order {
  string id = 1;
  optional int64 qty = 2 [deprecated = true];
  map<string, Line> lines = 3;
  google.protobuf.Timestamp at = 4;
  Status status = 5;
  oneof payment { string card = 6; bytes token = 7; }
  message Line { repeated double prices = 1 [packed = true]; }
  reserved 8, 10 to 12;
  reserved "old_field";
}
enum Status { STATUS_UNKNOWN = 0; STATUS_DONE = 1; }
service Orders { rpc Place(Order) returns (Order); }
"""


def test_a_proto_file_sent_as_text_or_as_a_descriptor_is_stored_identically() -> None:
    from_text = parse_schema("PROTOBUF", ORDER_PROTO)
    from_descriptor = parse_schema("PROTOBUF", from_text.model.serialized())
    assert from_text.canonical == from_descriptor.canonical
    assert "map<string, .acme.orders.Order.Line> lines = 3;" in from_text.canonical
    assert "optional int64 qty = 2 [deprecated = true];" in from_text.canonical
    assert "oneof payment {" in from_text.canonical


def test_the_printed_form_parses_back_to_the_same_descriptor() -> None:
    from controlplane.schemas.formats.protobuf import well_known_files

    parsed = parse_proto(ORDER_PROTO, well_known_files().values())
    again = parse_proto(print_proto(parsed), well_known_files().values())
    assert again == parsed


def test_proto3_optional_fields_get_synthetic_oneofs_after_the_real_ones() -> None:
    file = parse_proto('syntax = "proto3"; message M { optional int32 a = 1; oneof o { string b = 2; } }', [])
    assert [oneof.name for oneof in file.message_type[0].oneof_decl] == ["o", "_a"]
    assert file.message_type[0].field[0].proto3_optional


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('syntax = "proto3"; message M { Missing m = 1; }', "'Missing'"),
        ('syntax = "proto3"; message M { string a = 1 }', "expected ';'"),
        ('syntax = "proto3"; message M { required string a = 1; }', "required fields are not allowed"),
        ('syntax = "proto3"; import "nowhere.proto"; message M { string a = 1; }', "nowhere.proto"),
        ('syntax = "proto3"; message M { string a = 0; }', "out of range"),
        ('syntax = "proto3"; message M { string a = 1; string b = 1; }', "1"),
        ('syntax = "proto3"; message M { option no_such_option = true; }', "no_such_option"),
        ('syntax = "proto3"; message M { string a = 1; } \x00', "unexpected character"),
    ],
)
def test_invalid_proto_files_are_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidSchema, match="Invalid schema") as raised:
        parse_schema("PROTOBUF", text)
    assert reason in str(raised.value)


def test_a_corrupt_descriptor_is_refused() -> None:
    with pytest.raises(InvalidSchema):
        parse_schema("PROTOBUF", base64.b64encode(b"\xff\xff\xff\xff").decode())


def test_a_descriptor_with_an_unresolved_type_is_refused() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="x.proto", syntax="proto3")
    message = file.message_type.add(name="M")
    message.field.add(name="a", number=1, type_name=".nope.Missing", type=11, label=1)
    with pytest.raises(InvalidSchema):
        parse_schema("PROTOBUF", base64.b64encode(file.SerializeToString()).decode())


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]}', "Nope"),
        ('{"type": "enum", "name": "E", "symbols": ["A", "A"]}', "unique"),
        ("{not json", "not JSON"),
        ('{"type": "fixed", "name": "F"}', "size"),
    ],
)
def test_invalid_avro_is_refused_with_the_parser_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidSchema) as raised:
        parse_schema("AVRO", text)
    assert reason in str(raised.value)


def test_avro_canonical_form_is_compact_and_normalized_form_fully_qualifies_names() -> None:
    parsed = parse_schema(
        "AVRO",
        json.dumps(
            {"type": "record", "name": "R", "namespace": "a.b", "fields": [{"name": "x", "type": "int"}]},
            indent=2,
        ),
    )
    assert (
        parsed.canonical
        == '{"type":"record","name":"R","namespace":"a.b","fields":[{"name":"x","type":"int"}]}'
    )
    assert '"name":"a.b.R"' in parsed.normalized


def test_named_avro_types_come_from_references() -> None:
    money = parse_schema("AVRO", '{"type": "record", "name": "Money", "namespace": "m", "fields": []}')
    invoice = parse_schema(
        "AVRO",
        '{"type": "record", "name": "Invoice", "fields": [{"name": "total", "type": "m.Money"}]}',
        [("money", money)],
    )
    assert "m.Money" in invoice.canonical


@pytest.mark.parametrize(
    "text", ['{"type": 12}', '{"properties": {"a": {"type": "nope"}}}', '{"minimum": "zero"}', "[1, 2]"]
)
def test_invalid_json_schemas_are_refused(text: str) -> None:
    with pytest.raises(InvalidSchema, match="Invalid schema"):
        parse_schema("JSON", text)


def test_json_schema_draft_is_taken_from_the_schema_keyword() -> None:
    parsed = parse_schema(
        "JSON", '{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}'
    )
    assert parsed.canonical == '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}'
