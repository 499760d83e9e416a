"""A cluster broker's line to the active controller: admin writes, producer ids, AlterPartition.

A broker never changes cluster metadata itself. Request handlers forward writes (topics,
configs, ACLs, SCRAM credentials, quotas) through `ControllerLink.call`, which returns once the
controller committed the change AND this broker's own image applied it — so a client that
created a topic here sees it in this broker's next Metadata response.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kio.schema.errors import ErrorCode

from broker.controller.api import AlterPartitionRequest, AlterPartitionResult
from broker.controller.broker_lifecycle import BrokerLifecycle
from broker.controller.client import AlterPartitionBatcher, ControllerClient, ControllerUnavailable
from broker.controller.image import MetadataImage
from broker.metadata.producer_ids import MAX_EPOCH
from broker.metadata.security_registry import SecurityStore

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
    def __init__(
        self,
        client: ControllerClient,
        lifecycle: BrokerLifecycle,
        node_id: int,
        *,
        alter_client: ControllerClient | None = None,
    ) -> None:
        """`alter_client`: the connections AlterPartition goes over (default: `client`'s)."""
        self.client = client
        self.alter_client = alter_client or client
        self._alter_batcher = AlterPartitionBatcher(self.alter_client)
        self.lifecycle = lifecycle
        self.node_id = node_id
        self._producer_ids: range = range(0)
        self._producer_id_lock = asyncio.Lock()

    def close(self) -> None:
        self.client.close()
        self.alter_client.close()

    @property
    def image(self) -> MetadataImage:
        return self.lifecycle.image

    @property
    def broker_epoch(self) -> int | None:
        return self.lifecycle.broker_epoch

    async def call(
        self, method: str, params: Mapping[str, Any], *, timeout_s: float = FORWARD_TIMEOUT_S
    ) -> dict[str, Any]:
        """Run a controller RPC; its `result`, once this broker's image has caught up with it."""
        reply = await self._ask(method, params, timeout_s)
        applied = int(reply.get("applied_offset") or 0)
        if not await self.lifecycle.wait_for_offset(applied, PROPAGATION_TIMEOUT_S):
            log.warning("%s committed at %d but this broker's metadata is still behind", method, applied)
        return dict(reply.get("result") or {})

    async def describe_quorum(self, *, timeout_s: float = FORWARD_TIMEOUT_S) -> dict[str, Any]:
        """The active controller's view of the metadata quorum (a read: no image to wait for)."""
        reply = await self._ask("describe_quorum", {}, timeout_s)
        return dict(reply.get("result") or {})

    async def _ask(self, method: str, params: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        """The active controller's reply; ControllerError when it refused or none answered."""
        try:
            reply = await self.client.call(method, params, timeout_s=timeout_s)
        except ControllerUnavailable as exc:
            log.warning("no active controller for %s: %s", method, exc)
            raise ControllerError(
                ErrorCode.request_timed_out, "No active controller answered in time."
            ) from None
        if reply["error_code"]:
            raise ControllerError(reply["error_code"], reply.get("message") or "")
        return reply

    # --- AlterPartitionSender --------------------------------------------------------------

    async def alter_partition(self, request: AlterPartitionRequest) -> AlterPartitionResult:
        """Forward a leader's ISR change with this broker's current registration epoch."""
        epoch = self.broker_epoch
        if epoch is None:
            return AlterPartitionResult(ErrorCode.stale_broker_epoch.value)
        return await self._alter_batcher.alter_partition(dataclasses.replace(request, broker_epoch=epoch))

    # --- producer ids ----------------------------------------------------------------------

    async def init_producer(self, current_id: int, current_epoch: int) -> tuple[int, int]:
        """InitProducerId without a transactional id: a fresh id from a controller-allocated block,
        or the same id with its epoch bumped (KIP-360)."""
        if current_id >= 0 and 0 <= current_epoch < MAX_EPOCH - 1:
            return current_id, current_epoch + 1
        async with self._producer_id_lock:
            if not self._producer_ids:
                result = await self.call(
                    "allocate_producer_ids",
                    {"broker_id": self.node_id, "broker_epoch": self.broker_epoch},
                )
                first = int(result["first_producer_id"])
                self._producer_ids = range(first, first + int(result["count"]))
            producer_id = self._producer_ids[0]
            self._producer_ids = self._producer_ids[1:]
            return producer_id, 0


async def commit_security_records(
    cluster: ControllerLink | None, security: SecurityStore, records: Sequence[dict[str, Any]]
) -> None:
    """ACL / SCRAM / quota changes: through the controller in a cluster, else straight to the store.

    Raises ControllerError when the controller refuses or cannot be reached.
    """
    if cluster is not None:
        await cluster.call("security_change", {"records": list(records)})
        return
    security.apply_records(records)


def failed_with(result: dict[str, Any], error: ControllerError) -> dict[str, Any]:
    """A per-item result that had succeeded locally, marked with the controller's refusal."""
    if result.get("error_code"):
        return result
    return {**result, "error_code": error.code, "error_message": error.message}
