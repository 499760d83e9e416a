"""A minimal raw Kafka-protocol client for tests that must send exact (or broken) bytes."""

from __future__ import annotations

import datetime
import io
import socket
import struct
import uuid
from typing import Any

from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer
from kio.static.primitive import i32

from broker.wire.schemas import response_class


class WireClient:
    def __init__(self, bootstrap: str, timeout: float = 5.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_raw(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def recv_frame(self) -> bytes:
        size = struct.unpack(">i", self._recv_exactly(4))[0]
        return self._recv_exactly(size)

    def _recv_exactly(self, count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            chunk = self.sock.recv(count - len(chunks))
            if not chunk:
                raise ConnectionError("connection closed by broker")
            chunks += chunk
        return bytes(chunks)

    def is_closed_by_peer(self, timeout: float = 3.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def request(self, body: Any) -> Any:
        """Send a kio request entity and decode the matching response."""
        frame, body_offset = self.request_frame(body)
        response_type = response_class(int(body.__api_key__), int(body.__version__))
        entity, _size = entity_reader(response_type)(frame, body_offset)
        return entity

    def request_frame(self, body: Any) -> tuple[bytes, int]:
        """Send a kio request entity; (the response frame, where its body starts), undecoded."""
        api_key = int(body.__api_key__)
        version = int(body.__version__)
        self.correlation_id += 1
        buffer = io.BytesIO()
        flexible = body.__flexible__ and not (api_key == 18 and version < 3)
        header_type = RequestHeaderV2 if flexible else RequestHeaderV1
        entity_writer(header_type)(
            buffer,
            header_type(
                request_api_key=api_key,
                request_api_version=version,
                correlation_id=self.correlation_id,
                client_id="wire-test",
            ),
        )
        entity_writer(type(body))(buffer, body)
        self.send_raw(buffer.getvalue())
        frame = self.recv_frame()
        (correlation_id,) = struct.unpack_from(">i", frame, 0)
        assert correlation_id == self.correlation_id
        response_type = response_class(api_key, version)
        return frame, 4 + (1 if response_type.__flexible__ and api_key != 18 else 0)


def join_consumer_group(
    wire: WireClient,
    group: str,
    topics: tuple[str, ...] | None,
    *,
    regex: str | None = None,
    rack: str | None = None,
    assignor: str | None = None,
) -> Any:
    """A new member joins a consumer-protocol group (ConsumerGroupHeartbeat v1, epoch 0) subscribed
    to `topics` and/or `regex`; the response."""
    return wire.request(
        ConsumerGroupHeartbeatRequest(
            group_id=group,
            member_id=str(uuid.uuid4()),
            member_epoch=i32(0),
            instance_id=None,
            rack_id=rack,
            rebalance_timeout=datetime.timedelta(seconds=30),
            subscribed_topic_names=topics,
            subscribed_topic_regex=regex,
            server_assignor=assignor,
            topic_partitions=(),
        )
    )
