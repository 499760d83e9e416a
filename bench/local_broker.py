"""One of our brokers started as a process for a control-plane benchmark, on a free port, logs on disk."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_broker(data_dir: Path, overrides: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """Starts `python -m broker` with `overrides` on top of a single node's basics; (process, bootstrap)."""
    port = free_port()
    configs = {
        "node.id": "1",
        "listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "log.dirs": str(data_dir / "logs"),
        "metrics.port": str(free_port()),
        "offsets.topic.num.partitions": "3",
        # Thousands of partitions with the default 1 GiB preallocated indexes would be slow to create.
        "log.segment.bytes": str(1024 * 1024),
        **overrides,
    }
    args = [sys.executable, "-m", "broker"]
    for key, value in configs.items():
        args += ["--override", f"{key}={value}"]
    log = open(data_dir / "broker.log", "ab")  # noqa: SIM115 - the child owns it
    process = subprocess.Popen(args, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the broker did not start")
