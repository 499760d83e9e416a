"""Talking to the controller quorum from a broker (or a tool): RPCs that find the active controller.

A write sent to a controller that is not active comes back NOT_CONTROLLER with the leader it
knows of (and the Raft term it knows it in); the client follows the newest hint, or asks every
voter at once who leads, until its deadline. A controller that does not answer is passed over
for a while, so a paused or dead controller costs one attempt, not one per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Mapping, Sequence
from ssl import SSLContext
from typing import Any

from kio.schema.errors import ErrorCode

from broker.controller.api import AlterPartitionRequest, AlterPartitionResult
from broker.controller.rpc.base import R, Reply, Request
from broker.controller.rpc.brokers import AlterPartitionItem, AlterPartitionsRequest
from broker.controller.rpc.catalog import LEGACY_VERSIONS, VERSIONS, common_version
from broker.controller.rpc.frames import decode_reply, encode_request
from broker.controller.rpc.quorum import ApiVersionsRequest, DescribeQuorumRequest
from broker.raft.wire import FrameError, read_frame

log = logging.getLogger("broker.controller.client")

CONNECT_TIMEOUT_S = 1.0
RETRY_DELAY_S = 0.1
# How long asking every voter who leads may take (a paused voter never answers).
DISCOVERY_TIMEOUT_S = 0.5
# How long a controller that did not answer is passed over while others still name it as leader.
SUSPECT_S = 3.0
# AlterPartition may be repeated (a duplicate fails on its partition epoch and the leader takes the ISR
# from its metadata image): a controller that does not answer in this time is given up for another.
ALTER_PARTITION_ATTEMPT_S = 2.0


class ControllerUnavailable(Exception):
    """No controller answered (or none was active) before the deadline."""


class ChannelBusy(TimeoutError):
    """A request's time ran out while earlier requests on the same connection were still answered:
    nothing is known about the controller from that."""


class RpcChannel:
    """One connection to one controller; one request at a time.

    On every new connection the channel first asks which RPC versions the controller speaks
    (api_versions, as Kafka clients send ApiVersions) and then sends each request in the highest
    version both sides know. A controller of d32902d does not know api_versions: it speaks
    version 0 of everything, which is d32902d's own format, so a rolling upgrade degrades cleanly."""

    def __init__(self, host: str, port: int, *, ssl: SSLContext | None = None) -> None:
        self.host, self.port = host, port
        self.ssl = ssl
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        # RPC name -> (lowest, highest) version the controller at the other end speaks.
        self.versions: dict[str, tuple[int, int]] = {}

    async def call(self, request: Request[R], timeout_s: float) -> Reply[R]:
        """Send one request and read its reply; `timeout_s` includes waiting for the channel
        (ChannelBusy when it ran out before this request's turn came)."""
        acquired = False
        try:
            async with asyncio.timeout(timeout_s):
                await self._lock.acquire()
                acquired = True
                return await self._exchange(request)
        except TimeoutError:
            if not acquired:
                raise ChannelBusy(f"{request.API}: earlier requests still held the connection") from None
            self.close()
            raise
        except BaseException:
            if acquired:
                self.close()  # a half-read reply would desynchronize the connection
            raise
        finally:
            if acquired:
                self._lock.release()

    async def _exchange(self, request: Request[R]) -> Reply[R]:
        if self._reader is not None and self._reader.at_eof():
            # The controller closed a connection left idle (connections.max.idle.ms): open a new
            # one rather than sending into it and taking the closed connection for a dead controller.
            self.close()
        if self._writer is None:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, ssl=self.ssl), CONNECT_TIMEOUT_S
            )
            learned = await self._send(ApiVersionsRequest(), 0)
            # INVALID_REQUEST ("unknown method"): a controller from before api_versions (d32902d).
            self.versions = learned.result.versions if learned.result is not None else dict(LEGACY_VERSIONS)
        version = common_version(VERSIONS[request.API], self.versions.get(request.API))
        if version is None:
            return Reply(
                ErrorCode.unsupported_version.value,
                f"{request.API}: the controller at {self.host}:{self.port} speaks no version of ours",
                None,
                None,
                None,
                None,
                0,
                self.versions.get(request.API),
            )
        return await self._send(request, version)

    async def _send(self, request: Request[R], version: int) -> Reply[R]:
        assert self._reader is not None
        assert self._writer is not None
        request_id = next(self._ids)
        self._writer.write(encode_request(request_id, request, version))
        await self._writer.drain()
        frame = await read_frame(self._reader)
        if frame.get("id") != request_id:
            raise FrameError("reply for another request")
        return decode_reply(frame, request, version)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


# What a request to a controller may end with besides a reply: the controller is gone, paused, or
# sent something that is not a reply (the connection is then closed).
RPC_FAILURES = (OSError, TimeoutError, asyncio.IncompleteReadError, FrameError, ChannelBusy)


