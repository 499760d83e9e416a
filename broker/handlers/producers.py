"""InitProducerId (22)."""

from __future__ import annotations

import datetime
import logging
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.init_producer_id.v5.response import InitProducerIdResponse

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError
from broker.handlers.transactions import client_error
from broker.protocol.responses import NOT_THROTTLED

log = logging.getLogger(__name__)


def _answer(error: ErrorCode, producer_id: int = -1, producer_epoch: int = -1) -> InitProducerIdResponse:
    return InitProducerIdResponse(
        throttle_time=NOT_THROTTLED, error_code=error, producer_id=producer_id, producer_epoch=producer_epoch
    )


async def _init_transactional(ctx: RequestContext, request: Any) -> InitProducerIdResponse:
    transactional_id = request.transactional_id
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return _answer(ErrorCode.transactional_id_authorization_failed)
    coordinator = ctx.broker.transactions
    if coordinator is None:
        return _answer(ErrorCode.coordinator_not_available)
    result = await coordinator.init_producer_id(
        transactional_id,
        request.transaction_timeout // datetime.timedelta(milliseconds=1),
        getattr(request, "producer_id", -1),
        getattr(request, "producer_epoch", -1),
    )
    return _answer(client_error(ctx, result.error), result.producer_id, result.producer_epoch)


async def handle_init_producer_id(ctx: RequestContext, request: Any) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        return await _init_transactional(ctx, request)
    if not _may_write_idempotently(ctx):
        return _answer(ErrorCode.cluster_authorization_failed)
    current_id, current_epoch = getattr(request, "producer_id", -1), getattr(request, "producer_epoch", -1)
    try:
        producer_id, epoch = await ctx.broker.cluster.init_producer(current_id, current_epoch)
    except ControllerError as exc:
        # Clients retry InitProducerId on this code (no controller reachable right now).
        log.warning("InitProducerId: no producer id from the controller: %s", exc.message)
        return _answer(ErrorCode.coordinator_not_available)
    return _answer(ErrorCode.none, producer_id, epoch)


def _may_write_idempotently(ctx: RequestContext) -> bool:
    """Kafka: IDEMPOTENT_WRITE on the cluster, or WRITE on any topic."""
    authorizer = ctx.broker.authorizer
    if authorizer is None or ctx.allowed(Operation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME):
        return True
    return authorizer.allowed_on_any(ctx.principal, ctx.client_host, Operation.WRITE, ResourceType.TOPIC)
