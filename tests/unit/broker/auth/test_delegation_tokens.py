"""Delegation tokens sans IO: the token store and SCRAM logins with the tokenauth extension."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest
from scramp import ScramClient

from broker.auth.delegation_tokens import DelegationToken, DelegationTokens
from broker.auth.sasl import AuthSession, SaslAuthenticationFailed, split_extensions
from broker.auth.scram_store import ScramStore, credential_from_password
from broker.metadata.security_registry import SecurityStore


def test_split_extensions_keeps_the_standard_attributes_and_returns_the_extensions() -> None:
    assert split_extensions("n,,n=abc,r=xyz,tokenauth=true") == ("n,,n=abc,r=xyz", {"tokenauth": "true"})
    assert split_extensions("n,,n=abc,r=xyz") == ("n,,n=abc,r=xyz", {})
    assert split_extensions("garbage") == ("garbage", {})


@pytest.fixture
def stores(tmp_path: Path) -> tuple[SecurityStore, DelegationTokens, ScramStore]:
    security = SecurityStore(tmp_path)
    tokens = DelegationTokens(security, "the-secret")
    scram = ScramStore(security, tokens)
    scram.apply([scram.upsert_record("alice", credential_from_password("SCRAM-SHA-512", "alice-pw"))])
    return security, tokens, scram


def _token(tokens: DelegationTokens, *, expiry_ms: int) -> DelegationToken:
    now = int(time.time() * 1000)
    return DelegationToken(tokens.new_token_id(), "User:alice", "User:alice", (), now, expiry_ms, now + 10**6)


def _login(scram: ScramStore, user: str, password: str, extensions: str, reauth_ms: int = 0) -> AuthSession:
    session = AuthSession(
        requires_sasl=True,
        enabled_mechanisms=["SCRAM-SHA-512"],
        store=scram,
        reauth_ms=reauth_ms,
        max_token_bytes=10_000,
    )
    assert session.handshake("SCRAM-SHA-512", 1)
    client = ScramClient(["SCRAM-SHA-512"], user, password)
    first = client.get_client_first() + extensions
    client.client_first_bare = first[3:]
    reply, _done = session.authenticate(first.encode())
    client.set_server_first(reply.decode())
    final, done = session.authenticate(client.get_client_final().encode())
    assert done
    client.set_server_final(final.decode())
    return session


def test_a_token_logs_in_as_its_owner_and_the_session_is_marked(stores) -> None:
    security, tokens, scram = stores
    token = _token(tokens, expiry_ms=int(time.time() * 1000) + 60_000)
    security.apply_records([tokens.upsert_record(token)])
    password = base64.b64encode(tokens.hmac_of(token.token_id)).decode()
    session = _login(scram, token.token_id, password, ",tokenauth=true")
    assert session.principal == "User:alice"
    assert session.token_authenticated
    plain = _login(scram, "alice", "alice-pw", "")
    assert not plain.token_authenticated
    assert tokens.find_by_hmac(tokens.hmac_of(token.token_id)) == token


def test_an_expired_token_a_deleted_token_and_a_token_without_the_extension_are_refused(stores) -> None:
    security, tokens, scram = stores
    expired = _token(tokens, expiry_ms=int(time.time() * 1000) - 1)
    live = _token(tokens, expiry_ms=int(time.time() * 1000) + 60_000)
    security.apply_records([tokens.upsert_record(expired), tokens.upsert_record(live)])
    for token, extensions in ((expired, ",tokenauth=true"), (live, "")):
        password = base64.b64encode(tokens.hmac_of(token.token_id)).decode()
        with pytest.raises(SaslAuthenticationFailed):
            _login(scram, token.token_id, password, extensions)
    assert tokens.expired_records(int(time.time() * 1000)) == [tokens.delete_record(expired.token_id)]
    security.apply_records([tokens.delete_record(live.token_id)])
    assert tokens.find_by_hmac(tokens.hmac_of(live.token_id)) is None
    with pytest.raises(SaslAuthenticationFailed):
        _login(
            scram, live.token_id, base64.b64encode(tokens.hmac_of(live.token_id)).decode(), ",tokenauth=true"
        )


def test_without_a_secret_tokens_are_off(tmp_path: Path) -> None:
    security = SecurityStore(tmp_path)
    tokens = DelegationTokens(security, "")
    assert not tokens.enabled
    assert tokens.login("any", "SCRAM-SHA-512", 0) is None


def test_with_re_authentication_on_a_token_session_ends_when_its_token_expires(stores) -> None:
    security, tokens, scram = stores
    token = _token(tokens, expiry_ms=int(time.time() * 1000) + 2000)
    security.apply_records([tokens.upsert_record(token)])
    password = base64.b64encode(tokens.hmac_of(token.token_id)).decode()
    session = _login(scram, token.token_id, password, ",tokenauth=true", reauth_ms=60_000)
    assert 0 < session.session_lifetime_ms <= 2000
    assert _login(scram, "alice", "alice-pw", "", reauth_ms=60_000).session_lifetime_ms == 60_000
    assert _login(scram, token.token_id, password, ",tokenauth=true").session_lifetime_ms == 0
