"""A broker's side of the quorum: register, heartbeat, follow the metadata log, shut down cleanly.

The broker follows committed metadata by long-polling `fetch_metadata` on a controller and
folds each entry into its own `MetadataImage`, telling every `MetadataListener` what changed.
Heartbeats report how far it has read, which is what unfences it after a (re)start.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import uuid
from collections.abc import Sequence

from broker.controller.api import Endpoint, MetadataListener, PartitionAssignment
from broker.controller.client import RPC_FAILURES, ControllerClient, ControllerUnavailable
from broker.controller.image import (
    LARGE_ENTRY_RECORDS,
    MetadataImage,
    MetadataRefusal,
    apply_entry_yielding,
    publish_image,
    publish_yielding,
)
from broker.controller.rpc.brokers import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    FetchMetadataRequest,
    FetchMetadataResponse,
    RegisterBrokerRequest,
)
from broker.raft.tasks import cancel_tasks
from broker.runtime.heap import full_collections

log = logging.getLogger("broker.controller.lifecycle")

FETCH_WAIT_MS = 500
# A fetch not answered this long after its wait is over goes to another controller.
FETCH_SLACK_S = 1.0
# After a failed heartbeat, the next one goes out this soon (the client has looked for the controller).
HEARTBEAT_RETRY_S = 0.05
MIN_HEARTBEAT_ATTEMPT_S = 0.25
STALE_BROKER_EPOCH = 77
BROKER_ID_NOT_REGISTERED = 102


class BrokerLifecycle:
    def __init__(
        self,
        client: ControllerClient,
        broker_id: int,
        endpoints: Sequence[Endpoint],
        rack: str | None,
        heartbeat_interval_s: float,
        listeners: Sequence[MetadataListener] = (),
    ) -> None:
        self.client = client
        self.broker_id = broker_id
        self.endpoints = tuple(endpoints)
        self.rack = rack
        self.heartbeat_interval_s = heartbeat_interval_s
        self.listeners = list(listeners)
        self.refusal = MetadataRefusal(f"broker {broker_id}")
        self.incarnation_id = uuid.uuid4()
        self.image = MetadataImage()
        # The image offset whose changes every listener has taken in (publishing yields to the loop).
        self.published_offset = 0
        self.broker_epoch: int | None = None
        self.fenced = True
        self.caught_up = asyncio.Event()  # set once the image reached the registration
        self._offset_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._want_shutdown = False
        self._registration_lost = False
        self._closing = False

    async def start(self) -> None:
        """Register (retrying until a controller accepts) and start heartbeats and the follower.

        Listeners hear nothing until the image has caught up with the registration; then they
        get the whole image at once (never a replay of history: a broker must not act on
        leaderships that ended long ago), and every change after it."""
        self._tasks.append(asyncio.create_task(self._follow_metadata(), name="metadata-follower"))
        await self._register()
        self._tasks.append(asyncio.create_task(self._heartbeat_loop(), name="broker-heartbeats"))

    async def _register(self) -> None:
        registration = RegisterBrokerRequest(
            self.broker_id,
            str(self.incarnation_id),
            tuple((e.name, e.host, e.port, e.security_protocol) for e in self.endpoints),
            self.rack,
        )
        while True:
            try:
                reply = await self.client.call(registration)
            except ControllerUnavailable as exc:
                log.warning("broker %d cannot register yet: %s", self.broker_id, exc)
                continue
            if reply.result is not None:
                self.broker_epoch = reply.result.broker_epoch
                log.info("broker %d registered with epoch %d", self.broker_id, self.broker_epoch)
                # The follower may have applied the registration before this answer arrived.
                self._publish_once_caught_up()
                return
            # DUPLICATE_BROKER_REGISTRATION: our previous life's session has not expired yet.
            log.info("broker %d registration refused (%s), retrying", self.broker_id, reply.message)
            await asyncio.sleep(self.heartbeat_interval_s)

    async def _heartbeat_loop(self) -> None:
        while not self._closing:
            answered = await self.heartbeat()
            if self._registration_lost:
                # The controller no longer knows this registration (it was replaced or removed).
                self._registration_lost = False
                self.incarnation_id = uuid.uuid4()
                await self._register()
            if answered is None:
                # The controller moved or did not answer: the session runs on, so look for the new one
                # right away instead of a whole interval later.
                await asyncio.sleep(HEARTBEAT_RETRY_S)
                continue
            await asyncio.sleep(self.heartbeat_interval_s)

    async def heartbeat(self) -> BrokerHeartbeatResponse | None:
        if self.broker_epoch is None:
            return None
        beat = BrokerHeartbeatRequest(
            self.broker_id, self.broker_epoch, self.image.offset, want_shutdown=self._want_shutdown
        )
        try:
            # A controller that does not answer within an interval is given up for another voter
            # (a paused one keeps its connections open and would hold the heartbeat to the end).
            reply = await self.client.call(
                beat,
                timeout_s=self.heartbeat_interval_s * 2,
                attempt_timeout_s=max(self.heartbeat_interval_s, MIN_HEARTBEAT_ATTEMPT_S),
            )
        except ControllerUnavailable as exc:
            log.warning("broker %d heartbeat failed: %s", self.broker_id, exc)
            return None
        result = reply.result
        if result is None:
            log.warning("broker %d heartbeat refused: %s %s", self.broker_id, reply.error_code, reply.message)
            self._registration_lost = reply.error_code in (STALE_BROKER_EPOCH, BROKER_ID_NOT_REGISTERED)
            return None
        if self.fenced != result.is_fenced:
            log.info("broker %d is %s", self.broker_id, "fenced" if result.is_fenced else "unfenced")
        self.fenced = result.is_fenced
        return result

    async def _follow_metadata(self) -> None:
        """Long-poll the active controller (it knows of a commit first; any voter would do), and
        learn from every reply who that is. Its own connections: never queued behind a heartbeat."""
        fetcher = self.client.sibling()
        voters = sorted(self.client.voters)
        attempt = 0
        try:
            while not self._closing:
                source = fetcher.leader_id
                if source is None:
                    source = voters[attempt % len(voters)]
                try:
                    reply = await fetcher.call_node_unless_moved(
                        source,
                        # DescribeQuorum lists the fetching brokers as observers.
                        FetchMetadataRequest(
                            self.image.offset, self.broker_id, FETCH_WAIT_MS, entry_encoding="base64"
                        ),
                        timeout_s=FETCH_WAIT_MS / 1000 + FETCH_SLACK_S,
                    )
                except RPC_FAILURES:
                    fetcher.active.lost(source)
                    attempt += 1
                    await asyncio.sleep(0.1)
                    continue
                if reply is None:
                    continue  # the process found another active controller: fetch from it
                fetcher.observe_reply(reply)
                if reply.result is not None:
                    await self._apply_fetched(reply.result)
                if self.refusal.error is not None:
                    # Stopped at an entry of a newer release: keep asking (the controller lists this broker
                    # as a lagging observer), without spinning on the same entries.
                    await asyncio.sleep(FETCH_WAIT_MS / 1000)
        finally:
            fetcher.close()

    async def _apply_fetched(self, result: FetchMetadataResponse) -> None:
        snapshot = result.snapshot
        if snapshot is not None:
            # Built off to the side a slice at a time (a large one must not hold up the event loop).
            loaded = await self.refusal.snapshot(base64.b64decode(snapshot))
            if loaded is None:
                return
            self.image = loaded
            if self.caught_up.is_set():
                for listener in self.listeners:
                    publish_image(self.image, listener)
        for index, encoded in result.entries:
            if index <= self.image.offset:
                continue
            # Asked for as base64: the stored bytes, decoded here.
            records = await self.refusal.entry(index, base64.b64decode(encoded))
            if records is None:
                return
            # A large entry goes to a copy a slice at a time, which replaces the image when complete.
            self.image, delta = await apply_entry_yielding(self.image, index, records)
            if delta and self.caught_up.is_set():
                for listener in self.listeners:
                    await publish_yielding(delta, listener)
            if len(records) >= LARGE_ENTRY_RECORDS:
                # Thousands of partitions' images (and, on a controller, its own): see broker/runtime/heap.py.
                full_collections.burst()
        self._publish_once_caught_up()
        self._published(self.image.offset)

    def _publish_once_caught_up(self) -> None:
        if (
            not self.caught_up.is_set()
            and self.broker_epoch is not None
            and self.image.offset >= self.broker_epoch
        ):
            self.caught_up.set()
            for listener in self.listeners:
                publish_image(self.image, listener)
            self._published(self.image.offset)

    def _published(self, offset: int) -> None:
        # Called from the registration path too, possibly while a delta is still being handed to the
        # listeners in steps: the published offset only moves forward.
        self.published_offset = max(self.published_offset, offset)
        self._wake_offset_waiters()

    def committed_assignment(self, topic: str, partition: int) -> PartitionAssignment | None:
        """The partition as this broker's image of the metadata log has it (None: unknown here)."""
        found = self.image.topic_by_name(topic)
        return None if found is None else found.partitions.get(partition)

    async def wait_for_offset(self, offset: int, timeout_s: float) -> bool:
        """Wait until this broker has applied `offset` and told its listeners; False if not in time."""
        if self.published_offset >= offset:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._offset_waiters.append((offset, future))
        try:
            await asyncio.wait([future], timeout=timeout_s)
        finally:
            if not future.done():
                future.cancel()
                self._offset_waiters = [(o, f) for o, f in self._offset_waiters if f is not future]
        return self.published_offset >= offset

    def _wake_offset_waiters(self) -> None:
        if not self._offset_waiters:
            return
        waiting = []
        for offset, future in self._offset_waiters:
            if future.done():
                continue
            if self.published_offset >= offset:
                future.set_result(None)
            else:
                waiting.append((offset, future))
        self._offset_waiters = waiting

    async def controlled_shutdown(self, timeout_s: float) -> bool:
        """Ask the controller to move leadership away; True once it says the broker may stop."""
        self._want_shutdown = True
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.broker_epoch is not None:
            result = await self.heartbeat()
            if result is not None and result.should_shutdown:
                return True
            await asyncio.sleep(min(0.2, self.heartbeat_interval_s))
        return False

    async def close(self) -> None:
        self._closing = True
        await cancel_tasks(self._tasks)
        self._tasks = []
        self.client.close()
