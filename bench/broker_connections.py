"""What connections that send little or nothing cost a broker, as JSON.

    python -m bench.broker_connections [--idle 2000] [--prefix-clients 100] [--prefix-mb 100]
                                       [--trickle-seconds 10] [--source DIR]

Starts `python -m broker` (from this checkout, or from `--source`, e.g. an export of an older
commit to compare) and measures its resident memory (VmRSS):

- `idle`: after `--idle` connections opened and left silent, and what each one costs;
- `prefix`: `--prefix-clients` connections each send a `--prefix-mb` MB size prefix and then
  trickle bytes of that frame for `--trickle-seconds` (a slow-loris upload), while a separate
  client keeps sending ApiVersions and records its worst round trip: the broker must stay up,
  its memory bounded, and the other client served.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.broker_throughput.__main__ import free_port, wait_until_serving

REPO_ROOT = Path(__file__).resolve().parents[1]
API_VERSIONS_V0 = struct.pack(">hhih", 18, 0, 1, -1)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def settled_rss_kb(pid: int, seconds: float = 2.0) -> int:
    """Largest RSS seen over a short window (the broker reacts to what was just sent)."""
    deadline = time.monotonic() + seconds
    peak = 0
    while time.monotonic() < deadline:
        peak = max(peak, rss_kb(pid))
        time.sleep(0.1)
    return peak


def start_broker(source: Path, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "broker",
        "--override",
        f"listeners=PLAINTEXT://127.0.0.1:{port}",
        "--override",
        f"log.dirs={data_dir}",
        "--override",
        "offsets.topic.num.partitions=1",
        "--log-level",
        "ERROR",
    ]
    env = dict(os.environ, PYTHONPATH=str(source))
    return subprocess.Popen(command, cwd=source, env=env)


def api_versions_round_trip(port: int) -> float:
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(API_VERSIONS_V0)) + API_VERSIONS_V0)
        (size,) = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))
        sock.recv(size, socket.MSG_WAITALL)
    return time.perf_counter() - started


def measure_idle(pid: int, port: int, count: int) -> dict[str, float]:
    before = settled_rss_kb(pid)
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    after = settled_rss_kb(pid, 3.0)
    for sock in sockets:
        sock.close()
    return {
        "connections": count,
        "rss_before_mb": round(before / 1024, 1),
        "rss_with_idle_mb": round(after / 1024, 1),
        "kb_per_idle_connection": round((after - before) / count, 1),
    }


def measure_prefixes(pid: int, port: int, clients: int, frame_mb: int, seconds: float) -> dict[str, float]:
    before = settled_rss_kb(pid)
    frame_bytes = frame_mb * 1_000_000
    sockets = []
    for _ in range(clients):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(struct.pack(">i", frame_bytes))
        sockets.append(sock)
    after_prefix = settled_rss_kb(pid)
    chunk = b"\0" * 1024
    peak, worst_round_trip, sent = after_prefix, 0.0, 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for sock in sockets:
            with contextlib.suppress(OSError):  # the broker may close a connection it refuses
                sock.sendall(chunk)
        sent += len(chunk)
        worst_round_trip = max(worst_round_trip, api_versions_round_trip(port))
        peak = max(peak, rss_kb(pid))
        time.sleep(0.1)
    for sock in sockets:
        sock.close()
    return {
        "clients": clients,
        "declared_frame_mb": frame_mb,
        "trickled_kb_per_client": sent // 1024,
        "rss_before_mb": round(before / 1024, 1),
        "rss_after_prefixes_mb": round(after_prefix / 1024, 1),
        "rss_peak_while_trickling_mb": round(peak / 1024, 1),
        "other_client_worst_round_trip_ms": round(worst_round_trip * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--prefix-clients", type=int, default=100)
    parser.add_argument("--prefix-mb", type=int, default=100)
    parser.add_argument("--trickle-seconds", type=float, default=10.0)
    parser.add_argument("--source", type=Path, default=REPO_ROOT, help="checkout to run the broker from")
    args = parser.parse_args()
    result: dict[str, object] = {"source": str(args.source)}
    # Each phase gets a fresh broker: freed memory is not always returned to the system.
    phases = {
        "idle": lambda pid, port: measure_idle(pid, port, args.idle),
        "prefix": lambda pid, port: measure_prefixes(
            pid, port, args.prefix_clients, args.prefix_mb, args.trickle_seconds
        ),
    }
    for name, measure in phases.items():
        port = free_port()
        with tempfile.TemporaryDirectory() as data_dir:
            broker = start_broker(args.source.resolve(), Path(data_dir), port)
            try:
                wait_until_serving(port)
                result[name] = measure(broker.pid, port)
                result[f"{name}_broker_alive"] = broker.poll() is None
            finally:
                broker.terminate()
                broker.wait(timeout=30)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