class ActiveController:
    """Who this process believes the active controller is, shared by all its controller clients.

    Hints come with the Raft term they were true in (controller replies carry `leader_id` and
    `term`); an older term's hint never replaces a newer one. A controller that failed to answer is
    suspected for a while: hints naming it in a term no newer than the failure are ignored, so a
    broker does not keep returning to a paused or dead controller that peers still name as leader
    until their election timeout.
    """

    def __init__(self) -> None:
        self.leader_id: int | None = None
        self.term = -1
        # Controller endpoints learned from replies (`leader_address`): with a dynamic quorum a
        # process knows only its bootstrap servers, and the leader may be a controller added since.
        self.addresses: dict[int, tuple[str, int]] = {}
        self._suspected: dict[int, tuple[int, float]] = {}  # node -> (term, until)
        self._moved: asyncio.Event | None = None

    def observe(self, leader_id: int | None, term: int | None) -> None:
        """A reply said `leader_id` leads in `term` (None: no leader known there)."""
        if term is None or term < self.term:
            return
        if term > self.term:
            self.term, self.leader_id = term, None
        if leader_id is not None and not self.suspected(leader_id, term) and leader_id != self.leader_id:
            self.leader_id = leader_id
            if self._moved is not None:
                self._moved.set()
                self._moved = None

    def moved(self) -> asyncio.Event:
        """Set when another controller becomes the one to send to (requests waiting on the previous
        one are sent again there instead of waiting out their timeout)."""
        if self._moved is None:
            self._moved = asyncio.Event()
        return self._moved

    def lost(self, node_id: int) -> None:
        """`node_id` did not answer (refused, timed out, closed): stop sending to it."""
        self._suspected[node_id] = (self.term, time.monotonic() + SUSPECT_S)
        if self.leader_id == node_id:
            self.leader_id = None

    def alive(self, node_id: int) -> None:
        """`node_id` answered: whatever it says, it is not a dead or paused controller."""
        self._suspected.pop(node_id, None)

    def not_active(self, node_id: int) -> None:
        """`node_id` answered NOT_CONTROLLER without naming anyone else."""
        if self.leader_id == node_id:
            self.leader_id = None

    def suspected(self, node_id: int, term: int) -> bool:
        suspicion = self._suspected.get(node_id)
        if suspicion is None:
            return False
        suspected_term, until = suspicion
        if term > suspected_term or time.monotonic() > until:
            del self._suspected[node_id]
            return False
        return True


