"""SASL mechanisms (PLAIN, SCRAM-SHA-256/512) and the per-connection authentication session.

Sans-IO: `AuthSession` is driven by the SaslHandshake / SaslAuthenticate handlers (or by raw
tokens after a v0 handshake) and tells the connection whether it is authenticated, as whom,
until when, and whether it must be closed. Failure messages are generic and never contain a
token, password or key.
"""

from __future__ import annotations

import hmac
import os
import time
from collections import deque
from typing import Protocol

from scramp import ScramMechanism
from scramp.core import Nonce

from broker.auth.principal import ANONYMOUS, user_principal
from broker.auth.scram_store import HASHES, ScramStore, TokenLogins

SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
API_VERSIONS = 18
ALLOWED_BEFORE_AUTHENTICATION = frozenset({API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE})


class SaslAuthenticationFailed(Exception):
    """Credentials did not check out; the message is safe to send to the client."""


class MechanismServer(Protocol):
    complete: bool
    user: str | None
    # Set when the user logged in with a delegation token: the token owner's principal, its expiry.
    token_owner: str | None
    token_expiry_ms: int | None

    def evaluate(self, token: bytes) -> bytes: ...


def failure_message(mechanism: str) -> str:
    return (
        "Authentication failed during authentication due to invalid credentials "
        f"with SASL mechanism {mechanism}"
    )


class PlainServer:
    """RFC 4616: one message `authzid NUL authcid NUL password`."""

    def __init__(self, store: ScramStore) -> None:
        self._store = store
        self.complete = False
        self.user: str | None = None
        self.token_owner: str | None = None
        self.token_expiry_ms: int | None = None

    def evaluate(self, token: bytes) -> bytes:
        parts = token.split(b"\0")
        if len(parts) != 3:
            raise SaslAuthenticationFailed("Invalid SASL/PLAIN response: expected 3 tokens")
        try:
            authzid, user, password = (part.decode("utf-8") for part in parts)
        except UnicodeDecodeError:
            raise SaslAuthenticationFailed("Invalid SASL/PLAIN response: not UTF-8") from None
        if not user or not password:
            raise SaslAuthenticationFailed("Authentication failed: username and password are required")
        if authzid and authzid != user:
            raise SaslAuthenticationFailed("Authentication failed: authorization id must equal the username")
        if not self._store.check_password(user, password):
            raise SaslAuthenticationFailed(failure_message("PLAIN"))
        self.user = user
        self.complete = True
        return b""


# Keys for users that do not exist: the exchange runs to the end and fails on the proof,
# so an unknown user looks the same as a wrong password.
_DECOY_SECRET = os.urandom(32)


def split_extensions(client_first: str) -> tuple[str, dict[str, str]]:
    """Kafka's SCRAM extensions (KIP-84, `tokenauth=true`) follow `n=...,r=...` in the client-first
    message; scramp only knows one-letter attributes. Returns the message without them, and them."""
    gs2_end = client_first.find(",", client_first.find(",") + 1)
    if gs2_end < 0:
        return client_first, {}
    attributes = client_first[gs2_end + 1 :].split(",")
    standard = [a for a in attributes if len(a.partition("=")[0]) == 1]
    extensions = dict(a.partition("=")[::2] for a in attributes if len(a.partition("=")[0]) != 1)
    return client_first[: gs2_end + 1] + ",".join(standard), extensions


class ScramServer:
    """RFC 5802 server side through scramp: client-first, then client-final."""

    def __init__(self, mechanism: str, store: ScramStore) -> None:
        self._mechanism = mechanism
        self._store = store
        self._server = ScramMechanism(mechanism).make_server(self._credentials)
        self._step = 0
        self._user: str | None = None
        self._known_user = False
        self._token_auth = False
        self.complete = False
        self.user: str | None = None
        self.token_owner: str | None = None
        self.token_expiry_ms: int | None = None

    def _credentials(self, saslname: str) -> tuple[bytes, bytes, bytes, int]:
        user = saslname.replace("=2C", ",").replace("=3D", "=")
        self._user = user
        credential = self._store.get(user, self._mechanism) if not self._token_auth else None
        tokens: TokenLogins | None = self._store.tokens
        if self._token_auth and tokens is not None:
            login = tokens.login(user, self._mechanism, int(time.time() * 1000))
            if login is not None:
                credential, self.token_owner, self.token_expiry_ms = (
                    login.credential,
                    login.owner,
                    login.expiry_ms,
                )
        if credential is None:
            digest = HASHES[self._mechanism]
            salt = hmac.digest(_DECOY_SECRET, user.encode("utf-8"), digest)[:24]
            key = hmac.digest(_DECOY_SECRET, salt, digest)
            return salt, key, key, 4096
        self._known_user = True
        return credential.salt, credential.stored_key, credential.server_key, credential.iterations

    def evaluate(self, token: bytes) -> bytes:
        try:
            message = token.decode("utf-8")
        except UnicodeDecodeError:
            raise SaslAuthenticationFailed("Invalid SCRAM message: not UTF-8") from None
        try:
            if self._step == 0:
                self._step = 1
                standard, extensions = split_extensions(message)
                self._token_auth = extensions.get("tokenauth", "").lower() == "true"
                self._server.set_client_first(standard)
                # The proof covers the client-first message as sent, extensions included.
                self._server.client_first_bare = message[message.find(",", message.find(",") + 1) + 1 :]
                return self._server.get_server_first().encode("utf-8")
            if self._step == 1:
                self._step = 2
                self._accept_repeated_client_nonce(message)
                self._server.set_client_final(message)
                if not self._known_user:
                    raise SaslAuthenticationFailed(failure_message(self._mechanism))
                final = self._server.get_server_final()
                self.user = self._user
                self.complete = True
                return final.encode("utf-8")
        except SaslAuthenticationFailed:
            raise
        except Exception:
            # scramp's messages may quote client input; send the generic one.
            raise SaslAuthenticationFailed(failure_message(self._mechanism)) from None
        raise SaslAuthenticationFailed("Unexpected SCRAM message after authentication completed")

    def _accept_repeated_client_nonce(self, client_final: str) -> None:
        """librdkafka up to 2.0 sends back its own nonce followed by the combined one.

        Kafka's server only checks that the final nonce ends with the one it sent, and the
        proof covers the message as sent, so accept it the same way.
        """
        expected = str(self._server.nonce)
        for attribute in client_final.split(","):
            if attribute.startswith("r="):
                sent = attribute[2:]
                if sent != expected and sent.endswith(expected):
                    self._server.nonce = Nonce(sent)
                return


