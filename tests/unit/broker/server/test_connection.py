"""Connection framing and ordering, driven through an in-memory transport (no sockets)."""

import asyncio
import io
import logging
import struct
import tracemalloc

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_writer

from broker.server.connection import OWN_BUFFER_FROM, Connection
from tests.fixtures.stand_in_handler import serve_with
from tests.unit.broker.running_state import start_node


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
    node = loop.run_until_complete(
        start_node({"log.dirs": str(tmp_path), "socket.request.max.bytes": "200000"})
    )
    state = node.state
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
    loop.run_until_complete(node.close())
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


def test_a_misshaped_answer_closes_the_connection_and_is_logged_never_sent(connection, monkeypatch, caplog):
    """A handler bug in the answer's shape (here a dict tree with a misspelt error code, not a kio entity):
    the client sees a closed connection (outcome unknown, Kafka clients retry), not a defaulted answer
    such as error_code 0."""
    loop, conn, transport, closed = connection

    async def misspelled(ctx, request):
        return {"eror_code": 0, "api_keys": [], "throttle_time": 0}

    serve_with(monkeypatch, 18, misspelled)
    versions = ApiVersionsRequest(client_software_name="unit", client_software_version="1")
    with caplog.at_level(logging.ERROR, logger="broker.server.connection"):
        feed(conn, request(versions, 1), 4096)
        settle(loop)
    assert transport.written == b""
    assert transport.closed
    assert closed == [conn]
    assert "ApiVersionsResponse v3: a handler answered a dict, not a kio entity" in caplog.text


@pytest.fixture
def limited_state(tmp_path):
    """A broker whose connections may hold 300 KB of requests at once, frames up to 200 KB."""
    loop = asyncio.new_event_loop()
    node = loop.run_until_complete(
        start_node(
            {
                "log.dirs": str(tmp_path),
                "socket.request.max.bytes": "200000",
                "queued.max.request.bytes": "300000",
            }
        )
    )
    state = node.state
    state.opened = []  # connections to close at the end
    yield loop, state
    for conn in state.opened:
        conn.connection_lost(None)
    settle(loop)
    loop.run_until_complete(node.close())
    loop.close()


def open_connection(loop, state) -> tuple[Connection, MemoryTransport]:
    transport = MemoryTransport()

    async def connect() -> Connection:
        conn = Connection(state, "PLAINTEXT", lambda _c: None)
        conn.connection_made(transport)
        return conn

    conn = loop.run_until_complete(connect())
    state.opened.append(conn)
    return conn, transport


def big_request(correlation_id: int, size: int = 190_000) -> bytes:
    body = ApiVersionsRequest(client_software_name="x", client_software_version="1")
    frame = request(body, correlation_id)
    padded = ApiVersionsRequest(
        client_software_name="x" * (size - len(frame) + 1), client_software_version="1"
    )
    return request(padded, correlation_id)


def test_a_large_frame_costs_the_bytes_that_arrived_not_the_size_it_announces(limited_state):
    loop, state = limited_state
    conn, transport = open_connection(loop, state)
    stream = big_request(1)
    tracemalloc.start()
    try:
        feed(conn, stream[:5000], 5000)
        allocated, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert allocated < 100_000  # the frame is 190 KB
    assert state.request_memory.used >= 180_000  # but all of it is reserved
    feed(conn, stream[5000:], 65536)
    settle(loop)
    assert correlation_ids(bytes(transport.written)) == [1]
    assert state.request_memory.used == 0


def test_a_large_frame_waits_for_request_memory_while_small_requests_are_served(limited_state):
    loop, state = limited_state
    first, first_transport = open_connection(loop, state)
    second, second_transport = open_connection(loop, state)
    small, small_transport = open_connection(loop, state)
    first_stream, second_stream = big_request(1), big_request(2)

    feed(first, first_stream[:1000], 1000)
    feed(second, second_stream[:1000], 1000)
    assert second_transport.paused  # 2 x 190 KB > 300 KB
    assert not first_transport.paused

    versions = ApiVersionsRequest(client_software_name="unit", client_software_version="1")
    feed(small, request(versions, 3), 4096)
    settle(loop)
    assert correlation_ids(bytes(small_transport.written)) == [3]

    feed(first, first_stream[1000:], 65536)
    settle(loop)
    assert correlation_ids(bytes(first_transport.written)) == [1]
    assert not second_transport.paused  # the first frame's memory went to the second
    feed(second, second_stream[1000:], 65536)
    settle(loop)
    assert correlation_ids(bytes(second_transport.written)) == [2]
    assert state.request_memory.used == 0


def test_a_closed_connection_gives_back_the_memory_it_reserved(limited_state):
    loop, state = limited_state
    conn, _transport = open_connection(loop, state)
    feed(conn, big_request(1)[:1000], 1000)
    assert state.request_memory.used > 0
    conn.connection_lost(None)
    settle(loop)
    assert state.request_memory.used == 0
