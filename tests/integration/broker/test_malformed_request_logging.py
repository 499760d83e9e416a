"""A flood of malformed requests writes a bounded number of log lines (it once wrote 69,637 WARNINGs in ten
minutes for one client), and the broker keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
import urllib.request

import pytest
import uvloop

pytestmark = pytest.mark.integration

FRAMES = 10_000  # pipelined on one connection
CONNECTIONS = 3_000  # one malformed frame each (a connection is closed at its first one)
# Metadata v12 whose client id runs past the end of the frame: refused as malformed, the connection closed.
MALFORMED = struct.pack(">hhih", 3, 12, 1, 500) + b"short"
FRAME = struct.pack(">i", len(MALFORMED)) + MALFORMED


def bad_input_closes(broker) -> int:
    metrics = (
        urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=5).read().decode()
    )
    line = next(
        line for line in metrics.splitlines() if line.startswith("kafka_broker_bad_input_closes_total")
    )
    return int(line.split()[-1])


async def send_each_on_its_own_connection(port: int, count: int, concurrency: int = 100) -> None:
    async def one() -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(FRAME)
            await writer.drain()
            await reader.read(1)  # the broker closes it
            writer.close()
        except OSError:
            pass

    for start in range(0, count, concurrency):
        await asyncio.gather(*(one() for _ in range(min(concurrency, count - start))))


def test_ten_thousand_malformed_frames_log_a_bounded_number_of_lines(broker_factory):
    broker = broker_factory()
    lines_before = len(broker.log_text().splitlines())

    with (
        socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock,
        contextlib.suppress(OSError),  # closed after the first one
    ):
        sock.sendall(FRAME * FRAMES)
    uvloop.run(send_each_on_its_own_connection(broker.port, CONNECTIONS))

    deadline = time.monotonic() + 30
    while bad_input_closes(broker) < CONNECTIONS + 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bad_input_closes(broker) >= CONNECTIONS + 1
    new_lines = broker.log_text().splitlines()[lines_before:]
    assert len(new_lines) <= 15, "\n".join(new_lines[:20])
    assert sum("closing 127.0.0.1" in line for line in new_lines) == 10
    assert broker.is_running()
