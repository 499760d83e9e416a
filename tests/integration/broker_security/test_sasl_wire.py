"""The SASL state machine against broken, legacy and re-authenticating clients (raw wire)."""

from __future__ import annotations

import socket
import ssl
import struct
import time

from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v0.request import SaslHandshakeRequest as SaslHandshakeRequestV0
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER, SecureBrokerProcess
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker_security.wire import authenticate_plain

PLAIN_TOKEN = b"\0" + ADMIN_USER.encode() + b"\0" + ADMIN_PASSWORD.encode()


def metadata_request() -> MetadataRequest:
    return MetadataRequest(
        topics=None,
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )


def test_it_answers_api_versions_before_authentication(secure_broker: SecureBrokerProcess) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        response = client.request(
            ApiVersionsRequest(client_software_name="wire", client_software_version="1")
        )
        keys = {entry.api_key for entry in response.api_keys}
        assert {17, 36, 29, 30, 31, 48, 49, 50, 51} <= keys


def test_it_closes_a_connection_that_sends_requests_before_authenticating(
    secure_broker: SecureBrokerProcess,
) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        client.correlation_id = 0
        try:
            client.request(metadata_request())
            answered = True
        except ConnectionError:
            answered = False
        assert not answered
        assert client.is_closed_by_peer()


def test_sasl_authenticate_before_the_handshake_is_an_illegal_state(
    secure_broker: SecureBrokerProcess,
) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        response = client.request(SaslAuthenticateRequest(auth_bytes=PLAIN_TOKEN))
        assert response.error_code == 34  # ILLEGAL_SASL_STATE
        assert client.is_closed_by_peer()


def test_an_unknown_mechanism_is_refused_with_the_enabled_list(secure_broker: SecureBrokerProcess) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        response = client.request(SaslHandshakeRequest(mechanism="GSSAPI"))
        assert response.error_code == 33  # UNSUPPORTED_SASL_MECHANISM
        assert set(response.mechanisms) == {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
        assert client.is_closed_by_peer()


def test_a_wrong_password_gets_error_58_with_a_generic_message_and_the_connection_closes(
    secure_broker: SecureBrokerProcess,
) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        client.request(SaslHandshakeRequest(mechanism="PLAIN"))
        response = client.request(SaslAuthenticateRequest(auth_bytes=b"\0admin\0guessed-secret"))
        assert response.error_code == 58
        assert "guessed-secret" not in (response.error_message or "")
        assert "Authentication failed" in response.error_message
        assert client.is_closed_by_peer()
    assert "guessed-secret" not in secure_broker.log_text()


def test_a_garbage_scram_message_fails_authentication(secure_broker: SecureBrokerProcess) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        client.request(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"))
        response = client.request(SaslAuthenticateRequest(auth_bytes=b"\xff\xfenot scram"))
        assert response.error_code == 58
        assert client.is_closed_by_peer()


def test_an_oversized_frame_before_authentication_closes_the_connection(
    secure_broker: SecureBrokerProcess,
) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        # Larger than sasl.server.max.receive.size (512 KiB): refused before it is buffered.
        client.sock.sendall(struct.pack(">i", 600 * 1024) + b"\0" * 1024)
        assert client.is_closed_by_peer()
    assert authenticate_plain(secure_broker, ADMIN_USER, ADMIN_PASSWORD)[0] == 0


def test_tls_garbage_on_the_ssl_listener_is_dropped_and_others_are_served(
    secure_broker: SecureBrokerProcess,
) -> None:
    with socket.create_connection(("127.0.0.1", secure_broker.ssl_port), timeout=5) as raw:
        raw.sendall(b"\x16\x03\x01\x00\x05garbage-that-is-not-a-client-hello" * 4)
        raw.settimeout(5)
        try:
            closed = raw.recv(1024) is not None
        except (ConnectionResetError, TimeoutError):
            closed = True
        assert closed
    context = ssl.create_default_context(cafile=str(secure_broker.certificates.ca_path))
    with (
        socket.create_connection(("127.0.0.1", secure_broker.ssl_port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        header = struct.pack(">hhih", 18, 0, 7, 4) + b"wire"
        tls.sendall(struct.pack(">i", len(header)) + header)
        size, correlation = struct.unpack(">ii", tls.recv(8))
        assert correlation == 7
        assert size > 4


def test_a_legacy_client_authenticates_with_raw_tokens_after_a_v0_handshake(
    secure_broker: SecureBrokerProcess,
) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        response = client.request(SaslHandshakeRequestV0(mechanism="PLAIN"))
        assert response.error_code == 0
        client.send_raw(PLAIN_TOKEN)
        assert client.recv_frame() == b""  # PLAIN's empty server reply, unframed
        metadata = client.request(metadata_request())
        assert metadata.brokers


def test_a_legacy_client_with_a_wrong_password_is_disconnected(secure_broker: SecureBrokerProcess) -> None:
    with WireClient(secure_broker.bootstrap) as client:
        client.request(SaslHandshakeRequestV0(mechanism="PLAIN"))
        client.send_raw(b"\0admin\0nope")
        assert client.is_closed_by_peer()


def test_a_session_reports_its_lifetime_and_can_reauthenticate(secure_broker_factory) -> None:
    broker = secure_broker_factory(connections_max_reauth_ms=1500)
    with WireClient(broker.bootstrap) as client:
        client.request(SaslHandshakeRequest(mechanism="PLAIN"))
        first = client.request(SaslAuthenticateRequest(auth_bytes=PLAIN_TOKEN))
        assert first.error_code == 0
        assert first.session_lifetime.total_seconds() == 1.5
        assert client.request(metadata_request()).brokers
        # Re-authenticate on the same connection before the session expires.
        client.request(SaslHandshakeRequest(mechanism="PLAIN"))
        again = client.request(SaslAuthenticateRequest(auth_bytes=PLAIN_TOKEN))
        assert again.error_code == 0
        time.sleep(1.0)
        assert client.request(metadata_request()).brokers
        time.sleep(1.7)
        # Expired without re-authenticating: the next request closes the connection.
        try:
            client.request(metadata_request())
            answered = True
        except ConnectionError:
            answered = False
        assert not answered


def test_no_secret_appears_in_the_broker_log(secure_broker: SecureBrokerProcess) -> None:
    authenticate_plain(secure_broker, ADMIN_USER, "leaky-password-123")
    log = secure_broker.log_text()
    assert "leaky-password-123" not in log
    assert ADMIN_PASSWORD not in log
