"""Managed Kafka Connect on both engines: an org admin attaches a Connect cluster (two distributed workers, their
own SCRAM user and ACLs) through the REST API; a team runs FileStream connectors through it, is refused
everything it may not do, and captures a PostgreSQL table's changes with Debezium across kill -9 of a worker.
One Connect cluster per engine serves every step (a worker's start is the cost); the last step deletes it and
checks that its topics, ACLs and user are gone. On Apache Kafka the journey is in the slow matrix (CI's budget).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from controlplane.alerts.models import Alert
from controlplane.audit.models import AuditEvent
from controlplane.clusters.connections import connection_for
from controlplane.connect.alerting import evaluate_connector_alerts
from controlplane.connect.lag import lsn_number
from controlplane.connect.models import ConnectCluster
from controlplane.groups.models import ConsumerGroup
from controlplane.kafka.acls import describe_acls
from controlplane.lag.sampler import sample_cluster
from tests.fixtures.engines import engine_params
from tests.fixtures.servers import wait_until
from tests.integration.topics.world import KafkaWorld

pytestmark = pytest.mark.integration

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector"
LINES = 2000
REPO = Path(__file__).resolve().parents[3]
ROWS = 200
# A row outside the test's ids, inserted first: its change event says the connector's snapshot is taken.
MARKER_ROW = -1


@dataclass
class ConnectWorld:
    world: KafkaWorld
    connect_cluster: dict[str, Any]
    files: Path

    @property
    def id(self) -> int:
        return self.connect_cluster["id"]

    @property
    def secrets_dir(self) -> Path:
        return Path(ConnectCluster.objects.get(pk=self.id).workers.first().directory).parent / "secrets"

    def connector_body(self, name: str, config: dict[str, str], **extra: Any) -> dict[str, Any]:
        return {
            "connect_cluster": self.id,
            "team": self.world.team_a.id,
            "name": name,
            "config": config,
            **extra,
        }


@pytest.fixture(params=engine_params(slow_on_apache_kafka=True))
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def connect_world(kafka_world: KafkaWorld, settings: Any, tmp_path: Path) -> Iterator[ConnectWorld]:
    """The Connect cluster an org admin attached through the API (two workers; ~20-30 s to start)."""
    settings.DATA_DIR = tmp_path / "data"
    world = kafka_world
    files = tmp_path / "files"
    files.mkdir()
    started = time.monotonic()
    answer = world.org_admin.post(
        "/api/v1/connect-clusters/",
        {
            "cluster": world.cluster.id,
            "name": "etl",
            "worker_count": 2,
            "allowed_plugins": [FILE_SOURCE, FILE_SINK, DEBEZIUM],
            "max_tasks_per_team": 4,
            "file_directory": str(files),
        },
        format="json",
    )
    print(f"\nConnect cluster attached in {time.monotonic() - started:.1f} s")
    assert answer.status_code == 201, answer.json()
    try:
        assert answer.json()["status"] == "running", answer.json()["status_reason"]
        yield ConnectWorld(world, answer.json(), files)
    finally:
        # Whatever a failed step left: the workers never outlive the test.
        for connect_cluster in ConnectCluster.objects.filter(pk=answer.json()["id"]).exclude(
            status="deleted"
        ):
            connect_cluster.connectors.all().delete()
            world.org_admin.delete(f"/api/v1/connect-clusters/{connect_cluster.pk}/")


def test_a_connect_cluster_serves_its_teams_connectors_and_leaves_nothing_behind(
    connect_world: ConnectWorld,
    logical_postgres: str,
    caplog: pytest.LogCaptureFixture,
    lag_redis: str,
) -> None:
    """One Connect cluster per engine (a worker's start is the cost), through every step in turn."""
    attached_with_its_own_user_acls_and_private_config(connect_world)
    filestream_carries_a_file_through_a_team_topic_exactly(connect_world)
    configs_are_refused_with_connects_own_messages_per_field(connect_world)
    teams_cannot_reach_another_teams_topics_or_connectors(connect_world)
    caplog.set_level(logging.DEBUG, logger="controlplane")
    debezium_captures_each_change_once_in_order_per_key_across_a_killed_worker(
        connect_world, logical_postgres, caplog
    )
    deleting_it_removes_its_workers_topics_acls_and_user(connect_world)


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


def debezium_captures_each_change_once_in_order_per_key_across_a_killed_worker(
    connect_world: ConnectWorld, logical_postgres: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Debezium's PostgreSQL connector (pgoutput), created by the team with the database password as a
    secret: inserts, updates and deletes arrive once and in order per key, also after kill -9 of the worker
    that ran the task (it moves to the other worker and resumes from the committed source offset)."""
    world = connect_world.world
    connect_cluster = ConnectCluster.objects.get(pk=connect_world.id)
    with psycopg.connect(logical_postgres, autocommit=True) as database:
        database.execute("CREATE TABLE accounts (id integer PRIMARY KEY, balance integer NOT NULL)")
    host_port = logical_postgres.split("@", 1)[1].split("/", 1)[0]
    prefix = f"{world.topic_prefix_a}pg"
    password = f"pg-secret-{uuid.uuid4().hex}"
    name = f"{world.group_prefix_a}accounts-cdc"
    slot = f"streamhub_{uuid.uuid4().hex[:8]}"
    created = world.developer_a.post(
        "/api/v1/connectors/",
        {
            "connect_cluster": connect_world.id,
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
                "slot.name": slot,
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
    # A refused update leaves the running connector's secrets as they were.
    secrets_file = next(Path(connect_world.secrets_dir).glob(f"{name}.properties"))
    assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
    refused = world.developer_a.patch(
        f"/api/v1/connectors/{connector_id}/",
        {
            "config": {"connector.class": DEBEZIUM, "topic.prefix": prefix},
            "secrets": {"database.password": "new"},
        },
        format="json",
    )
    assert refused.status_code == 400
    assert "database.hostname" in refused.json()["error"]["details"]["fields"]
    assert secrets_file.read_text() == f"database.password={password}\n"

    def task_worker() -> str:
        status = world.developer_a.get(f"/api/v1/connectors/{connector_id}/").json()["status"]
        tasks = status["tasks"]
        return tasks[0]["worker"] if tasks and tasks[0]["state"] == "RUNNING" else ""

    wait_until(lambda: task_worker() != "", timeout=90, what="the CDC task to run")

    # A RUNNING task may not have created its replication slot yet: changes made before that exist only as
    # the snapshot's reads of the table's final rows. The slot is created before the snapshot is taken, so
    # every change made once it exists is streamed.
    def slot_exists() -> bool:
        with psycopg.connect(logical_postgres, autocommit=True) as database:
            found = database.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,))
            return found.fetchone() is not None

    wait_until(slot_exists, timeout=90, what=f"the connector's replication slot {slot}", interval=0.5)

    topic = f"{prefix}.public.accounts"
    consumer = Consumer(
        {
            **world.client_config("admin", "admin-secret"),
            "group.id": f"check-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    # The slot exists before the snapshot reads the table, and changes made in between arrive only as the
    # snapshot's reads of the rows as they then are (a whole run at load 20-28 saw 180 'r' events instead of
    # 340 changes, after waiting for the slot). A marker row seen on the topic (read or created) says the
    # snapshot is taken: every change after it is streamed.
    with psycopg.connect(logical_postgres, autocommit=True) as database:
        database.execute("INSERT INTO accounts VALUES (%s, %s)", (MARKER_ROW, 0))
    marker: list[tuple[Any, Any]] = []
    changes(marker, consumer, 1)
    assert [key for key, _ in marker] == [MARKER_ROW], marker
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
    print(f"\nDebezium: {len(seen)} change events in {elapsed:.1f} s ({len(seen) / elapsed:.0f} records/s)")
    assert len(seen) == first_batch

    # Its source lag, sampled with the cluster: the committed position is within the database's WAL, and
    # the topic holds every change event (a delete's tombstone included).
    def source_lag() -> dict[str, Any]:
        sample_cluster(world.cluster)
        return world.developer_a.get(f"/api/v1/connectors/{connector_id}/").json()["lag"]

    wait_until(lambda: source_lag().get("committed_lsn"), timeout=30, what="a committed source position")
    lag = source_lag()
    assert (lag["kind"], lag["error"], lag["topic_records"]) == ("source", "", first_batch + len(marker)), lag
    assert lsn_number(lag["committed_lsn"]) <= lsn_number(lag["current_lsn"])
    assert 0 <= lag["lag_bytes"] < 1 << 20, lag
    assert lag["confirmed_flush_lsn"], lag
    assert lag["slot_retained_bytes"] is not None, lag

    # kill -9 the worker that runs the task, once its source offsets are committed (1 s flush interval).
    time.sleep(3)
    victim_name = task_worker()
    assert victim_name in ("worker 1", "worker 2"), victim_name  # never the worker's REST address
    victim = connect_cluster.workers.get(index=int(victim_name.split()[1]))
    os.killpg(victim.pid, signal.SIGKILL)
    with psycopg.connect(logical_postgres, autocommit=True) as database:
        for row in range(1, ROWS, 2):
            database.execute("UPDATE accounts SET balance = 2 WHERE id = %s", (row,))
    moved = time.monotonic()
    wait_until(lambda: task_worker() not in ("", victim_name), timeout=120, what="the task to move")
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
    # The database password: in no API answer, audit row, worker log or control-plane log record.
    detail = world.developer_a.get(f"/api/v1/connectors/{connector_id}/").json()
    assert detail["secret_keys"] == ["database.password"]
    assert password not in json.dumps(detail)
    assert password not in json.dumps(list(AuditEvent.objects.values()), default=str)
    worker_logs = [
        path
        for worker in connect_cluster.workers.all()
        for path in Path(worker.directory).iterdir()
        if path.name.startswith("worker.") and path.suffix in (".log", ".out")
    ]
    assert len(worker_logs) >= 2, worker_logs
    for path in worker_logs:
        assert password not in path.read_text(errors="replace"), path
    assert password not in caplog.text
    health = world.org_admin.get(f"/api/v1/connect-clusters/{connect_world.id}/health/").json()
    assert health["status"] == "degraded", health
    assert world.developer_a.delete(f"/api/v1/connectors/{connector_id}/").status_code == 204


def attached_with_its_own_user_acls_and_private_config(
    connect_world: ConnectWorld,
) -> None:
    world, connect_cluster = connect_world.world, connect_world.connect_cluster
    assert [worker["status"] for worker in connect_cluster["workers"]] == ["running", "running"]
    assert "rest_port" not in json.dumps(connect_cluster)
    health = world.org_admin.get(f"/api/v1/connect-clusters/{connect_world.id}/health/").json()
    assert health["status"] == "running", health
    assert health["workers"][0]["serving"], health
    principal = f"User:{connect_cluster['principal_name']}"
    acls = [acl for acl in describe_acls(connection_for(world.cluster)) if acl.principal == principal]
    assert {(acl.resource_type, acl.resource_name, acl.operation) for acl in acls} >= {
        ("TOPIC", connect_cluster["group_id"], "WRITE"),
        ("GROUP", connect_cluster["group_id"], "READ"),
    }
    topics = world.admin_client().list_topics(timeout=10).topics
    group = connect_cluster["group_id"]
    assert {f"{group}-configs", f"{group}-offsets", f"{group}-status"} <= set(topics)
    config_files = list(
        Path(ConnectCluster.objects.get(pk=connect_world.id).workers.first().directory).glob(
            "worker.properties"
        )
    )
    assert config_files
    assert stat.S_IMODE(config_files[0].stat().st_mode) == 0o600
    assert "listeners=http://127.0.0.1:" in config_files[0].read_text()
    plugins = world.developer_a.get(f"/api/v1/connect-clusters/{connect_world.id}/plugins/").json()
    allowed = {plugin["class"]: plugin["allowed"] for plugin in plugins}
    assert allowed[FILE_SOURCE], allowed
    assert allowed[DEBEZIUM], allowed
    assert allowed["org.apache.kafka.connect.mirror.MirrorSourceConnector"] is False
    # Teams see the Connect cluster but may not attach, restart or delete one.
    refused = world.developer_a.post(f"/api/v1/connect-clusters/{connect_world.id}/restart/")
    assert refused.status_code == 403


def filestream_carries_a_file_through_a_team_topic_exactly(
    connect_world: ConnectWorld,
) -> None:
    world = connect_world.world
    topic = f"{world.topic_prefix_a}lines-{uuid.uuid4().hex[:6]}"
    source_file, sink_file = connect_world.files / f"{topic}.in", connect_world.files / f"{topic}.out"
    lines = [f"line {index} {uuid.uuid4().hex}" for index in range(LINES)]
    source_file.write_text("".join(f"{line}\n" for line in lines))
    common = {"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1"}
    started = time.monotonic()
    for name, config in (
        (
            f"{world.group_prefix_a}source",
            {"connector.class": FILE_SOURCE, "file": str(source_file), "topic": topic, **common},
        ),
        (
            f"{world.group_prefix_a}sink",
            {"connector.class": FILE_SINK, "file": str(sink_file), "topics": topic},
        ),
    ):
        created = world.developer_a.post(
            "/api/v1/connectors/", connect_world.connector_body(name, config), format="json"
        )
        assert created.status_code == 201, created.json()

    def copied() -> bool:
        return sink_file.exists() and sink_file.read_text().count("\n") >= LINES

    wait_until(copied, timeout=90, what="the sink to write every line", interval=0.2)
    elapsed = time.monotonic() - started
    print(
        f"\nFileStream source -> topic -> sink: {LINES} lines in {elapsed:.1f} s ({LINES / elapsed:.0f} records/s, connector start included)"
    )
    assert sink_file.read_text().splitlines() == lines
    # The sink's lag is its consumer group's (connect-<name>), sampled by the lag sampler as the team's.
    sink = world.developer_a.get("/api/v1/connectors/", {"name": f"{world.group_prefix_a}sink"}).json()

    def sink_lag() -> dict[str, Any]:
        sample_cluster(world.cluster)
        return world.developer_a.get(f"/api/v1/connectors/{sink['results'][0]['id']}/").json()["lag"]

    wait_until(lambda: sink_lag().get("lag_messages") == 0, timeout=30, what="the sink's group to catch up")
    lag = sink_lag()
    assert (lag["kind"], lag["group"]) == ("consumer_group", f"connect-{world.group_prefix_a}sink"), lag
    assert ConsumerGroup.objects.get(pk=lag["group_id"]).team_id == world.team_a.id
    connector_id = world.developer_a.get(
        "/api/v1/connectors/", {"name": f"{world.group_prefix_a}source"}
    ).json()
    source = next(row for row in connector_id["results"] if row["name"] == f"{world.group_prefix_a}source")
    detail = world.viewer_a.get(f"/api/v1/connectors/{source['id']}/").json()
    assert detail["status"]["state"] == "RUNNING"
    assert [task["state"] for task in detail["status"]["tasks"]] == ["RUNNING"]

    # Paused, a line appended is not carried; resumed, it is.
    assert world.viewer_a.post(f"/api/v1/connectors/{source['id']}/pause/").status_code == 403
    assert (
        world.developer_a.post(f"/api/v1/connectors/{source['id']}/pause/").json()["desired_state"]
        == "paused"
    )
    wait_until(
        lambda: (
            world.developer_a.get(f"/api/v1/connectors/{source['id']}/").json()["status"]["state"] == "PAUSED"
        ),
        timeout=30,
        what="the connector to pause",
    )
    # The team's rule: the paused connector fires (a real evaluation: Connect asked for its status).
    rule = world.developer_a.post(
        "/api/v1/alert-rules/",
        {
            "team": world.team_a.id,
            "name": "a connector stopped",
            "metric": "connector_not_running",
            "comparison": "gt",
            "for_seconds": 0,
            "cluster": world.cluster.id,
            "group_pattern": f"{world.group_prefix_a}*",
        },
        format="json",
    )
    assert rule.status_code == 201, rule.json()
    evaluate_connector_alerts(world.cluster)
    firing = Alert.objects.get(rule_id=rule.json()["id"])
    assert (firing.state, firing.group_name, firing.value) == ("firing", source["name"], 1.0)
    assert "PAUSED" in firing.reason, firing.reason
    listed = world.developer_a.get("/api/v1/alerts/", {"kind": "connector", "active": "true"}).json()
    assert [alert["id"] for alert in listed["results"]] == [firing.pk], listed
    with source_file.open("a") as appended:
        appended.write("while paused\n")
    time.sleep(2)  # a running source polls the file every second; nothing may arrive while it is paused
    assert sink_file.read_text().splitlines() == lines
    assert world.developer_a.post(f"/api/v1/connectors/{source['id']}/resume/").status_code == 200
    wait_until(
        lambda: sink_file.read_text().splitlines() == [*lines, "while paused"],
        timeout=30,
        what="the resumed line",
    )
    evaluate_connector_alerts(world.cluster)
    firing.refresh_from_db()
    assert firing.state == "resolved", firing.reason
    restart = world.developer_a.post(
        f"/api/v1/connectors/{source['id']}/restart/", {"task": 0}, format="json"
    )
    assert restart.status_code == 202, restart.json()
    # A sink whose file is a directory: its task fails, which fires; deleted, its alert resolves.
    broken = world.developer_a.post(
        "/api/v1/connectors/",
        connect_world.connector_body(
            f"{world.group_prefix_a}broken",
            {"connector.class": FILE_SINK, "file": str(connect_world.files), "topics": topic},
        ),
        format="json",
    )
    assert broken.status_code == 201, broken.json()

    def broken_task_state() -> str:
        tasks = world.developer_a.get(f"/api/v1/connectors/{broken.json()['id']}/").json()["status"]["tasks"]
        return tasks[0]["state"] if tasks else ""

    wait_until(lambda: broken_task_state() == "FAILED", timeout=60, what="the broken sink's task to fail")
    evaluate_connector_alerts(world.cluster)
    failed = Alert.objects.get(rule_id=rule.json()["id"], group_name=f"{world.group_prefix_a}broken")
    assert failed.state == "firing"
    assert "task 0 is FAILED" in failed.reason, failed.reason
    for row in world.developer_a.get("/api/v1/connectors/").json()["results"]:
        assert world.developer_a.delete(f"/api/v1/connectors/{row['id']}/").status_code == 204
    evaluate_connector_alerts(world.cluster)
    failed.refresh_from_db()
    assert failed.state == "resolved"


def configs_are_refused_with_connects_own_messages_per_field(connect_world: ConnectWorld) -> None:
    world = connect_world.world
    name = f"{world.group_prefix_a}cdc"
    missing = world.developer_a.post(
        "/api/v1/connectors/",
        connect_world.connector_body(
            name, {"connector.class": DEBEZIUM, "topic.prefix": f"{world.topic_prefix_a}db"}
        ),
        format="json",
    )
    assert missing.status_code == 400, missing.json()
    fields = missing.json()["error"]["details"]["fields"]
    assert "database.hostname" in fields, fields
    wrong_class = world.developer_a.post(
        "/api/v1/connectors/",
        connect_world.connector_body(
            name, {"connector.class": "org.example.NoSuchConnector", "topic": f"{world.topic_prefix_a}x"}
        ),
        format="json",
    )
    assert wrong_class.status_code == 400
    assert wrong_class.json()["error"]["code"] == "plugin_not_allowed"
    password = f"pw-{uuid.uuid4().hex}"
    in_config = world.developer_a.post(
        "/api/v1/connectors/",
        connect_world.connector_body(
            name,
            {
                "connector.class": DEBEZIUM,
                "topic.prefix": f"{world.topic_prefix_a}db",
                "database.hostname": "127.0.0.1",
                "database.user": "postgres",
                "database.dbname": "streamhub",
                "database.password": password,
            },
        ),
        format="json",
    )
    assert in_config.status_code == 400
    assert "database.password" in in_config.json()["error"]["details"]["fields"]
    assert password not in json.dumps(in_config.json())
    assert password not in json.dumps(list(AuditEvent.objects.values()), default=str)


def teams_cannot_reach_another_teams_topics_or_connectors(connect_world: ConnectWorld) -> None:
    world = connect_world.world
    body = connect_world.connector_body(
        f"{world.group_prefix_a}leak",
        {
            "connector.class": FILE_SINK,
            "file": str(connect_world.files / "leak.out"),
            "topics": f"{world.topic_prefix_b}orders",
        },
    )
    refused = world.developer_a.post("/api/v1/connectors/", body, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "topic_outside_team", refused.json()
    routed = connect_world.connector_body(
        f"{world.group_prefix_a}route",
        {
            "connector.class": FILE_SOURCE,
            "file": str(connect_world.files / "x.in"),
            "topic": f"{world.topic_prefix_a}x",
            "transforms": "r",
            "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.r.regex": ".*",
            "transforms.r.replacement": f"{world.topic_prefix_b}stolen",
        },
    )
    assert (
        world.developer_a.post("/api/v1/connectors/", routed, format="json").json()["error"]["code"]
        == "topic_outside_team"
    )
    provider = connect_world.connector_body(
        f"{world.group_prefix_a}peek",
        {
            "connector.class": FILE_SOURCE,
            "file": "${file:/etc/passwd:root}",
            "topic": f"{world.topic_prefix_a}x",
        },
    )
    assert world.developer_a.post("/api/v1/connectors/", provider, format="json").status_code == 400
    # Local files: only under the directory the org admin set, whether named in the config or as a secret.
    for config, secrets in (
        ({"file": "/etc/passwd"}, {}),
        ({"file": f"{connect_world.files}/../../../../etc/passwd"}, {}),
        ({}, {"file": "/etc/passwd"}),
    ):
        peek = connect_world.connector_body(
            f"{world.group_prefix_a}passwd",
            {"connector.class": FILE_SOURCE, "topic": f"{world.topic_prefix_a}x", **config},
            secrets=secrets,
        )
        refused = world.developer_a.post("/api/v1/connectors/", peek, format="json")
        assert refused.status_code == 400, refused.json()
        assert refused.json()["error"]["code"] == "path_outside_directory", refused.json()
        assert "file" in refused.json()["error"]["details"]["fields"]
    # Team B: its own name prefix, and team A's connectors do not exist for it.
    own = connect_world.connector_body(
        f"{world.group_prefix_a}x",
        {
            "connector.class": FILE_SOURCE,
            "file": str(connect_world.files / "y.in"),
            "topic": f"{world.topic_prefix_a}y",
        },
        validate_only=True,
    )
    assert world.developer_a.post("/api/v1/connectors/", own, format="json").status_code == 200
    assert world.admin_b.post("/api/v1/connectors/", own, format="json").status_code == 403
    created = world.developer_a.post("/api/v1/connectors/", {**own, "validate_only": False}, format="json")
    assert created.status_code == 201, created.json()
    connector_id = created.json()["id"]
    assert world.admin_b.get(f"/api/v1/connectors/{connector_id}/").status_code == 404
    assert world.admin_b.post(f"/api/v1/connectors/{connector_id}/pause/").status_code == 404
    assert connector_id not in [
        row["id"] for row in world.admin_b.get("/api/v1/connectors/").json()["results"]
    ]
    # The tasks guardrail: 4 tasks per team here.
    greedy = connect_world.connector_body(
        f"{world.group_prefix_a}greedy",
        {
            "connector.class": FILE_SOURCE,
            "file": str(connect_world.files / "z.in"),
            "topic": f"{world.topic_prefix_a}z",
            "tasks.max": "4",
        },
    )
    assert (
        world.developer_a.post("/api/v1/connectors/", greedy, format="json").json()["error"]["code"]
        == "task_limit"
    )
    assert world.developer_a.delete(f"/api/v1/connectors/{connector_id}/").status_code == 204


def deleting_it_removes_its_workers_topics_acls_and_user(
    connect_world: ConnectWorld,
) -> None:
    world, connect_cluster = connect_world.world, connect_world.connect_cluster
    assert world.developer_a.delete(f"/api/v1/connect-clusters/{connect_world.id}/").status_code == 403
    directory = Path(ConnectCluster.objects.get(pk=connect_world.id).workers.first().directory)
    assert world.org_admin.delete(f"/api/v1/connect-clusters/{connect_world.id}/").status_code == 204
    assert not directory.parent.exists()
    principal = f"User:{connect_cluster['principal_name']}"
    assert not [acl for acl in describe_acls(connection_for(world.cluster)) if acl.principal == principal]
    group = connect_cluster["group_id"]
    admin: AdminClient = world.admin_client()
    wait_until(
        lambda: not [topic for topic in admin.list_topics(timeout=10).topics if topic.startswith(group)],
        timeout=30,
        what="the internal topics to be deleted",
    )
    assert world.org_admin.get(f"/api/v1/connect-clusters/{connect_world.id}/").status_code == 404
