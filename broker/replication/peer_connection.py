"""A broker's own client connection to another broker (replica fetching), kio entities on the wire.

One request in flight at a time: the replica fetcher is the only user and waits for each answer.
PLAINTEXT only for now; inter-broker SASL/TLS comes with the controller's broker registration.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import struct
from collections.abc import Callable
from typing import Any

from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer

from broker.protocol.schemas import response_class, response_header_is_flexible

FRAME_SIZE = struct.Struct(">i")


class PeerConnectionError(Exception):
    """The other broker is unreachable, closed the connection or answered out of order."""


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
    (answered,) = struct.unpack_from(">i", frame, 0)
    if answered != correlation_id:
        raise PeerConnectionError(f"expected correlation id {correlation_id}, got {answered}")
    offset = 4 + (1 if response_header_is_flexible(api_key, api_version) else 0)
    entity, _ = _reader(api_key, api_version)(frame, offset)
    return entity


class PeerConnection:
    def __init__(self, host: str, port: int, *, client_id: str, timeout_s: float) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.timeout_s = timeout_s
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation_id = 0

    async def request(self, body: Any, *, wait_s: float = 0.0) -> Any:
        """Send one request and return the decoded response (`wait_s`: how long the peer may park it)."""
        try:
            return await asyncio.wait_for(self._exchange(body), self.timeout_s + wait_s)
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            await self.close()
            raise PeerConnectionError(f"{self.host}:{self.port}: {exc!r}") from None
        except PeerConnectionError:
            await self.close()
            raise

    async def _exchange(self, body: Any) -> Any:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        self._correlation_id += 1
        correlation_id = self._correlation_id
        self._writer.write(encode_request(body, correlation_id, self.client_id))
        await self._writer.drain()
        (size,) = FRAME_SIZE.unpack(await self._reader.readexactly(4))
        frame = await self._reader.readexactly(size)
        return decode_response(frame, int(body.__api_key__), int(body.__version__), correlation_id)

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
