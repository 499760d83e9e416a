"""Topic create and delete through the REST API, on a healthy and on a degraded three-broker cluster.

    .venv/bin/python bench/topic_changes.py [--rounds 30] [--partitions 3] [--replication-factor 3]

Starts a real three-node cluster (`python -m broker`, the test fixture's timings), a throwaway SQLite control
plane and the web server (granian, as `make run` serves it: 2 workers x 4 threads), registers the cluster and
then, as a team's developer with an API key, creates and deletes `--rounds` topics one after the other over
HTTP in each of three states:
- healthy: all three brokers up;
- broker_down: one broker (not the active controller) killed with SIGKILL and fenced;
- broker_hung: one broker (not the active controller) stopped with SIGSTOP: its connections stay open and
  answer nothing, the worst case for a client, until the controller fences it.
Prints one JSON line per state and call: p50/p99/max milliseconds, and the answers by status (201/204:
confirmed within the request; 202: the operation confirms it later; anything else is counted too).

Measured on the shared 2-core box, load average 6.7-6.9 (other sessions' test runs), 30 rounds, RF 2, 3 partitions:
- healthy:     create p50 129 ms, p99 198 ms; delete p50 114 ms, p99 216 ms; all 201 / 204
- broker_down: create p50 176 ms, p99 348 ms; delete p50 161 ms, p99 283 ms; all 201 / 204
- broker_hung: create p50 218 ms, p99 2,312 ms; delete p50 205 ms, p99 642 ms; all 201 / 204
  (a request whose client first picks the hung broker waits for its connection; none hit the 5 s timeout in
  this run, in shorter runs one create did and was answered 202, then confirmed by its operation)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Api:
    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw)
            except ValueError:
                return error.code, raw[:200]


def answer_label(status: int, answer: Any) -> str:
    """201, 202, 204, or a refusal with its code (`400 invalid_replication_factor`)."""
    if status >= 400 and isinstance(answer, dict) and "error" in answer:
        return f"{status} {answer['error']['code']}"
    return str(status)


def settle(api: Api, answer: Any) -> None:
    """Waits for a 202's operation to end, so the next round starts from a settled cluster."""
    operation = answer["operation"]
    deadline = time.monotonic() + 120
    while operation["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.5)
        operation = api.call("GET", f"/api/v1/operations/{operation['id']}/")[1]


def measure(
    api: Api, state: str, *, cluster_id: int, team_id: int, prefix: str, args: argparse.Namespace
) -> None:
    timings: dict[str, list[float]] = {"create": [], "delete": []}
    answers: dict[str, collections.Counter] = {
        "create": collections.Counter(),
        "delete": collections.Counter(),
    }
    for round_number in range(args.rounds):
        name = f"{prefix}{state}-{round_number}"
        body = {
            "cluster": cluster_id,
            "team": team_id,
            "name": name,
            "partitions": args.partitions,
            "replication_factor": args.replication_factor,
        }
        started = time.perf_counter()
        status, answer = api.call("POST", "/api/v1/topics/", body)
        timings["create"].append((time.perf_counter() - started) * 1000)
        answers["create"][answer_label(status, answer)] += 1
        if status == 202:
            settle(api, answer)
        topics = api.call("GET", f"/api/v1/topics/?name={name}")[1]["results"]
        for topic in topics:
            started = time.perf_counter()
            status, answer = api.call("DELETE", f"/api/v1/topics/{topic['id']}/", {"confirm_name": name})
            timings["delete"].append((time.perf_counter() - started) * 1000)
            answers["delete"][answer_label(status, answer)] += 1
            if status == 202:
                settle(api, answer)
    for call, values in timings.items():
        if not values:
            continue
        print(
            json.dumps(
                {
                    "bench": "topic_changes",
                    "cluster": state,
                    "call": call,
                    "runs": len(values),
                    "p50_ms": round(statistics.median(values), 1),
                    "p99_ms": round(percentile(values, 0.99), 1),
                    "max_ms": round(max(values), 1),
                    "answers": dict(sorted(answers[call].items())),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                }
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--partitions", type=int, default=3)
    # 2 of 3: a degraded cluster (one broker down) can still place every replica.
    parser.add_argument("--replication-factor", type=int, default=2)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-topic-changes-"))
    os.environ.update(
        DATABASE_URL=f"sqlite:///{work}/db.sqlite3",
        DJANGO_SETTINGS_MODULE="console.settings",
        STREAMHUB_DATA_DIR=str(work),
        SECRET_KEY="bench-" + "x" * 50,
        EMBEDDED_REDIS="false",
        REDIS_URL="redis://127.0.0.1:1/0",
        API_KEY_RATE="100000/min",
        LOG_LEVEL="WARNING",
    )
    from tests.fixtures.broker import free_port
    from tests.fixtures.cluster import start_cluster

    cluster = start_cluster(work / "cluster", 3)
    server: subprocess.Popen | None = None
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO, check=True)
        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from django.db import connections

        from console.webserver import web_server_command
        from controlplane.accounts import services as accounts
        from controlplane.clusters import services as clusters
        from controlplane.tenancy import services as tenancy
        from controlplane.tenancy.access import Actor
        from controlplane.tenancy.choices import PrefixResourceType, TeamRole
        from controlplane.tenancy.models import TeamPolicy

        system = Actor.system()
        organization = tenancy.create_organization(actor=system, name="Bench")
        team = tenancy.create_team(actor=system, organization=organization, name="Payments")
        tenancy.add_prefix(actor=system, team=team, resource_type=PrefixResourceType.TOPIC, prefix="pay.")
        # The bench makes more changes per minute than the team's default guardrail allows.
        TeamPolicy.objects.filter(team=team).update(admin_operations_per_minute=100_000)
        user = get_user_model().objects.create_user("dev", "dev@example.com", "a long bench password")
        tenancy.add_member(actor=system, team=team, user=user, role=TeamRole.DEVELOPER)
        _key, token = accounts.create_api_key(actor=Actor(user=user), name="bench", role=TeamRole.DEVELOPER)
        registered = clusters.register_external_cluster(
            actor=system, organization=organization, name="bench", bootstrap_servers=cluster.bootstrap
        )
        connections.close_all()

        port = free_port()
        command = web_server_command(
            host="127.0.0.1", port=port, workers=2, access_log=False, log_level="warning"
        )
        server = subprocess.Popen(command, cwd=REPO, stderr=open(work / "web.log", "wb"))  # noqa: SIM115
        api = Api(f"http://127.0.0.1:{port}", token)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if api.call("GET", "/api/v1/topics/")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)

        common = {"cluster_id": registered.id, "team_id": team.id, "prefix": "pay.", "args": args}
        measure(api, "healthy", **common)
        # Not the active controller: the bench is about a degraded cluster, not a controller election.
        controller = registered_controller(cluster)
        victim = next(node for node in cluster.brokers if node.node_id != controller)
        victim.kill9()
        time.sleep(3)  # fenced after broker.session.timeout.ms (2 s)
        measure(api, "broker_down", **common)
        victim.restart(hard=True)
        cluster.wait_ready()
        victim = next(node for node in cluster.brokers if node.node_id != registered_controller(cluster))
        victim.process.send_signal(signal.SIGSTOP)
        try:
            measure(api, "broker_hung", **common)
        finally:
            victim.process.send_signal(signal.SIGCONT)
    finally:
        if server is not None:
            server.terminate()
            server.wait(20)
        cluster.stop()


def registered_controller(cluster: Any) -> int:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(timeout=10).controller_id


if __name__ == "__main__":
    main()
