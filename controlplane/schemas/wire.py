"""Confluent's wire format for keys and values, without Django: the framing, Protobuf message indexes, and
decoded values as JSON. Shared by the message browser and by code that runs outside the control plane.

A framed payload is magic byte 0, the schema id as 4 big-endian bytes, then the data: Avro binary, JSON
text, or for Protobuf a list of message indexes (zig-zag varints: a count then the indexes, a lone 0
meaning [0]) followed by the message.
"""

from __future__ import annotations

import base64
import math
import struct
import uuid
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

MAGIC_BYTE = 0
HEADER_SIZE = 5
MAX_MESSAGE_INDEXES = 64


class UndecodablePayload(ValueError):
    """The bytes do not match the wire format or the schema; the message says how."""


def framed_schema_id(data: bytes | None) -> int | None:
    """The schema id a framed payload starts with, or None for bytes without the framing."""
    if data is None or len(data) < HEADER_SIZE or data[0] != MAGIC_BYTE:
        return None
    return struct.unpack_from(">I", data, 1)[0]


def read_message_indexes(payload: bytes) -> tuple[tuple[int, ...], int]:
    """The Protobuf message index path at the start of `payload` and where the message starts."""
    position = 0

    def varint() -> int:
        nonlocal position
        shift = result = 0
        while True:
            if position >= len(payload) or shift > 63:
                raise UndecodablePayload("The Protobuf message indexes are cut short")
            byte = payload[position]
            position += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)  # zig-zag

    count = varint()
    if count == 0:
        return (0,), position
    if not 0 < count <= MAX_MESSAGE_INDEXES:
        raise UndecodablePayload(f"{count} is not a plausible number of Protobuf message indexes")
    return tuple(varint() for _ in range(count)), position


def jsonable(value: Any) -> Any:
    """Decoded values as JSON: bytes as base64, logical types as their text forms, non-finite floats as
    the strings the proto3 JSON mapping uses."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return value
