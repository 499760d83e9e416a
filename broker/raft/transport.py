"""Outbound Raft messages over TCP: one connection and one sending task per peer.

Raft tolerates lost messages, so sending never blocks the node: a peer that is down or slow
has its queue trimmed and its messages dropped; the next heartbeat carries the state again.
Inbound messages arrive on the controller listener (see broker/controller/listener.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from ssl import SSLContext, SSLError

from broker.raft.messages import Message
from broker.raft.tasks import cancel_tasks
from broker.raft.wire import encode_frame, message_to_json

log = logging.getLogger("broker.raft.transport")

MAX_QUEUED = 1000
CONNECT_TIMEOUT_S = 1.0
RECONNECT_DELAY_S = 0.2
DRAIN_TIMEOUT_S = 2.0


class PeerTransport:
    def __init__(
        self,
        node_id: int,
        peers: Mapping[int, tuple[str, int]],
        *,
        ssl: SSLContext | None = None,
        directory_id: str | None = None,
    ) -> None:
        self.node_id = node_id
        self.peers = dict(peers)
        # The client side of the controller listener's mutual TLS (None: PLAINTEXT).
        self.ssl = ssl
        # A dynamic quorum's frames name the sender's directory and the one the receiver is known
        # by, so a voter whose directory was wiped neither answers nor is answered as that voter.
        self.directory_id = directory_id
        self._peer_directories: dict[int, str | None] = {}
        self._tls_failing: set[int] = set()
        self._queues: dict[int, asyncio.Queue[Message]] = {p: asyncio.Queue() for p in self.peers}
        self._tasks: dict[int, asyncio.Task[None]] = {}

    def start(self) -> None:
        for peer in self.peers:
            self._start_peer(peer)

    def _start_peer(self, peer: int) -> None:
        self._tasks[peer] = asyncio.create_task(self._send_loop(peer), name=f"raft-send-{peer}")

    def update_peers(
        self, peers: Mapping[int, tuple[str, int]], directories: Mapping[int, str | None] | None = None
    ) -> None:
        """Follow a changed voter set: dial new peers, stop dialing removed ones, redial moved ones."""
        self._peer_directories = dict(directories or {})
        for peer in [p for p in self.peers if peers.get(p) != self.peers[p]]:
            task = self._tasks.pop(peer, None)
            if task is not None:
                task.cancel()
            del self.peers[peer]
            self._queues.pop(peer, None)
        for peer, address in peers.items():
            if peer not in self.peers:
                self.peers[peer] = address
                self._queues[peer] = asyncio.Queue()
                self._start_peer(peer)

    async def close(self) -> None:
        await cancel_tasks(list(self._tasks.values()))
        self._tasks = {}

    def send(self, to: int, message: Message) -> None:
        queue = self._queues.get(to)
        if queue is None:
            return
        if queue.qsize() >= MAX_QUEUED:
            # The peer is not keeping up; the oldest messages are the most stale.
            while queue.qsize() > MAX_QUEUED // 2:
                queue.get_nowait()
        queue.put_nowait(message)

    async def _send_loop(self, peer: int) -> None:
        host, port = self.peers[peer]
        queue = self._queues[peer]
        while True:
            writer: asyncio.StreamWriter | None = None
            closed: asyncio.Future[bytes] | None = None
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, ssl=self.ssl), CONNECT_TIMEOUT_S
                )
                self._tls_failing.discard(peer)
                # Peers never write on this connection, so a read returns only when it is gone:
                # a killed peer is noticed at once, not only when a write happens to fail.
                closed = asyncio.ensure_future(reader.read(1))
                while True:
                    waiting = asyncio.ensure_future(queue.get())
                    await asyncio.wait({waiting, closed}, return_when=asyncio.FIRST_COMPLETED)
                    if closed.done():
                        waiting.cancel()
                        raise ConnectionError("peer closed the connection")
                    frames = [waiting.result()]
                    while not queue.empty() and len(frames) < 64:
                        frames.append(queue.get_nowait())
                    envelope: dict[str, object] = {"t": "raft", "from": self.node_id}
                    if self.directory_id is not None:
                        envelope["dir"] = self.directory_id
                        envelope["to_dir"] = self._peer_directories.get(peer)
                    writer.write(
                        b"".join(encode_frame({**envelope, "m": message_to_json(m)}) for m in frames)
                    )
                    # A peer that stopped reading (paused, overloaded) must not stall us for good.
                    await asyncio.wait_for(writer.drain(), DRAIN_TIMEOUT_S)
            except (OSError, TimeoutError, ConnectionError) as exc:
                if isinstance(exc, SSLError) and peer not in self._tls_failing:
                    # A certificate problem does not heal by retrying: say so once, not every 200 ms.
                    log.warning("raft connection to node %d: TLS handshake failed: %s", peer, exc)
                    self._tls_failing.add(peer)
                else:
                    log.debug("raft connection to node %d: %r", peer, exc)
                # Messages queued while the peer was unreachable are stale by the time it returns.
                while not queue.empty():
                    queue.get_nowait()
                await asyncio.sleep(RECONNECT_DELAY_S)
            finally:
                if closed is not None:
                    closed.cancel()
                if writer is not None:
                    writer.close()
