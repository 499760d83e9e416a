"""A broker's line to the active controller: admin writes and producer ids.

A broker never changes cluster metadata itself. Request handlers forward writes (topics,
configs, ACLs, SCRAM credentials, quotas) through `ControllerLink.call`, which returns once the
controller committed the change AND this broker's own image applied it — so a client that
created a topic here sees it in this broker's next Metadata response.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from typing import TypeVar

from kio.schema.errors import ErrorCode

from broker.controller.broker_lifecycle import BrokerLifecycle
from broker.controller.client import ControllerClient, ControllerUnavailable
from broker.controller.image import MetadataImage
from broker.controller.rpc.admin import SecurityChangeRequest
from broker.controller.rpc.base import R, Reply, Request
from broker.controller.rpc.brokers import AllocateProducerIdsRequest
from broker.controller.rpc.quorum import DescribeQuorumRequest, DescribeQuorumResponse
from broker.metadata.producer_ids import MAX_EPOCH
from broker.metadata.security_records import SecurityRecord

ItemResult = TypeVar("ItemResult")

log = logging.getLogger("broker.controller.forwarding")

# How long a forwarded write may take end to end (Kafka's admin default is 30 s; ours fail faster).
FORWARD_TIMEOUT_S = 15.0
# After the commit, how long to wait for this broker's image to apply it.
PROPAGATION_TIMEOUT_S = 5.0


class ControllerError(Exception):
    """A forwarded request failed: `code` is the Kafka error code for the client."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


class ControllerLink:
    def __init__(self, client: ControllerClient, lifecycle: BrokerLifecycle, node_id: int) -> None:
        self.client = client
        self.lifecycle = lifecycle
        self.node_id = node_id
        self._producer_ids: range = range(0)
        self._producer_id_lock = asyncio.Lock()

    def close(self) -> None:
        self.client.close()

    @property
    def image(self) -> MetadataImage:
        return self.lifecycle.image

    @property
    def broker_epoch(self) -> int | None:
        return self.lifecycle.broker_epoch

    async def call(self, request: Request[R], *, timeout_s: float = FORWARD_TIMEOUT_S) -> R:
        """Run a controller RPC; its result, once this broker's image has caught up with it."""
        reply = await self._ask(request, timeout_s)
        if not await self.lifecycle.wait_for_offset(reply.applied_offset, PROPAGATION_TIMEOUT_S):
            log.warning(
                "%s committed at %d but this broker's metadata is still behind",
                request.API,
                reply.applied_offset,
            )
        assert reply.result is not None
        return reply.result

    async def describe_quorum(self, *, timeout_s: float = FORWARD_TIMEOUT_S) -> DescribeQuorumResponse:
        """The active controller's view of the metadata quorum (a read: no image to wait for)."""
        reply = await self._ask(DescribeQuorumRequest(), timeout_s)
        assert reply.result is not None
        return reply.result

    async def _ask(self, request: Request[R], timeout_s: float) -> Reply[R]:
        """The active controller's reply; ControllerError when it refused or none answered."""
        try:
            reply = await self.client.call(request, timeout_s=timeout_s)
        except ControllerUnavailable as exc:
            log.warning("no active controller for %s: %s", request.API, exc)
            raise ControllerError(
                ErrorCode.request_timed_out, "No active controller answered in time."
            ) from None
        if reply.error_code or reply.result is None:
            raise ControllerError(reply.error_code, reply.message)
        return reply

    # --- producer ids ----------------------------------------------------------------------

    async def init_producer(self, current_id: int, current_epoch: int) -> tuple[int, int]:
        """InitProducerId without a transactional id: a fresh id from a controller-allocated block,
        or the same id with its epoch bumped (KIP-360)."""
        if current_id >= 0 and 0 <= current_epoch < MAX_EPOCH - 1:
            return current_id, current_epoch + 1
        async with self._producer_id_lock:
            if not self._producer_ids:
                epoch = self.broker_epoch
                if epoch is None:
                    raise ControllerError(ErrorCode.stale_broker_epoch, "this broker is not registered yet")
                block = await self.call(AllocateProducerIdsRequest(self.node_id, epoch))
                self._producer_ids = range(block.first_producer_id, block.first_producer_id + block.count)
            producer_id = self._producer_ids[0]
            self._producer_ids = self._producer_ids[1:]
            return producer_id, 0


async def commit_security_records(cluster: ControllerLink, records: Sequence[SecurityRecord]) -> None:
    """ACL / SCRAM / quota / delegation token changes, committed by the controller (this broker's security
    store follows the metadata log).

    Raises ControllerError when the controller refuses or cannot be reached.
    """
    await cluster.call(SecurityChangeRequest(tuple(record.to_json() for record in records)))


def failed_with(result: ItemResult, error: ControllerError) -> ItemResult:
    """A per-item result (a kio entity with error_code and error_message fields) that had succeeded locally,
    marked with the controller's refusal."""
    if result.error_code:  # type: ignore[attr-defined]
        return result
    return dataclasses.replace(result, error_code=ErrorCode(error.code), error_message=error.message)  # type: ignore[type-var]