class ControllerClient:
    def __init__(
        self,
        voters: Mapping[int, tuple[str, int]],
        request_timeout_s: float = 5.0,
        *,
        ssl: SSLContext | None = None,
        active: ActiveController | None = None,
    ) -> None:
        """`ssl`: the client context of an SSL controller listener (see broker/controller/tls.py);
        `active`: shared with the process's other clients (see `sibling`)."""
        if not voters:
            raise ValueError("at least one controller is required")
        self.voters = dict(voters)
        self.request_timeout_s = request_timeout_s
        self.ssl = ssl
        self.active = active or ActiveController()
        self._channels = {i: self.channel(i) for i in self.voters}
        # Discovery asks every voter at once on connections of its own, never queued behind a call.
        self._probes = {i: self.channel(i) for i in self.voters}
        self._discovery: asyncio.Future[int | None] | None = None

    def sibling(self, request_timeout_s: float | None = None) -> ControllerClient:
        """A client with connections of its own that shares what this one knows about the active
        controller: a slow request on one (a large topic creation) never delays another's requests
        (heartbeats), and a controller change one of them notices redirects all of them."""
        return ControllerClient(
            self.voters,
            self.request_timeout_s if request_timeout_s is None else request_timeout_s,
            ssl=self.ssl,
            active=self.active,
        )

    @property
    def leader_id(self) -> int | None:
        return self.active.leader_id

    def channel(self, node_id: int) -> RpcChannel:
        """A new connection (not yet opened) to one controller, secured like this client's."""
        host, port = self.voters[node_id] if node_id in self.voters else self.active.addresses[node_id]
        return RpcChannel(host, port, ssl=self.ssl)

    def _learn_address(self, reply: Reply[Any]) -> None:
        if reply.leader_id is not None and reply.leader_address is not None:
            self.active.addresses[reply.leader_id] = reply.leader_address

    def close(self) -> None:
        if self._discovery is not None:
            self._discovery.cancel()
        for channel in [*self._channels.values(), *self._probes.values()]:
            channel.close()

    def observe_reply(self, reply: Reply[Any]) -> None:
        """Learn the leader from any controller's reply (the metadata follower's fetches too)."""
        self._learn_address(reply)
        self.active.observe(reply.leader_id, reply.term)

    async def call(
        self,
        request: Request[R],
        timeout_s: float | None = None,
        *,
        attempt_timeout_s: float | None = None,
    ) -> Reply[R]:
        """Call the active controller; returns the reply (whose error_code may be non-zero).

        NOT_CONTROLLER, a refused or lost connection, or no answer within `attempt_timeout_s`
        (only for requests that may be repeated: heartbeats, AlterPartition) sends the request to the
        controller the replies name, or finds it by asking every voter, until `timeout_s` is up."""
        deadline = time.monotonic() + (timeout_s or self.request_timeout_s)
        last_problem = "no attempt"
        while (remaining := deadline - time.monotonic()) > 0:
            target = self.active.leader_id
            if target not in self._channels and target not in self.active.addresses:
                target = await self.discover(min(remaining, DISCOVERY_TIMEOUT_S))
                if target is None:
                    last_problem = "no controller is active"
                    await asyncio.sleep(min(RETRY_DELAY_S, max(0.0, deadline - time.monotonic())))
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
            wait = remaining if attempt_timeout_s is None else min(remaining, attempt_timeout_s)
            try:
                reply = await self._attempt(target, request, max(0.05, wait))
            except ChannelBusy as exc:
                last_problem = f"controller {target}: {exc}"
                continue
            except (OSError, TimeoutError, asyncio.IncompleteReadError, FrameError) as exc:
                last_problem = f"controller {target}: {exc!r}"
                self.active.lost(target)
                continue
            if reply is None:
                last_problem = f"controller {target} was replaced by {self.active.leader_id}"
                continue
            self.active.alive(target)
            self.observe_reply(reply)
            if reply.error_code != ErrorCode.not_controller.value:
                return reply
            last_problem = f"controller {target} is not active (leader {reply.leader_id})"
            self.active.not_active(target)
            if self.active.leader_id is None:
                await asyncio.sleep(min(RETRY_DELAY_S, max(0.0, deadline - time.monotonic())))
        raise ControllerUnavailable(f"{request.API}: {last_problem}")

    async def _attempt(self, target: int, request: Request[R], timeout_s: float) -> Reply[R] | None:
        """One request to `target`; None when another controller took over while it waited (a hung
        controller would otherwise hold every request queued on its connection to the end)."""
        moved = self.active.moved()
        if target not in self._channels:
            # A controller learned from a reply (a dynamic quorum's leader); KeyError if unknown.
            self._channels[target] = self.channel(target)
        request = asyncio.ensure_future(self._channels[target].call(request, timeout_s))
        request.add_done_callback(_consume_outcome)
        watching = asyncio.ensure_future(moved.wait())
        try:
            await asyncio.wait({request, watching}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            request.cancel()
            raise
        finally:
            watching.cancel()
        if request.done() or self.active.leader_id in (None, target):
            return await request
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await request
        return None

    async def discover(self, timeout_s: float) -> int | None:
        """Ask every voter who leads (in parallel, so a paused one costs nothing); the leader of the
        newest term any of them reports, once a majority answered or `timeout_s` is up. Requests
        looking at the same time share one round of questions."""
        if self._discovery is None or self._discovery.done():
            self._discovery = asyncio.ensure_future(self._ask_every_voter(timeout_s))
        return await asyncio.shield(self._discovery)

    async def _ask_every_voter(self, timeout_s: float) -> int | None:
        majority = len(self.voters) // 2 + 1
        asking = {
            asyncio.ensure_future(probe.call(DescribeQuorumRequest(), timeout_s)): node_id
            for node_id, probe in self._probes.items()
        }
        for future in asking:
            future.add_done_callback(_consume_outcome)
        answered = 0
        try:
            pending = set(asking)
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    if future.exception() is not None:
                        continue
                    reply = future.result()
                    answered += 1
                    self.active.alive(asking[future])
                    self._learn_address(reply)
                    if reply.result is not None:
                        self.active.observe(reply.result.leader_id, reply.result.term)
                if answered >= majority and self.active.leader_id is not None:
                    break
        finally:
            for future in asking:
                future.cancel()
        return self.active.leader_id

    async def call_node(self, node_id: int, request: Request[R], timeout_s: float = 2.0) -> Reply[R]:
        """Ask one particular controller (reads any controller can answer)."""
        return await self._channels[node_id].call(request, timeout_s)

    async def call_node_unless_moved(
        self, node_id: int, request: Request[R], timeout_s: float
    ) -> Reply[R] | None:
        """Like `call_node`, but None as soon as another controller than `node_id` becomes the one
        to ask (a long poll on a hung controller ends when the process finds the new one)."""
        return await self._attempt(node_id, request, timeout_s)

    async def alter_partitions(self, requests: Sequence[AlterPartitionRequest]) -> list[AlterPartitionResult]:
        """`AlterPartitionsSender`: many partitions' AlterPartition in one request; a result for each, in order
        (batched by the replication side's `AlterPartitionManager`). NOT_CONTROLLER for each when no
        controller answered."""
        batch = AlterPartitionsRequest(tuple(AlterPartitionItem.of(request) for request in requests))
        try:
            reply = await self.call(batch, attempt_timeout_s=ALTER_PARTITION_ATTEMPT_S)
        except ControllerUnavailable:
            return [AlterPartitionResult(ErrorCode.not_controller.value)] * len(requests)
        if reply.result is None:
            return [AlterPartitionResult(reply.error_code)] * len(requests)
        return [outcome.result() for outcome in reply.result.results]


def _consume_outcome(future: asyncio.Future[Any]) -> None:
    """A request given up on (cancelled, or its answer no longer needed) may still end with an error:
    it is expected, not "never retrieved" (3.11's wait_for can turn a cancellation into the error)."""
    if not future.cancelled():
        future.exception()
