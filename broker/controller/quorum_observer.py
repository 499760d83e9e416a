"""A dynamic quorum's (KIP-853) controller-to-leader loops: an observer pulling the Raft log, and a
voter asking the leader to record its new endpoint."""

from __future__ import annotations

import asyncio
import logging
import time

from kio.schema.errors import ErrorCode

from broker.controller.client import RPC_FAILURES, RpcChannel
from broker.controller.handlers.quorum import update_voter
from broker.controller.quorum_driver import QuorumDriver
from broker.controller.rpc.base import R, Request, RpcError
from broker.controller.rpc.quorum import RaftFetchRequest, UpdateVoterRequest
from broker.raft.messages import AppendEntries, AppendResponse, InstallSnapshot
from broker.raft.wire import FrameError, message_from_json

log = logging.getLogger("broker.controller")

OBSERVER_FETCH_TIMEOUT_S = 2.0


class QuorumObserver:
    def __init__(self, driver: QuorumDriver) -> None:
        self.driver = driver
        dynamic = driver.config.dynamic
        assert dynamic is not None, "only a dynamic quorum has observers"
        self.dynamic = dynamic
        tls = driver.config.tls
        self.ssl = tls.client_context() if tls is not None else None

    async def observer_loop(self) -> None:
        """While this controller is not a voter (or a voter no leader pushes to: see `should_pull`), pull
        the Raft log from the leader (KRaft's observers fetch): bootstrap servers first, then wherever
        the replies say the leader is."""
        driver, dynamic = self.driver, self.dynamic
        timings = driver.config.timings
        channels: dict[tuple[str, int], RpcChannel] = {}
        rotation = 0
        next_index: int | None = None
        try:
            while not driver.closing:
                node = driver.require_node()
                if not node.should_pull(time.monotonic()):
                    next_index = None
                    await asyncio.sleep(timings.heartbeat_interval_s)
                    continue
                if driver.leader_hint is not None:
                    address = driver.leader_hint[1]
                else:
                    address = dynamic.bootstrap_servers[rotation % len(dynamic.bootstrap_servers)]
                    rotation += 1
                channel = channels.get(address)
                if channel is None:
                    channel = channels[address] = RpcChannel(*address, ssl=self.ssl)
                host, port = driver.own_endpoint()
                request = RaftFetchRequest(
                    node_id=node.node_id,
                    directory_id=dynamic.directory_id,
                    host=host,
                    port=port,
                    next_index=node.last_index + 1 if next_index is None else next_index,
                )
                try:
                    reply = await channel.call(request, OBSERVER_FETCH_TIMEOUT_S)
                except RPC_FAILURES:
                    driver.leader_hint = None
                    await asyncio.sleep(timings.heartbeat_interval_s)
                    continue
                if reply.result is None:
                    leader, leader_address = reply.leader_id, reply.leader_address
                    if leader is not None and leader_address is not None and leader != node.node_id:
                        driver.leader_hint = (leader, leader_address)
                    else:
                        driver.leader_hint = None
                    await asyncio.sleep(timings.heartbeat_interval_s)
                    continue
                result = reply.result
                try:
                    message = message_from_json(result.message)
                except FrameError as exc:
                    log.warning(
                        "controller %s answered raft_fetch with something malformed: %s", address, exc
                    )
                    driver.leader_hint = None
                    await asyncio.sleep(timings.election_timeout_s)
                    continue
                driver.leader_hint = (result.leader_id, result.leader_address)
                answers = node.step(message, time.monotonic(), pulled=True)
                driver.after_raft_activity()
                received = isinstance(message, InstallSnapshot) or bool(
                    isinstance(message, AppendEntries) and message.entries
                )
                for envelope in answers:
                    if isinstance(envelope.message, AppendResponse):
                        next_index = envelope.message.match_index + 1
                        received = received and envelope.message.success
                if not received:
                    await asyncio.sleep(timings.heartbeat_interval_s)
        finally:
            for channel in channels.values():
                channel.close()

    async def endpoint_update_loop(self) -> None:
        """UpdateRaftVoter (KIP-853): a voter restarted on another controller endpoint than the voter set
        names asks the leader to record the new one; until then the others' messages go to the old one."""
        driver, dynamic = self.driver, self.dynamic
        while not driver.closing:
            await asyncio.sleep(driver.config.timings.election_timeout_s)
            node = driver.require_node()
            own = driver.own_endpoint()
            recorded = [
                v
                for v in node.voter_set
                if v.node_id == node.node_id and v.directory_id == dynamic.directory_id
            ]
            if not recorded or (recorded[0].host, recorded[0].port) == own:
                continue
            request = UpdateVoterRequest(node.node_id, dynamic.directory_id, own[0], own[1])
            try:
                if node.is_leader:
                    await update_voter(driver, request)
                else:
                    await self._ask_leader(request)
            except RpcError as exc:
                log.debug("updating this voter's endpoint: %s", exc)
                continue
            log.info("asked the leader to record this voter's endpoint %s:%d", *own)

    async def _ask_leader(self, request: Request[R]) -> R:
        """One RPC to the active controller, found through the bootstrap servers (a voter whose endpoint
        changed hears from no leader: the others still send to its old address)."""
        addresses = list(self.dynamic.bootstrap_servers)
        for _attempt in range(len(addresses) + 1):
            if not addresses:
                break
            channel = RpcChannel(*addresses.pop(0), ssl=self.ssl)
            try:
                reply = await channel.call(request, OBSERVER_FETCH_TIMEOUT_S)
            except RPC_FAILURES:
                continue
            finally:
                channel.close()
            if reply.error_code == ErrorCode.not_controller.value:
                if reply.leader_address is not None:
                    addresses.insert(0, reply.leader_address)
                continue
            return reply.answer()
        raise RpcError(ErrorCode.request_timed_out, "no active controller answered")
