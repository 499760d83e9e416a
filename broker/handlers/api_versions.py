"""ApiVersions (18)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.server.context import RequestContext

# librdkafka changes behaviour as soon as these are advertised (REFERENCE §1), so they are
# refused here even if a handler for them were ever registered by mistake.
NEVER_ADVERTISE = frozenset({68, 69, 71})


def advertised_versions() -> list[dict[str, int]]:
    from broker.handlers import registry

    return [
        {"api_key": key, "min_version": low, "max_version": high}
        for key, (low, high, _handler) in sorted(registry().items())
        if key not in NEVER_ADVERTISE
    ]


def unsupported_version_body() -> dict[str, Any]:
    """The v0 body Kafka sends when a client asks for an ApiVersions version it does not know."""
    return {"error_code": ErrorCode.unsupported_version, "api_keys": advertised_versions()}


async def handle_api_versions(ctx: RequestContext, request: Any) -> dict[str, Any]:
    return {"error_code": ErrorCode.none, "api_keys": advertised_versions(), "throttle_time": 0}


APIS = {18: (0, 4, handle_api_versions)}
