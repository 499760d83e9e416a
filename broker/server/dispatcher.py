"""Turns one request frame into one response frame (or none) by calling the registered handler."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from broker.handlers import registry
from broker.handlers.api_versions import unsupported_version_body
from broker.protocol.frames import (
    FramedResponse,
    MalformedRequest,
    UnsupportedRequest,
    decode_body,
    decode_header,
    encode_response,
)
from broker.protocol.responses import build_response
from broker.server.context import BrokerState, RequestContext

log = logging.getLogger(__name__)

API_VERSIONS = 18


@dataclass(frozen=True, slots=True)
class Peer:
    host: str
    port: int
    listener_name: str


async def dispatch(state: BrokerState, peer: Peer, frame: bytes | memoryview) -> list[bytes] | None:
    """Handle one request frame; returns the response buffers to write (size prefix included).

    Raises MalformedRequest for garbage and UnsupportedRequest for api keys/versions we do not
    serve (other than ApiVersions); the connection is closed in both cases, as Kafka does.
    """
    started = time.perf_counter()
    header = decode_header(frame)
    entry = registry().get(header.api_key)
    if entry is None or not entry[0] <= header.api_version <= entry[1]:
        if header.api_key == API_VERSIONS:
            # KIP-511: answer a too-new ApiVersions with a v0 body listing what we support,
            # so the client can retry with a version we know.
            body = build_response(API_VERSIONS, 0, unsupported_version_body())
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
    )
    handler = entry[2]
    result = await handler(ctx, request)
    if result is None:
        response = None
    elif isinstance(result, FramedResponse):
        response = result.chunks
    else:
        entity = build_response(header.api_key, header.api_version, result)
        response = [encode_response(header.api_key, header.api_version, header.correlation_id, entity)]
    state.metrics.record_request(header.api_key, header.api_version, time.perf_counter() - started)
    return response


__all__ = ["MalformedRequest", "Peer", "UnsupportedRequest", "dispatch"]
