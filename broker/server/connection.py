"""One client connection: read size-prefixed frames, answer them in order."""

from __future__ import annotations

import asyncio
import logging
import struct

from broker.protocol.frames import MalformedRequest, UnsupportedRequest
from broker.server.context import BrokerState
from broker.server.dispatcher import Peer, dispatch

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
# Past this much unsent response data, wait for the socket before reading more requests.
_WRITE_HIGH_WATER = 4 * 1024 * 1024


class Connection:
    """Requests on one connection are handled one at a time, like Kafka's muted channels.

    That keeps responses in request order and keeps pipelined produce requests to a
    partition in order. Handlers await (long-poll Fetch, acks) without blocking other
    connections: each connection has its own task.
    """

    def __init__(
        self,
        state: BrokerState,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        listener_name: str,
    ) -> None:
        self.state = state
        self.reader = reader
        self.writer = writer
        address = writer.get_extra_info("peername") or ("?", 0)
        self.peer = Peer(host=str(address[0]), port=int(address[1]), listener_name=listener_name)
        self._closing = False
        self._busy = False

    def request_stop(self) -> None:
        """Stop after the request in progress (graceful shutdown)."""
        self._closing = True
        if not self._busy:
            self.writer.close()

    async def run(self) -> None:
        metrics = self.state.metrics
        metrics.connections += 1
        metrics.connections_total += 1
        max_size = self.state.config.socket_request_max_bytes
        try:
            while not self._closing:
                try:
                    size_bytes = await self.reader.readexactly(4)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                (size,) = _SIZE.unpack(size_bytes)
                if size < 8 or size > max_size:
                    log.warning(
                        "closing %s:%s: request size %d outside [8, %d]",
                        self.peer.host,
                        self.peer.port,
                        size,
                        max_size,
                    )
                    metrics.closed_for_bad_input += 1
                    return
                try:
                    frame = await self.reader.readexactly(size)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self._busy = True
                try:
                    response = await dispatch(self.state, self.peer, frame)
                except (MalformedRequest, UnsupportedRequest) as exc:
                    log.warning("closing %s:%s: %s", self.peer.host, self.peer.port, exc)
                    metrics.closed_for_bad_input += 1
                    return
                except Exception:
                    log.exception("handler failed; closing %s:%s", self.peer.host, self.peer.port)
                    return
                finally:
                    self._busy = False
                if response is not None:
                    self.writer.writelines(response)
                    transport = self.writer.transport
                    if transport.get_write_buffer_size() > _WRITE_HIGH_WATER:
                        await self.writer.drain()
        except ConnectionError:
            return
        finally:
            metrics.connections -= 1
            self.writer.close()
