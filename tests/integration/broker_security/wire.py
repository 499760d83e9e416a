"""Raw SASL exchanges over the wire (for broken and legacy clients real libraries never send)."""

from __future__ import annotations

from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from tests.fixtures.broker import SecureBrokerProcess
from tests.integration.broker.kafka_wire import WireClient


def authenticate_plain(broker: SecureBrokerProcess, user: str, password: str) -> tuple[int, bool]:
    """Handshake + one PLAIN token; (SaslAuthenticate error code, connection closed afterwards)."""
    with WireClient(broker.bootstrap) as client:
        handshake = client.request(SaslHandshakeRequest(mechanism="PLAIN"))
        assert handshake.error_code == 0
        token = b"\0" + user.encode() + b"\0" + password.encode()
        response = client.request(SaslAuthenticateRequest(auth_bytes=token))
        return int(response.error_code), client.is_closed_by_peer(timeout=1.0)
