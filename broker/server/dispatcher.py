"""Turns one request frame into one response frame (or none) by calling the API table's handler."""

from __future__ import annotations

import dataclasses
import datetime
import logging
import time
from dataclasses import dataclass
from typing import Any

from broker.auth.principal import ANONYMOUS, principal_user
from broker.auth.sasl import ALLOWED_BEFORE_AUTHENTICATION
from broker.context import BrokerState, ClientSession, RequestContext
from broker.handlers.api_table import API_TABLE, handler
from broker.handlers.api_versions import (
    LEGACY_SETTING,
    hidden_apis,
    served_min_version,
    unsupported_version_body,
)
from broker.protocol.frames import (
    FramedResponse,
    MalformedRequest,
    UnsupportedRequest,
    decode_body,
    decode_header,
    encode_response,
)
from broker.protocol.kio_fields import field_shapes
from broker.protocol.responses import build_response
from broker.quotas.manager import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE

log = logging.getLogger(__name__)

API_VERSIONS = 18
PRODUCE = 0
FETCH = 1
# Handlers that park the request (long-poll Fetch, JoinGroup/SyncGroup rebalances): their wall
# time is mostly waiting, not work, so it does not count against request_percentage.
WAITING_APIS = frozenset({FETCH, 11, 14})


class IllegalSaslState(MalformedRequest):
    """A request other than ApiVersions / SASL before authentication (or after the session expired)."""


@dataclass(frozen=True, slots=True)
class Peer:
    host: str
    port: int
    listener_name: str


async def dispatch(
    state: BrokerState, peer: Peer, frame: bytes | memoryview, session: ClientSession | None = None
) -> list[bytes] | None:
    """Handle one request frame; returns the response buffers to write (size prefix included).

    Raises MalformedRequest for garbage and UnsupportedRequest for api keys/versions we do not
    serve (other than ApiVersions); the connection is closed in both cases, as Kafka does.
    Without a session the caller is an authenticated anonymous client (unit tests).
    Quota throttling is left in `session.throttle_s` for the connection to honour.
    """
    started = time.perf_counter()
    header = decode_header(frame)
    auth = session.auth if session is not None else None
    if auth is not None and header.api_key not in ALLOWED_BEFORE_AUTHENTICATION:
        if not auth.authenticated:
            raise IllegalSaslState(f"api {header.api_key} before SASL authentication completed")
        if auth.expires_at is not None and auth.expired(time.monotonic()):
            raise IllegalSaslState("SASL session expired without re-authentication")
    entry = API_TABLE.get(header.api_key)
    legacy = state.config.get_bool(LEGACY_SETTING)
    if (
        entry is None
        or not served_min_version(header.api_key, entry[0], legacy) <= header.api_version <= entry[1]
    ):
        if header.api_key == API_VERSIONS:
            # KIP-511: answer a too-new ApiVersions with a v0 body listing what we support,
            # so the client can retry with a version we know.
            body = build_response(API_VERSIONS, 0, unsupported_version_body(legacy, hidden_apis(state)))
            return [encode_response(API_VERSIONS, 0, header.correlation_id, body)]
        raise UnsupportedRequest(header.api_key, header.api_version, header.correlation_id)
    request = decode_body(header, frame)
    ctx = RequestContext(
        api_key=header.api_key,
        api_version=header.api_version,
        correlation_id=header.correlation_id,
        client_id=header.client_id,
        client_host=peer.host,
        client_port=peer.port,
        listener_name=peer.listener_name,
        broker=state,
        principal=auth.principal if auth is not None else ANONYMOUS,
        session=session,
    )
    # Imported on the API's first request; one that does not import raises HandlerUnavailable here.
    result = await handler(header.api_key)(ctx, request)
    quotas = state.quotas
    if session is not None and quotas.enabled:
        # A handler may already have asked for a throttle (controller mutations).
        session.throttle_s = max(
            session.throttle_s, _throttle(ctx, quotas, len(frame), time.perf_counter() - started)
        )
        if session.throttle_s > 0:
            result = _with_throttle_time(result, int(session.throttle_s * 1000))
    if result is None:
        response = None
    elif isinstance(result, FramedResponse):
        response = result.chunks
    else:
        entity = build_response(header.api_key, header.api_version, result)
        response = [encode_response(header.api_key, header.api_version, header.correlation_id, entity)]
    state.metrics.record_request(header.api_key, header.api_version, time.perf_counter() - started)
    return response


def _with_throttle_time(result: Any, throttle_ms: int) -> Any:
    """The answer telling the client how long it is throttled, where its response has that field."""
    if dataclasses.is_dataclass(result) and "throttle_time" in field_shapes(type(result)):
        return dataclasses.replace(result, throttle_time=datetime.timedelta(milliseconds=throttle_ms))
    return result


def _throttle(ctx: RequestContext, quotas: Any, request_bytes: int, handler_s: float) -> float:
    """Record this request against the client's quotas; the longest throttle that applies."""
    user = principal_user(ctx.principal)
    client_id = ctx.client_id or ""
    now = time.monotonic()
    throttle = 0.0
    if ctx.api_key == PRODUCE:
        throttle = quotas.record(PRODUCER_BYTE_RATE, user, client_id, request_bytes, now)
    elif ctx.api_key == FETCH:
        # The fetch handler records the bytes it sends and caps them; here only the wait.
        throttle = quotas.throttle(CONSUMER_BYTE_RATE, user, client_id, now)
    if ctx.api_key not in ALLOWED_BEFORE_AUTHENTICATION and ctx.api_key not in WAITING_APIS:
        # request_percentage: handler time as a percentage of one thread.
        throttle = max(throttle, quotas.record(REQUEST_PERCENTAGE, user, client_id, handler_s * 100, now))
    return throttle


__all__ = ["MalformedRequest", "Peer", "UnsupportedRequest", "dispatch"]
