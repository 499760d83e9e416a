"""Talking to the controller quorum from a broker (or a tool): RPCs that find the active controller.

A write sent to a controller that is not active comes back NOT_CONTROLLER with the leader it
knows of; the client follows the hint, or tries the next voter, until its deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from collections.abc import Mapping
from ssl import SSLContext
from typing import Any

from kio.schema.errors import ErrorCode

from broker.controller.api import AlterPartitionRequest, AlterPartitionResult, PartitionAssignment
from broker.raft.wire import FrameError, encode_frame, read_frame

log = logging.getLogger("broker.controller.client")

CONNECT_TIMEOUT_S = 1.0
RETRY_DELAY_S = 0.1


class ControllerUnavailable(Exception):
    """No controller answered (or none was active) before the deadline."""


def parse_voters(text: str) -> dict[int, tuple[str, int]]:
    """`controller.quorum.voters`: `1@host:9093,2@host:9094` -> {1: ("host", 9093), ...}."""
    voters: dict[int, tuple[str, int]] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        node, at, address = item.partition("@")
        host, colon, port = address.rpartition(":")
        if not at or not colon:
            raise ValueError(f"controller.quorum.voters: {item!r} is not id@host:port")
        voters[int(node)] = (host.strip("[]"), int(port))
    return voters


class RpcChannel:
    """One connection to one controller; one request at a time."""

    def __init__(self, host: str, port: int, *, ssl: SSLContext | None = None) -> None:
        self.host, self.port = host, port
        self.ssl = ssl
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)

    async def call(self, method: str, params: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        async with self._lock:
            try:
                return await asyncio.wait_for(self._exchange(method, params), timeout_s)
            except BaseException:
                self.close()  # a half-read reply would desynchronize the connection
                raise

    async def _exchange(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, ssl=self.ssl), CONNECT_TIMEOUT_S
            )
        assert self._reader is not None
        request_id = next(self._ids)
        self._writer.write(
            encode_frame({"t": "rpc", "id": request_id, "method": method, "params": dict(params)})
        )
        await self._writer.drain()
        reply = await read_frame(self._reader)
        if reply.get("id") != request_id:
            raise FrameError("reply for another request")
        return reply

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


class ControllerClient:
    def __init__(
        self,
        voters: Mapping[int, tuple[str, int]],
        request_timeout_s: float = 5.0,
        *,
        ssl: SSLContext | None = None,
    ) -> None:
        """`ssl`: the client context of an SSL controller listener (see broker/controller/tls.py)."""
        if not voters:
            raise ValueError("at least one controller is required")
        self.voters = dict(voters)
        self.request_timeout_s = request_timeout_s
        self.ssl = ssl
        self.leader_id: int | None = None
        self._channels = {i: self.channel(i) for i in self.voters}
        self._rotation = itertools.cycle(sorted(self.voters))

    def channel(self, node_id: int) -> RpcChannel:
        """A new connection (not yet opened) to one controller, secured like this client's."""
        host, port = self.voters[node_id]
        return RpcChannel(host, port, ssl=self.ssl)

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()

    async def call(
        self, method: str, params: Mapping[str, Any], timeout_s: float | None = None
    ) -> dict[str, Any]:
        """Call the active controller; returns the reply (whose error_code may be non-zero)."""
        deadline = time.monotonic() + (timeout_s or self.request_timeout_s)
        last_problem = "no attempt"
        while time.monotonic() < deadline:
            target = self.leader_id if self.leader_id in self._channels else next(self._rotation)
            assert target is not None
            try:
                reply = await self._channels[target].call(
                    method, params, max(0.05, deadline - time.monotonic())
                )
            except (OSError, TimeoutError, asyncio.IncompleteReadError, FrameError) as exc:
                last_problem = f"controller {target}: {exc!r}"
                self.leader_id = None
                await asyncio.sleep(RETRY_DELAY_S)
                continue
            if reply["error_code"] != ErrorCode.not_controller.value:
                self.leader_id = target
                return reply
            hint = reply.get("leader_id")
            self.leader_id = hint if hint != target else None
            last_problem = f"controller {target} is not active (leader {hint})"
            if self.leader_id is None:
                await asyncio.sleep(RETRY_DELAY_S)
        raise ControllerUnavailable(f"{method}: {last_problem}")

    async def call_node(
        self, node_id: int, method: str, params: Mapping[str, Any], timeout_s: float = 2.0
    ) -> dict[str, Any]:
        """Ask one particular controller (reads any controller can answer)."""
        return await self._channels[node_id].call(method, params, timeout_s)

    async def alter_partition(self, request: AlterPartitionRequest) -> AlterPartitionResult:
        """`AlterPartitionSender` for partition leaders."""
        params = {
            "broker_id": request.broker_id,
            "broker_epoch": request.broker_epoch,
            "topic_id": str(request.topic_id),
            "partition": request.partition,
            "leader_epoch": request.leader_epoch,
            "partition_epoch": request.partition_epoch,
            "new_isr": list(request.new_isr),
        }
        try:
            reply = await self.call("alter_partition", params)
        except ControllerUnavailable:
            return AlterPartitionResult(ErrorCode.not_controller.value)
        if reply["error_code"]:
            return AlterPartitionResult(reply["error_code"])
        return AlterPartitionResult(0, assignment_from_json(reply["result"]["assignment"]))


def assignment_from_json(data: Mapping[str, Any]) -> PartitionAssignment:
    return PartitionAssignment(
        topic=data["topic"],
        partition=int(data["partition"]),
        topic_id=uuid.UUID(data["topic_id"]),
        leader=int(data["leader"]),
        leader_epoch=int(data["leader_epoch"]),
        partition_epoch=int(data["partition_epoch"]),
        replicas=tuple(data["replicas"]),
        isr=tuple(data["isr"]),
        adding_replicas=tuple(data.get("adding_replicas", ())),
        removing_replicas=tuple(data.get("removing_replicas", ())),
    )
