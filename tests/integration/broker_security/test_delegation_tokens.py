"""Delegation tokens: the four APIs (38-41) and SCRAM token authentication (`tokenauth=true`).

confluent-kafka's AdminClient has no token calls and neither librdkafka nor any installed Python
client can send a SCRAM extension, so the APIs go over kio requests and the token login is a
scramp SCRAM exchange with the `tokenauth=true` extension over a raw connection.
"""

from __future__ import annotations

import base64
import datetime
import struct
import time

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource
from kio.schema.create_acls.v3.request import AclCreation, CreateAclsRequest
from kio.schema.create_delegation_token.v3.request import CreatableRenewers, CreateDelegationTokenRequest
from kio.schema.describe_delegation_token.v3.request import DescribeDelegationTokenRequest
from kio.schema.expire_delegation_token.v2.request import ExpireDelegationTokenRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.renew_delegation_token.v2.request import RenewDelegationTokenRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
from kio.static.primitive import i8
from scramp import ScramClient

from broker.auth.authorizer import Operation, PatternType, Permission, ResourceType
from tests.fixtures.broker import SecureBrokerProcess
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker_security.clients import add_scram_user, create_topic_as_admin, unique
from tests.integration.broker_security.wire import admin_wire_client

SECRET = "token-secret-" + "k" * 24
INVALID_PRINCIPAL_TYPE = 67
AUTH_DISABLED, NOT_FOUND, OWNER_MISMATCH, REQUEST_NOT_ALLOWED, AUTHORIZATION_FAILED, EXPIRED = (
    61,
    62,
    63,
    64,
    65,
    66,
)


def ms(value: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=value)


def create_request(
    *, max_lifetime_ms: int = -1, owner: str | None = None, renewers: tuple[str, ...] = ()
) -> CreateDelegationTokenRequest:
    return CreateDelegationTokenRequest(
        owner_principal_type="User" if owner else None,
        owner_principal_name=owner,
        renewers=tuple(CreatableRenewers(principal_type="User", principal_name=r) for r in renewers),
        max_lifetime=ms(max_lifetime_ms),
    )


def create_token(client: WireClient, **options: object) -> object:
    return client.request(create_request(**options))  # type: ignore[arg-type]


def error_code(client: WireClient, request: object) -> int:
    """The error code of a Create/Renew/ExpireDelegationToken answer. An error answer carries -1
    timestamps, as Kafka's does, which kio's reader refuses, so read the leading int16 only."""
    frame, body_offset = client.request_frame(request)
    return struct.unpack_from(">h", frame, body_offset)[0]


def describe_tokens(client: WireClient) -> object:
    return client.request(DescribeDelegationTokenRequest(owners=None))


def token_login(
    broker: SecureBrokerProcess, token_id: str, token_hmac: bytes, mechanism: str, *, tokenauth: bool = True
) -> WireClient | None:
    """SCRAM with `tokenauth=true`, the token id as user and the base64 HMAC as password (Kafka's
    ScramLoginModule with tokenauth). Returns the authenticated connection, or None if refused."""
    password = base64.b64encode(token_hmac).decode()
    extensions = ",tokenauth=true" if tokenauth else ""
    return scram_login(broker.bootstrap, token_id, password, mechanism, extensions)


def scram_login(
    bootstrap: str, user: str, password: str, mechanism: str, extensions: str = ""
) -> WireClient | None:
    """A raw SCRAM exchange with `extensions` appended to the client-first message; the
    authenticated connection, or None if refused."""
    client = WireClient(bootstrap)
    assert client.request(SaslHandshakeRequest(mechanism=mechanism)).error_code == 0
    scram = ScramClient([mechanism], user, password)
    first = scram.get_client_first() + extensions
    scram.client_first_bare = first[3:]  # the proof covers the message as sent
    reply = client.request(SaslAuthenticateRequest(auth_bytes=first.encode()))
    if reply.error_code != 0:
        client.close()
        return None
    scram.set_server_first(reply.auth_bytes.decode())
    final = client.request(SaslAuthenticateRequest(auth_bytes=scram.get_client_final().encode()))
    if final.error_code != 0:
        client.close()
        return None
    scram.set_server_final(final.auth_bytes.decode())  # the broker proved it knows the token too
    return client


def topics_seen(client: WireClient) -> set[str]:
    response = client.request(
        MetadataRequest(
            topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
        )
    )
    return {topic.name for topic in response.topics}


