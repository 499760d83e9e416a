"""Client-side frames: a size-prefixed request for a kio request entity, and its response decoded.

Used by every Kafka client of ours: the broker's replica fetcher, the control plane's admin connection and
the Spark source's raw reader. Sans-IO: the callers own their sockets.
"""

from __future__ import annotations

import functools
import io
import struct
from collections.abc import Callable
from typing import Any

from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer

from broker.wire.schemas import response_class, response_header_is_flexible

FRAME_SIZE = struct.Struct(">i")
_CORRELATION = struct.Struct(">i")


class UnexpectedCorrelation(ValueError):
    """The response answers another request than the one waited for: the connection is out of step."""


@functools.cache
def _reader(api_key: int, api_version: int) -> Callable[[Any, int], tuple[Any, int]]:
    return entity_reader(response_class(api_key, api_version))


def encode_request(body: Any, correlation_id: int, client_id: str) -> bytes:
    """A size-prefixed request frame for a kio request entity."""
    api_key, version = int(body.__api_key__), int(body.__version__)
    header_type = RequestHeaderV2 if body.__flexible__ else RequestHeaderV1
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    entity_writer(header_type)(
        buffer,
        header_type(
            request_api_key=api_key,
            request_api_version=version,
            correlation_id=correlation_id,
            client_id=client_id,
        ),
    )
    entity_writer(type(body))(buffer, body)
    frame = buffer.getbuffer()
    FRAME_SIZE.pack_into(frame, 0, len(frame) - 4)
    return bytes(frame)


def decode_response(frame: bytes, api_key: int, api_version: int, correlation_id: int) -> Any:
    """The response entity of a frame (without its size prefix) that must answer `correlation_id`."""
    (answered,) = _CORRELATION.unpack_from(frame, 0)
    if answered != correlation_id:
        raise UnexpectedCorrelation(f"expected correlation id {correlation_id}, got {answered}")
    offset = 4 + (1 if response_header_is_flexible(api_key, api_version) else 0)
    entity, _ = _reader(api_key, api_version)(frame, offset)
    return entity
