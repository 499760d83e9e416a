"""One client connection: read size-prefixed frames, answer them in order.

The socket reads straight into buffers we own (asyncio.BufferedProtocol): small frames are
sliced out of a shared read buffer, a large frame (a big Produce) gets a buffer of its own
that the kernel fills directly, so request bytes are not copied on their way to the decoder.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import struct
from collections.abc import Callable

from broker.auth.principal import ANONYMOUS
from broker.auth.sasl import AuthSession, SaslAuthenticationFailed
from broker.protocol.frames import MalformedRequest, UnsupportedRequest
from broker.server.context import BrokerState, ClientSession
from broker.server.dispatcher import Peer, dispatch

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
READ_BUFFER_BYTES = 256 * 1024
# Frames at least this large are received into their own buffer.
OWN_BUFFER_FROM = 64 * 1024
# Stop reading from a client that has this much unprocessed input queued.
MAX_QUEUED_BYTES = 16 * 1024 * 1024
MAX_QUEUED_FRAMES = 256
# Kafka's smallest possible request header (api key, version, correlation id, client id length).
MIN_FRAME_BYTES = 10


_RDN_NAMES = {
    "commonName": "CN",
    "organizationalUnitName": "OU",
    "organizationName": "O",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "countryName": "C",
}


def certificate_principal(certificate: dict) -> str:
    """SSL client principal as Kafka prints it: User:CN=...,OU=...,O=... (RFC 2253 order)."""
    parts = [
        f"{_RDN_NAMES.get(name, name)}={value}"
        for rdn in reversed(certificate.get("subject", ()))
        for name, value in rdn
    ]
    return f"User:{','.join(parts)}" if parts else ANONYMOUS


class Connection(asyncio.BufferedProtocol):
    """Requests on one connection are handled one at a time, like Kafka's muted channels.

    That keeps responses in request order and keeps pipelined produce requests to a
    partition in order. A handler that waits (long-poll Fetch) only holds up its own
    connection: each connection has its own worker task.
    """

    def __init__(
        self, state: BrokerState, listener_name: str, on_closed: Callable[[Connection], None]
    ) -> None:
        self.state = state
        self.listener_name = listener_name
        self.peer = Peer(host="?", port=0, listener_name=listener_name)
        self._on_closed = on_closed
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray(READ_BUFFER_BYTES)
        self._start = 0  # first unparsed byte in _buffer
        self._end = 0  # end of received bytes in _buffer
        self._large: bytearray | None = None  # a large frame being received into its own buffer
        self._large_filled = 0
        self._frames: collections.deque[bytes | memoryview] = collections.deque()
        self._queued_bytes = 0
        self._reading_paused = False
        self._frame_ready = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self._stopping = False
        self._lost = False
        self._busy = False
        self.last_active = 0.0
        self._loop: asyncio.AbstractEventLoop  # set in connection_made
        self.worker: asyncio.Task[None] | None = None
        self.session = self._new_session()

    def _new_session(self) -> ClientSession:
        config = self.state.config
        protocol = config.security_protocol(self.listener_name)
        auth = AuthSession(
            requires_sasl=protocol.startswith("SASL_"),
            enabled_mechanisms=config.sasl_enabled_mechanisms,
            store=self.state.scram,
            reauth_ms=config.get_int("connections.max.reauth.ms"),
            max_token_bytes=config.get_int("sasl.server.max.receive.size"),
        )
        return ClientSession(auth=auth)

    # --- asyncio protocol callbacks ----------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio subclasses
        address = transport.get_extra_info("peername") or ("?", 0)
        self.peer = Peer(host=str(address[0]), port=int(address[1]), listener_name=self.listener_name)
        metrics = self.state.metrics
        metrics.connections += 1
        metrics.connections_total += 1
        self._loop = loop = asyncio.get_running_loop()
        self.last_active = loop.time()
        if self.session.auth.principal == ANONYMOUS and not self.session.auth.requires_sasl:
            certificate = transport.get_extra_info("peercert")
            if certificate:
                self.session.auth.principal = certificate_principal(certificate)
        quotas = self.state.quotas
        if quotas is not None and not quotas.accept_connection(self.peer.host, loop.time()):
            # Per-IP connection_creation_rate exceeded: refuse before any request is read.
            log.info("connection rate quota exceeded for %s; closing", self.peer.host)
            self._stopping = True
        self.worker = loop.create_task(self._serve(), name=f"conn-{self.peer.port}")

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._frame_ready.set()
        self._writable.set()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._large is not None:
            return memoryview(self._large)[self._large_filled :]
        if len(self._buffer) - self._end < OWN_BUFFER_FROM // 4:
            # Move the unparsed tail to the front to make room.
            pending = self._end - self._start
            self._buffer[:pending] = self._buffer[self._start : self._end]
            self._start, self._end = 0, pending
        return memoryview(self._buffer)[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        self.last_active = self._loop.time()
        if self._large is not None:
            self._large_filled += nbytes
            if self._large_filled == len(self._large):
                # kio's native reader wants a read-only buffer; a read-only view costs no copy.
                self._enqueue(memoryview(self._large).toreadonly())
                self._large = None
            return
        self._end += nbytes
        self._parse_frames()

    def eof_received(self) -> bool:
        return False  # close the transport

    # --- framing -----------------------------------------------------------------------

    def _parse_frames(self) -> None:
        buffer = self._buffer
        auth = self.session.auth
        max_size = self.state.config.socket_request_max_bytes
        min_size = MIN_FRAME_BYTES
        if not auth.authenticated:
            # Kafka's sasl.server.max.receive.size: strangers cannot make us buffer much.
            max_size = min(max_size, auth.max_token_bytes)
        if auth.raw_tokens:
            min_size = 0  # a raw SASL token after a v0 handshake has no request header
        while self._end - self._start >= 4:
            (size,) = _SIZE.unpack_from(buffer, self._start)
            if size < min_size or size > max_size:
                self._close_for_bad_input(f"request size {size} outside [{MIN_FRAME_BYTES}, {max_size}]")
                return
            body_start = self._start + 4
            available = self._end - body_start
            if available >= size:
                self._enqueue(bytes(memoryview(buffer)[body_start : body_start + size]))
                self._start = body_start + size
                continue
            if size >= OWN_BUFFER_FROM or size > len(buffer) - self._start - 4:
                large = bytearray(size)
                large[:available] = memoryview(buffer)[body_start : self._end]
                self._large, self._large_filled = large, available
                self._start = self._end = 0
            break
        if self._start == self._end:
            self._start = self._end = 0

    def _enqueue(self, frame: bytes | memoryview) -> None:
        self._frames.append(frame)
        self._queued_bytes += len(frame)
        self._frame_ready.set()
        if (
            not self._reading_paused
            and self._transport is not None
            and (self._queued_bytes > MAX_QUEUED_BYTES or len(self._frames) > MAX_QUEUED_FRAMES)
        ):
            self._transport.pause_reading()
            self._reading_paused = True

    def _close_for_bad_input(self, reason: str) -> None:
        log.warning("closing %s:%s: %s", self.peer.host, self.peer.port, reason)
        self.state.metrics.closed_for_bad_input += 1
        self._frames.clear()
        self._stopping = True
        self._frame_ready.set()
        if self._transport is not None:
            self._transport.abort()

    # --- request processing ------------------------------------------------------------

    def close_if_idle(self, now: float, max_idle_s: float) -> bool:
        """Kafka's connections.max.idle.ms: drop a connection that has been silent too long."""
        if self._busy or self._frames or now - self.last_active < max_idle_s:
            return False
        log.info("closing idle connection %s:%s", self.peer.host, self.peer.port)
        self.request_stop()
        if self._transport is not None:
            self._transport.close()
        return True

    def request_stop(self) -> None:
        """Finish the request in progress, then close (graceful shutdown)."""
        self._stopping = True
        self._frames.clear()
        self._frame_ready.set()
        if self._transport is not None and not self._reading_paused:
            self._transport.pause_reading()
            self._reading_paused = True

    def _raw_sasl_token(self, frame: bytes | memoryview) -> list[bytes] | None:
        """Legacy SASL (after a v0 SaslHandshake): a raw token in, a raw token out."""
        try:
            reply, _complete = self.session.auth.authenticate(bytes(frame))
        except SaslAuthenticationFailed:
            return None  # the legacy protocol has no error frame: the connection just closes
        return [_SIZE.pack(len(reply)) + reply]

    async def _answer_failed_authentication(self, response: list[bytes] | None) -> None:
        """Hold a failed authentication's answer, longer for an address that keeps failing."""
        tracker = self.state.failed_authentications
        delay = tracker.record(self.peer.host, self._loop.time()) if tracker is not None else 0.0
        log.info("authentication failed for %s:%s", self.peer.host, self.peer.port)
        if delay > 0:
            await asyncio.sleep(delay)
        if response is not None and not self._lost and self._transport is not None:
            self._transport.writelines(response)

    async def _throttle(self, delay_s: float) -> None:
        """Quota exceeded: hold the response and read nothing more for `delay_s` (Kafka mutes)."""
        transport = self._transport
        paused_here = False
        if transport is not None and not self._reading_paused:
            transport.pause_reading()
            self._reading_paused = paused_here = True
        try:
            await asyncio.sleep(delay_s)
        finally:
            if paused_here and not self._stopping and not self._lost and transport is not None:
                transport.resume_reading()
                self._reading_paused = False

    async def _serve(self) -> None:
        try:
            while True:
                while not self._frames:
                    if self._lost or self._stopping:
                        return
                    self._frame_ready.clear()
                    await self._frame_ready.wait()
                frame = self._frames.popleft()
                self._queued_bytes -= len(frame)
                if (
                    self._reading_paused
                    and not self._stopping
                    and self._queued_bytes <= MAX_QUEUED_BYTES // 2
                ):
                    assert self._transport is not None
                    self._transport.resume_reading()
                    self._reading_paused = False
                self._busy = True
                session = self.session
                try:
                    if session.auth.raw_tokens:
                        response = self._raw_sasl_token(frame)
                    else:
                        response = await dispatch(self.state, self.peer, frame, session)
                except (MalformedRequest, UnsupportedRequest) as exc:
                    self._close_for_bad_input(str(exc))
                    return
                finally:
                    self._busy = False
                    self.last_active = self._loop.time()
                if session.auth.failed:
                    await self._answer_failed_authentication(response)
                    return
                if session.throttle_s > 0:
                    await self._throttle(session.throttle_s)
                    session.throttle_s = 0.0
                if response is not None and not self._lost:
                    assert self._transport is not None
                    self._transport.writelines(response)
                    if not self._writable.is_set():
                        await self._writable.wait()
                if session.auth.close_after_response:
                    return
        except Exception:
            log.exception("request failed; closing %s:%s", self.peer.host, self.peer.port)
        finally:
            self.state.metrics.connections -= 1
            if self._transport is not None:
                self._transport.close()
            self._on_closed(self)