@pytest.fixture
def token_broker(secure_broker_factory) -> SecureBrokerProcess:
    return secure_broker_factory(
        **{"delegation.token.secret.key": SECRET, "delegation.token.expiry.check.interval.ms": 300}
    )


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_token_logs_in_as_its_owner_and_may_not_ask_for_tokens(
    token_broker: SecureBrokerProcess, mechanism: str
) -> None:
    topic = unique("tok")
    create_topic_as_admin(token_broker, topic)
    with admin_wire_client(token_broker) as admin:
        created = create_token(admin)
    assert created.error_code == 0
    assert (created.principal_type, created.principal_name) == ("User", "admin")
    assert len(created.hmac) == 64  # HMAC-SHA512
    session = token_login(token_broker, created.token_id, created.hmac, mechanism)
    assert session is not None
    with session:
        # The admin's topic is visible: the session is the owner, a super user.
        assert topic in topics_seen(session)
        assert error_code(session, create_request()) == REQUEST_NOT_ALLOWED
        assert describe_tokens(session).error_code == REQUEST_NOT_ALLOWED
    # A wrong HMAC, or the token id as a plain SCRAM user, does not log in.
    assert token_login(token_broker, created.token_id, b"x" * 64, mechanism) is None
    assert token_login(token_broker, created.token_id, created.hmac, mechanism, tokenauth=False) is None


def test_create_describe_renew_expire(token_broker: SecureBrokerProcess) -> None:
    renewer, password = unique("renewer"), "pw-" + unique("s")
    add_scram_user(token_broker, renewer, password, "SCRAM-SHA-512")
    with admin_wire_client(token_broker) as admin:
        created = create_token(admin, max_lifetime_ms=3_600_000, renewers=(renewer,))
        assert created.error_code == 0
        assert created.max_timestamp - created.issue_timestamp == datetime.timedelta(hours=1)
        described = [t for t in describe_tokens(admin).tokens if t.token_id == created.token_id]
        assert len(described) == 1
        token = described[0]
        assert token.hmac == created.hmac
        assert [(r.principal_type, r.principal_name) for r in token.renewers] == [("User", renewer)]
        assert (token.token_requester_principal_type, token.token_requester_principal_name) == (
            "User",
            "admin",
        )

        renewed = admin.request(RenewDelegationTokenRequest(hmac=created.hmac, renew_period=ms(60_000)))
        assert renewed.error_code == 0
        now = datetime.datetime.now(datetime.UTC)
        assert now < renewed.expiry_timestamp <= now + datetime.timedelta(seconds=61)
        # Renewing past the max lifetime stops at it.
        capped = admin.request(RenewDelegationTokenRequest(hmac=created.hmac, renew_period=ms(10**9)))
        assert capped.expiry_timestamp == created.max_timestamp

        group_renewer = CreateDelegationTokenRequest(
            owner_principal_type=None,
            owner_principal_name=None,
            renewers=(CreatableRenewers(principal_type="Group", principal_name="g"),),
            max_lifetime=ms(-1),
        )
        assert error_code(admin, group_renewer) == INVALID_PRINCIPAL_TYPE
        unknown = RenewDelegationTokenRequest(hmac=b"\0" * 64, renew_period=ms(1000))
        assert error_code(admin, unknown) == NOT_FOUND

    # A stranger may not renew it; the named renewer may.
    stranger, stranger_password = unique("stranger"), "pw-" + unique("s")
    add_scram_user(token_broker, stranger, stranger_password, "SCRAM-SHA-512")
    with _login(token_broker, stranger, stranger_password) as client:
        refused = RenewDelegationTokenRequest(hmac=created.hmac, renew_period=ms(1000))
        assert error_code(client, refused) == OWNER_MISMATCH
        assert all(t.token_id != created.token_id for t in describe_tokens(client).tokens)
    with _login(token_broker, renewer, password) as client:
        assert (
            client.request(RenewDelegationTokenRequest(hmac=created.hmac, renew_period=ms(5000))).error_code
            == 0
        )
        assert [t.token_id for t in describe_tokens(client).tokens] == [created.token_id]

    with admin_wire_client(token_broker) as admin:
        expired = admin.request(ExpireDelegationTokenRequest(hmac=created.hmac, expiry_time_period=ms(-1)))
        assert expired.error_code == 0
        assert all(t.token_id != created.token_id for t in describe_tokens(admin).tokens)
    assert token_login(token_broker, created.token_id, created.hmac, "SCRAM-SHA-512") is None


def test_an_expired_token_is_refused_and_swept(token_broker: SecureBrokerProcess) -> None:
    with admin_wire_client(token_broker) as admin:
        created = create_token(admin, max_lifetime_ms=1000)
        assert created.error_code == 0
    session = token_login(token_broker, created.token_id, created.hmac, "SCRAM-SHA-512")
    assert session is not None
    session.close()
    time.sleep(1.2)
    assert token_login(token_broker, created.token_id, created.hmac, "SCRAM-SHA-512") is None
    with admin_wire_client(token_broker) as admin:
        renewed = RenewDelegationTokenRequest(hmac=created.hmac, renew_period=ms(60_000))
        assert error_code(admin, renewed) in (EXPIRED, NOT_FOUND)  # NOT_FOUND once the sweep deleted it
    deadline = time.monotonic() + 10
    stored = token_broker.log_dir / "security-metadata.json"
    while created.token_id in stored.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert created.token_id not in stored.read_text()


