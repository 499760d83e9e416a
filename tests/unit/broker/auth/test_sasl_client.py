"""The broker's SASL client against the broker's own server-side mechanisms, in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.auth.jaas import SaslCredentials
from broker.auth.sasl import AuthSession, SaslAuthenticationFailed
from broker.auth.sasl_client import SaslClientError, make_sasl_client
from broker.auth.scram_store import ScramStore, credential_from_password
from broker.metadata.security_registry import SecurityStore

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.fixture
def store(tmp_path: Path) -> ScramStore:
    security = SecurityStore(tmp_path)
    security.load()
    scram = ScramStore(security)
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        scram.apply([scram.upsert_record("broker", credential_from_password(mechanism, "inter-broker"))])
    return scram


def server_session(store: ScramStore) -> AuthSession:
    return AuthSession(
        requires_sasl=True, enabled_mechanisms=MECHANISMS, store=store, reauth_ms=0, max_token_bytes=4096
    )


def run_exchange(server: AuthSession, credentials: SaslCredentials) -> int:
    """What the peer connection does with SaslAuthenticate rounds; returns the number of rounds."""
    assert server.handshake(credentials.mechanism, 1)
    client = make_sasl_client(credentials)
    token: bytes | None = client.initial_response()
    rounds = 0
    while token is not None:
        rounds += 1
        reply, _done = server.authenticate(token)
        token = client.evaluate(reply)
    assert client.complete
    return rounds


@pytest.mark.parametrize(("mechanism", "rounds"), [("PLAIN", 1), ("SCRAM-SHA-256", 2), ("SCRAM-SHA-512", 2)])
def test_the_client_authenticates_to_the_brokers_server_side(
    store: ScramStore, mechanism: str, rounds: int
) -> None:
    server = server_session(store)
    assert run_exchange(server, SaslCredentials(mechanism, "broker", "inter-broker")) == rounds
    assert server.authenticated
    assert server.principal == "User:broker"


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_wrong_password_is_refused_by_the_server(store: ScramStore, mechanism: str) -> None:
    server = server_session(store)
    with pytest.raises(SaslAuthenticationFailed):
        run_exchange(server, SaslCredentials(mechanism, "broker", "wrong"))
    assert not server.authenticated


def test_an_unknown_user_is_refused_like_a_wrong_password(store: ScramStore) -> None:
    with pytest.raises(SaslAuthenticationFailed, match="invalid credentials"):
        run_exchange(server_session(store), SaslCredentials("SCRAM-SHA-512", "nobody", "inter-broker"))


def test_the_scram_client_refuses_a_server_that_cannot_prove_it_knows_the_key(store: ScramStore) -> None:
    server = server_session(store)
    assert server.handshake("SCRAM-SHA-512", 1)
    client = make_sasl_client(SaslCredentials("SCRAM-SHA-512", "broker", "inter-broker"))
    server_first, _ = server.authenticate(client.initial_response())
    client_final = client.evaluate(server_first)
    assert client_final is not None
    server_final, done = server.authenticate(client_final)
    assert done
    forged = b"v=" + b"A" * 86 + b"=="
    assert forged != server_final
    with pytest.raises(SaslClientError, match="SCRAM exchange failed"):
        client.evaluate(forged)
    assert not client.complete


def test_the_scram_client_refuses_a_server_first_message_that_drops_its_nonce(store: ScramStore) -> None:
    client = make_sasl_client(SaslCredentials("SCRAM-SHA-256", "broker", "inter-broker"))
    client.initial_response()
    with pytest.raises(SaslClientError):
        client.evaluate(b"r=someone-elses-nonce,s=c2FsdA==,i=4096")
