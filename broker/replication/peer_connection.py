"""A broker's own client connection to another broker (replica fetching), kio entities on the wire.

One request in flight at a time: the replica fetcher is the only user and waits for each answer.
TLS when given a client context (SSL / SASL_SSL listeners); with SASL credentials the connection
authenticates (SaslHandshake, then SaslAuthenticate rounds) before its first request, and again on
the same connection before the session lifetime the peer announced runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from broker.auth.jaas import SaslCredentials
from broker.auth.sasl_client import SaslClientError, make_sasl_client
from broker.wire.frames import FRAME_SIZE, UnexpectedCorrelation, decode_response, encode_request

# Re-authenticate when this share of the session lifetime has passed (Kafka's clients pick 85-95 %).
REAUTHENTICATE_AT = 0.85
# SCRAM needs two rounds; anything longer is a misbehaving peer.
MAX_SASL_ROUNDS = 4


class PeerConnectionError(Exception):
    """The other broker is unreachable, closed the connection or answered out of order."""


class PeerAuthenticationError(PeerConnectionError):
    """The other broker refused our SASL mechanism or credentials (the message holds no secret)."""


class PeerConnection:
    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str,
        timeout_s: float,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslCredentials | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.ssl_context = ssl_context
        self.sasl = sasl
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation_id = 0
        self._reauthenticate_at: float | None = None

    async def request(self, body: Any, *, wait_s: float = 0.0) -> Any:
        """Send one request and return the decoded response (`wait_s`: how long the peer may park it)."""
        try:
            await asyncio.wait_for(self._ensure_session(), self.timeout_s)
            return await asyncio.wait_for(self._exchange(body), self.timeout_s + wait_s)
        except ssl.SSLError as exc:
            # Like Kafka's SslAuthenticationException: a peer we cannot trust (or that refuses us).
            await self.close()
            raise PeerAuthenticationError(f"{self.host}:{self.port}: TLS handshake failed: {exc}") from None
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            await self.close()
            raise PeerConnectionError(f"{self.host}:{self.port}: {exc!r}") from None
        except PeerConnectionError:
            await self.close()
            raise

    async def _ensure_session(self) -> None:
        """Connect (TLS if configured) and authenticate, or re-authenticate before expiry."""
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(
                self.host,
                self.port,
                ssl=self.ssl_context,
                server_hostname=self.host if self.ssl_context is not None else None,
            )
            self._reauthenticate_at = None
            if self.sasl is not None:
                await self._authenticate(self.sasl)
        elif self._reauthenticate_at is not None and time.monotonic() >= self._reauthenticate_at:
            assert self.sasl is not None
            await self._authenticate(self.sasl)

    async def _authenticate(self, credentials: SaslCredentials) -> None:
        where = f"{self.host}:{self.port}"
        handshake = await self._exchange(SaslHandshakeRequest(mechanism=credentials.mechanism))
        if handshake.error_code != ErrorCode.none:
            enabled = ", ".join(handshake.mechanisms) or "none"
            raise PeerAuthenticationError(
                f"{where} does not accept SASL mechanism {credentials.mechanism} (enabled: {enabled})"
            )
        try:
            client = make_sasl_client(credentials)
            token: bytes | None = client.initial_response()
        except SaslClientError as exc:
            raise PeerAuthenticationError(f"{where}: {exc}") from None
        for _round in range(MAX_SASL_ROUNDS):
            assert token is not None
            answer = await self._exchange(SaslAuthenticateRequest(auth_bytes=token))
            if answer.error_code != ErrorCode.none:
                # The broker's failure messages are generic; they never echo a token.
                raise PeerAuthenticationError(
                    f"{where} refused {credentials.mechanism} login as {credentials.username!r}: "
                    f"{answer.error_message or answer.error_code.name}"
                )
            try:
                token = client.evaluate(answer.auth_bytes)
            except SaslClientError as exc:
                raise PeerAuthenticationError(f"{where}: {exc}") from None
            if token is None:
                lifetime_s = answer.session_lifetime.total_seconds()
                self._reauthenticate_at = (
                    time.monotonic() + lifetime_s * REAUTHENTICATE_AT if lifetime_s > 0 else None
                )
                return
        raise PeerAuthenticationError(f"{where}: SASL exchange did not complete in {MAX_SASL_ROUNDS} rounds")

    async def _exchange(self, body: Any) -> Any:
        assert self._reader is not None
        assert self._writer is not None
        self._correlation_id += 1
        correlation_id = self._correlation_id
        self._writer.write(encode_request(body, correlation_id, self.client_id))
        await self._writer.drain()
        (size,) = FRAME_SIZE.unpack(await self._reader.readexactly(4))
        frame = await self._reader.readexactly(size)
        try:
            return decode_response(frame, int(body.__api_key__), int(body.__version__), correlation_id)
        except UnexpectedCorrelation as exc:
            raise PeerConnectionError(str(exc)) from None

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
