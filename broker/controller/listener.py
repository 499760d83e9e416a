"""The controller listener: connections, frame reading, Raft frames to the quorum driver, RPC frames
decoded into typed requests for the handlers and their answers encoded into reply frames."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kio.schema.errors import ErrorCode

from broker.controller.handlers import Handler
from broker.controller.quorum_driver import QuorumDriver
from broker.controller.rpc.base import Request, RpcError
from broker.controller.rpc.codec import Message
from broker.controller.rpc.frames import IncomingRequest, ReplyHeader, decode_request, encode_reply
from broker.raft.wire import MAX_FRAME_BYTES, FrameError, message_from_json, read_frame
from broker.runtime.request_memory import RequestMemory

log = logging.getLogger("broker.controller")

TLS_HANDSHAKE_TIMEOUT_S = 10.0


class ControllerListener:
    def __init__(self, driver: QuorumDriver, handlers: dict[type[Request[Any]], Handler]) -> None:
        self.driver = driver
        self.handlers = handlers
        limits = driver.config.limits
        self._connection_limits = limits.connection_limits()
        self.request_memory = RequestMemory(limits.queued_max_request_bytes)
        self._max_frame_bytes = min(limits.max_request_bytes, MAX_FRAME_BYTES)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self._handler_tasks: set[asyncio.Task[Any]] = set()

    async def start(self) -> int:
        """Bind the listener; its port."""
        config = self.driver.config
        tls = config.tls
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
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._connections):
            writer.close()
        for handler in list(self._handler_tasks):
            handler.cancel()
        if self._server is not None:
            await self._server.wait_closed()

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
        max_idle_s = self.driver.config.limits.max_idle_s
        try:
            while True:
                # connections.max.idle.ms: a frame (or the next one) must arrive within it.
                async with asyncio.timeout(max_idle_s):
                    frame = await read_frame(
                        reader, max_frame_bytes=self._max_frame_bytes, memory=self.request_memory
                    )
                kind = frame.get("t")
                if kind == "raft":
                    self.driver.step(message_from_json(frame.get("m")), frame.get("from"), frame)
                elif kind == "rpc":
                    writer.write(await self._answer(decode_request(frame)))
                    await writer.drain()
                else:
                    raise FrameError(f"unknown frame type {kind!r}")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except TimeoutError:
            log.info("closing a controller connection from %s: silent for %.0f s", host, max_idle_s)
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

    async def _answer(self, incoming: IncomingRequest) -> bytes:
        result: Message | None = None
        error = incoming.error
        if incoming.request is not None:
            try:
                result = await self.handlers[type(incoming.request)](incoming.request, incoming.version)
            except RpcError as exc:
                error = exc
            except (KeyError, TypeError, ValueError) as exc:
                error = RpcError(ErrorCode.invalid_request, f"malformed request: {exc!r}")
        # Clients of a dynamic quorum know only the bootstrap servers: the leader's address is how
        # they find it; the term says how fresh the hint is; a broker that forwarded an admin request
        # waits for its own image to reach the applied offset.
        header = ReplyHeader(*self.driver.header())
        return encode_reply(incoming, header, result, error)
