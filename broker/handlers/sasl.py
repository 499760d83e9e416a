"""SaslHandshake (17) and SaslAuthenticate (36): drive the connection's AuthSession."""

from __future__ import annotations

import datetime
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.sasl_authenticate.v2.response import SaslAuthenticateResponse
from kio.schema.sasl_handshake.v1.response import SaslHandshakeResponse

from broker.auth.sasl import AuthSession, SaslAuthenticationFailed
from broker.context import RequestContext


def _auth(ctx: RequestContext) -> AuthSession | None:
    session = ctx.session
    if session is None or not session.auth.requires_sasl:
        return None
    return session.auth


async def handle_sasl_handshake(ctx: RequestContext, request: Any) -> SaslHandshakeResponse:
    enabled = ctx.broker.config.sasl_enabled_mechanisms
    auth = _auth(ctx)
    if auth is None:
        # Not a SASL listener: Kafka answers ILLEGAL_SASL_STATE.
        return SaslHandshakeResponse(error_code=ErrorCode.illegal_sasl_state, mechanisms=())
    if auth.in_exchange() or (auth.authenticated and ctx.api_version == 0):
        # A second handshake mid-exchange, or re-authentication without SaslAuthenticate.
        auth.close_after_response = True
        return SaslHandshakeResponse(error_code=ErrorCode.illegal_sasl_state, mechanisms=tuple(enabled))
    if not auth.handshake(request.mechanism, ctx.api_version):
        return SaslHandshakeResponse(
            error_code=ErrorCode.unsupported_sasl_mechanism, mechanisms=tuple(enabled)
        )
    return SaslHandshakeResponse(error_code=ErrorCode.none, mechanisms=tuple(enabled))


async def handle_sasl_authenticate(ctx: RequestContext, request: Any) -> SaslAuthenticateResponse:
    auth = _auth(ctx)
    if auth is None or not auth.in_exchange() or auth.raw_tokens:
        if auth is not None:
            auth.close_after_response = True
        return SaslAuthenticateResponse(
            error_code=ErrorCode.illegal_sasl_state,
            error_message="SaslAuthenticate is only valid after a v1 SaslHandshake on a SASL listener",
            auth_bytes=b"",
        )
    try:
        reply, complete = auth.authenticate(bytes(request.auth_bytes))
    except SaslAuthenticationFailed as exc:
        return SaslAuthenticateResponse(
            error_code=ErrorCode.sasl_authentication_failed, error_message=str(exc), auth_bytes=b""
        )
    lifetime = auth.session_lifetime_ms if complete else 0
    return SaslAuthenticateResponse(
        error_code=ErrorCode.none,
        error_message=None,
        auth_bytes=reply,
        session_lifetime=datetime.timedelta(milliseconds=lifetime),
    )
