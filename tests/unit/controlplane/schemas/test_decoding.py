"""Decoding framed payloads: Protobuf message indexes, Avro values made JSON-able, and readable reasons
for bytes that do not match their schema."""

import io
import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import fastavro
import pytest

from controlplane.schemas import services
from controlplane.schemas.decoding import SchemaDecoder
from controlplane.schemas.models import Schema
from controlplane.schemas.wire import UndecodablePayload, framed_schema_id, read_message_indexes


@pytest.fixture(autouse=True)
def _forget_parsed_schemas() -> Iterator[None]:
    yield
    services.forget_parsed()  # the unsaved schemas below share ids with nothing real, but start clean


def decoder(schema_type: str, text: str, schema_id: int = 1) -> SchemaDecoder:
    return SchemaDecoder(Schema(schema_id=schema_id, schema_type=schema_type, text=text), [])


def test_only_payloads_starting_with_the_magic_byte_and_a_full_id_carry_a_schema_id() -> None:
    assert framed_schema_id(b"\x00\x00\x00\x01\x02payload") == 258
    assert framed_schema_id(b"\x00\x00\x00\x01") is None
    assert framed_schema_id(b"\x01\x00\x00\x00\x01") is None
    assert framed_schema_id(b'{"json": true}') is None
    assert framed_schema_id(None) is None


def test_message_indexes_are_a_zigzag_count_then_zigzag_indexes_and_a_lone_zero_means_the_first() -> None:
    assert read_message_indexes(b"\x00rest") == ((0,), 1)
    assert read_message_indexes(b"\x04\x02\x00rest") == ((1, 0), 3)
    assert read_message_indexes(b"\x02\xac\x02") == ((150,), 3)
    with pytest.raises(UndecodablePayload, match="cut short"):
        read_message_indexes(b"\x04\x02")
    with pytest.raises(UndecodablePayload, match="not a plausible number"):
        read_message_indexes(b"\x03")


EVENT = {
    "type": "record",
    "name": "Event",
    "fields": [
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "ratio", "type": "double"},
        {"name": "blob", "type": "bytes"},
        {"name": "attributes", "type": {"type": "map", "values": "int"}},
    ],
}


def avro_bytes(schema: dict, record: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()


def test_avro_values_become_json_with_bytes_in_base64_and_logical_types_as_text() -> None:
    event_id = uuid.UUID("1b4e28ba-2fa1-11d2-883f-0016d3cca427")
    record = {
        "id": str(event_id),
        "at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "price": Decimal("12.34"),
        "ratio": float("nan"),
        "blob": b"\x00\xff",
        "attributes": {"a": 1},
    }
    value = decoder("AVRO", json.dumps(EVENT)).decode(avro_bytes(EVENT, record)).value
    assert value == {
        "id": str(event_id),
        "at": "2026-01-02T03:04:05+00:00",
        "price": "12.34",
        "ratio": "NaN",
        "blob": "AP8=",
        "attributes": {"a": 1},
    }
    json.dumps(value, allow_nan=False)  # strict JSON, as the API renders it


def test_avro_data_of_another_schema_is_refused_rather_than_misread() -> None:
    written = avro_bytes({"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}]}, {"n": 7})
    with pytest.raises(UndecodablePayload, match="Not Avro data of this schema"):
        decoder(
            "AVRO", json.dumps({"type": "record", "name": "R", "fields": [{"name": "s", "type": "string"}]})
        ).decode(written)
    with pytest.raises(UndecodablePayload, match="1 bytes are left over"):
        decoder("AVRO", json.dumps("int")).decode(b"\x02\x02")


ORDER_PROTO = """
syntax = "proto3";
package acme.orders;
message Receipt { string number = 1; }
message Order {
  string id = 1;
  int64 cents = 2;
  repeated Line lines = 3;
  message Line { string sku = 1; int32 qty = 2; }
}
"""


def test_protobuf_messages_are_found_by_their_index_path_including_nested_ones() -> None:
    order_decoder = decoder("PROTOBUF", ORDER_PROTO, schema_id=2)
    order = order_decoder.message_class((1,))[0](id="o1", cents=5)
    order.lines.add(sku="x", qty=2)
    decoded = order_decoder.decode(b"\x02\x02" + order.SerializeToString())
    assert decoded.message_type == "acme.orders.Order"
    assert decoded.value == {"id": "o1", "cents": "5", "lines": [{"sku": "x", "qty": 2}]}

    line = order_decoder.message_class((1, 0))[0](sku="y")
    nested = order_decoder.decode(b"\x04\x02\x00" + line.SerializeToString())
    assert (nested.message_type, nested.value) == ("acme.orders.Order.Line", {"sku": "y", "qty": 0})
    assert order_decoder.decode(b"\x00\x0a\x02r1").value == {"number": "r1"}


def test_protobuf_payloads_with_a_missing_message_or_garbage_say_so() -> None:
    order_decoder = decoder("PROTOBUF", ORDER_PROTO, schema_id=3)
    with pytest.raises(UndecodablePayload, match=re.escape("no message at index path 1.4")):
        order_decoder.decode(b"\x04\x02\x08")
    with pytest.raises(UndecodablePayload, match=re.escape("Not a valid acme.orders.Receipt message")):
        order_decoder.decode(b"\x00\x0a\x05ab")


def test_json_schema_payloads_that_are_not_json_say_so() -> None:
    json_decoder = decoder("JSON", '{"type": "object"}')
    assert json_decoder.decode(b'{"a": [1, 2]}').value == {"a": [1, 2]}
    with pytest.raises(UndecodablePayload, match="Not JSON"):
        json_decoder.decode(b"\xff{")
