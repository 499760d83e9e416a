"""One client connection: read size-prefixed frames, answer them in order.

The socket reads into buffers we own (asyncio.BufferedProtocol). An idle connection holds no
buffer at all: reads land in one read buffer shared by every connection (broker/server/
request_memory.py), complete small frames are sliced out of it, and only the bytes of a frame
that is not complete yet are kept. A large frame (a big Produce) gets a buffer of its own that
the kernel fills directly, so its bytes are not copied on their way to the decoder; that buffer
grows with the bytes that arrive, never ahead of them, so a size prefix alone costs nothing.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import struct
from collections.abc import Callable

from broker.auth.principal import ANONYMOUS
from broker.auth.sasl import AuthSession, SaslAuthenticationFailed
from broker.context import BrokerState, ClientSession
from broker.protocol.frames import MalformedRequest, UnsupportedRequest
from broker.runtime.log_limit import ClientEventLog
from broker.runtime.request_memory import LOW_MEMORY_READ_BYTES, SMALL_FRAME_BYTES
from broker.server.dispatcher import Peer, dispatch

log = logging.getLogger(__name__)
# Lines clients cause (bad frames, refused connections, failed logins), rate limited across all connections.
client_events = ClientEventLog(log)

_SIZE = struct.Struct(">i")
# Frames at least this large are received into their own buffer, reserved in request memory.
OWN_BUFFER_FROM = SMALL_FRAME_BYTES
# A large frame's buffer starts this big (or at the bytes already there) and doubles as it fills.
FIRST_OWN_BUFFER_BYTES = 64 * 1024
# Once a connection has delivered a large frame whole, frames up to this size get their full buffer
# at once: growing costs a copy and fresh memory per step, about a third more broker CPU for 1 KiB
# messages in 1 MB Produce requests. Still within the frame's reservation in request memory.
WHOLE_BUFFER_UP_TO = 2 * 1024 * 1024
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
        self._memory = state.request_memory
        # Received bytes not yet parsed into a frame: part of a small frame or of a size prefix,
        # or what a read brought in while memory for a large frame is short.
        self._leftover: bytearray | None = None
        self._large: bytearray | None = None  # a large frame being received into its own buffer
        self._large_size = 0
        self._large_filled = 0
        self._frames: collections.deque[bytes | memoryview] = collections.deque()
        self._queued_bytes = 0
        self._held_bytes = 0  # charged to request memory: leftover, reservation, queued frames
        self._reading_paused = False
        self._throttling = False
        self._waiting_for_memory = False
        self._counted = False  # admitted by the connection limits
        self._delivered_large_frame = False
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
        self._logged_lines = 0  # lines this connection caused, for client_events' per-connection cap

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

    def _log_event(self, kind: str, level: int, message: str, *args: object, exc_info: bool = False) -> None:
        """Log a line this client caused, `message` formatted with the peer's host and port then `args`."""
        if client_events.log(
            kind,
            level,
            self.peer.host,
            message,
            self.peer.host,
            self.peer.port,
            *args,
            connection_lines=self._logged_lines,
            exc_info=exc_info,
        ):
            self._logged_lines += 1

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
        refused = self.state.connection_limits.admit(self.peer.host)
        self._counted = refused is None
        quotas = self.state.quotas
        if refused is not None:
            self._log_event("refused connection", logging.INFO, "refusing connection from %s:%s: %s", refused)
            metrics.connections_refused += 1
            self._stopping = True
            transport.abort()
        elif not quotas.accept_connection(self.peer.host, loop.time()):
            # Per-IP connection_creation_rate exceeded: refuse before any request is read.
            self._log_event(
                "connection rate quota", logging.INFO, "connection rate quota exceeded for %s:%s; closing"
            )
            self._stopping = True
        self.worker = loop.create_task(self._serve(), name=f"conn-{self.peer.port}")

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._frame_ready.set()
        self._writable.set()
        self._release_input()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def get_buffer(self, sizehint: int) -> memoryview:
        large = self._large
        if large is not None:
            if self._large_filled == len(large):
                # Full but the frame is not: grow with what has arrived (the reservation covers it).
                grown = bytearray(min(self._large_size, 2 * len(large)))
                grown[: self._large_filled] = large
                self._large = large = grown
            return memoryview(large)[self._large_filled :]
        view = memoryview(self._memory.read_buffer)
        return view[:LOW_MEMORY_READ_BYTES] if self._memory.short else view

    def buffer_updated(self, nbytes: int) -> None:
        self.last_active = self._loop.time()
        if self._large is not None:
            self._large_filled += nbytes
            if self._large_filled == self._large_size:
                self._finish_large_frame()
            return
        data = memoryview(self._memory.read_buffer)[:nbytes]
        leftover = self._leftover
        if leftover is not None:
            # Join only the bytes that complete the leftover's frame; parse the rest in place.
            head = self._bytes_completing(leftover, data)
            self._set_leftover(None)
            self._parse_frames(memoryview(leftover + data[:head]))
            if head == nbytes or self._stopping:
                return
            data = data[head:]
        self._parse_frames(data)

    def eof_received(self) -> bool:
        return False  # close the transport

    # --- framing -----------------------------------------------------------------------

    def _frame_size_limits(self) -> tuple[int, int]:
        auth = self.session.auth
        max_size = self.state.config.socket_request_max_bytes
        min_size = MIN_FRAME_BYTES
        if not auth.authenticated:
            # Kafka's sasl.server.max.receive.size: strangers cannot make us buffer much.
            max_size = min(max_size, auth.max_token_bytes)
        if auth.raw_tokens:
            min_size = 0  # a raw SASL token after a v0 handshake has no request header
        return min_size, max_size

    def _parse_frames(self, data: memoryview) -> None:
        """Queue every complete frame in `data`; keep or start receiving the incomplete rest."""
        min_size, max_size = self._frame_size_limits()
        start, end = 0, len(data)
        while end - start >= 4:
            (size,) = _SIZE.unpack_from(data, start)
            if size < min_size or size > max_size:
                self._close_for_bad_input(f"request size {size} outside [{min_size}, {max_size}]")
                return
            body_start = start + 4
            available = end - body_start
            if available >= size:
                frame = bytes(data[body_start : body_start + size])
                self._memory.charge(size)
                self._held_bytes += size
                self._enqueue(frame)
                start = body_start + size
                continue
            if size >= OWN_BUFFER_FROM:
                if not self._memory.try_reserve(size):
                    # No room for this frame yet: keep what arrived, read nothing until there is.
                    self._set_leftover(data[start:])
                    self._wait_for_memory(size)
                    return
                self._held_bytes += size
                if self._delivered_large_frame and size <= WHOLE_BUFFER_UP_TO:
                    capacity = size
                else:
                    capacity = min(size, max(FIRST_OWN_BUFFER_BYTES, 2 * available))
                large = bytearray(capacity)
                large[:available] = data[body_start:end]
                self._large, self._large_size, self._large_filled = large, size, available
                return
            break
        if start < end:
            self._set_leftover(data[start:end])
            if self._memory.short and self._frames:
                self._wait_for_memory(0)

    @staticmethod
    def _bytes_completing(leftover: bytearray, data: memoryview) -> int:
        """How many bytes of `data` belong to the frame `leftover` starts (all, if it is large)."""
        prefix = bytes(leftover[:4]) + bytes(data[: max(0, 4 - len(leftover))])
        if len(prefix) < 4:
            return len(data)
        (size,) = _SIZE.unpack(prefix)
        if not 0 <= size < OWN_BUFFER_FROM:
            return len(data)  # a large frame takes everything; a bad size is refused on parsing
        return min(len(data), 4 + size - len(leftover))

    def _set_leftover(self, data: memoryview | bytearray | None) -> None:
        if self._leftover is not None:
            self._release_held(len(self._leftover))
        self._leftover = bytearray(data) if data is not None else None
        if self._leftover is not None:
            self._memory.charge(len(self._leftover))
            self._held_bytes += len(self._leftover)

    def _finish_large_frame(self) -> None:
        assert self._large is not None
        # kio's native reader wants a read-only buffer; a read-only view costs no copy. The
        # reservation made for this frame now counts as a queued frame.
        frame = memoryview(self._large).toreadonly()
        self._large = None
        self._delivered_large_frame = True
        self._enqueue(frame)

    def _wait_for_memory(self, nbytes: int) -> None:
        self._waiting_for_memory = True
        self._pause_reading()
        self._memory.wait(self, nbytes, self._memory_available)

    def _memory_available(self) -> None:
        self._waiting_for_memory = False
        if self._lost or self._stopping:
            return
        leftover = self._leftover
        if leftover is not None:
            self._set_leftover(None)
            self._parse_frames(memoryview(leftover))
        self._maybe_resume_reading()

    def _enqueue(self, frame: bytes | memoryview) -> None:
        self._frames.append(frame)
        self._queued_bytes += len(frame)
        self._frame_ready.set()
        if self._queued_bytes > MAX_QUEUED_BYTES or len(self._frames) > MAX_QUEUED_FRAMES:
            self._pause_reading()

    def _pause_reading(self) -> None:
        if not self._reading_paused and self._transport is not None:
            self._transport.pause_reading()
            self._reading_paused = True

    def _maybe_resume_reading(self) -> None:
        if (
            self._reading_paused
            and not self._stopping
            and not self._lost
            and not self._throttling
            and not self._waiting_for_memory
            and self._queued_bytes <= MAX_QUEUED_BYTES // 2
            and len(self._frames) <= MAX_QUEUED_FRAMES // 2
            and self._transport is not None
        ):
            self._transport.resume_reading()
            self._reading_paused = False

    def _release_input(self) -> None:
        """The connection is gone: give back every byte it held in request memory."""
        self._memory.forget(self)
        self._frames.clear()
        self._leftover = self._large = None
        self._queued_bytes = 0
        self._release_held(self._held_bytes)

    def _release_held(self, nbytes: int) -> None:
        nbytes = min(nbytes, self._held_bytes)  # nothing is left once the connection is gone
        if nbytes > 0:
            self._held_bytes -= nbytes
            self._memory.release(nbytes)

    def _close_for_bad_input(self, reason: str) -> None:
        self._log_event("closed for bad input", logging.WARNING, "closing %s:%s: %s", reason)
        self.state.metrics.closed_for_bad_input += 1
        self._stopping = True
        self._release_input()
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
        self._pause_reading()

    def _raw_sasl_token(self, frame: bytes | memoryview) -> list[bytes] | None:
        """Legacy SASL (after a v0 SaslHandshake): a raw token in, a raw token out."""
        try:
            reply, _complete = self.session.auth.authenticate(bytes(frame))
        except SaslAuthenticationFailed:
            return None  # the legacy protocol has no error frame: the connection just closes
        return [_SIZE.pack(len(reply)) + reply]

    async def _answer_failed_authentication(self, response: list[bytes] | None) -> None:
        """Hold a failed authentication's answer, longer for an address that keeps failing."""
        delay = self.state.failed_authentications.record(self.peer.host, self._loop.time())
        self._log_event("failed authentication", logging.INFO, "authentication failed for %s:%s")
        if delay > 0:
            await asyncio.sleep(delay)
        if response is not None and not self._lost and self._transport is not None:
            self._transport.writelines(response)

    async def _throttle(self, delay_s: float) -> None:
        """Quota exceeded: hold the response and read nothing more for `delay_s` (Kafka mutes)."""
        self._throttling = True
        self._pause_reading()
        try:
            await asyncio.sleep(delay_s)
        finally:
            self._throttling = False
            self._maybe_resume_reading()

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
                self._maybe_resume_reading()
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
                    self._release_held(len(frame))
                    del frame
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
            self._log_event("request failed", logging.ERROR, "request failed; closing %s:%s", exc_info=True)
        finally:
            self.state.metrics.connections -= 1
            self._release_input()
            if self._counted:
                self._counted = False
                self.state.connection_limits.release(self.peer.host)
            if self._transport is not None:
                self._transport.close()
            if self.session.share_sessions:
                self.state.share.connection_closed(self.session, self.session.share_sessions)
            self._on_closed(self)
