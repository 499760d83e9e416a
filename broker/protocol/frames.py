"""Sans-IO request decoding and response encoding (one frame = one size-prefixed message)."""

from __future__ import annotations

import functools
import io
import struct
from dataclasses import dataclass
from typing import Any

from kio.static.protocol import Entity

from broker.protocol.bounds import FrameBoundsError, check_request_body
from broker.protocol.kio_fields import field_shapes
from broker.wire.schemas import (
    UnknownApi,
    request_class,
    request_is_flexible,
    request_reader,
    response_header_is_flexible,
    response_writer,
)

_HEADER = struct.Struct(">hhih")
_SIZE = struct.Struct(">i")
_CORRELATION = struct.Struct(">i")


class MalformedRequest(ValueError):
    """The frame cannot be parsed: the connection that sent it must be closed."""


class UnsupportedRequest(ValueError):
    """The header parsed, but the api key or version is unknown to us."""

    def __init__(self, api_key: int, api_version: int, correlation_id: int) -> None:
        super().__init__(f"unsupported api {api_key} v{api_version}")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


@dataclass(frozen=True, slots=True)
class FramedResponse:
    """A response a hot-path handler encoded itself: buffers to write in order, size prefix included."""

    chunks: list[bytes]


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int


def _read_uvarint(frame: bytes | memoryview, offset: int) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        if offset >= len(frame) or shift > 28:
            raise MalformedRequest("bad varint in request header")
        byte = frame[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, offset
        shift += 7


def decode_header(frame: bytes | memoryview, flexible: bool | None = None) -> RequestHeader:
    """Parse the request header. `flexible` None means: decide from the api key/version."""
    if len(frame) < _HEADER.size:
        raise MalformedRequest("frame shorter than a request header")
    api_key, api_version, correlation_id, client_id_length = _HEADER.unpack_from(frame, 0)
    offset = _HEADER.size
    client_id: str | None = None
    if client_id_length >= 0:
        end = offset + client_id_length
        if end > len(frame):
            raise MalformedRequest("client id runs past the frame")
        try:
            client_id = bytes(frame[offset:end]).decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedRequest("client id is not utf-8") from None
        offset = end
    elif client_id_length != -1:
        raise MalformedRequest("negative client id length")
    if flexible is None:
        try:
            flexible = request_is_flexible(api_key, api_version)
        except UnknownApi:
            flexible = False
    if flexible:
        count, offset = _read_uvarint(frame, offset)
        for _ in range(count):
            _tag, offset = _read_uvarint(frame, offset)
            size, offset = _read_uvarint(frame, offset)
            offset += size
            if offset > len(frame):
                raise MalformedRequest("tagged field runs past the frame")
    return RequestHeader(api_key, api_version, correlation_id, client_id, offset)


def decode_body(header: RequestHeader, frame: bytes | memoryview) -> Any:
    """Decode the request body with kio. Raises MalformedRequest on garbage."""
    try:
        reader = request_reader(header.api_key, header.api_version)
    except UnknownApi:
        raise UnsupportedRequest(header.api_key, header.api_version, header.correlation_id) from None
    try:
        # kio's native reader aborts the process on a count it cannot allocate: check first.
        check_request_body(request_class(header.api_key, header.api_version), frame, header.body_offset)
    except FrameBoundsError as exc:
        raise MalformedRequest(f"api {header.api_key} v{header.api_version}: {exc}") from None
    try:
        entity, _size = reader(frame, header.body_offset)
    except Exception as exc:  # kio's native reader raises assorted errors on bad input
        raise MalformedRequest(f"cannot decode api {header.api_key} v{header.api_version}: {exc}") from None
    missing = _first_null_in_required_field(entity)
    if missing is not None:
        raise MalformedRequest(f"null {missing} in api {header.api_key} v{header.api_version}")
    # Trailing bytes are ignored, as Kafka's own parser does: librdkafka 2.x pads some
    # flexible Metadata requests with extra bytes after the body.
    return entity


@functools.cache
def _null_check_plan(entity_type: type) -> tuple[tuple[str, bool, type | None, bool], ...]:
    """Per field: (name, may be null, nested entity type, is an array of entities)."""
    plan = []
    for name, shape in field_shapes(entity_type).items():
        # As kio reads it: an array of nullable elements counts as nullable.
        nullable = shape.nullable or shape.item_nullable
        plan.append((name, nullable, shape.entity, shape.is_array and shape.entity is not None))
    return tuple(plan)


def _first_null_in_required_field(entity: Any) -> str | None:
    """kio decodes a -1 length as None even where the schema forbids null; Kafka rejects that."""
    for name, nullable, nested, is_array in _null_check_plan(type(entity)):
        value = getattr(entity, name)
        if value is None:
            if not nullable:
                return name
            continue
        if nested is None:
            continue
        for item in value if is_array else (value,):
            missing = _first_null_in_required_field(item)
            if missing is not None:
                return f"{name}.{missing}"
    return None


def encode_response(api_key: int, api_version: int, correlation_id: int, entity: Entity) -> bytes:
    """Size prefix + response header + body."""
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    buffer.write(_CORRELATION.pack(correlation_id))
    if response_header_is_flexible(api_key, api_version):
        buffer.write(b"\0")  # no tagged fields
    response_writer(api_key, api_version)(buffer, entity)
    data = buffer.getbuffer()
    _SIZE.pack_into(data, 0, len(data) - 4)
    del data
    return buffer.getvalue()


def encode_body(api_key: int, api_version: int, entity: Entity) -> bytes:
    """Just the response body, for responses cached across requests."""
    buffer = io.BytesIO()
    response_writer(api_key, api_version)(buffer, entity)
    return buffer.getvalue()


def frame_body(api_key: int, api_version: int, correlation_id: int, body: bytes) -> FramedResponse:
    """Put the size prefix and response header in front of an encoded body."""
    header = _CORRELATION.pack(correlation_id)
    if response_header_is_flexible(api_key, api_version):
        header += b"\0"
    return FramedResponse([_SIZE.pack(len(header) + len(body)) + header, body])
