"""RPC handlers of a broker's life: registration, heartbeats, the metadata log it follows, its
partitions' ISR changes (group-committed), producer id blocks, unregistration."""

from __future__ import annotations

import asyncio
import base64
import time
import uuid

from kio.schema.errors import ErrorCode

from broker.controller import records as rec
from broker.controller.api import AlterPartitionRequest, Endpoint
from broker.controller.decisions import PRODUCER_ID_BLOCK, Decider, Decision
from broker.controller.image import MetadataImage
from broker.controller.quorum_driver import QuorumDriver
from broker.controller.rpc import brokers as msg
from broker.controller.rpc.base import Empty, PartitionState, RpcError

MAX_FETCH_ENTRIES = 500
# Partitions in one alter_partitions request (a broker's AlterPartitionManager sends at most ALTER_BATCH).
MAX_ALTER_PARTITIONS = 10_000


def raise_for(decision: Decision) -> None:
    if decision.error_code:
        raise RpcError(ErrorCode(decision.error_code), decision.message)


class BrokerHandlers:
    """The handlers with state of their own: the queue of AlterPartition proposals."""

    def __init__(self, driver: QuorumDriver) -> None:
        self.driver = driver
        self._alter_queue: list[tuple[AlterPartitionRequest, asyncio.Future[Decision]]] = []
        self._alter_flusher: asyncio.Future[None] | None = None

    async def fetch_metadata(
        self, request: msg.FetchMetadataRequest, version: int
    ) -> msg.FetchMetadataResponse:
        """Committed entries after `after_offset` (a snapshot first when they were compacted away);
        waits up to `max_wait_ms` for something new."""
        driver = self.driver
        after = request.after_offset
        if request.broker_id is not None:
            driver.note_observer(request.broker_id, after)
        if driver.image.offset <= after:
            await driver.wait_until_applied(after + 1, request.max_wait_ms / 1000)
        node = driver.require_node()
        applied = driver.image.offset
        snapshot = None
        if after < node.snapshot.last_index:
            snapshot = base64.b64encode(node.snapshot.data).decode("ascii")
            after = node.snapshot.last_index
        upto = min(applied, after + MAX_FETCH_ENTRIES)
        entries: tuple[tuple[int, object], ...] = ()
        if upto > after:
            stored = node.entries_from(after + 1, upto - after)
            if version >= 1 or request.entry_encoding == "base64":
                # The stored bytes as they are: decoding a 10,000-partition entry and encoding it into
                # the reply again cost the active controller 40 ms of its event loop per broker.
                entries = tuple((e.index, base64.b64encode(e.data).decode("ascii")) for e in stored)
            else:
                entries = tuple((e.index, list(rec.decoded_entry_items(e.data))) for e in stored)
        return msg.FetchMetadataResponse(applied, entries, snapshot)

    async def register_broker(self, request: msg.RegisterBrokerRequest) -> msg.RegisterBrokerResponse:
        try:
            incarnation = uuid.UUID(request.incarnation_id)
        except ValueError:
            raise RpcError(ErrorCode.invalid_request, "incarnation_id is not a uuid") from None
        endpoints = [Endpoint(*endpoint) for endpoint in request.endpoints]
        decision = await self.driver.decide_and_commit(
            lambda d, image: d.register_broker(
                image, request.broker_id, incarnation, endpoints, request.rack or None, time.monotonic()
            )
        )
        raise_for(decision)
        return msg.RegisterBrokerResponse(self.driver.image.brokers[request.broker_id].epoch)

    async def broker_heartbeat(self, request: msg.BrokerHeartbeatRequest) -> msg.BrokerHeartbeatResponse:
        driver = self.driver
        decider = driver.decider
        if decider is not None:
            # The broker reached us: that keeps its session even if the answer waits behind a long write.
            decider.touch(driver.image, request.broker_id, request.broker_epoch, time.monotonic())
        decision = await driver.decide_and_commit(
            lambda d, image: d.heartbeat(
                image,
                request.broker_id,
                request.broker_epoch,
                request.metadata_offset,
                request.want_fence,
                request.want_shutdown,
                time.monotonic(),
            )
        )
        raise_for(decision)
        broker = driver.image.brokers[request.broker_id]
        return msg.BrokerHeartbeatResponse(
            is_fenced=broker.fenced,
            in_controlled_shutdown=broker.in_controlled_shutdown,
            should_shutdown=request.want_shutdown and broker.fenced,
        )

    async def alter_partitions(self, request: msg.AlterPartitionsRequest) -> msg.AlterPartitionsResponse:
        """Many partitions' AlterPartition in one request: one result each, in order."""
        if len(request.requests) > MAX_ALTER_PARTITIONS:
            raise RpcError(ErrorCode.invalid_request, f"requests: at most {MAX_ALTER_PARTITIONS}")
        try:
            proposals = [item.proposal() for item in request.requests]
        except ValueError:
            raise RpcError(ErrorCode.invalid_request, "a topic_id is not a uuid") from None
        futures = [self._queue_alter(proposal) for proposal in proposals]
        results = []
        for proposal, future in zip(proposals, futures, strict=True):
            decision = await future
            if decision.error_code:
                results.append(msg.AlterPartitionOutcome(decision.error_code, decision.message))
            else:
                committed = self.driver.image.topics[proposal.topic_id].partitions[proposal.partition]
                results.append(msg.AlterPartitionOutcome(0, None, PartitionState.of(committed)))
        return msg.AlterPartitionsResponse(tuple(results))

    def _queue_alter(self, request: AlterPartitionRequest) -> asyncio.Future[Decision]:
        # Group commit: requests arriving while a batch is being decided and committed go into
        # the next one, so thousands of ISR changes (a broker's partitions after it stalled)
        # cost a few metadata-log entries, not one Raft round trip each.
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._alter_queue.append((request, future))
        if self._alter_flusher is None or self._alter_flusher.done():
            self._alter_flusher = asyncio.ensure_future(self._flush_alter_partitions())
        return future

    async def _flush_alter_partitions(self) -> None:
        while self._alter_queue:
            batch: list[tuple[AlterPartitionRequest, asyncio.Future[Decision]]] = []
            later = []
            named: set[tuple[uuid.UUID, int]] = set()
            for request, future in self._alter_queue:
                key = (request.topic_id, request.partition)
                # A second request for the same partition is judged after the first is committed.
                (later if key in named else batch).append((request, future))
                named.add(key)
            self._alter_queue = later
            await self._commit_alter_batch(batch)

    async def _commit_alter_batch(
        self, batch: list[tuple[AlterPartitionRequest, asyncio.Future[Decision]]]
    ) -> None:
        requests = [request for request, _ in batch]
        decisions: list[Decision] = []

        def decide(decider: Decider, image: MetadataImage) -> Decision:
            records, each = decider.alter_partitions(image, requests)
            decisions.extend(each)
            return Decision(records)

        try:
            await self.driver.decide_and_commit(decide)
        except RpcError as exc:
            decisions = [Decision(error_code=exc.code.value, message=exc.message)] * len(batch)
        except BaseException as exc:
            failure = exc if isinstance(exc, Exception) else RpcError(ErrorCode.unknown_server_error)
            for _, future in [*batch, *self._alter_queue]:
                if not future.done():
                    future.set_exception(failure)
            self._alter_queue = []
            raise
        for (_, future), decision in zip(batch, decisions, strict=True):
            if not future.done():
                future.set_result(decision)

    async def allocate_producer_ids(
        self, request: msg.AllocateProducerIdsRequest
    ) -> msg.AllocateProducerIdsResponse:
        decision = await self.driver.decide_and_commit(
            lambda d, image: d.allocate_producer_ids(image, request.broker_id, request.broker_epoch)
        )
        raise_for(decision)
        end = next(r.next_producer_id for r in decision.records if isinstance(r, rec.ProducerIdsRecord))
        return msg.AllocateProducerIdsResponse(end - PRODUCER_ID_BLOCK, PRODUCER_ID_BLOCK)

    async def unregister_broker(self, request: msg.UnregisterBrokerRequest) -> Empty:
        decision = await self.driver.decide_and_commit(
            lambda d, image: d.unregister_broker(image, request.broker_id)
        )
        raise_for(decision)
        return Empty()
