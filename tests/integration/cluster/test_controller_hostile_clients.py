"""Hostile clients on the controller listener of a real node (broker,controller): frames that are not
ours, floods of size prefixes, more connections than allowed, silent connections. The controller
stays up, its request memory stays within `queued.max.request.bytes`, and it keeps answering (its
own broker keeps heartbeating and is never fenced)."""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.cluster import LocalCluster, start_cluster
from tests.integration.cluster.scale_checker import fencings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

MAX_PER_IP = 40
MAX_REQUEST_BYTES = 8 * 1024 * 1024
QUEUED_BYTES = 2 * MAX_REQUEST_BYTES
IDLE_MS = 3000


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def frame(document: object) -> bytes:
    body = json.dumps(document).encode()
    return struct.pack(">I", len(body)) + body


def describe_quorum(port: int, timeout: float = 5.0) -> float:
    """Seconds for a fresh connection to get a describe_quorum answer."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(frame({"t": "rpc", "id": 7, "method": "describe_quorum", "params": {}}))
        (size,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
        reply = json.loads(sock.recv(size, socket.MSG_WAITALL))
    assert reply["id"] == 7
    assert reply["error_code"] == 0, reply
    return time.monotonic() - started


def closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    cluster = start_cluster(
        tmp_path_factory.mktemp("controller-hostile"),
        1,
        properties={
            "max.connections.per.ip": str(MAX_PER_IP),
            "socket.request.max.bytes": str(MAX_REQUEST_BYTES),
            "queued.max.request.bytes": str(QUEUED_BYTES),
            "connections.max.idle.ms": str(IDLE_MS),
        },
    )
    try:
        yield cluster
    finally:
        cluster.stop()


def controller(cluster: LocalCluster) -> tuple[int, int]:
    """(port of the controller listener, process id) of the one node."""
    [only] = cluster.nodes.values()
    assert only.controller_port is not None
    assert only.process is not None
    return only.controller_port, only.process.pid


def test_frames_that_are_not_ours_close_only_their_connection(node: LocalCluster) -> None:
    port, pid = controller(node)
    hostile = [
        struct.pack(">I", 2**32 - 1),  # 4 GB announced
        struct.pack(">I", MAX_REQUEST_BYTES + 1) + b"{",  # above socket.request.max.bytes
        struct.pack(">I", 5) + b"nope!",  # not JSON
        frame([1, 2, 3]),  # JSON, not an object
        frame({"t": "what"}),  # unknown frame type
        struct.pack(">I", 200_000) + b"[" * 200_000,  # deeper than Python's stack
        struct.pack(">I", 100) + b'{"t": "rpc"',  # truncated: the sender goes away
    ]
    for data in hostile:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            assert closed_by_peer(sock)
    assert describe_quorum(port) < 2.0
    assert node.nodes[1].is_running
    assert rss_mb(pid) < 400


def test_a_flood_of_large_frames_is_held_to_the_request_memory_and_starves_nobody(node: LocalCluster) -> None:
    port, pid = controller(node)
    baseline = rss_mb(pid)
    fenced_before = fencings(node)
    flooders = []
    chunk = b"\0" * (1024 * 1024)
    try:
        # 30 connections each announce a frame of the largest allowed size and send half of it:
        # 120 MB on the way, of which the controller may hold 16 MB (the others wait unread).
        for _ in range(30):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.setblocking(False)
            pending = struct.pack(">I", MAX_REQUEST_BYTES) + chunk * 4
            sent = 0
            deadline = time.monotonic() + 2
            while sent < len(pending) and time.monotonic() < deadline:
                try:
                    sent += sock.send(pending[sent:])
                except BlockingIOError:
                    time.sleep(0.01)
            flooders.append(sock)
        worst = max(describe_quorum(port) for _ in range(10))
        assert worst < 2.0
        assert rss_mb(pid) < baseline + 3 * QUEUED_BYTES / 2**20
    finally:
        for sock in flooders:
            sock.close()
    assert node.nodes[1].is_running
    assert fencings(node) == fenced_before


def test_connections_over_the_per_ip_limit_are_refused_and_silent_ones_closed(node: LocalCluster) -> None:
    port, _ = controller(node)
    held = []
    try:
        # The node's own broker holds a few connections to its controller from the same address.
        for _ in range(MAX_PER_IP + 5):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(0.5)
        refused = 0
        for sock in held:
            sock.settimeout(0.2)
            try:
                refused += sock.recv(1) == b""
            except TimeoutError:
                pass
            except ConnectionResetError:
                refused += 1
        assert refused >= 5
        assert (
            "refusing a controller connection: max.connections.per.ip (40) reached"
            in node.nodes[1].log_text()
        )
        # Silent connections are closed after connections.max.idle.ms; then there is room again.
        time.sleep(IDLE_MS / 1000 + 2)
        for sock in held:
            sock.settimeout(2)
            assert closed_by_peer(sock)
    finally:
        for sock in held:
            sock.close()
    assert describe_quorum(port) < 2.0
    # Its own broker's connections were idle at times too: it reconnected, never fenced.
    assert fencings(node) == 0
