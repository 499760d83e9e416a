"""SaslHandshake (17) and SaslAuthenticate (36): drive the connection's AuthSession."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.sasl import AuthSession, SaslAuthenticationFailed
from broker.context import RequestContext


def _auth(ctx: RequestContext) -> AuthSession | None:
    session = ctx.session
    if session is None or not session.auth.requires_sasl:
        return None
    return session.auth


async def handle_sasl_handshake(ctx: RequestContext, request: Any) -> dict[str, Any]:
    enabled = ctx.broker.config.sasl_enabled_mechanisms
    auth = _auth(ctx)
    if auth is None:
        # Not a SASL listener: Kafka answers ILLEGAL_SASL_STATE.
        return {"error_code": ErrorCode.illegal_sasl_state, "mechanisms": []}
    if auth.in_exchange() or (auth.authenticated and ctx.api_version == 0):
        # A second handshake mid-exchange, or re-authentication without SaslAuthenticate.
        auth.close_after_response = True
        return {"error_code": ErrorCode.illegal_sasl_state, "mechanisms": enabled}
    if not auth.handshake(request.mechanism, ctx.api_version):
        return {"error_code": ErrorCode.unsupported_sasl_mechanism, "mechanisms": enabled}
    return {"error_code": ErrorCode.none, "mechanisms": enabled}


async def handle_sasl_authenticate(ctx: RequestContext, request: Any) -> dict[str, Any]:
    auth = _auth(ctx)
    if auth is None or not auth.in_exchange() or auth.raw_tokens:
        if auth is not None:
            auth.close_after_response = True
        return {
            "error_code": ErrorCode.illegal_sasl_state,
            "error_message": "SaslAuthenticate is only valid after a v1 SaslHandshake on a SASL listener",
            "auth_bytes": b"",
            "session_lifetime": 0,
        }
    try:
        reply, complete = auth.authenticate(bytes(request.auth_bytes))
    except SaslAuthenticationFailed as exc:
        return {
            "error_code": ErrorCode.sasl_authentication_failed,
            "error_message": str(exc),
            "auth_bytes": b"",
            "session_lifetime": 0,
        }
    lifetime = auth.session_lifetime_ms if complete else 0
    return {
        "error_code": ErrorCode.none,
        "error_message": None,
        "auth_bytes": reply,
        "session_lifetime": lifetime,
    }


APIS = {
    17: (0, 1, handle_sasl_handshake),
    36: (0, 2, handle_sasl_authenticate),
}