def test_tokens_are_stored_without_their_hmac_and_survive_a_restart(secure_broker_factory) -> None:
    broker = secure_broker_factory(**{"delegation.token.secret.key": SECRET})
    with admin_wire_client(broker) as admin:
        created = create_token(admin)
    broker.restart()
    session = token_login(broker, created.token_id, created.hmac, "SCRAM-SHA-256")
    assert session is not None
    session.close()
    stored = (broker.log_dir / "security-metadata.json").read_text()
    assert created.token_id in stored
    # DescribeConfigs marks the secret sensitive and never sends it.
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    client = AdminClient(broker.client_config())  # keep the handle alive until the future resolves
    described = client.describe_configs([resource])[resource].result(timeout=10)
    assert described["delegation.token.secret.key"].is_sensitive
    assert described["delegation.token.secret.key"].value is None
    for secret in (created.hmac.hex(), base64.b64encode(created.hmac).decode(), SECRET):
        assert secret not in stored
        assert secret not in broker.log_text()


def test_without_a_secret_key_the_apis_are_disabled(secure_broker_factory) -> None:
    broker = secure_broker_factory()
    with admin_wire_client(broker) as admin:
        assert error_code(admin, create_request()) == AUTH_DISABLED
        assert describe_tokens(admin).error_code == AUTH_DISABLED


def _login(broker: SecureBrokerProcess, user: str, password: str) -> WireClient:
    client = WireClient(broker.bootstrap)
    assert client.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 0
    token = b"\0" + user.encode() + b"\0" + password.encode()
    assert client.request(SaslAuthenticateRequest(auth_bytes=token)).error_code == 0
    return client


def _grant_on_user(broker: SecureBrokerProcess, grantee: str, operation: Operation, owner: str) -> None:
    """An ALLOW on the USER resource `User:<owner>` (librdkafka's admin API has no USER resource)."""
    creation = AclCreation(
        resource_type=i8(ResourceType.USER),
        resource_name=f"User:{owner}",
        resource_pattern_type=i8(PatternType.LITERAL),
        principal=f"User:{grantee}",
        host="*",
        operation=i8(operation),
        permission_type=i8(Permission.ALLOW),
    )
    with admin_wire_client(broker) as admin:
        answer = admin.request(CreateAclsRequest(creations=(creation,)))
    assert [result.error_code for result in answer.results] == [0]


def test_creating_a_token_for_another_user_needs_create_tokens_on_that_user(
    token_broker: SecureBrokerProcess,
) -> None:
    requester, owner, password = unique("req"), unique("own"), "pw-" + unique("s")
    for user in (requester, owner):
        add_scram_user(token_broker, user, password, "SCRAM-SHA-512")
    with _login(token_broker, requester, password) as client:
        assert error_code(client, create_request(owner=owner)) == AUTHORIZATION_FAILED
    _grant_on_user(token_broker, requester, Operation.CREATE_TOKENS, owner)
    with _login(token_broker, requester, password) as client:
        created = create_token(client, owner=owner)
        assert created.error_code == 0
        assert (created.principal_name, created.token_requester_principal_name) == (owner, requester)
        # The requester sees the token it asked for (Kafka's ownerOrRenewer counts the requester).
        assert created.token_id in {t.token_id for t in describe_tokens(client).tokens}
    session = token_login(token_broker, created.token_id, created.hmac, "SCRAM-SHA-512")
    assert session is not None
    session.close()

    # Another user sees it only with DescribeTokens on the owner.
    watcher = unique("watch")
    add_scram_user(token_broker, watcher, password, "SCRAM-SHA-512")
    with _login(token_broker, watcher, password) as client:
        assert created.token_id not in {t.token_id for t in describe_tokens(client).tokens}
    _grant_on_user(token_broker, watcher, Operation.DESCRIBE_TOKENS, owner)
    with _login(token_broker, watcher, password) as client:
        assert created.token_id in {t.token_id for t in describe_tokens(client).tokens}


def test_tokens_are_not_handed_out_over_plaintext(broker_factory) -> None:
    broker = broker_factory(**{"delegation.token.secret.key": SECRET})
    with WireClient(broker.bootstrap) as client:
        assert error_code(client, create_request()) == REQUEST_NOT_ALLOWED
        assert describe_tokens(client).error_code == REQUEST_NOT_ALLOWED
