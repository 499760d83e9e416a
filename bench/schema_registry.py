"""Schema registry throughput: `GET /schemas/ids/{id}` and `POST /subjects/{s}` (lookup) under concurrent clients.

Starts gunicorn on a throwaway SQLite database, registers schemas through the API with an org admin's API key
(HTTP Basic, like Confluent clients), then drives each endpoint with `--clients` keep-alive connections for
`--seconds` and prints requests/s and latency percentiles as JSON lines.

Usage: .venv/bin/python bench/schema_registry.py [--clients 32] [--seconds 10] [--workers 2] [--threads 8]
       [--app hot|django]

`--app django` serves through Django's own WSGI handler (`console.wsgi:django_application`), without the
registry's lean path for these two endpoints (`controlplane/schemas/api/hot_path.py`), for comparison.

Besides throughput and latency it prints the gunicorn processes' CPU time per request, which stays
comparable when other work shares the machine. The load generator is a closed loop on raw sockets (uvloop):
each connection sends its next request when the previous answer is complete, so the numbers are the
server's, with the client sharing the machine's cores.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
SUBJECTS = 50


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SETUP = """
import json
from controlplane.accounts import services as accounts
from controlplane.clusters.models import Cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from django.contrib.auth import get_user_model

system = Actor.system()
organization = tenancy.create_organization(actor=system, name="Bench")
cluster = Cluster.objects.create(organization=organization, name="bench", provider="external")
user = get_user_model().objects.create_user("bench", "bench@example.com", "a long bench password")
tenancy.add_org_member(actor=system, organization=organization, user=user, is_org_admin=True)
_, token = accounts.create_api_key(actor=Actor(user=user), name="bench", role="team_admin")
print(json.dumps({"cluster": cluster.pk, "user": token.key_id, "password": token.secret}))
"""


def schema_for(index: int) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": f"Event{index}",
            "namespace": "bench",
            "fields": [{"name": "id", "type": "string"}, {"name": "n", "type": "long", "default": 0}],
        }
    )


class Load:
    def __init__(self, port: int, requests: list[bytes]) -> None:
        self.port = port
        self.requests = requests
        self.latencies: list[float] = []
        self.errors = 0
        self.running = True

    async def client(self, offset: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        index = offset
        try:
            while self.running:
                request = self.requests[index % len(self.requests)]
                index += 1
                started = time.perf_counter()
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                self.latencies.append(time.perf_counter() - started)
                if not head.startswith(b"HTTP/1.1 200"):
                    self.errors += 1
        finally:
            writer.close()

    async def run(self, clients: int, seconds: float) -> float:
        tasks = [asyncio.create_task(self.client(offset)) for offset in range(clients)]
        await asyncio.sleep(seconds)
        self.running = False
        await asyncio.gather(*tasks)
        return seconds


def process_tree_cpu_seconds(root: int) -> float:
    """User + system CPU time of a process and all its descendants (the gunicorn master and workers)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = int(fields[11]) + int(fields[12])
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(ticks.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def drive(
    port: int, requests: list[bytes], clients: int, seconds: float, server_pid: int
) -> dict[str, float]:
    import uvloop

    warm = Load(port, requests)
    uvloop.run(warm.run(clients, 1.0))
    load = Load(port, requests)
    cpu_before = process_tree_cpu_seconds(server_pid)
    started = time.perf_counter()
    uvloop.run(load.run(clients, seconds))
    elapsed = time.perf_counter() - started
    server_cpu = process_tree_cpu_seconds(server_pid) - cpu_before
    latencies = sorted(load.latencies)

    def percentile(fraction: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * fraction))] * 1000

    return {
        "requests": len(latencies),
        "errors": load.errors,
        "requests_per_s": round(len(latencies) / elapsed),
        "p50_ms": round(percentile(0.50), 2),
        "p99_ms": round(percentile(0.99), 2),
        "max_ms": round(latencies[-1] * 1000, 2),
        # What a request costs the server whatever else the machine runs: comparable under load.
        "server_cpu_us_per_request": round(server_cpu / len(latencies) * 1e6),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--app", choices=["hot", "django"], default="hot")
    parser.add_argument(
        "--switch-interval-ms",
        type=float,
        default=5.0,
        help="the workers' GIL switch interval (Python's default is 5 ms); shorter trims tail latency",
    )
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="registry-bench-"))
    env = {
        **os.environ,
        "STREAMHUB_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "SECRET_KEY": "bench-only-secret-key-bench-only-secret-key-0123456789",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(REPO),
    }
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True)
    setup = subprocess.run(
        [PYTHON, "manage.py", "shell", "-c", SETUP],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    credentials = json.loads(setup.stdout.strip().splitlines()[-1])
    port = free_port()
    gunicorn_config = data_dir / "gunicorn.conf.py"
    gunicorn_config.write_text(
        "import sys\n\n\ndef post_fork(server, worker):\n"
        f"    sys.setswitchinterval({args.switch_interval_ms / 1000!r})\n"
    )
    server = subprocess.Popen(
        [
            str(Path(PYTHON).parent / "gunicorn"),
            "console.wsgi:application" if args.app == "hot" else "console.wsgi:django_application",
            "--config",
            str(gunicorn_config),
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            str(args.workers),
            "--threads",
            str(args.threads),
            "--keep-alive",
            "60",
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=env,
    )
    try:
        base = f"/clusters/{credentials['cluster']}/schema-registry"
        auth = base64.b64encode(f"{credentials['user']}:{credentials['password']}".encode()).decode()
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        ids = []
        for index in range(SUBJECTS):
            body = json.dumps({"schema": schema_for(index), "schemaType": "AVRO", "references": []}).encode()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}{base}/subjects/bench.topic{index}-value/versions",
                data=body,
                method="POST",
                headers={
                    "Content-Type": "application/vnd.schemaregistry.v1+json",
                    "Authorization": f"Basic {auth}",
                },
            )
            with urllib.request.urlopen(request, timeout=120) as response:  # workers may still be booting
                ids.append(json.loads(response.read())["id"])

        def http(method: str, path: str, body: bytes = b"") -> bytes:
            head = (
                f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Basic {auth}\r\n"
                f"Accept: application/vnd.schemaregistry.v1+json\r\nContent-Length: {len(body)}\r\n"
            )
            if body:
                head += "Content-Type: application/vnd.schemaregistry.v1+json\r\n"
            return head.encode() + b"\r\n" + body

        by_id = [http("GET", f"{base}/schemas/ids/{schema_id}") for schema_id in ids]
        lookups = [
            http(
                "POST",
                f"{base}/subjects/bench.topic{index}-value?normalize=False&deleted=False",
                json.dumps({"schema": schema_for(index), "schemaType": "AVRO", "references": []}).encode(),
            )
            for index in range(SUBJECTS)
        ]
        for name, requests in (("GET /schemas/ids/{id}", by_id), ("POST /subjects/{s} (lookup)", lookups)):
            result = drive(port, requests, args.clients, args.seconds, server.pid)
            print(
                json.dumps(
                    {
                        "endpoint": name,
                        "app": args.app,
                        "clients": args.clients,
                        "workers": args.workers,
                        "threads": args.threads,
                        "switch_interval_ms": args.switch_interval_ms,
                        **result,
                    }
                ),
                flush=True,
            )
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
