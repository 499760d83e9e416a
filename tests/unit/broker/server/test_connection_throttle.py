"""A connection over its quota holds the response and reads nothing meanwhile (no sockets)."""

from __future__ import annotations

import asyncio
import datetime
import struct

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
from kio.static.primitive import i16, i32, i32Timedelta

from broker.metadata.security_records import AlterQuotaRecord
from broker.server.connection import Connection
from broker.wire.records.records import Record, build_batch
from tests.unit.broker.running_state import create_topic, running_node
from tests.unit.broker.server.test_connection import MemoryTransport, correlation_ids, feed, request

TOPIC = "throttled"


def produce(size: int) -> ProduceRequest:
    batch = build_batch([Record(key=None, value=b"v" * size)])
    return ProduceRequest(
        transactional_id=None,
        acks=i16(1),
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=1)),
        topic_data=(
            TopicProduceData(name=TOPIC, partition_data=(PartitionProduceData(index=i32(0), records=batch),)),
        ),
    )


@pytest.fixture
def broker(tmp_path):
    with running_node(
        {
            "log.dirs": str(tmp_path),
            "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "quota.window.num": "2",
        }
    ) as (loop, state):
        loop.run_until_complete(create_topic(state, TOPIC))
        yield loop, state


def connect(loop, state, listener: str) -> tuple[Connection, MemoryTransport]:
    transport = MemoryTransport()

    async def make() -> Connection:
        conn = Connection(state, listener, lambda _c: None)
        conn.connection_made(transport)
        return conn

    return loop.run_until_complete(make()), transport


def test_a_produce_over_the_byte_rate_is_answered_late_with_its_throttle_time(broker) -> None:
    loop, state = broker
    state.security.apply_records([AlterQuotaRecord((("user", "ANONYMOUS"),), {"producer_byte_rate": 10_000})])
    conn, transport = connect(loop, state, "PLAINTEXT")
    feed(conn, request(produce(15_000), 1), 1 << 20)
    loop.run_until_complete(asyncio.sleep(0.1))
    assert transport.written == b""  # held back
    assert transport.paused  # and nothing more is read meanwhile
    loop.run_until_complete(asyncio.sleep(1.0))
    assert correlation_ids(bytes(transport.written)) == [1]
    assert not transport.paused
    # Produce v9 response: correlation id, header tags, topics..., then throttle_time_ms last.
    (throttle_ms,) = struct.unpack(">i", bytes(transport.written)[-5:-1])
    assert 400 <= throttle_ms <= 1000
    conn.connection_lost(None)


def test_a_sasl_listener_serves_only_api_versions_and_sasl_before_authentication(broker) -> None:
    loop, state = broker
    conn, transport = connect(loop, state, "SASL_PLAINTEXT")
    feed(conn, request(ApiVersionsRequest(client_software_name="u", client_software_version="1"), 1), 4096)
    feed(conn, request(SaslHandshakeRequest(mechanism="PLAIN"), 2), 4096)
    loop.run_until_complete(asyncio.sleep(0.05))
    assert correlation_ids(bytes(transport.written)) == [1, 2]
    feed(conn, request(produce(10), 3), 4096)
    loop.run_until_complete(asyncio.sleep(0.05))
    assert correlation_ids(bytes(transport.written)) == [1, 2]
    assert transport.closed
