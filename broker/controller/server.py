"""A controller node: the Raft node, its storage and transport, the metadata image it applies,
and the controller listener serving peers (Raft frames) and brokers (controller RPCs).

Writes go through one lock: decide against the committed image, propose, wait for the commit,
answer. So every decision sees the outcome of the previous one, and nothing is answered
before it is durable on a majority. A new leader decides nothing until the no-op entry of
its term is applied, so its image holds everything earlier leaders committed.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import ControllerTls
from broker.controller import records as rec
from broker.controller.api import AlterPartitionRequest, Endpoint, PartitionAssignment
from broker.controller.client import ChannelBusy, RpcChannel
from broker.controller.decisions import (
    ELECTION_PREFERRED,
    ELECTION_UNCLEAN,
    PRODUCER_ID_BLOCK,
    ControllerSettings,
    Decider,
    Decision,
    TopicRequest,
)
from broker.controller.image import (
    LARGE_ENTRY_RECORDS,
    MetadataImage,
    apply_entry_yielding,
    decode_entry_yielding,
    image_from_snapshot_yielding,
)
from broker.metadata.features import FeatureUpdate
from broker.raft.messages import (
    AppendEntries,
    AppendResponse,
    Entry,
    Envelope,
    InstallSnapshot,
    Snapshot,
    Voter,
)
from broker.raft.node import MembershipChangePending, NotLeader, RaftNode, RaftTimings
from broker.raft.storage import FileStorage
from broker.raft.tasks import cancel_tasks
from broker.raft.transport import PeerTransport
from broker.raft.wire import (
    MAX_FRAME_BYTES,
    FrameError,
    encode_frame,
    message_from_json,
    message_to_json,
    read_frame,
)
from broker.runtime.connection_limits import ListenerLimits
from broker.runtime.request_memory import RequestMemory

log = logging.getLogger("broker.controller")

TICK_INTERVAL_S = 0.02
FENCE_CHECK_INTERVAL_S = 0.25
COMMIT_TIMEOUT_S = 10.0
MAX_FETCH_ENTRIES = 500
HANDOVER_DELIVERY_S = 0.1
TLS_HANDSHAKE_TIMEOUT_S = 10.0
# Partitions in one alter_partitions request (the broker side sends at most ALTER_BATCH).
MAX_ALTER_PARTITIONS = 10_000
# Metadata fetchers remembered for DescribeQuorum's observers (a broker id costs a few dozen bytes).
MAX_OBSERVERS = 10_000


def _wall_ms(monotonic_at: float | None, monotonic_now: float) -> int | None:
    """A time.monotonic() instant as Unix epoch milliseconds (None stays None)."""
    if monotonic_at is None:
        return None
    return int((time.time() - (monotonic_now - monotonic_at)) * 1000)


# kraft.version: 1 is a dynamic quorum (KIP-853: the voter set in the log), 0 a static one.
KRAFT_VERSION_DYNAMIC = 1
# An observer is caught up (AddRaftVoter accepts it) when it held the leader's log this recently.
CAUGHT_UP_WITHIN_S = 5.0
OBSERVER_FETCH_TIMEOUT_S = 2.0
# Controllers pulling the log as observers that the leader remembers.
MAX_RAFT_OBSERVERS = 100


@dataclass(slots=True)
class RaftObserver:
    """A controller fetching the Raft log from the leader without being a voter (monotonic times)."""

    directory_id: str | None
    endpoint: tuple[str, int]
    log_end: int
    last_fetch: float
    last_caught_up: float | None


def kraft_version_finalized(config: ControllerNodeConfig) -> int:
    """The finalized kraft.version: a property of how the quorum was formatted here (Kafka 4.0 cannot
    change it once the cluster runs). A fresh cluster records the same level in its metadata log
    (`ControllerSettings.kraft_version`), which is what ApiVersions advertises."""
    return KRAFT_VERSION_DYNAMIC if config.dynamic is not None else 0


class RpcError(Exception):
    def __init__(self, code: ErrorCode, message: str = "") -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class DynamicQuorum:
    """A KIP-853 quorum's start-up state (see broker/node/storage_format.py)."""

    directory_id: str
    # The initial voters this node was formatted with; empty: it joins as an observer.
    bootstrap_voters: tuple[Voter, ...]
    # `controller.quorum.bootstrap.servers`: where an observer finds the leader.
    bootstrap_servers: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class ControllerNodeConfig:
    node_id: int
    # The static voters (`controller.quorum.voters`); empty for a dynamic quorum.
    voters: Mapping[int, tuple[str, int]]
    metadata_dir: Path
    listen_host: str
    listen_port: int
    dynamic: DynamicQuorum | None = None
    settings: ControllerSettings = field(default_factory=ControllerSettings)
    timings: RaftTimings = field(default_factory=RaftTimings)
    snapshot_every_entries: int = 1000
    # None: the controller listener is PLAINTEXT (peers and brokers are not authenticated).
    tls: ControllerTls | None = None
    # Connections, request bytes in flight and idle time on the controller listener, by the same
    # properties (and enforced by the same code) as on the broker's listeners.
    limits: ListenerLimits = field(default_factory=ListenerLimits)


def assignment_to_json(p: PartitionAssignment) -> dict[str, Any]:
    data = asdict(p)
    data["topic_id"] = str(p.topic_id)
    data["replicas"] = list(p.replicas)
    data["isr"] = list(p.isr)
    data["adding_replicas"] = list(p.adding_replicas)
    data["removing_replicas"] = list(p.removing_replicas)
    return data


def _partition_list(listed: Any) -> list[tuple[str, int]] | None:
    return None if listed is None else [(str(t), int(p)) for t, p in listed]


def _results_json(decision: Decision) -> list[dict[str, Any]]:
    return [
        {"topic": r.topic, "partition": r.partition, "error_code": r.error_code, "message": r.message}
        for r in decision.results
    ]


