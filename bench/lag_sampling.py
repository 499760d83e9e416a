"""Benchmark (acceptance 5 of the lag issue): one sampling run over 5,000 groups x 10 partitions on one
cluster, and the lag history API answering a group's 24-hour chart.

Starts a broker and a redis-server on free loopback ports and a throwaway SQLite control plane in this
process (or the DATABASE_URL given). Creates 50 topics of 10 partitions with 20 records each, then
commits offsets for 5,000 groups straight over the protocol (one OffsetCommit per group, each group on
the 10 partitions of one topic, at offsets 0-19 so almost every partition lags and needs a record
timestamp). Times a cold sampling run (every group described, record timestamps fetched) and warm runs,
then seeds a day of 1-minute rollups for one group and times GET /api/v1/lag/groups/{id}/chart/ for the
last 24 hours over HTTP from the product's web server (granian, one worker: API key, scoping, serialization).

Usage: .venv/bin/python bench/lag_sampling.py [--groups 5000] [--topics 50] [--partitions 10] [--runs 20]
Prints one JSON line with the numbers.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.control_plane_lists import free_port, start_broker  # noqa: E402 - the repository root comes first
from console.webserver import web_server_command  # noqa: E402

RECORDS_PER_PARTITION = 20


def start_redis(data_dir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(data_dir), "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            client.ping()
            return process, f"redis://127.0.0.1:{port}/0"
        except redis.ConnectionError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("redis-server did not start")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _connect(port: int) -> http.client.HTTPConnection:
    deadline = time.monotonic() + 60
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.connect()
            return connection
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def populate(bootstrap: str, topics: int, partitions: int, groups: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    from kio.schema.offset_commit.v8 import request as commit
    from kio.static.primitive import i32, i64

    from controlplane.kafka.wire import WireConnection

    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 300_000})
    names = [f"bench.lag-{index:03d}" for index in range(topics)]
    for future in admin.create_topics([NewTopic(name, partitions, 1) for name in names]).values():
        future.result(300)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for name in names:
        for partition in range(partitions):
            for _ in range(RECORDS_PER_PARTITION):
                producer.produce(name, b"x" * 100, partition=partition)
        producer.poll(0)
    producer.flush(60)
    with WireConnection(
        bootstrap,
        security_protocol="PLAINTEXT",
        sasl_mechanism="",
        username="",
        password="",
        timeout_seconds=30,
    ) as wire:
        for index in range(groups):
            topic = names[index % topics]
            offset = index % RECORDS_PER_PARTITION
            request = commit.OffsetCommitRequest(
                group_id=f"bench.group-{index:05d}",
                generation_id_or_member_epoch=i32(-1),
                member_id="",
                topics=(
                    commit.OffsetCommitRequestTopic(
                        name=topic,
                        partitions=tuple(
                            commit.OffsetCommitRequestPartition(
                                partition_index=i32(p), committed_offset=i64(offset), committed_metadata=""
                            )
                            for p in range(partitions)
                        ),
                    ),
                ),
            )
            response = wire.request(request)
            assert all(p.error_code == 0 for t in response.topics for p in t.partitions), response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=5000)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--runs", type=int, default=20)
    options = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-lag-"))
    os.environ["STREAMHUB_DATA_DIR"] = str(workdir)
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir / 'db.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    broker, bootstrap = start_broker(workdir)
    redis_server, redis_url = start_redis(workdir)
    os.environ["REDIS_URL"] = redis_url
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.utils import timezone

        call_command("migrate", verbosity=0)

        from django.contrib.auth import get_user_model

        from controlplane.accounts import services as accounts
        from controlplane.clusters import services as clusters
        from controlplane.lag.models import GroupLag, LagRollup
        from controlplane.lag.sampler import sample_cluster
        from controlplane.tenancy import services as tenancy
        from controlplane.tenancy.access import Actor

        started = time.monotonic()
        populate(bootstrap, options.topics, options.partitions, options.groups)
        populate_s = time.monotonic() - started
        system = Actor.system()
        organization = tenancy.create_organization(actor=system, name="Bench")
        user = get_user_model().objects.create_user("olga", "olga@example.com", "a long bench password")
        tenancy.add_org_member(actor=system, organization=organization, user=user, is_org_admin=True)
        _key, token = accounts.create_api_key(actor=Actor(user=user), name="bench", role="team_admin")
        cluster = clusters.register_external_cluster(
            actor=system, organization=organization, name="bench", bootstrap_servers=bootstrap
        )

        runs, cpu = [], []
        for _ in range(3):
            started, own_cpu, broker_cpu = time.monotonic(), time.process_time(), cpu_seconds(broker.pid)
            run = sample_cluster(cluster)
            runs.append(time.monotonic() - started)
            cpu.append((time.process_time() - own_cpu, cpu_seconds(broker.pid) - broker_cpu))
        assert len(run.groups) == options.groups, len(run.groups)
        partitions = sum(len(group.partitions) for group in run.groups)
        timed_lag = sum(1 for g in run.groups for p in g.partitions if p.lag_seconds is not None)

        # A day of 1-minute rollups for one group, then its 24-hour chart through the API.
        row = GroupLag.objects.select_related("group").order_by("group_id").first()
        now = timezone.now().replace(second=0, microsecond=0)
        keys = [f"{p['topic']}/{p['partition']}" for p in row.partitions]
        LagRollup.objects.bulk_create(
            [
                LagRollup(
                    group_id=row.group_id,
                    resolution="1m",
                    bucket_start=now - timedelta(minutes=minute),
                    samples=4,
                    lag_messages_max=minute * len(keys),
                    lag_messages_avg=minute * len(keys),
                    lag_seconds_max=float(minute),
                    partitions={key: [minute, float(minute)] for key in keys},
                )
                for minute in range(24 * 60)
            ],
            batch_size=1000,
            ignore_conflicts=True,  # the sampling runs may have rolled up a real minute already
        )
        # Through the product's web server, as the console asks for it: a separate process with only what a
        # web worker holds in memory (this one holds the sampler's whole run).
        port = free_port()
        server = subprocess.Popen(
            web_server_command(host="127.0.0.1", port=port, workers=1, access_log=False, log_level="warning"),
            cwd=REPO,
            env={**os.environ, "DEBUG": "0", "LOG_LEVEL": "WARNING"},
        )
        try:
            connection = _connect(port)
            path = f"/api/v1/lag/groups/{row.group_id}/chart/?" + urlencode(
                {"since": (now - timedelta(minutes=24 * 60 - 1)).isoformat()}  # the seeded day, to the minute
            )
            chart_ms = []
            for _ in range(options.runs):
                started = time.perf_counter()
                connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
                response = connection.getresponse()
                payload = response.read()
                chart_ms.append((time.perf_counter() - started) * 1000)
                assert response.status == 200, payload[:300]
        finally:
            server.terminate()
            server.wait(30)
        body = json.loads(payload)
        assert body["resolution"] == "1m"
        assert len(body["times"]) == 24 * 60, len(body["times"])
        # The first request also pays for the worker's first URL resolution, imports and cold caches.
        chart_first_ms, chart_ms = chart_ms[0], sorted(chart_ms[1:])
        print(
            json.dumps(
                {
                    "groups": options.groups,
                    "group_partitions": partitions,
                    "cluster_partitions": options.topics * options.partitions,
                    "populate_s": round(populate_s, 1),
                    "sampling_run_cold_s": round(runs[0], 2),
                    "sampling_run_warm_s": [round(seconds, 2) for seconds in runs[1:]],
                    # CPU seconds (sampler, broker) per run: what the runs cost without other load.
                    "sampling_run_cpu_s": [[round(own, 2), round(theirs, 2)] for own, theirs in cpu],
                    "load_average_1m": round(os.getloadavg()[0], 1),
                    "partitions_with_lag_seconds": timed_lag,
                    "chart_24h_points": len(body["times"]),
                    "chart_24h_series": len(body["partitions"]),
                    "chart_24h_first_ms": round(chart_first_ms, 1),
                    "chart_24h_p50_ms": round(statistics.median(chart_ms), 1),
                    "chart_24h_p90_ms": round(chart_ms[int(len(chart_ms) * 0.9)], 1),
                    "chart_24h_max_ms": round(chart_ms[-1], 1),
                    "chart_24h_bytes": len(payload),
                }
            )
        )
    finally:
        broker.kill()
        redis_server.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
