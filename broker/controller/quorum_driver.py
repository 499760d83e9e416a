"""The quorum driver: the Raft node, its storage and transport, the metadata image it applies, and
the one write path of the active controller.

Writes go through one lock: decide against the committed image, propose, wait for the commit,
answer. So every decision sees the outcome of the previous one, and nothing is answered
before it is durable on a majority. A new leader decides nothing until the no-op entry of
its term is applied, so its image holds everything earlier leaders committed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import ControllerTls
from broker.controller import records as rec
from broker.controller.decisions import ControllerSettings, Decider, Decision
from broker.controller.image import (
    LARGE_ENTRY_RECORDS,
    MetadataImage,
    MetadataRefusal,
    apply_entry_yielding,
)
from broker.controller.rpc.base import RpcError
from broker.raft.messages import Entry, Envelope, Message, Snapshot, Voter
from broker.raft.node import MembershipChangePending, NotLeader, RaftNode, RaftTimings
from broker.raft.storage import FileStorage
from broker.raft.tasks import cancel_tasks
from broker.raft.transport import PeerTransport
from broker.raft.wire import message_to_json
from broker.runtime.connection_limits import ListenerLimits

log = logging.getLogger("broker.controller")

TICK_INTERVAL_S = 0.02
# A leader with no other voter (a single node's one-voter quorum) has no heartbeat to send and no quorum to
# lose, so its ticks only wake the tasks: 50 a second were most of an idle single node's CPU (~8 ms a second).
# It ticks often again as soon as a voter is added.
LONE_LEADER_TICK_S = 0.5
FENCE_CHECK_INTERVAL_S = 0.25
COMMIT_TIMEOUT_S = 10.0
HANDOVER_DELIVERY_S = 0.1
# Metadata fetchers remembered for DescribeQuorum's observers (a broker id costs a few dozen bytes).
MAX_OBSERVERS = 10_000
# kraft.version: 1 is a dynamic quorum (KIP-853: the voter set in the log), 0 a static one.
KRAFT_VERSION_DYNAMIC = 1


def tick_interval(node: RaftNode) -> float:
    """How long until the node's next tick: long while it leads alone, else short enough for heartbeats and
    election timeouts."""
    return LONE_LEADER_TICK_S if node.is_leader and not node.peers else TICK_INTERVAL_S


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


class QuorumDriver:
    """The Raft-facing half of a controller node (the listener and the RPC handlers sit on top)."""

    def __init__(self, config: ControllerNodeConfig) -> None:
        self.config = config
        self.image = MetadataImage()
        self.refusal = MetadataRefusal(f"controller {config.node_id}")
        self.node: RaftNode | None = None
        self.transport: PeerTransport | None = None
        # The controller listener's port once it is bound (the endpoint a voter advertises).
        self.bound_port = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._write_lock = asyncio.Lock()
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
        self.observers: dict[int, tuple[int, float, float | None]] = {}
        # Controllers pulling the Raft log as observers (dynamic quorum), by node id.
        self.raft_observers: dict[int, RaftObserver] = {}
        # The leader's controller endpoint as an observer learned it from a raft_fetch reply.
        self.leader_hint: tuple[int, tuple[str, int]] | None = None
        self._peer_set: tuple[Voter, ...] = ()
        self.closing = False

    # --- lifecycle ---------------------------------------------------------------------------

    async def open(self) -> None:
        """The Raft node on its storage, the committed log applied, the peer transport started."""
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
        self.sync_peers()
        self.transport.start()

    def run(self, *loops: Callable[[], Any]) -> None:
        """Start the driver's tasks (once the listener is bound), and `loops` of the caller's."""
        self._tasks = [
            asyncio.create_task(self._apply_loop(), name="metadata-applier"),
            asyncio.create_task(self._tick_loop(), name="raft-tick"),
            asyncio.create_task(self._fence_loop(), name="controller-fencing"),
        ]
        if self.config.settings.auto_leader_rebalance:
            self._tasks.append(asyncio.create_task(self._rebalance_loop(), name="leader-rebalancing"))
        self._tasks.extend(asyncio.create_task(loop()) for loop in loops)

    async def hand_over(self) -> None:
        """Stop the tasks and hand an active quorum over instead of leaving it to an election timeout."""
        self.closing = True
        await cancel_tasks(self._tasks)
        if self.node is not None and self.transport is not None:
            handover = self.node.transfer_leadership()
            if handover:
                self.send(handover)
                await asyncio.sleep(HANDOVER_DELIVERY_S)

    async def close(self) -> None:
        if self.transport is not None:
            await self.transport.close()
        self._fail_pending()

    # --- Raft plumbing -----------------------------------------------------------------------

    def require_node(self) -> RaftNode:
        assert self.node is not None, "the controller is not started"
        return self.node

    def send(self, envelopes: list[Envelope]) -> None:
        assert self.transport is not None
        for envelope in envelopes:
            self.transport.send(envelope.to, envelope.message)

    async def _tick_loop(self) -> None:
        while not self.closing:
            await asyncio.sleep(tick_interval(self.require_node()))
            self.send(self.require_node().tick(time.monotonic()))
            self.after_raft_activity()

    def sync_peers(self) -> None:
        """Dial the voters of the set in force (it changes with the log in a dynamic quorum)."""
        node = self.require_node()
        if self.transport is None:
            return
        if self.config.dynamic is None:
            if not self.transport.peers:
                self.transport.update_peers(
                    {i: a for i, a in self.config.voters.items() if i != node.node_id}
                )
            return
        voters = node.voter_set
        hint = self.leader_hint
        key = (*voters, *([] if hint is None else [Voter(hint[0], None, *hint[1])]))
        if key == self._peer_set:
            return
        self._peer_set = key
        peers = {v.node_id: (v.host, v.port) for v in voters if v.node_id != node.node_id}
        if hint is not None and hint[0] not in peers and hint[0] != node.node_id:
            peers[hint[0]] = hint[1]  # an observer answers the leader that pushes to it
        self.transport.update_peers(peers, {v.node_id: v.directory_id for v in voters})

    def after_raft_activity(self) -> None:
        node = self.require_node()
        if self.config.dynamic is not None:
            self.sync_peers()
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
            while not self.closing:
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
        node = self.require_node()
        items = node.take_committed()
        for item in items:
            if isinstance(item, Snapshot):
                loaded = await self.refusal.snapshot(item.data)
                if loaded is None:
                    break
                self.image = loaded
                continue
            records = await self.refusal.entry(item.index, item.data)
            if records is None:
                break
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
        committed = self.node.commit_index if self.node is not None and not self.closing else 0
        for index, (_, future) in list(self._pending.items()):
            if index <= committed:
                continue
            if not future.done():
                future.set_exception(
                    RpcError(ErrorCode.not_controller, "leadership changed before the commit")
                )
            del self._pending[index]

    async def wait_until_applied(self, index: int, timeout_s: float) -> bool:
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
                self.active_decider()
                if not await self.wait_until_applied(self._term_start_index, COMMIT_TIMEOUT_S):
                    raise RpcError(ErrorCode.request_timed_out, "the new controller has not caught up yet")
            node = self.require_node()
            term = node.term
            decision = decide(self.active_decider(), self.image)
            if decision.error_code or not decision.records:
                return decision
            if len(decision.records) >= LARGE_ENTRY_RECORDS:
                # Deciding, encoding and storing a 10,000-partition topic each take tens of
                # milliseconds: Raft and heartbeats get a turn in between. The image stands still
                # meanwhile (only entries proposed under this lock are applied), the term may not.
                await asyncio.sleep(0)
                data = rec.encode_entry(decision.records, self.image.features)
                await asyncio.sleep(0)
                if node.term != term:
                    raise RpcError(ErrorCode.not_controller, "leadership changed during the decision")
            else:
                data = rec.encode_entry(decision.records, self.image.features)
            try:
                envelopes, entry = node.propose(data, time.monotonic())
            except NotLeader:
                raise RpcError(ErrorCode.not_controller) from None
            await self.await_commit(envelopes, entry, "the metadata change")
            return decision

    async def await_commit(self, envelopes: list[Envelope], entry: Entry, what: str) -> None:
        """Send a proposal's messages and wait until its entry is committed and applied."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[entry.index] = (entry.term, future)
        self.send(envelopes)
        self.after_raft_activity()  # a single voter commits at once
        try:
            await asyncio.wait_for(future, COMMIT_TIMEOUT_S)
        except TimeoutError:
            raise RpcError(ErrorCode.request_timed_out, f"{what} was not committed in time") from None

    @property
    def decider(self) -> Decider | None:
        """The active controller's decider (None while this node is not the active controller)."""
        return self._decider

    def active_decider(self) -> Decider:
        if self._decider is None:
            raise RpcError(ErrorCode.not_controller)
        return self._decider

    async def _fence_loop(self) -> None:
        while not self.closing:
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
        while not self.closing:
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

    def step(self, message: Message, sender: Any, frame: Mapping[str, Any]) -> None:
        """A Raft message a peer sent (dropped when KIP-853 says it is not meant for us)."""
        if not self._from_known_directory(sender, frame):
            return
        if isinstance(sender, int) and sender in self.config.voters:
            self._voter_contact[sender] = time.monotonic()
        self.send(self.require_node().step(message, time.monotonic()))
        self.after_raft_activity()

    def _from_known_directory(self, sender: Any, frame: Mapping[str, Any]) -> bool:
        """KIP-853: a frame meant for another directory of our id (we were wiped and formatted
        again), or from a voter id whose directory is not the one in the voter set, is dropped."""
        dynamic = self.config.dynamic
        if dynamic is None:
            return True
        to_dir = frame.get("to_dir")
        if to_dir is not None and to_dir != dynamic.directory_id:
            return False
        for voter in self.require_node().voter_set:
            if voter.node_id == sender and voter.directory_id not in (None, frame.get("dir")):
                return False
        return True

    def header(self) -> tuple[int | None, tuple[str, int] | None, int, int]:
        """(leader, its controller endpoint, term, applied offset) for every reply."""
        node = self.require_node()
        return node.leader, self.voter_address(node.leader), node.term, self.image.offset

    def note_observer(self, broker_id: int, log_end: int) -> None:
        """A broker fetching the metadata log from `log_end` on (DescribeQuorum's observers)."""
        now = time.monotonic()
        _offset, _fetched, caught_up = self.observers.get(broker_id, (0, now, None))
        if log_end >= self.image.offset:
            caught_up = now
        self.observers[broker_id] = (log_end, now, caught_up)
        if len(self.observers) > MAX_OBSERVERS:
            # Brokers that left long ago: forget the one heard from least recently.
            del self.observers[min(self.observers, key=lambda b: self.observers[b][1])]

    # --- dynamic quorum (KIP-853) -----------------------------------------------------------------

    def voter_address(self, node_id: int | None) -> tuple[str, int] | None:
        if node_id is None:
            return None
        if self.config.dynamic is None:
            return self.config.voters.get(node_id)
        for voter in self.require_node().voter_set:
            if voter.node_id == node_id and voter.host:
                return voter.host, voter.port
        if node_id == self.config.node_id:
            return self.config.listen_host, self.bound_port
        return None

    def own_endpoint(self) -> tuple[str, int]:
        return self.config.listen_host, self.bound_port or self.config.listen_port

    def require_dynamic_leader(self) -> RaftNode:
        if kraft_version_finalized(self.config) < KRAFT_VERSION_DYNAMIC:
            raise RpcError(
                ErrorCode.unsupported_version,
                "the quorum is static (controller.quorum.voters, kraft.version 0): its voters cannot change",
            )
        self.active_decider()
        return self.require_node()

    async def propose_voters(self, voters: list[Voter]) -> None:
        """Append the new voter set (in force at once) and answer once it is committed."""
        node = self.require_node()
        try:
            envelopes, entry = node.propose_voters(voters, time.monotonic())
        except NotLeader:
            raise RpcError(ErrorCode.not_controller) from None
        except MembershipChangePending as exc:
            raise RpcError(ErrorCode.request_timed_out, str(exc)) from None
        await self.await_commit(envelopes, entry, "the voter change")

    def observer_message(self, next_index: int) -> dict[str, Any]:
        """What the leader would push to a follower at `next_index`, in broker/raft/wire.py's JSON."""
        return message_to_json(self.require_node().message_for_observer(next_index))
