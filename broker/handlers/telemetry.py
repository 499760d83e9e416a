"""GetTelemetrySubscriptions (71) and PushTelemetry (72): client telemetry (KIP-714), served while the
broker's telemetry receiver is on (`client.telemetry.enable`, Kafka's rule: advertised only with a receiver)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.get_telemetry_subscriptions.v0.response import GetTelemetrySubscriptionsResponse
from kio.schema.push_telemetry.v0.response import PushTelemetryResponse

from broker.context import RequestContext
from broker.protocol.responses import NOT_THROTTLED
from broker.telemetry.manager import TelemetryPush
from broker.telemetry.subscriptions import ClientIdentity

GET_TELEMETRY_SUBSCRIPTIONS = 71
PUSH_TELEMETRY = 72
TELEMETRY_APIS = frozenset({GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY})


def _identity(ctx: RequestContext) -> ClientIdentity:
    """The client as `match` selectors see it; the instance id is filled in by the manager."""
    session = ctx.session
    return ClientIdentity(
        client_instance_id="",
        client_id=ctx.client_id or "",
        client_software_name=session.client_software_name if session is not None else "",
        client_software_version=session.client_software_version if session is not None else "",
        client_source_address=ctx.client_host,
        client_source_port=str(ctx.client_port),
    )


async def handle_get_telemetry_subscriptions(
    ctx: RequestContext, request: Any
) -> GetTelemetrySubscriptionsResponse:
    telemetry = ctx.broker.telemetry
    if telemetry is None:
        return GetTelemetrySubscriptionsResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.unsupported_version,
            client_instance_id=None,
            subscription_id=0,
            push_interval=NOT_THROTTLED,
            telemetry_max_bytes=0,
            delta_temporality=False,
        )
    return telemetry.get_subscriptions(request.client_instance_id, _identity(ctx))


async def handle_push_telemetry(ctx: RequestContext, request: Any) -> PushTelemetryResponse:
    telemetry = ctx.broker.telemetry
    if telemetry is None:
        return PushTelemetryResponse(throttle_time=NOT_THROTTLED, error_code=ErrorCode.unsupported_version)
    push = TelemetryPush(
        request.subscription_id, request.terminating, request.compression_type, request.metrics
    )
    outcome = telemetry.push(request.client_instance_id, _identity(ctx), push)
    return PushTelemetryResponse(throttle_time=NOT_THROTTLED, error_code=outcome.error)
