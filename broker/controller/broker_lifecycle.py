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

from broker.controller.api import Endpoint, MetadataListener
from broker.controller.client import ControllerClient, ControllerUnavailable, RpcChannel
from broker.controller.image import MetadataImage, publish_image, publish_yielding
from broker.raft.tasks import cancel_tasks
from broker.raft.wire import FrameError

log = logging.getLogger("broker.controller.lifecycle")

FETCH_WAIT_MS = 500
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
        params = {
            "broker_id": self.broker_id,
            "incarnation_id": str(self.incarnation_id),
            "endpoints": [[e.name, e.host, e.port, e.security_protocol] for e in self.endpoints],
            "rack": self.rack,
        }
        while True:
            try:
                reply = await self.client.call("register_broker", params)
            except ControllerUnavailable as exc:
                log.warning("broker %d cannot register yet: %s", self.broker_id, exc)
                continue
            if reply["error_code"] == 0:
                self.broker_epoch = int(reply["result"]["broker_epoch"])
                log.info("broker %d registered with epoch %d", self.broker_id, self.broker_epoch)
                return
            # DUPLICATE_BROKER_REGISTRATION: our previous life's session has not expired yet.
            log.info("broker %d registration refused (%s), retrying", self.broker_id, reply["message"])
            await asyncio.sleep(self.heartbeat_interval_s)

    async def _heartbeat_loop(self) -> None:
        while not self._closing:
            await self.heartbeat()
            if self._registration_lost:
                # The controller no longer knows this registration (it was replaced or removed).
                self._registration_lost = False
                self.incarnation_id = uuid.uuid4()
                await self._register()
            await asyncio.sleep(self.heartbeat_interval_s)

    async def heartbeat(self) -> dict[str, object] | None:
        params = {
            "broker_id": self.broker_id,
            "broker_epoch": self.broker_epoch,
            "metadata_offset": self.image.offset,
            "want_fence": False,
            "want_shutdown": self._want_shutdown,
        }
        try:
            reply = await self.client.call(
                "broker_heartbeat", params, timeout_s=self.heartbeat_interval_s * 2
            )
        except ControllerUnavailable as exc:
            log.warning("broker %d heartbeat failed: %s", self.broker_id, exc)
            return None
        if reply["error_code"]:
            log.warning(
                "broker %d heartbeat refused: %s %s", self.broker_id, reply["error_code"], reply["message"]
            )
            self._registration_lost = reply["error_code"] in (STALE_BROKER_EPOCH, BROKER_ID_NOT_REGISTERED)
            return None
        result = reply["result"]
        if self.fenced != result["is_fenced"]:
            log.info("broker %d is %s", self.broker_id, "fenced" if result["is_fenced"] else "unfenced")
        self.fenced = bool(result["is_fenced"])
        return dict(result)

    async def _follow_metadata(self) -> None:
        voters = sorted(self.client.voters)
        attempt = 0
        channel: RpcChannel | None = None
        while not self._closing:
            if channel is None:
                channel = self.client.channel(voters[attempt % len(voters)])
            try:
                reply = await channel.call(
                    "fetch_metadata",
                    {"after_offset": self.image.offset, "max_wait_ms": FETCH_WAIT_MS},
                    timeout_s=FETCH_WAIT_MS / 1000 + 2.0,
                )
            except (OSError, TimeoutError, asyncio.IncompleteReadError, FrameError):
                channel.close()
                channel = None
                attempt += 1
                await asyncio.sleep(0.1)
                continue
            await self._apply_fetched(reply["result"])

    async def _apply_fetched(self, result: dict[str, object]) -> None:
        snapshot = result.get("snapshot")
        if isinstance(snapshot, str):
            self.image = MetadataImage.from_snapshot(base64.b64decode(snapshot))
            if self.caught_up.is_set():
                for listener in self.listeners:
                    publish_image(self.image, listener)
        for index, records in result["entries"]:  # type: ignore[attr-defined]
            if index <= self.image.offset:
                continue
            delta = self.image.apply_entry(index, records)
            if delta and self.caught_up.is_set():
                for listener in self.listeners:
                    await publish_yielding(delta, listener)
        if (
            not self.caught_up.is_set()
            and self.broker_epoch is not None
            and self.image.offset >= self.broker_epoch
        ):
            self.caught_up.set()
            for listener in self.listeners:
                publish_image(self.image, listener)
        self.published_offset = self.image.offset
        self._wake_offset_waiters()

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
            if result is not None and result.get("should_shutdown"):
                return True
            await asyncio.sleep(min(0.2, self.heartbeat_interval_s))
        return False

    async def close(self) -> None:
        self._closing = True
        await cancel_tasks(self._tasks)
        self._tasks = []
        self.client.close()
