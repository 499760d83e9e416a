"""ApiVersions (18)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.server.context import RequestContext

# librdkafka changes behaviour as soon as these are advertised (REFERENCE §1), so they are
# refused here even if a handler for them were ever registered by mistake.
NEVER_ADVERTISE = frozenset({68, 69, 71})

PRODUCE = 0
# Advertised lower than served (Kafka 4.0, KAFKA-18659): older librdkafka (Debian's kcat
# carries 2.0.2; 2.16 is fixed) compresses only if the broker advertises Produce v0, and otherwise silently
# sends its batches uncompressed. A Produce v0-2 request that arrives anyway is refused like any
# unsupported version (the dispatcher closes the connection), as Kafka 4.0 does.
ADVERTISED_MIN_VERSION = {PRODUCE: 0}


def advertised_versions() -> list[dict[str, int]]:
    from broker.handlers import registry

    return [
        {"api_key": key, "min_version": ADVERTISED_MIN_VERSION.get(key, low), "max_version": high}
        for key, (low, high, _handler) in sorted(registry().items())
        if key not in NEVER_ADVERTISE
    ]


def unsupported_version_body() -> dict[str, Any]:
    """The v0 body Kafka sends when a client asks for an ApiVersions version it does not know."""
    return {"error_code": ErrorCode.unsupported_version, "api_keys": advertised_versions()}


async def handle_api_versions(ctx: RequestContext, request: Any) -> dict[str, Any]:
    return {"error_code": ErrorCode.none, "api_keys": advertised_versions(), "throttle_time": 0}


APIS = {18: (0, 4, handle_api_versions)}
