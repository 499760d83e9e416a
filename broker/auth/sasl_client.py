"""Client side of SASL PLAIN and SCRAM-SHA-256/512 (through scramp), sans IO.

A broker uses it to authenticate to another broker (replica fetching). `initial_response()` is the
first SaslAuthenticate token; each server reply goes to `evaluate`, which returns the next token,
or None once the exchange is complete (a SCRAM server's signature checked).
"""

from __future__ import annotations

from typing import Protocol

from scramp import ScramClient, ScramException

from broker.auth.jaas import SaslCredentials


class SaslClientError(Exception):
    """The server's reply did not check out (for SCRAM: a wrong server signature)."""


class SaslClient(Protocol):
    complete: bool

    def initial_response(self) -> bytes: ...

    def evaluate(self, challenge: bytes) -> bytes | None: ...


class PlainClient:
    def __init__(self, credentials: SaslCredentials) -> None:
        self._credentials = credentials
        self.complete = False

    def initial_response(self) -> bytes:
        return b"\0" + self._credentials.username.encode() + b"\0" + self._credentials.password.encode()

    def evaluate(self, challenge: bytes) -> bytes | None:
        self.complete = True
        return None


class ScramClientExchange:
    """RFC 5802 client: client-first, client-final, then the server's signature."""

    def __init__(self, credentials: SaslCredentials) -> None:
        try:
            self._client = ScramClient([credentials.mechanism], credentials.username, credentials.password)
        except ScramException as exc:
            # saslprep refuses some characters; scramp's message does not quote the password.
            raise SaslClientError(f"cannot use these SCRAM credentials: {exc}") from None
        self._step = 0
        self.complete = False

    def initial_response(self) -> bytes:
        return self._client.get_client_first().encode()

    def evaluate(self, challenge: bytes) -> bytes | None:
        try:
            message = challenge.decode()
            if self._step == 0:
                self._step = 1
                self._client.set_server_first(message)
                return self._client.get_client_final().encode()
            if self._step == 1:
                self._step = 2
                self._client.set_server_final(message)
                self.complete = True
                return None
        except Exception as exc:
            # scramp's messages quote server input only, never the password.
            raise SaslClientError(f"SCRAM exchange failed: {exc}") from None
        raise SaslClientError("SCRAM server sent a message after the exchange completed")


def make_sasl_client(credentials: SaslCredentials) -> SaslClient:
    if credentials.mechanism == "PLAIN":
        return PlainClient(credentials)
    return ScramClientExchange(credentials)