class ControllerServer:
    def __init__(self, config: ControllerNodeConfig) -> None:
        self.config = config
        self.image = MetadataImage()
        self.node: RaftNode | None = None
        self.transport: PeerTransport | None = None
        self.bound_port = 0
        self._server: asyncio.Server | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._write_lock = asyncio.Lock()
        self._alter_queue: list[tuple[AlterPartitionRequest, asyncio.Future[Decision]]] = []
        self._alter_flusher: asyncio.Future[None] | None = None
        self._pending: dict[int, tuple[int, asyncio.Future[None]]] = {}
        # (applied offset awaited, future) for readers of the image: no locks on the apply path.
        self._offset_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._decider: Decider | None = None
        # Set when Raft may have committed something: the applier task applies it.
        self._commit_signal = asyncio.Event()
        # When each other voter was last heard from over Raft: in a combined node that is its broker's
        # process too, which tells a new active controller which broker died with the old one.
        self._voter_contact: dict[int, float] = {}
        self._term_start_index = 0
        # Brokers fetching the metadata log: id -> (log end offset, last fetch, last caught up), monotonic.
        self._observers: dict[int, tuple[int, float, float | None]] = {}
        # Controllers pulling the Raft log as observers (dynamic quorum), by node id.
        self._raft_observers: dict[int, RaftObserver] = {}
        # The leader's controller endpoint as an observer learned it from a raft_fetch reply.
        self._leader_hint: tuple[int, tuple[str, int]] | None = None
        self._peer_set: tuple[Voter, ...] = ()
        self._connections: set[asyncio.StreamWriter] = set()
        self._connection_limits = config.limits.connection_limits()
        self.request_memory = RequestMemory(config.limits.queued_max_request_bytes)
        self._max_frame_bytes = min(config.limits.max_request_bytes, MAX_FRAME_BYTES)
        self._handler_tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
            "describe_quorum": self._describe_quorum,
            "describe_cluster": self._describe_cluster,
            "fetch_metadata": self._fetch_metadata,
            "register_broker": self._register_broker,
            "broker_heartbeat": self._broker_heartbeat,
            "alter_partition": self._alter_partition,
            "alter_partitions": self._alter_partitions,
            "elect_leaders": self._elect_leaders,
            # The earlier name of elect_leaders (PREFERRED unless `election_type` says otherwise).
            "elect_preferred_leaders": self._elect_leaders,
            "alter_partition_reassignments": self._alter_partition_reassignments,
            "list_partition_reassignments": self._list_partition_reassignments,
            "unregister_broker": self._unregister_broker,
            "create_topics": self._create_topics,
            "delete_topics": self._delete_topics,
            "create_partitions": self._create_partitions,
            "alter_configs": self._alter_configs,
            "security_change": self._security_change,
            "allocate_producer_ids": self._allocate_producer_ids,
            "update_features": self._update_features,
            "raft_fetch": self._raft_fetch,
            "add_voter": self._add_voter,
            "remove_voter": self._remove_voter,
            "update_voter": self._update_voter,
        }

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        config = self.config
        storage = FileStorage(config.metadata_dir)
        dynamic = config.dynamic
        if dynamic is None:
            self.node = RaftNode(
                config.node_id, list(config.voters), storage, time.monotonic(), config.timings
            )
        else:
            self.node = RaftNode(
                config.node_id,
                dynamic.bootstrap_voters,
                storage,
                time.monotonic(),
                config.timings,
                dynamic=True,
                directory_id=dynamic.directory_id,
            )
        await self._apply_committed()
        tls = config.tls
        self.transport = PeerTransport(
            config.node_id,
            {},
            ssl=tls.client_context() if tls is not None else None,
            directory_id=None if dynamic is None else dynamic.directory_id,
        )
        self._sync_peers()
        self.transport.start()
        self._server = await asyncio.start_server(
            self._serve_connection,
            config.listen_host,
            config.listen_port,
            reuse_address=True,
            # A peer without a certificate from our CA fails the handshake: it never sends a frame.
            ssl=tls.server_context() if tls is not None else None,
            # asyncio's default (60 s) lets a silent connection hold a handshake slot for a minute.
            ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT_S if tls is not None else None,
        )
        self.bound_port = self._server.sockets[0].getsockname()[1]
        self._tasks = [
            asyncio.create_task(self._apply_loop(), name="metadata-applier"),
            asyncio.create_task(self._tick_loop(), name="raft-tick"),
            asyncio.create_task(self._fence_loop(), name="controller-fencing"),
        ]
        if config.settings.auto_leader_rebalance:
            self._tasks.append(asyncio.create_task(self._rebalance_loop(), name="leader-rebalancing"))
        if config.dynamic is not None:
            self._tasks.append(asyncio.create_task(self._observer_loop(), name="raft-observer"))
            self._tasks.append(asyncio.create_task(self._endpoint_update_loop(), name="raft-voter-endpoint"))
        log.info(
            "controller %d listening on %s:%d (%s), voters %s",
            config.node_id,
            config.listen_host,
            self.bound_port,
            "mutual TLS" if tls is not None else "PLAINTEXT",
            list(self.node.voters) or "(none: an observer)",
        )

    async def stop(self) -> None:
        self._closing = True
        await cancel_tasks(self._tasks)
        if self.node is not None and self.transport is not None:
            handover = self.node.transfer_leadership()
            if handover:
                # Hand the quorum over instead of leaving it to an election timeout.
                self._send(handover)
                await asyncio.sleep(HANDOVER_DELIVERY_S)
        if self._server is not None:
            self._server.close()
        for writer in list(self._connections):
            writer.close()
        for handler in list(self._handler_tasks):
            handler.cancel()
        if self._server is not None:
            await self._server.wait_closed()
        if self.transport is not None:
            await self.transport.close()
        self._fail_pending()

    # --- Raft plumbing -----------------------------------------------------------------------

    def _node(self) -> RaftNode:
        assert self.node is not None, "the controller is not started"
        return self.node

    def _send(self, envelopes: list[Envelope]) -> None:
        assert self.transport is not None
        for envelope in envelopes:
            self.transport.send(envelope.to, envelope.message)

    async def _tick_loop(self) -> None:
        while not self._closing:
            await asyncio.sleep(TICK_INTERVAL_S)
            self._send(self._node().tick(time.monotonic()))
            self._after_raft_activity()

    def _sync_peers(self) -> None:
        """Dial the voters of the set in force (it changes with the log in a dynamic quorum)."""
        node = self._node()
        if self.transport is None:
            return
        if self.config.dynamic is None:
            if not self.transport.peers:
                self.transport.update_peers(
                    {i: a for i, a in self.config.voters.items() if i != node.node_id}
                )
            return
        voters = node.voter_set
        hint = self._leader_hint
        key = (*voters, *([] if hint is None else [Voter(hint[0], None, *hint[1])]))
        if key == self._peer_set:
            return
        self._peer_set = key
        peers = {v.node_id: (v.host, v.port) for v in voters if v.node_id != node.node_id}
        if hint is not None and hint[0] not in peers and hint[0] != node.node_id:
            peers[hint[0]] = hint[1]  # an observer answers the leader that pushes to it
        self.transport.update_peers(peers, {v.node_id: v.directory_id for v in voters})

    def _after_raft_activity(self) -> None:
        node = self._node()
        if self.config.dynamic is not None:
            self._sync_peers()
        was_active = self._decider is not None
        if node.is_leader and not was_active:
            self._decider = Decider(
                self.config.settings,
                time.monotonic(),
                voter_contact=self._voter_contact,
                raft_round_s=self.config.timings.election_timeout_s,
            )
            self._term_start_index = node.last_index  # the no-op entry of this term
            log.info("controller %d is the active controller for term %d", node.node_id, node.term)
        elif not node.is_leader and was_active:
            self._decider = None
            self._fail_pending()
            log.info("controller %d is no longer active (leader %s)", node.node_id, node.leader)
        self._commit_signal.set()

    async def _apply_loop(self) -> None:
        """Applies what Raft committed, in its own task: a large entry is applied a slice at a time
        (see `apply_entry_yielding`), so the Raft messages and ticks that arrive meanwhile are handled
        on time instead of after it — a long stall there costs the leadership."""
        try:
            while not self._closing:
                await self._commit_signal.wait()
                self._commit_signal.clear()
                if await self._apply_committed():
                    self._wake_offset_waiters()
        except Exception:
            # Skipping an entry would fork this node's image from the others': stop applying, loudly.
            log.exception("controller %d cannot apply the metadata log any further", self.config.node_id)
            raise

    def _wake_offset_waiters(self) -> None:
        still_waiting = []
        for index, future in self._offset_waiters:
            if future.done():
                continue
            if self.image.offset >= index:
                future.set_result(None)
            else:
                still_waiting.append((index, future))
        self._offset_waiters = still_waiting

    async def _apply_committed(self) -> bool:
        node = self._node()
        items = node.take_committed()
        for item in items:
            if isinstance(item, Snapshot):
                self.image = await image_from_snapshot_yielding(item.data)
                continue
            records = await decode_entry_yielding(item.data)
            self.image, _ = await apply_entry_yielding(self.image, item.index, records)
            self._resolve(item)
        image = self.image
        if items and image.offset - node.snapshot.last_index >= self.config.snapshot_every_entries:
            term = node.term_at(image.offset)
            assert term is not None
            # Only this task changes the image, so it stands still while the snapshot is gathered in
            # slices; `compact` ignores it if an InstallSnapshot from the leader got further meanwhile.
            node.compact(Snapshot(image.offset, term, await image.to_snapshot_yielding()))
        return bool(items)

    def _resolve(self, entry: Entry) -> None:
        waiting = self._pending.pop(entry.index, None)
        if waiting is None:
            return
        term, future = waiting
        if future.done():
            return
        if entry.term == term:
            future.set_result(None)
        else:
            future.set_exception(RpcError(ErrorCode.not_controller, "leadership changed before the commit"))

    def _fail_pending(self) -> None:
        # An entry committed before leadership was lost (a removed leader steps down right after the
        # commit of its removal) is answered by the applier as it applies it, not refused here.
        committed = self.node.commit_index if self.node is not None and not self._closing else 0
        for index, (_, future) in list(self._pending.items()):
            if index <= committed:
                continue
            if not future.done():
                future.set_exception(
                    RpcError(ErrorCode.not_controller, "leadership changed before the commit")
                )
            del self._pending[index]

    async def _wait_until_applied(self, index: int, timeout_s: float) -> bool:
        if self.image.offset >= index:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._offset_waiters.append((index, future))
        try:
            # asyncio.wait neither cancels nor swallows cancellation (unlike 3.11's wait_for).
            await asyncio.wait([future], timeout=timeout_s)
        finally:
            if not future.done():
                future.cancel()
        return self.image.offset >= index

    async def decide_and_commit(self, decide: Callable[[Decider, MetadataImage], Decision]) -> Decision:
        """Decide against the committed image, then commit the records before returning."""
        async with self._write_lock:
            # Until the current term's no-op is applied, the image may miss earlier leaders' commits
            # (re-checked in a loop: leadership may be lost and won again meanwhile).
            while self.image.offset < self._term_start_index or self._decider is None:
                self._active_decider()
                if not await self._wait_until_applied(self._term_start_index, COMMIT_TIMEOUT_S):
                    raise RpcError(ErrorCode.request_timed_out, "the new controller has not caught up yet")
            node = self._node()
            term = node.term
            decision = decide(self._active_decider(), self.image)
            if decision.error_code or not decision.records:
                return decision
            if len(decision.records) >= LARGE_ENTRY_RECORDS:
                # Deciding, encoding and storing a 10,000-partition topic each take tens of
                # milliseconds: Raft and heartbeats get a turn in between. The image stands still
                # meanwhile (only entries proposed under this lock are applied), the term may not.
                await asyncio.sleep(0)
                data = rec.encode_entry(decision.records)
                await asyncio.sleep(0)
                if node.term != term:
                    raise RpcError(ErrorCode.not_controller, "leadership changed during the decision")
            else:
                data = rec.encode_entry(decision.records)
            try:
                envelopes, entry = node.propose(data, time.monotonic())
            except NotLeader:
                raise RpcError(ErrorCode.not_controller) from None
            await self._await_commit(envelopes, entry, "the metadata change")
            return decision

    async def _await_commit(self, envelopes: list[Envelope], entry: Entry, what: str) -> None:
        """Send a proposal's messages and wait until its entry is committed and applied."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[entry.index] = (entry.term, future)
        self._send(envelopes)
        self._after_raft_activity()  # a single voter commits at once
        try:
            await asyncio.wait_for(future, COMMIT_TIMEOUT_S)
        except TimeoutError:
            raise RpcError(ErrorCode.request_timed_out, f"{what} was not committed in time") from None

    def _active_decider(self) -> Decider:
        if self._decider is None:
            raise RpcError(ErrorCode.not_controller)
        return self._decider

    async def _fence_loop(self) -> None:
        while not self._closing:
            await asyncio.sleep(FENCE_CHECK_INTERVAL_S)
            if self._decider is None:
                continue
            try:
                while True:
                    decision = await self.decide_and_commit(
                        lambda d, image: d.fence_expired_broker(image, time.monotonic())
                    )
                    if not decision.records:
                        break
                    log.info("fenced a broker whose session expired: %s", decision.records[0])
            except RpcError as exc:
                log.debug("fencing check skipped: %s", exc)

    async def _rebalance_loop(self) -> None:
        settings = self.config.settings
        while not self._closing:
            await asyncio.sleep(settings.leader_imbalance_check_interval_s)
            if self._decider is None:
                continue
            try:
                decision = await self.decide_and_commit(
                    lambda d, image: d.rebalance_leaders(image, settings.leader_imbalance_percentage)
                )
            except RpcError as exc:
                log.debug("leader rebalancing skipped: %s", exc)
                continue
            if decision.records:
                log.info("moved %d leaderships back to their preferred replicas", len(decision.records))

    # --- dynamic quorum (KIP-853) -----------------------------------------------------------------

    def _voter_address(self, node_id: int | None) -> tuple[str, int] | None:
        if node_id is None:
            return None
        if self.config.dynamic is None:
            return self.config.voters.get(node_id)
        for voter in self._node().voter_set:
            if voter.node_id == node_id and voter.host:
                return voter.host, voter.port
        if node_id == self.config.node_id:
            return self.config.listen_host, self.bound_port
        return None

    def _own_endpoint(self) -> tuple[str, int]:
        return self.config.listen_host, self.bound_port or self.config.listen_port

    async def _observer_loop(self) -> None:
        """While this controller is not a voter (or a voter no leader pushes to: see `should_pull`), pull
        the Raft log from the leader (KRaft's observers fetch): bootstrap servers first, then wherever
        the replies say the leader is."""
        dynamic = self.config.dynamic
        assert dynamic is not None
        tls = self.config.tls
        ssl = tls.client_context() if tls is not None else None
        channels: dict[tuple[str, int], RpcChannel] = {}
        rotation = 0
        next_index: int | None = None
        try:
            while not self._closing:
                node = self._node()
                if not node.should_pull(time.monotonic()):
                    next_index = None
                    await asyncio.sleep(self.config.timings.heartbeat_interval_s)
                    continue
                if self._leader_hint is not None:
                    address = self._leader_hint[1]
                else:
                    address = dynamic.bootstrap_servers[rotation % len(dynamic.bootstrap_servers)]
                    rotation += 1
                channel = channels.get(address)
                if channel is None:
                    channel = channels[address] = RpcChannel(*address, ssl=ssl)
                host, port = self._own_endpoint()
                params = {
                    "node_id": node.node_id,
                    "directory_id": dynamic.directory_id,
                    "host": host,
                    "port": port,
                    "next_index": node.last_index + 1 if next_index is None else next_index,
                }
                try:
                    reply = await channel.call("raft_fetch", params, OBSERVER_FETCH_TIMEOUT_S)
                except (OSError, TimeoutError, asyncio.IncompleteReadError, FrameError, ChannelBusy):
                    self._leader_hint = None
                    await asyncio.sleep(self.config.timings.heartbeat_interval_s)
                    continue
                if reply["error_code"]:
                    leader, leader_address = reply.get("leader_id"), reply.get("leader_address")
                    if (
                        isinstance(leader, int)
                        and isinstance(leader_address, list)
                        and leader != node.node_id
                    ):
                        self._leader_hint = (leader, (str(leader_address[0]), int(leader_address[1])))
                    else:
                        self._leader_hint = None
                    await asyncio.sleep(self.config.timings.heartbeat_interval_s)
                    continue
                try:
                    result = reply["result"]
                    leader_id, (leader_host, leader_port) = int(result["leader_id"]), result["leader_address"]
                    message = message_from_json(result["message"])
                except (FrameError, KeyError, TypeError, ValueError) as exc:
                    log.warning(
                        "controller %s answered raft_fetch with something malformed: %s", address, exc
                    )
                    self._leader_hint = None
                    await asyncio.sleep(self.config.timings.election_timeout_s)
                    continue
                self._leader_hint = (leader_id, (str(leader_host), int(leader_port)))
                answers = node.step(message, time.monotonic(), pulled=True)
                self._after_raft_activity()
                received = isinstance(message, InstallSnapshot) or bool(
                    isinstance(message, AppendEntries) and message.entries
                )
                for envelope in answers:
                    if isinstance(envelope.message, AppendResponse):
                        next_index = envelope.message.match_index + 1
                        received = received and envelope.message.success
                if not received:
                    await asyncio.sleep(self.config.timings.heartbeat_interval_s)
        finally:
            for channel in channels.values():
                channel.close()

    async def _endpoint_update_loop(self) -> None:
        """UpdateRaftVoter (KIP-853): a voter restarted on another controller endpoint than the voter set
        names asks the leader to record the new one; until then the others' messages go to the old one."""
        dynamic = self.config.dynamic
        assert dynamic is not None
        while not self._closing:
            await asyncio.sleep(self.config.timings.election_timeout_s)
            node = self._node()
            own = self._own_endpoint()
            recorded = [
                v
                for v in node.voter_set
                if v.node_id == node.node_id and v.directory_id == dynamic.directory_id
            ]
            if not recorded or (recorded[0].host, recorded[0].port) == own:
                continue
            params = {
                "voter_id": node.node_id,
                "directory_id": dynamic.directory_id,
                "host": own[0],
                "port": own[1],
            }
            try:
                if node.is_leader:
                    await self._update_voter(params)
                else:
                    await self._ask_leader("update_voter", params)
            except RpcError as exc:
                log.debug("updating this voter's endpoint: %s", exc)
                continue
            log.info("asked the leader to record this voter's endpoint %s:%d", *own)

    async def _ask_leader(self, method: str, params: dict[str, Any]) -> None:
        """One RPC to the active controller, found through the bootstrap servers (a voter whose endpoint
        changed hears from no leader: the others still send to its old address)."""
        dynamic = self.config.dynamic
        assert dynamic is not None
        tls = self.config.tls
        addresses = list(dynamic.bootstrap_servers)
        for _attempt in range(len(addresses) + 1):
            if not addresses:
                break
            channel = RpcChannel(*addresses.pop(0), ssl=tls.client_context() if tls is not None else None)
            try:
                reply = await channel.call(method, params, OBSERVER_FETCH_TIMEOUT_S)
            except (OSError, TimeoutError, asyncio.IncompleteReadError, FrameError, ChannelBusy):
                continue
            finally:
                channel.close()
            if reply["error_code"] == ErrorCode.not_controller.value:
                hint = reply.get("leader_address")
                if isinstance(hint, list) and len(hint) == 2:
                    addresses.insert(0, (str(hint[0]), int(hint[1])))
                continue
            if reply["error_code"]:
                raise RpcError(ErrorCode(reply["error_code"]), reply.get("message") or "")
            return
        raise RpcError(ErrorCode.request_timed_out, "no active controller answered")

    def _require_dynamic_leader(self) -> RaftNode:
        if kraft_version_finalized(self.config) < KRAFT_VERSION_DYNAMIC:
            raise RpcError(
                ErrorCode.unsupported_version,
                "the quorum is static (controller.quorum.voters, kraft.version 0): its voters cannot change",
            )
        self._active_decider()
        return self._node()

    async def _raft_fetch(self, params: dict[str, Any]) -> dict[str, Any]:
        """An observer controller pulls the log: what the leader would push to a follower at
        `next_index`. Its progress is what AddRaftVoter's catch-up check and DescribeQuorum read."""
        node = self._require_dynamic_leader()
        observer_id = int(params["node_id"])
        next_index = int(params["next_index"])
        if next_index < 1:
            raise RpcError(ErrorCode.invalid_request, "next_index starts at 1")
        now = time.monotonic()
        log_end = min(next_index - 1, node.last_index)
        known = self._raft_observers.get(observer_id)
        caught_up = now if log_end >= node.commit_index else (known.last_caught_up if known else None)
        self._raft_observers[observer_id] = RaftObserver(
            str(params["directory_id"]) if params.get("directory_id") else None,
            (str(params["host"]), int(params["port"])),
            log_end,
            now,
            caught_up,
        )
        if len(self._raft_observers) > MAX_RAFT_OBSERVERS:
            del self._raft_observers[
                min(self._raft_observers, key=lambda i: self._raft_observers[i].last_fetch)
            ]
        address = self._voter_address(node.node_id)
        assert address is not None
        return {
            "leader_id": node.node_id,
            "leader_address": list(address),
            "message": message_to_json(node.message_for_observer(next_index)),
        }

    async def _propose_voters(self, voters: list[Voter]) -> None:
        """Append the new voter set (in force at once) and answer once it is committed."""
        node = self._node()
        try:
            envelopes, entry = node.propose_voters(voters, time.monotonic())
        except NotLeader:
            raise RpcError(ErrorCode.not_controller) from None
        except MembershipChangePending as exc:
            raise RpcError(ErrorCode.request_timed_out, str(exc)) from None
        await self._await_commit(envelopes, entry, "the voter change")

    @staticmethod
    def _directory_param(params: dict[str, Any]) -> str | None:
        directory = params.get("directory_id")
        if directory is None or uuid.UUID(str(directory)).int == 0:
            return None
        return str(uuid.UUID(str(directory)))

    async def _add_voter(self, params: dict[str, Any]) -> dict[str, Any]:
        """AddRaftVoter: `voter_id`, `directory_id`, `host`, `port` (the new voter's controller endpoint).
        The node must be an observer that holds the leader's log (KIP-853), else REQUEST_TIMED_OUT."""
        node = self._require_dynamic_leader()
        voter_id = int(params["voter_id"])
        directory = self._directory_param(params)
        if directory is None:
            raise RpcError(ErrorCode.invalid_request, "a dynamic quorum's voter needs its directory id")
        if any(v.node_id == voter_id for v in node.voter_set):
            raise RpcError(ErrorCode.duplicate_voter, f"node {voter_id} is already a voter")
        if node.membership_change_pending:
            raise RpcError(ErrorCode.request_timed_out, "another voter change is not committed yet")
        observer = self._raft_observers.get(voter_id)
        now = time.monotonic()
        if observer is None or observer.directory_id != directory:
            raise RpcError(
                ErrorCode.request_timed_out,
                f"node {voter_id} with directory {directory} is not fetching from the leader as an observer",
            )
        if observer.last_caught_up is None or now - observer.last_caught_up > CAUGHT_UP_WITHIN_S:
            raise RpcError(ErrorCode.request_timed_out, f"node {voter_id} has not caught up with the log")
        host, port = str(params["host"]), int(params["port"])
        await self._propose_voters([*node.voter_set, Voter(voter_id, directory, host, port)])
        log.info("node %d (directory %s, %s:%d) is a voter now", voter_id, directory, host, port)
        return {}

    async def _remove_voter(self, params: dict[str, Any]) -> dict[str, Any]:
        """RemoveRaftVoter: `voter_id`, `directory_id` (the zero uuid or absent: any)."""
        node = self._require_dynamic_leader()
        voter_id = int(params["voter_id"])
        directory = self._directory_param(params)
        kept = [
            v for v in node.voter_set if not (v.node_id == voter_id and directory in (None, v.directory_id))
        ]
        if len(kept) == len(node.voter_set):
            raise RpcError(
                ErrorCode.voter_not_found, f"node {voter_id} (directory {directory}) is not a voter"
            )
        if not kept:
            raise RpcError(ErrorCode.invalid_request, "the last voter cannot be removed")
        await self._propose_voters(kept)
        log.info("node %d is no longer a voter", voter_id)
        return {}

    async def _update_voter(self, params: dict[str, Any]) -> dict[str, Any]:
        """UpdateRaftVoter: a voter's new controller endpoint (`host`, `port`)."""
        node = self._require_dynamic_leader()
        voter_id = int(params["voter_id"])
        directory = self._directory_param(params)
        current = [v for v in node.voter_set if v.node_id == voter_id and v.directory_id == directory]
        if not current:
            raise RpcError(
                ErrorCode.voter_not_found, f"node {voter_id} (directory {directory}) is not a voter"
            )
        updated = Voter(voter_id, directory, str(params["host"]), int(params["port"]))
        if updated == current[0]:
            return {}
        await self._propose_voters([updated if v.node_id == voter_id else v for v in node.voter_set])
        return {}

    # --- the listener ------------------------------------------------------------------------

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        host = str(peer[0]) if peer else "?"
        refused = self._connection_limits.admit(host)
        if refused is not None:
            log.warning("refusing a controller connection: %s", refused)
            writer.close()
            return
        self._connections.add(writer)
        handler = asyncio.current_task()
        assert handler is not None
        self._handler_tasks.add(handler)
        try:
            while True:
                # connections.max.idle.ms: a frame (or the next one) must arrive within it.
                async with asyncio.timeout(self.config.limits.max_idle_s):
                    frame = await read_frame(
                        reader, max_frame_bytes=self._max_frame_bytes, memory=self.request_memory
                    )
                kind = frame.get("t")
                if kind == "raft":
                    message = message_from_json(frame.get("m"))
                    sender = frame.get("from")
                    if not self._from_known_directory(frame):
                        continue
                    if isinstance(sender, int) and sender in self.config.voters:
                        self._voter_contact[sender] = time.monotonic()
                    self._send(self._node().step(message, time.monotonic()))
                    self._after_raft_activity()
                elif kind == "rpc":
                    reply = await self._answer(frame)
                    writer.write(encode_frame(reply))
                    await writer.drain()
                else:
                    raise FrameError(f"unknown frame type {kind!r}")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except TimeoutError:
            log.info(
                "closing a controller connection from %s: silent for %.0f s",
                host,
                self.config.limits.max_idle_s,
            )
        except asyncio.CancelledError:
            # Shutting down: end quietly (a cancelled handler task is logged as an error by asyncio).
            pass
        except FrameError as exc:
            log.warning("closing a controller connection: %s", exc)
        finally:
            self._connection_limits.release(host)
            self._connections.discard(writer)
            self._handler_tasks.discard(handler)
            writer.close()

    def _from_known_directory(self, frame: dict[str, Any]) -> bool:
        """KIP-853: a frame meant for another directory of our id (we were wiped and formatted
        again), or from a voter id whose directory is not the one in the voter set, is dropped."""
        dynamic = self.config.dynamic
        if dynamic is None:
            return True
        to_dir = frame.get("to_dir")
        if to_dir is not None and to_dir != dynamic.directory_id:
            return False
        sender = frame.get("from")
        for voter in self._node().voter_set:
            if voter.node_id == sender and voter.directory_id not in (None, frame.get("dir")):
                return False
        return True

    async def _answer(self, frame: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = {"t": "reply", "id": frame.get("id"), "error_code": 0, "message": ""}
        handler = self._handlers.get(str(frame.get("method")))
        try:
            if handler is None:
                raise RpcError(ErrorCode.invalid_request, f"unknown method {frame.get('method')!r}")
            params = frame.get("params") or {}
            if not isinstance(params, dict):
                raise RpcError(ErrorCode.invalid_request, "params must be an object")
            reply["result"] = await handler(params)
        except RpcError as exc:
            reply["error_code"] = exc.code.value
            reply["message"] = exc.message
        except (KeyError, TypeError, ValueError) as exc:
            reply["error_code"] = ErrorCode.invalid_request.value
            reply["message"] = f"malformed request: {exc!r}"
        node = self._node()
        reply["leader_id"] = node.leader
        leader_address = self._voter_address(node.leader)
        if leader_address is not None:
            # Clients of a dynamic quorum know only the bootstrap servers: this is how they find it.
            reply["leader_address"] = list(leader_address)
        # The term the hint is true in: a client never trades a newer term's leader for an older one's.
        reply["term"] = node.term
        # A broker that forwarded an admin request waits for its own image to reach this offset,
        # so its next Metadata response already shows the change.
        reply["applied_offset"] = self.image.offset
        return reply

    @staticmethod
    def _raise_for(decision: Decision) -> None:
        if decision.error_code:
            raise RpcError(ErrorCode(decision.error_code), decision.message)

    # --- handlers ----------------------------------------------------------------------------

    async def _describe_quorum(self, params: dict[str, Any]) -> dict[str, Any]:
        """The quorum as this node sees it; on the leader also each voter's and observer's progress
        (DescribeQuorum): log end offsets and wall-clock times in ms, None where not known."""
        node = self._node()
        now = time.monotonic()
        directories = {v.node_id: v.directory_id for v in node.voter_set}
        return {
            "node_id": node.node_id,
            "leader_id": node.leader,
            "term": node.term,
            "role": node.role.value,
            "commit_index": node.commit_index,
            "applied_offset": self.image.offset,
            "voters": list(node.voters),
            "kraft_version": kraft_version_finalized(self.config),
            "voter_addresses": {
                str(v.node_id): list(address)
                for v in node.voter_set
                if (address := self._voter_address(v.node_id)) is not None
            },
            "voter_directories": {str(v.node_id): v.directory_id for v in node.voter_set},
            "voter_progress": [
                {
                    "node_id": p.node_id,
                    "directory_id": directories.get(p.node_id),
                    "log_end_offset": p.log_end,
                    "last_fetch_ms": _wall_ms(p.last_contact, now),
                    "last_caught_up_ms": _wall_ms(p.last_caught_up, now),
                }
                for p in node.voter_progress(now)
            ],
            "observers": [
                *(
                    {
                        "node_id": observer_id,
                        "directory_id": o.directory_id,
                        "log_end_offset": o.log_end,
                        "last_fetch_ms": _wall_ms(o.last_fetch, now),
                        "last_caught_up_ms": _wall_ms(o.last_caught_up, now),
                    }
                    for observer_id, o in sorted(self._raft_observers.items())
                    if observer_id not in node.voters and node.is_leader
                ),
                *(
                    {
                        "node_id": broker_id,
                        "log_end_offset": offset,
                        "last_fetch_ms": _wall_ms(fetched, now),
                        "last_caught_up_ms": _wall_ms(caught_up, now),
                    }
                    for broker_id, (offset, fetched, caught_up) in sorted(self._observers.items())
                    if broker_id not in node.voters
                    and broker_id not in self._raft_observers
                    and node.is_leader
                ),
            ],
        }

    async def _describe_cluster(self, params: dict[str, Any]) -> dict[str, Any]:
        image = self.image
        return {
            "offset": image.offset,
            "brokers": [
                {
                    "broker_id": b.broker_id,
                    "epoch": b.epoch,
                    "fenced": b.fenced,
                    "in_controlled_shutdown": b.in_controlled_shutdown,
                    "rack": b.rack,
                    "endpoints": [[e.name, e.host, e.port, e.security_protocol] for e in b.endpoints],
                }
                for b in image.brokers.values()
            ],
            "topics": {
                t.name: {"topic_id": str(t.topic_id), "configs": t.configs} for t in image.topics.values()
            },
            "partitions": [assignment_to_json(p) for p in image.partitions()],
        }

    async def _fetch_metadata(self, params: dict[str, Any]) -> dict[str, Any]:
        """Committed entries after `after_offset` (a snapshot first when they were compacted
        away); waits up to `max_wait_ms` for something new. Each entry is `[index, records]`, or
        `[index, base64 of the records' JSON]` with `entry_encoding` "base64" (what brokers ask for)."""
        after = int(params["after_offset"])
        if "broker_id" in params:
            self._note_observer(int(params["broker_id"]), after)
        if self.image.offset <= after:
            await self._wait_until_applied(after + 1, int(params.get("max_wait_ms", 0)) / 1000)
        node = self._node()
        result: dict[str, Any] = {"entries": [], "applied_offset": self.image.offset}
        if after < node.snapshot.last_index:
            result["snapshot"] = base64.b64encode(node.snapshot.data).decode("ascii")
            after = node.snapshot.last_index
        upto = min(self.image.offset, after + MAX_FETCH_ENTRIES)
        if upto > after:
            entries = node.entries_from(after + 1, upto - after)
            if params.get("entry_encoding") == "base64":
                # The stored bytes as they are: decoding a 10,000-partition entry and encoding it into
                # the reply again cost the active controller 40 ms of its event loop per broker.
                result["entries"] = [[e.index, base64.b64encode(e.data).decode("ascii")] for e in entries]
            else:
                result["entries"] = [[e.index, rec.decode_entry(e.data)] for e in entries]
        return result

    def _note_observer(self, broker_id: int, log_end: int) -> None:
        """A broker fetching the metadata log from `log_end` on (DescribeQuorum's observers)."""
        now = time.monotonic()
        _offset, _fetched, caught_up = self._observers.get(broker_id, (0, now, None))
        if log_end >= self.image.offset:
            caught_up = now
        self._observers[broker_id] = (log_end, now, caught_up)
        if len(self._observers) > MAX_OBSERVERS:
            # Brokers that left long ago: forget the one heard from least recently.
            del self._observers[min(self._observers, key=lambda b: self._observers[b][1])]

    async def _register_broker(self, params: dict[str, Any]) -> dict[str, Any]:
        broker_id = int(params["broker_id"])
        incarnation = uuid.UUID(params["incarnation_id"])
        endpoints = [Endpoint(str(n), str(h), int(p), str(s)) for n, h, p, s in params["endpoints"]]
        rack = params.get("rack") or None
        decision = await self.decide_and_commit(
            lambda d, image: d.register_broker(
                image, broker_id, incarnation, endpoints, rack, time.monotonic()
            )
        )
        self._raise_for(decision)
        return {"broker_epoch": self.image.brokers[broker_id].epoch}

    async def _broker_heartbeat(self, params: dict[str, Any]) -> dict[str, Any]:
        broker_id = int(params["broker_id"])
        if self._decider is not None:
            # The broker reached us: that keeps its session even if the answer waits behind a long write.
            self._decider.touch(self.image, broker_id, int(params["broker_epoch"]), time.monotonic())
        decision = await self.decide_and_commit(
            lambda d, image: d.heartbeat(
                image,
                broker_id,
                int(params["broker_epoch"]),
                int(params["metadata_offset"]),
                bool(params.get("want_fence", False)),
                bool(params.get("want_shutdown", False)),
                time.monotonic(),
            )
        )
        self._raise_for(decision)
        broker = self.image.brokers[broker_id]
        return {
            "is_fenced": broker.fenced,
            "in_controlled_shutdown": broker.in_controlled_shutdown,
            "should_shutdown": bool(params.get("want_shutdown")) and broker.fenced,
        }

    @staticmethod
    def _alter_request(params: Mapping[str, Any]) -> AlterPartitionRequest:
        return AlterPartitionRequest(
            broker_id=int(params["broker_id"]),
            broker_epoch=int(params["broker_epoch"]),
            topic_id=uuid.UUID(params["topic_id"]),
            partition=int(params["partition"]),
            leader_epoch=int(params["leader_epoch"]),
            partition_epoch=int(params["partition_epoch"]),
            new_isr=tuple(int(b) for b in params["new_isr"]),
        )

    def _queue_alter(self, request: AlterPartitionRequest) -> asyncio.Future[Decision]:
        # Group commit: requests arriving while a batch is being decided and committed go into
        # the next one, so thousands of ISR changes (a broker's partitions after it stalled)
        # cost a few metadata-log entries, not one Raft round trip each.
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._alter_queue.append((request, future))
        if self._alter_flusher is None or self._alter_flusher.done():
            self._alter_flusher = asyncio.ensure_future(self._flush_alter_partitions())
        return future

    def _committed_partition(self, request: AlterPartitionRequest) -> dict[str, Any]:
        return assignment_to_json(self.image.topics[request.topic_id].partitions[request.partition])

    async def _alter_partition(self, params: dict[str, Any]) -> dict[str, Any]:
        request = self._alter_request(params)
        decision = await self._queue_alter(request)
        self._raise_for(decision)
        return {"assignment": self._committed_partition(request)}

    async def _alter_partitions(self, params: dict[str, Any]) -> dict[str, Any]:
        """Many partitions' AlterPartition in one request (one leader's, as Kafka's AlterPartition
        carries all of a broker's): one result each, in order."""
        listed = params["requests"]
        if not isinstance(listed, list) or len(listed) > MAX_ALTER_PARTITIONS:
            raise RpcError(ErrorCode.invalid_request, f"requests: a list of at most {MAX_ALTER_PARTITIONS}")
        requests = [self._alter_request(item) for item in listed]
        futures = [self._queue_alter(request) for request in requests]
        results = []
        for request, future in zip(requests, futures, strict=True):
            decision = await future
            if decision.error_code:
                results.append({"error_code": decision.error_code, "message": decision.message})
            else:
                results.append({"error_code": 0, "assignment": self._committed_partition(request)})
        return {"results": results}

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
            await self.decide_and_commit(decide)
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

    async def _elect_leaders(self, params: dict[str, Any]) -> dict[str, Any]:
        """`election_type` 0 PREFERRED (default) or 1 UNCLEAN; `partitions`: [[topic, partition], ...],
        or absent/null for all (then partitions needing no election are left out of `results`)."""
        election_type = int(params.get("election_type", ELECTION_PREFERRED))
        if election_type not in (ELECTION_PREFERRED, ELECTION_UNCLEAN):
            raise RpcError(ErrorCode.invalid_request, f"unknown election type {election_type}")
        partitions = _partition_list(params.get("partitions"))
        decision = await self.decide_and_commit(
            lambda d, image: d.elect_leaders(image, election_type, partitions)
        )
        return {
            "changed": [[r["topic_id"], r["partition"]] for r in decision.records],
            "results": _results_json(decision),
        }

    async def _alter_partition_reassignments(self, params: dict[str, Any]) -> dict[str, Any]:
        """`reassignments`: [[topic, partition, [broker ids] or null to cancel], ...];
        `allow_replication_factor_change` (default true)."""
        reassignments = [
            (str(t), int(p), None if ids is None else [int(b) for b in ids])
            for t, p, ids in params["reassignments"]
        ]
        allow_factor_change = bool(params.get("allow_replication_factor_change", True))
        decision = await self.decide_and_commit(
            lambda d, image: d.reassign_partitions(image, reassignments, allow_factor_change)
        )
        return {"results": _results_json(decision)}

    async def _list_partition_reassignments(self, params: dict[str, Any]) -> dict[str, Any]:
        """`partitions`: [[topic, partition], ...] or absent/null for all. Answered by the active
        controller, so a reassignment it just accepted is listed."""
        partitions = _partition_list(params.get("partitions"))
        ongoing = self._active_decider().list_reassignments(self.image, partitions)
        return {
            "reassignments": [
                {
                    "topic": p.topic,
                    "partition": p.partition,
                    "replicas": list(p.replicas),
                    "adding_replicas": list(p.adding_replicas),
                    "removing_replicas": list(p.removing_replicas),
                }
                for p in ongoing
            ]
        }

    async def _unregister_broker(self, params: dict[str, Any]) -> dict[str, Any]:
        broker_id = int(params["broker_id"])
        decision = await self.decide_and_commit(lambda d, image: d.unregister_broker(image, broker_id))
        self._raise_for(decision)
        return {}

    async def _create_topics(self, params: dict[str, Any]) -> dict[str, Any]:
        results = []
        for topic in params["topics"]:
            request = TopicRequest(
                name=str(topic["name"]),
                partitions=int(topic.get("partitions", -1)),
                replication_factor=int(topic.get("replication_factor", -1)),
                configs={str(k): str(v) for k, v in (topic.get("configs") or {}).items()},
                # Brokers create __consumer_offsets this way (hidden from Produce, is_internal in Metadata).
                internal=bool(topic.get("internal", False)),
                assignments=_assignments(topic.get("assignments")),
            )
            if params.get("validate_only"):
                decision = self._active_decider().create_topic(self.image, request)
            else:
                decision = await self.decide_and_commit(lambda d, image, r=request: d.create_topic(image, r))
            created = self.image.topic_by_name(request.name)
            results.append(
                {
                    "name": request.name,
                    "error_code": decision.error_code,
                    "message": decision.message,
                    "topic_id": str(created.topic_id) if created and not decision.error_code else None,
                }
            )
        return {"results": results}

    async def _delete_topics(self, params: dict[str, Any]) -> dict[str, Any]:
        results = []
        for name in params["names"]:
            decision = await self.decide_and_commit(lambda d, image, n=str(name): d.delete_topic(image, n))
            results.append({"name": name, "error_code": decision.error_code, "message": decision.message})
        return {"results": results}

    async def _create_partitions(self, params: dict[str, Any]) -> dict[str, Any]:
        name, total = str(params["name"]), int(params["total"])
        assignments = _assignments(params.get("assignments"))
        decision = await self.decide_and_commit(
            lambda d, image: d.create_partitions(image, name, total, assignments)
        )
        self._raise_for(decision)
        return {}

    async def _alter_configs(self, params: dict[str, Any]) -> dict[str, Any]:
        changes = {str(k): (None if v is None else str(v)) for k, v in params["changes"].items()}
        resource_type, resource_name = str(params["resource_type"]), str(params["resource_name"])
        decision = await self.decide_and_commit(
            lambda d, image: d.alter_configs(image, resource_type, resource_name, changes)
        )
        self._raise_for(decision)
        return {}

    async def _security_change(self, params: dict[str, Any]) -> dict[str, Any]:
        records = list(params["records"])
        decision = await self.decide_and_commit(lambda d, image: d.security_change(records))
        self._raise_for(decision)
        return {}

    async def _update_features(self, params: dict[str, Any]) -> dict[str, Any]:
        updates = [
            FeatureUpdate(str(u["feature"]), int(u["level"]), int(u["upgrade_type"]))
            for u in params["updates"]
        ]
        validate_only = bool(params.get("validate_only"))
        decision = await self.decide_and_commit(
            lambda d, image: d.update_features(image, updates, validate_only, self.config.node_id)
        )
        self._raise_for(decision)
        return {}

    async def _allocate_producer_ids(self, params: dict[str, Any]) -> dict[str, Any]:
        broker_id, epoch = int(params["broker_id"]), int(params["broker_epoch"])
        decision = await self.decide_and_commit(
            lambda d, image: d.allocate_producer_ids(image, broker_id, epoch)
        )
        self._raise_for(decision)
        end = int(decision.records[0]["next_producer_id"])
        return {"first_producer_id": end - PRODUCER_ID_BLOCK, "count": PRODUCER_ID_BLOCK}


def _assignments(listed: Any) -> tuple[tuple[int, ...], ...]:
    """`[[broker ids of partition 0], [of partition 1], ...]` (absent or null: automatic placement)."""
    return tuple(tuple(int(b) for b in replicas) for replicas in listed or ())
