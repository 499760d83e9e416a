"""Change data capture: Debezium's PostgreSQL connector (pgoutput) on a managed Connect cluster of two workers,
created by a team through the API with the database password as a secret, streams a table's inserts, updates
and deletes into the team's topic; every change arrives once and in order per key, also after kill -9 of the
worker that ran the task (its task moves to the other worker and resumes from the committed source offset).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from confluent_kafka import Consumer

from controlplane.audit.models import AuditEvent
from controlplane.connect.models import ConnectCluster
from tests.fixtures.engines import engine_params
from tests.fixtures.servers import wait_until
from tests.integration.connect.test_connect_clusters import DEBEZIUM
from tests.integration.topics.world import KafkaWorld

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[3]
ROWS = 200


@pytest.fixture(params=engine_params(slow_on_apache_kafka=True))
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def logical_postgres() -> Iterator[str]:
    """A throwaway PostgreSQL with logical decoding on; yields its connection URL."""
    script = REPO / "scripts" / "throwaway_postgres.sh"
    started = subprocess.run(
        [str(script), "start"],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "PG_EXTRA_OPTIONS": "-c wal_level=logical -c max_replication_slots=4 -c max_wal_senders=4",
        },
    )
    exports = dict(line.removeprefix("export ").split("=", 1) for line in started.stdout.splitlines())
    try:
        yield exports["DATABASE_URL"]
    finally:
        subprocess.run([str(script), "stop", exports["PG_DIR"]], check=False)


def changes(
    seen: list[tuple[Any, Any]], consumer: Consumer, count: int, timeout_seconds: float = 120
) -> None:
    """Polls change events (key id, (op, balance) or None for a tombstone) into `seen` until it holds `count`."""
    deadline = time.monotonic() + timeout_seconds
    while len(seen) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None or message.error():
            continue
        key = json.loads(message.key())["id"]
        value = json.loads(message.value()) if message.value() is not None else None
        seen.append((key, None if value is None else (value["op"], (value["after"] or {}).get("balance"))))


def test_debezium_captures_each_change_once_in_order_per_key_across_a_killed_worker(
    kafka_world: KafkaWorld, settings: Any, tmp_path: Path, logical_postgres: str
) -> None:
    world = kafka_world
    settings.DATA_DIR = tmp_path / "data"
    with psycopg.connect(logical_postgres, autocommit=True) as database:
        database.execute("CREATE TABLE accounts (id integer PRIMARY KEY, balance integer NOT NULL)")
    attached = world.org_admin.post(
        "/api/v1/connect-clusters/",
        {"cluster": world.cluster.id, "name": "cdc", "worker_count": 2},
        format="json",
    )
    assert attached.status_code == 201, attached.json()
    assert attached.json()["status"] == "running", attached.json()["status_reason"]
    connect_cluster = ConnectCluster.objects.get(pk=attached.json()["id"])
    try:
        host_port = logical_postgres.split("@", 1)[1].split("/", 1)[0]
        prefix = f"{world.topic_prefix_a}pg"
        password = f"pg-secret-{uuid.uuid4().hex}"
        name = f"{world.group_prefix_a}accounts-cdc"
        created = world.developer_a.post(
            "/api/v1/connectors/",
            {
                "connect_cluster": connect_cluster.pk,
                "team": world.team_a.id,
                "name": name,
                "config": {
                    "connector.class": DEBEZIUM,
                    "plugin.name": "pgoutput",
                    "database.hostname": host_port.split(":")[0],
                    "database.port": host_port.split(":")[1],
                    "database.user": "postgres",
                    "database.dbname": "streamhub",
                    "topic.prefix": prefix,
                    "table.include.list": "public.accounts",
                    "slot.name": f"streamhub_{uuid.uuid4().hex[:8]}",
                    "publication.autocreate.mode": "filtered",
                    "topic.creation.default.replication.factor": "1",
                    "topic.creation.default.partitions": "1",
                },
                "secrets": {"database.password": password},
            },
            format="json",
        )
        assert created.status_code == 201, created.json()
        assert password not in json.dumps(created.json())
        assert created.json()["secret_keys"] == ["database.password"]
        assert password not in json.dumps(list(AuditEvent.objects.values()), default=str)
        connector_id = created.json()["id"]

        def task_worker() -> str:
            status = world.developer_a.get(f"/api/v1/connectors/{connector_id}/").json()["status"]
            tasks = status["tasks"]
            return tasks[0]["worker"] if tasks and tasks[0]["state"] == "RUNNING" else ""

        wait_until(lambda: task_worker() != "", timeout=90, what="the CDC task to run")

        topic = f"{prefix}.public.accounts"
        consumer = Consumer(
            {
                **world.client_config("admin", "admin-secret"),
                "group.id": f"check-{uuid.uuid4().hex}",
                "auto.offset.reset": "earliest",
            }
        )
        consumer.subscribe([topic])
        started = time.monotonic()
        with psycopg.connect(logical_postgres, autocommit=True) as database:
            for row in range(ROWS):
                database.execute("INSERT INTO accounts VALUES (%s, %s)", (row, 0))
            for row in range(0, ROWS, 2):
                database.execute("UPDATE accounts SET balance = 1 WHERE id = %s", (row,))
            for row in range(0, ROWS, 10):
                database.execute("DELETE FROM accounts WHERE id = %s", (row,))
        # A delete is a "d" event followed by a tombstone (key, null).
        first_batch = ROWS + ROWS // 2 + 2 * (ROWS // 10)
        seen: list[tuple[Any, Any]] = []
        changes(seen, consumer, first_batch)
        elapsed = time.monotonic() - started
        print(
            f"\nDebezium: {len(seen)} change events in {elapsed:.1f} s ({len(seen) / elapsed:.0f} records/s)"
        )
        assert len(seen) == first_batch

        # kill -9 the worker that runs the task, once its source offsets are committed (1 s flush interval).
        time.sleep(3)
        victim_url = task_worker()
        victim = next(
            worker for worker in connect_cluster.workers.all() if str(worker.rest_port) in victim_url
        )
        os.killpg(victim.pid, signal.SIGKILL)
        with psycopg.connect(logical_postgres, autocommit=True) as database:
            for row in range(1, ROWS, 2):
                database.execute("UPDATE accounts SET balance = 2 WHERE id = %s", (row,))
        moved = time.monotonic()
        wait_until(lambda: task_worker() not in ("", victim_url), timeout=120, what="the task to move")
        changes(seen, consumer, first_batch + ROWS // 2)
        print(f"task moved and caught up {time.monotonic() - moved:.1f} s after kill -9")
        changes(seen, consumer, first_batch + ROWS // 2 + 1, timeout_seconds=3)  # no change re-delivered
        consumer.close()

        expected: dict[int, list[Any]] = {}
        for row in range(ROWS):
            events: list[Any] = [("c", 0)]
            if row % 2 == 0:
                events.append(("u", 1))
            if row % 10 == 0:
                events += [("d", None), None]
            if row % 2 == 1:
                events.append(("u", 2))
            expected[row] = events
        by_key: dict[int, list[Any]] = {}
        for key, event in seen:
            by_key.setdefault(key, []).append(event)
        assert by_key == expected
        health = world.org_admin.get(f"/api/v1/connect-clusters/{connect_cluster.pk}/health/").json()
        assert health["status"] == "degraded", health
        assert world.developer_a.delete(f"/api/v1/connectors/{connector_id}/").status_code == 204
    finally:
        connect_cluster.connectors.all().delete()
        world.org_admin.delete(f"/api/v1/connect-clusters/{connect_cluster.pk}/")
