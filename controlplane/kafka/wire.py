"""A small blocking Kafka-protocol client for the admin APIs librdkafka lacks (client quotas, log dir
sizes, offset deletion). Requests and responses are kio entities; this module only frames them, matches
correlation ids and authenticates (SASL PLAIN or SCRAM) — with a timeout on every socket operation.
"""

from __future__ import annotations

import importlib
import io
import socket
import ssl
import struct
from types import TracebackType
from typing import Any

import scramp
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
from kio.serial import entity_reader, entity_writer

from controlplane.kafka.errors import AuthenticationFailed, ClusterUnreachable, KafkaGatewayError

CLIENT_ID = "controlplane"
MAX_FRAME_BYTES = 64 * 1024 * 1024


def _response_class(request: Any) -> type:
    # kio lays out request and response modules side by side: schema/<api>/v<N>/{request,response}.py.
    module = importlib.import_module(type(request).__module__.rsplit(".", 1)[0] + ".response")
    name = type(request).__name__.removesuffix("Request") + "Response"
    return getattr(module, name)


class WireConnection:
    """One authenticated connection to one broker. Use as a context manager."""

    def __init__(
        self,
        address: str,
        *,
        security_protocol: str,
        sasl_mechanism: str,
        username: str,
        password: str,
        timeout_seconds: float,
    ) -> None:
        host, port = address.rsplit(":", 1)
        self._correlation_id = 0
        try:
            raw = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_seconds)
        except OSError as error:
            raise ClusterUnreachable("_TRANSPORT", f"cannot connect to {address}: {error}") from error
        raw.settimeout(timeout_seconds)
        self._sock: socket.socket = raw
        if security_protocol in ("SSL", "SASL_SSL"):
            self._sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
        if security_protocol.startswith("SASL"):
            self._authenticate(sasl_mechanism or "PLAIN", username, password)

    def __enter__(self) -> WireConnection:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._sock.close()

    def request(self, body: Any) -> Any:
        """Sends one kio request entity and returns the decoded response entity."""
        frame = self.request_frame(body)
        response_type = _response_class(body)
        # Flexible responses carry an (empty) tagged-field section in their header.
        offset = 5 if response_type.__flexible__ else 4
        entity, _size = entity_reader(response_type)(frame, offset)
        return entity

    def request_frame(self, body: Any) -> bytes | memoryview:
        """Sends one kio request entity and returns its response frame undecoded: the correlation id (checked)
        and the response header, then the body."""
        api_key, version = int(body.__api_key__), int(body.__version__)
        self._correlation_id += 1
        buffer = io.BytesIO()
        header_type = RequestHeaderV2 if body.__flexible__ else RequestHeaderV1
        entity_writer(header_type)(
            buffer,
            header_type(
                request_api_key=api_key,
                request_api_version=version,
                correlation_id=self._correlation_id,
                client_id=CLIENT_ID,
            ),
        )
        entity_writer(type(body))(buffer, body)
        payload = buffer.getvalue()
        try:
            self._sock.sendall(struct.pack(">i", len(payload)) + payload)
            frame = self._read_frame()
        except (OSError, ConnectionError) as error:
            raise ClusterUnreachable("_TRANSPORT", f"request {api_key} v{version} failed: {error}") from error
        (correlation_id,) = struct.unpack_from(">i", frame, 0)
        if correlation_id != self._correlation_id:
            self.close()
            raise KafkaGatewayError("_BAD_MSG", "the broker answered out of order")
        return frame

    def _read_frame(self) -> bytes:
        (size,) = struct.unpack(">i", self._read_exactly(4))
        if not 4 <= size <= MAX_FRAME_BYTES:
            raise ConnectionError(f"frame of {size} bytes")
        return self._read_exactly(size)

    def _read_exactly(self, count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            chunk = self._sock.recv(count - len(chunks))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            chunks += chunk
        return bytes(chunks)

    def _authenticate(self, mechanism: str, username: str, password: str) -> None:
        handshake = self.request(SaslHandshakeRequest(mechanism=mechanism))
        if handshake.error_code != 0:
            raise AuthenticationFailed(
                "UNSUPPORTED_SASL_MECHANISM", f"the broker offers {list(handshake.mechanisms)}"
            )
        if mechanism == "PLAIN":
            self._sasl_step(b"\0" + username.encode() + b"\0" + password.encode())
            return
        client = scramp.ScramClient([mechanism], username, password)
        server_first = self._sasl_step(client.get_client_first().encode())
        try:
            client.set_server_first(server_first.decode())
            server_final = self._sasl_step(client.get_client_final().encode())
            client.set_server_final(server_final.decode())
        except scramp.ScramException as error:
            raise AuthenticationFailed("SASL_AUTHENTICATION_FAILED", str(error)) from error

    def _sasl_step(self, token: bytes) -> bytes:
        response = self.request(SaslAuthenticateRequest(auth_bytes=token))
        if response.error_code != 0:
            raise AuthenticationFailed("SASL_AUTHENTICATION_FAILED", response.error_message or "refused")
        return bytes(response.auth_bytes)
