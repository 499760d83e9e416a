"""Schema registry throughput: `GET /schemas/ids/{id}` and `POST /subjects/{s}` (lookup) under concurrent clients.

Starts the product's web server (granian, the command line `runstack` uses: `console/webserver.py`) on a
throwaway SQLite database (or the
database `DATABASE_URL` names), registers schemas through the API with an org admin's API key (HTTP Basic, like
Confluent clients), then drives each endpoint with `--clients` keep-alive connections for `--seconds` and prints
one JSON line per endpoint.

Usage: .venv/bin/python bench/schema_registry.py [--clients 32] [--seconds 10] [--rate 2000]
       [--workers N] [--threads N] [--switch-interval-ms MS] [--app hot|django]

Two ways to load the server, with the same numbers printed (achieved requests/s, p50/p90/p99/max latency):

- closed loop (the default): each connection sends its next request as soon as the previous answer is
  complete, so the server runs flat out. It shows the maximum throughput; its latencies are those of a
  saturated server with `--clients` requests always queued.
- fixed rate (`--rate R`): the connections together send R requests/s on a schedule (connection i sends
  request k at start + (k * clients + i) / R). Latency is measured from the *scheduled* send time, so a
  stalled server is charged for every request it delayed (no coordinated omission). This is the
  acceptance question: does the registry sustain R requests/s with a low p99.

`--app django` serves through Django's own WSGI handler (`console.wsgi:django_application`), without the
registry's lean path for these two endpoints (`controlplane/schemas/api/hot_path.py`), for comparison.

Each line also carries the web server processes' CPU time per request, which stays comparable when other work
shares the machine, and the machine's load average before and after the run (the load generator runs on the
same cores: numbers from a busy machine are not the server's best).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import shutil
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

sys.path.insert(0, str(REPO))
from console.webserver import web_server_command  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SETUP = """
import json
import secrets
from controlplane.accounts import services as accounts
from controlplane.clusters.models import Cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from django.contrib.auth import get_user_model

system = Actor.system()
suffix = secrets.token_hex(4)  # a shared DATABASE_URL may hold earlier runs
organization = tenancy.create_organization(actor=system, name=f"Bench {suffix}")
cluster = Cluster.objects.create(organization=organization, name="bench", provider="external")
user = get_user_model().objects.create_user(f"bench-{suffix}", "bench@example.com", "a long bench password")
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


async def _read_response(reader: asyncio.StreamReader) -> bool:
    """Read one response; whether it was a 200."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    await reader.readexactly(length)
    return head.startswith(b"HTTP/1.1 200")


class Load:
    """`clients` keep-alive connections, each with one request in flight.

    With `rate` None each connection sends again as soon as its answer is in (closed loop). With a rate,
    connection i sends its k-th request at start + (k * clients + i) / rate, or at once if it is late,
    and the latency counts from that scheduled time.
    """

    def __init__(self, port: int, requests: list[bytes], clients: int, rate: float | None) -> None:
        self.port = port
        self.requests = requests
        self.clients = clients
        self.rate = rate
        self.latencies: list[float] = []
        self.errors = 0
        self.deadline = 0.0

    async def client(self, offset: int, start: float) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        sent = 0
        try:
            while True:
                if self.rate is None:
                    scheduled = time.perf_counter()
                else:
                    scheduled = start + (sent * self.clients + offset) / self.rate
                    delay = scheduled - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                if scheduled >= self.deadline:
                    break
                writer.write(self.requests[(offset + sent) % len(self.requests)])
                sent += 1
                ok = await _read_response(reader)
                self.latencies.append(time.perf_counter() - scheduled)
                self.errors += not ok
        finally:
            writer.close()

    async def run(self, seconds: float) -> float:
        """Load for `seconds` of scheduled sends; returns the time until the last answer came in."""
        start = time.perf_counter()
        self.deadline = start + seconds
        await asyncio.gather(*(self.client(offset, start) for offset in range(self.clients)))
        return time.perf_counter() - start


def process_tree_cpu_seconds(root: int) -> float:
    """User + system CPU time of a process and all its descendants (the web server and its workers)."""
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
    port: int, requests: list[bytes], clients: int, seconds: float, rate: float | None, server_pid: int
) -> dict[str, float]:
    import uvloop

    uvloop.run(Load(port, requests, clients, rate).run(1.0))  # warm every worker's caches and connections
    load = Load(port, requests, clients, rate)
    load_average_before = os.getloadavg()[0]
    cpu_before = process_tree_cpu_seconds(server_pid)
    elapsed = uvloop.run(load.run(seconds))
    server_cpu = process_tree_cpu_seconds(server_pid) - cpu_before
    latencies = sorted(load.latencies)

    def percentile(fraction: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * fraction))] * 1000, 2)

    return {
        "mode": "closed loop" if rate is None else "fixed rate",
        "target_requests_per_s": rate,
        "requests": len(latencies),
        "errors": load.errors,
        "requests_per_s": round(len(latencies) / elapsed),
        "p50_ms": percentile(0.50),
        "p90_ms": percentile(0.90),
        "p99_ms": percentile(0.99),
        "max_ms": round(latencies[-1] * 1000, 2),
        # What a request costs the server whatever else the machine runs: comparable under load.
        "server_cpu_us_per_request": round(server_cpu / len(latencies) * 1e6),
        "load_average_1m_before": round(load_average_before, 2),
        "load_average_1m_after": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--rate", type=float, default=None, help="requests/s on a fixed schedule (default: closed loop)"
    )
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WEB_WORKERS", "2")))
    parser.add_argument("--threads", type=int, default=int(os.environ.get("WEB_THREADS", "4")))
    parser.add_argument("--app", choices=["hot", "django"], default="hot")
    parser.add_argument(
        "--switch-interval-ms",
        type=float,
        default=None,
        help="the workers' GIL switch interval (WEB_SWITCH_INTERVAL_MS; default: the product's, see console/wsgi.py)",
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
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    if args.switch_interval_ms is not None:
        env["WEB_SWITCH_INTERVAL_MS"] = str(args.switch_interval_ms)
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
    server = subprocess.Popen(
        web_server_command(
            host="127.0.0.1",
            port=port,
            workers=args.workers,
            threads=args.threads,
            application="console.wsgi:application"
            if args.app == "hot"
            else "console.wsgi:django_application",
            access_log=False,
            log_level="warning",
        ),
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
            result = drive(port, requests, args.clients, args.seconds, args.rate, server.pid)
            print(
                json.dumps(
                    {
                        "endpoint": name,
                        "app": args.app,
                        "clients": args.clients,
                        "workers": args.workers,
                        "threads": args.threads,
                        "switch_interval_ms": env.get("WEB_SWITCH_INTERVAL_MS", "product default"),
                        "database": "postgresql" if env.get("DATABASE_URL") else "sqlite",
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
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
