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


def admin_wire_client(broker: SecureBrokerProcess) -> WireClient:
    """A raw client authenticated as the bootstrap super user (for APIs librdkafka lacks)."""
    from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER

    return user_wire_client(broker, ADMIN_USER, ADMIN_PASSWORD)


def user_wire_client(broker: SecureBrokerProcess, user: str, password: str) -> WireClient:
    """A raw client authenticated (SASL/PLAIN) as `user`."""
    client = WireClient(broker.bootstrap)
    handshake = client.request(SaslHandshakeRequest(mechanism="PLAIN"))
    assert handshake.error_code == 0
    token = b"\0" + user.encode() + b"\0" + password.encode()
    assert client.request(SaslAuthenticateRequest(auth_bytes=token)).error_code == 0
    return client


def alter_quotas(
    broker: SecureBrokerProcess,
    entity: dict[str, str | None],
    values: dict[str, float | None],
    *,
    validate_only: bool = False,
) -> tuple[int, str | None]:
    """AlterClientQuotas for one entity (None removes a key); returns (error code, message)."""
    from kio.schema.alter_client_quotas.v1.request import (
        AlterClientQuotasRequest,
        EntityData,
        EntryData,
        OpData,
    )
    from kio.static.primitive import f64

    ops = tuple(
        OpData(key=key, value=f64(float(value or 0.0)), remove=value is None) for key, value in values.items()
    )
    request = AlterClientQuotasRequest(
        entries=(
            EntryData(
                entity=tuple(EntityData(entity_type=t, entity_name=n) for t, n in entity.items()),
                ops=ops,
            ),
        ),
        validate_only=validate_only,
    )
    with admin_wire_client(broker) as client:
        response = client.request(request)
    entry = response.entries[0]
    return int(entry.error_code), entry.error_message


def describe_quotas(
    broker: SecureBrokerProcess, components: list[tuple[str, int, str | None]], strict: bool = False
) -> list[tuple[dict[str, str | None], dict[str, float]]]:
    from kio.schema.describe_client_quotas.v1.request import ComponentData, DescribeClientQuotasRequest
    from kio.static.primitive import i8

    request = DescribeClientQuotasRequest(
        components=tuple(ComponentData(entity_type=t, match_type=i8(m), match=n) for t, m, n in components),
        strict=strict,
    )
    with admin_wire_client(broker) as client:
        response = client.request(request)
    assert response.error_code == 0, response.error_message
    return [
        ({e.entity_type: e.entity_name for e in entry.entity}, {v.key: float(v.value) for v in entry.values})
        for entry in response.entries or ()
    ]
