"""Connection framing and ordering, driven through an in-memory transport (no sockets)."""

import asyncio
import io
import struct

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_writer

from broker.config import BrokerConfig
from broker.server.app import close_broker_state, open_broker_state
from broker.server.connection import OWN_BUFFER_FROM, Connection


class MemoryTransport:
    """Just enough of an asyncio transport: records writes and closes."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.closed = False
        self.paused = False

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 5555) if name == "peername" else default

    def writelines(self, chunks) -> None:
        for chunk in chunks:
            self.written += chunk

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


def request(body, correlation_id: int) -> bytes:
    buffer = io.BytesIO()
    entity_writer(RequestHeader)(
        buffer,
        RequestHeader(
            request_api_key=body.__api_key__,
            request_api_version=body.__version__,
            correlation_id=correlation_id,
            client_id="unit",
        ),
    )
    entity_writer(type(body))(buffer, body)
    payload = buffer.getvalue()
    return struct.pack(">i", len(payload)) + payload


def correlation_ids(data: bytes) -> list[int]:
    ids, position = [], 0
    while position < len(data):
        (size,) = struct.unpack_from(">i", data, position)
        ids.append(struct.unpack_from(">i", data, position + 4)[0])
        position += 4 + size
    return ids


@pytest.fixture
def connection(tmp_path):
    loop = asyncio.new_event_loop()
    config = BrokerConfig.from_properties(
        {"log.dirs": str(tmp_path), "offsets.topic.num.partitions": "1", "socket.request.max.bytes": "200000"}
    )
    state = loop.run_until_complete(open_broker_state(config))
    closed = []
    transport = MemoryTransport()

    async def connect() -> Connection:
        conn = Connection(state, "PLAINTEXT", closed.append)
        conn.connection_made(transport)
        return conn

    conn = loop.run_until_complete(connect())
    yield loop, conn, transport, closed
    conn.connection_lost(None)
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.run_until_complete(close_broker_state(state))
    loop.close()


def feed(conn: Connection, data: bytes, chunk: int) -> None:
    position = 0
    while position < len(data):
        target = conn.get_buffer(-1)
        count = min(chunk, len(target), len(data) - position)
        target[:count] = data[position : position + count]
        conn.buffer_updated(count)
        position += count


def settle(loop) -> None:
    loop.run_until_complete(asyncio.sleep(0.05))


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_pipelined_requests_split_anywhere_are_answered_in_order(connection, chunk):
    loop, conn, transport, _closed = connection
    versions = ApiVersionsRequest(client_software_name="unit", client_software_version="1")
    metadata = MetadataRequest(
        topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    stream = b"".join(request(versions if i % 2 else metadata, i) for i in range(1, 21))
    feed(conn, stream, chunk)
    settle(loop)
    assert correlation_ids(bytes(transport.written)) == list(range(1, 21))
    assert not transport.closed


def test_a_frame_larger_than_the_shared_buffer_threshold_is_received_whole(connection):
    loop, conn, transport, _closed = connection
    versions = ApiVersionsRequest(client_software_name="unit", client_software_version="1")
    large = ApiVersionsRequest(client_software_name="x" * (OWN_BUFFER_FROM * 2), client_software_version="1")
    stream = request(versions, 1) + request(large, 2) + request(versions, 3)
    feed(conn, stream, 10_000)
    settle(loop)
    assert correlation_ids(bytes(transport.written)) == [1, 2, 3]


def test_an_oversized_frame_closes_the_connection_before_it_is_read(connection):
    loop, conn, transport, closed = connection
    feed(conn, struct.pack(">i", 10_000_000), 4)
    settle(loop)
    assert transport.closed
    assert closed == [conn]
    assert transport.written == b""


def test_garbage_after_good_requests_closes_only_after_answering_them(connection):
    loop, conn, transport, _closed = connection
    versions = ApiVersionsRequest(client_software_name="unit", client_software_version="1")
    garbage = struct.pack(">i", 12) + b"\xff" * 12
    feed(conn, request(versions, 1) + garbage + request(versions, 2), 64)
    settle(loop)
    assert correlation_ids(bytes(transport.written)) == [1]
    assert transport.closed
