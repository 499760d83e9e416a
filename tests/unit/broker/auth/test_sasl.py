"""SASL mechanisms and the authentication session, driven by scramp's client (no sockets)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scramp import ScramClient

from broker.auth.sasl import AuthSession, FailedAuthentications, SaslAuthenticationFailed
from broker.auth.scram_store import ScramStore, credential_from_password
from broker.metadata.security_registry import SecurityStore


@pytest.fixture
def store(tmp_path: Path) -> ScramStore:
    security = SecurityStore(tmp_path)
    security.load()
    scram = ScramStore(security)
    scram.apply([scram.upsert_record("alice", credential_from_password("SCRAM-SHA-256", "s3cret"))])
    scram.apply([scram.upsert_record("alice", credential_from_password("SCRAM-SHA-512", "s3cret"))])
    return scram


def session(store: ScramStore, reauth_ms: int = 0) -> AuthSession:
    return AuthSession(
        requires_sasl=True,
        enabled_mechanisms=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"],
        store=store,
        reauth_ms=reauth_ms,
        max_token_bytes=1024,
    )


def scram_exchange(auth: AuthSession, mechanism: str, user: str, password: str) -> None:
    assert auth.handshake(mechanism, 1)
    client = ScramClient([mechanism], user, password)
    server_first, done = auth.authenticate(client.get_client_first().encode())
    assert not done
    client.set_server_first(server_first.decode())
    server_final, done = auth.authenticate(client.get_client_final().encode())
    assert done
    client.set_server_final(server_final.decode())  # the client checks the server's proof


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_it_authenticates_a_scram_client(store: ScramStore, mechanism: str) -> None:
    auth = session(store)
    scram_exchange(auth, mechanism, "alice", "s3cret")
    assert auth.authenticated
    assert auth.principal == "User:alice"


@pytest.mark.parametrize(("user", "password"), [("alice", "wrong"), ("mallory", "s3cret")])
def test_a_wrong_password_and_an_unknown_user_fail_the_same_way(
    store: ScramStore, user: str, password: str
) -> None:
    auth = session(store)
    with pytest.raises(SaslAuthenticationFailed) as failure:
        scram_exchange(auth, "SCRAM-SHA-256", user, password)
    assert str(failure.value) == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
    )
    assert password not in str(failure.value)
    assert not auth.authenticated
    assert auth.close_after_response


def test_plain_checks_the_password_against_the_scram_credential(store: ScramStore) -> None:
    auth = session(store)
    assert auth.handshake("PLAIN", 1)
    assert auth.authenticate(b"\0alice\0s3cret") == (b"", True)
    assert auth.principal == "User:alice"
    refused = session(store)
    refused.handshake("PLAIN", 1)
    with pytest.raises(SaslAuthenticationFailed):
        refused.authenticate(b"\0alice\0nope")


@pytest.mark.parametrize("token", [b"alice\0s3cret", b"bob\0alice\0s3cret", b"\0\0", b"\xff\0alice\0s3cret"])
def test_malformed_plain_tokens_fail(store: ScramStore, token: bytes) -> None:
    auth = session(store)
    auth.handshake("PLAIN", 1)
    with pytest.raises(SaslAuthenticationFailed):
        auth.authenticate(token)


def test_an_unknown_mechanism_is_refused_and_closes(store: ScramStore) -> None:
    auth = session(store)
    assert not auth.handshake("GSSAPI", 1)
    assert auth.close_after_response


def test_an_oversized_token_fails_before_it_is_evaluated(store: ScramStore) -> None:
    auth = session(store)
    auth.handshake("PLAIN", 1)
    with pytest.raises(SaslAuthenticationFailed):
        auth.authenticate(b"\0alice\0" + b"x" * 2000)


def test_a_v0_handshake_switches_to_raw_tokens_until_authenticated(store: ScramStore) -> None:
    auth = session(store)
    auth.handshake("PLAIN", 0)
    assert auth.raw_tokens
    auth.authenticate(b"\0alice\0s3cret")
    assert not auth.raw_tokens


def test_a_session_with_reauthentication_expires_and_must_keep_its_principal(store: ScramStore) -> None:
    auth = session(store, reauth_ms=1000)
    auth.handshake("PLAIN", 1)
    auth.authenticate(b"\0alice\0s3cret")
    assert auth.expires_at is not None
    assert not auth.expired(auth.expires_at - 0.5)
    assert auth.expired(auth.expires_at + 0.1)
    store.apply([store.upsert_record("bob", credential_from_password("SCRAM-SHA-256", "pw"))])
    auth.handshake("PLAIN", 1)
    with pytest.raises(SaslAuthenticationFailed):
        auth.authenticate(b"\0bob\0pw")


def test_repeated_failures_from_one_address_wait_longer() -> None:
    failures = FailedAuthentications(delay_ms=100)
    assert failures.record("10.0.0.1", 0.0) == pytest.approx(0.1)
    assert failures.record("10.0.0.1", 1.0) == pytest.approx(0.2)
    assert failures.record("10.0.0.2", 1.0) == pytest.approx(0.1)
    assert failures.record("10.0.0.1", 100.0) == pytest.approx(0.1)  # old failures are forgotten


def test_librdkafka_2_0_repeated_client_nonce_is_accepted(store: ScramStore) -> None:
    auth = session(store)
    auth.handshake("SCRAM-SHA-256", 1)
    client = ScramClient(["SCRAM-SHA-256"], "alice", "s3cret")
    client_first = client.get_client_first()
    client_nonce = client_first.split("r=")[1]
    server_first, _ = auth.authenticate(client_first.encode())
    # Build the final message the way librdkafka 2.0 does: own nonce, then the server's.
    import base64
    import hashlib
    import hmac

    attributes = dict(item.split("=", 1) for item in server_first.decode().split(","))
    salted = hashlib.pbkdf2_hmac("sha256", b"s3cret", base64.b64decode(attributes["s"]), int(attributes["i"]))
    final_without_proof = f"c=biws,r={client_nonce}{attributes['r']}"
    auth_message = f"n=alice,r={client_nonce},{server_first.decode()},{final_without_proof}".encode()
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    signature = hmac.digest(hashlib.sha256(client_key).digest(), auth_message, "sha256")
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
    _final, done = auth.authenticate(f"{final_without_proof},p={proof}".encode())
    assert done