def make_mechanism_server(mechanism: str, store: ScramStore) -> MechanismServer:
    if mechanism == "PLAIN":
        return PlainServer(store)
    return ScramServer(mechanism, store)


class AuthSession:
    """Authentication state of one connection (Kafka's SaslServerAuthenticator, sans IO)."""

    def __init__(
        self,
        *,
        requires_sasl: bool,
        enabled_mechanisms: list[str],
        store: ScramStore | None,
        reauth_ms: int,
        max_token_bytes: int,
        principal: str = ANONYMOUS,
    ) -> None:
        self.requires_sasl = requires_sasl
        self.enabled_mechanisms = enabled_mechanisms
        self.max_token_bytes = max_token_bytes
        self.reauth_ms = reauth_ms
        self._store = store
        self.authenticated = not requires_sasl
        self.principal = principal
        self.mechanism: str | None = None
        # True when the session logged in with a delegation token: it may not ask for tokens.
        self.token_authenticated = False
        self._server: MechanismServer | None = None
        # Legacy clients send raw size-prefixed tokens after a v0 SaslHandshake.
        self.raw_tokens = False
        self.expires_at: float | None = None  # time.monotonic() deadline while authenticated
        self.session_lifetime_ms = 0  # what SaslAuthenticate tells the client (0: no re-authentication)
        self.close_after_response = False
        self.failed = False

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now > self.expires_at

    def handshake(self, mechanism: str, version: int) -> bool:
        """Start an exchange (or a re-authentication). False: mechanism not enabled, close."""
        if mechanism not in self.enabled_mechanisms or self._store is None:
            self.close_after_response = True
            return False
        self.mechanism = mechanism
        self._server = make_mechanism_server(mechanism, self._store)
        self.raw_tokens = version == 0
        return True

    def in_exchange(self) -> bool:
        return self._server is not None

    def authenticate(self, token: bytes) -> tuple[bytes, bool]:
        """One token in, one token out; (reply, complete). Raises SaslAuthenticationFailed."""
        server = self._server
        if server is None:
            raise SaslAuthenticationFailed("SaslAuthenticate received before SaslHandshake")
        if len(token) > self.max_token_bytes:
            self._fail()
            raise SaslAuthenticationFailed("SASL token larger than sasl.server.max.receive.size")
        try:
            reply = server.evaluate(token)
        except SaslAuthenticationFailed:
            self._fail()
            raise
        if not server.complete:
            return reply, False
        assert server.user is not None
        principal = server.token_owner or user_principal(server.user)
        if self.authenticated and self.requires_sasl and principal != self.principal:
            # KIP-368: re-authentication must not change who the connection is.
            self._fail()
            raise SaslAuthenticationFailed("Re-authentication must use the same principal")
        self.principal = principal
        self.authenticated = True
        self.token_authenticated = server.token_owner is not None
        self._server = None
        self.raw_tokens = False
        self.session_lifetime_ms = max(self.reauth_ms, 0)
        if self.reauth_ms > 0 and server.token_expiry_ms is not None:
            # KIP-368: a token session re-authenticates by the time its token expires.
            left_ms = server.token_expiry_ms - int(time.time() * 1000)
            self.session_lifetime_ms = max(1, min(self.reauth_ms, left_ms))
        lifetime_s = self.session_lifetime_ms / 1000
        self.expires_at = time.monotonic() + lifetime_s if self.session_lifetime_ms > 0 else None
        return reply, True

    def _fail(self) -> None:
        self.failed = True
        self.close_after_response = True
        self._server = None
        self.raw_tokens = False


class FailedAuthentications:
    """Recent failures per client address: each one adds delay before the failure is answered."""

    WINDOW_S = 60.0
    MAX_FACTOR = 10

    def __init__(self, delay_ms: int) -> None:
        self._delay_s = delay_ms / 1000
        self._failures: dict[str, deque[float]] = {}

    def record(self, host: str, now: float) -> float:
        """Note a failure from `host`; returns how long to wait before answering it."""
        recent = self._failures.setdefault(host, deque())
        while recent and now - recent[0] > self.WINDOW_S:
            recent.popleft()
        recent.append(now)
        if len(self._failures) > 10_000:
            self._failures = {h: q for h, q in self._failures.items() if q and now - q[-1] <= self.WINDOW_S}
        return self._delay_s * min(len(recent), self.MAX_FACTOR)
