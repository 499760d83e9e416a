"""A small blocking Kafka-protocol client for the admin APIs librdkafka lacks (client quotas, log dir
sizes, offset deletion). Requests and responses are kio entities framed by `broker.wire.frames`; this
module owns the socket and authenticates (SASL PLAIN or SCRAM) — with a timeout on every socket operation.
"""

from __future__ import annotations

import socket
import ssl
import struct
from types import TracebackType
from typing import Any

import scramp
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from broker.wire.frames import UnexpectedCorrelation, decode_response, encode_request
from controlplane.kafka.errors import AuthenticationFailed, ClusterUnreachable, KafkaGatewayError

CLIENT_ID = "controlplane"
MAX_FRAME_BYTES = 64 * 1024 * 1024


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
        api_key, version = int(body.__api_key__), int(body.__version__)
        frame = self._exchange(body)
        try:
            return decode_response(frame, api_key, version, self._correlation_id)
        except UnexpectedCorrelation:
            self.close()
            raise KafkaGatewayError("_BAD_MSG", "the broker answered out of order") from None

    def request_frame(self, body: Any) -> bytes | memoryview:
        """Sends one kio request entity and returns its response frame undecoded: the correlation id
        (checked) and the response header, then the body (the Spark reader parses Fetch in place)."""
        frame = self._exchange(body)
        (correlation_id,) = struct.unpack_from(">i", frame, 0)
        if correlation_id != self._correlation_id:
            self.close()
            raise KafkaGatewayError("_BAD_MSG", "the broker answered out of order")
        return frame

    def _exchange(self, body: Any) -> bytes:
        api_key, version = int(body.__api_key__), int(body.__version__)
        self._correlation_id += 1
        try:
            self._sock.sendall(encode_request(body, self._correlation_id, CLIENT_ID))
            return self._read_frame()
        except (OSError, ConnectionError) as error:
            raise ClusterUnreachable("_TRANSPORT", f"request {api_key} v{version} failed: {error}") from error

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
