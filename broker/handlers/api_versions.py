"""ApiVersions (18)."""

from __future__ import annotations

import re
from typing import Any

from kio.schema.api_versions.v4.response import ApiVersion, ApiVersionsResponse
from kio.schema.errors import ErrorCode

from broker.context import BrokerState, RequestContext
from broker.handlers.api_table import API_TABLE
from broker.handlers.features import feature_fields
from broker.handlers.telemetry import TELEMETRY_APIS
from broker.protocol.responses import NOT_THROTTLED

# KIP-511's rule for client_software_name and client_software_version.
_SOFTWARE_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

PRODUCE = 0
# Advertised lower than served (Kafka 4.0, KAFKA-18659): older librdkafka (Debian's kcat
# carries 2.0.2; 2.16 is fixed) compresses only if the broker advertises Produce v0, and otherwise silently
# sends its batches uncompressed. A Produce v0-2 request that arrives anyway is refused like any
# unsupported version (the dispatcher closes the connection), as Kafka 4.0 does.
ADVERTISED_MIN_VERSION = {PRODUCE: 0}


FETCH = 1
LIST_OFFSETS = 2
OFFSET_COMMIT = 8
OFFSET_FETCH = 9
# The oldest versions Kafka 3.9 served and Kafka 4.0 dropped (KIP-896) that we still serve while the broker
# property `legacy.api.versions.enable` is true (its default): Fetch v0-3 with down-conversion to the old
# message format, ListOffsets v0, OffsetCommit v0-1, OffsetFetch v0. False answers only Kafka 4.0's ranges,
# as Kafka 4.0 does.
LEGACY_MIN_VERSION = {FETCH: 0, LIST_OFFSETS: 0, OFFSET_COMMIT: 0, OFFSET_FETCH: 0}
LEGACY_SETTING = "legacy.api.versions.enable"


def served_min_version(api_key: int, low: int, legacy: bool) -> int:
    """The oldest version of `api_key` a broker serves: its handler's, or Kafka 3.9's with legacy versions on."""
    return min(low, LEGACY_MIN_VERSION.get(api_key, low)) if legacy else low


def hidden_apis(state: BrokerState) -> frozenset[int]:
    """The served APIs this broker does not advertise now: GetTelemetrySubscriptions and PushTelemetry while
    the telemetry receiver is off (Kafka advertises them only with a ClientTelemetryReceiver; librdkafka
    starts asking for subscriptions as soon as 71 is advertised, REFERENCE §1)."""
    return frozenset() if state.telemetry is not None else TELEMETRY_APIS


def advertised_versions(legacy: bool = False, hidden: frozenset[int] = frozenset()) -> tuple[ApiVersion, ...]:
    """The versions of every served API (API_TABLE) but the `hidden` ones, as ApiVersions advertises them."""
    return tuple(
        ApiVersion(
            api_key=key,
            min_version=ADVERTISED_MIN_VERSION.get(key, served_min_version(key, low, legacy)),
            max_version=high,
        )
        for key, (low, high, _module, _function) in sorted(API_TABLE.items())
        if key not in hidden
    )


def unsupported_version_body(
    legacy: bool = False, hidden: frozenset[int] = frozenset()
) -> ApiVersionsResponse:
    """The answer Kafka sends, as v0, when a client asks for an ApiVersions version it does not know."""
    return ApiVersionsResponse(
        error_code=ErrorCode.unsupported_version,
        api_keys=advertised_versions(legacy, hidden),
        throttle_time=NOT_THROTTLED,
    )


async def handle_api_versions(ctx: RequestContext, request: Any) -> ApiVersionsResponse:
    """The versions this broker serves (read from the API table: no handler module is imported) and the
    features it supports."""
    legacy = ctx.broker.config.get_bool(LEGACY_SETTING)
    if ctx.api_version >= 3 and not (
        _SOFTWARE_NAME.fullmatch(request.client_software_name or "")
        and _SOFTWARE_NAME.fullmatch(request.client_software_version or "")
    ):
        # KIP-511: Kafka refuses a name or version other than letters, digits, '-' and '.' (starting and
        # ending with a letter or digit) with INVALID_REQUEST and no versions; the client may retry at v0.
        return ApiVersionsResponse(
            error_code=ErrorCode.invalid_request, api_keys=(), throttle_time=NOT_THROTTLED
        )
    session = ctx.session
    if session is not None and ctx.api_version >= 3:
        # KIP-511: kept for the connection's later requests (client telemetry `match` selectors).
        session.client_software_name = request.client_software_name or ""
        session.client_software_version = request.client_software_version or ""
    features = feature_fields(ctx)
    return ApiVersionsResponse(
        error_code=ErrorCode.none,
        api_keys=advertised_versions(legacy, hidden_apis(ctx.broker)),
        throttle_time=NOT_THROTTLED,
        supported_features=features.supported_features,
        finalized_features_epoch=features.finalized_features_epoch,
        finalized_features=features.finalized_features,
    )
