"""Records/s through Kafka Connect on our broker and on Apache Kafka, in one run (issue 37's closing numbers).

    .venv/bin/python bench/connect_throughput.py [--lines 200000] [--rows 50000]

For each engine (one node, PLAINTEXT) one distributed Connect worker (Apache Kafka's ConnectDistributed, as the
control plane starts it: controlplane/connect/workers.py, 384 MiB heap) runs:
  - FileStream source: a file of `--lines` lines into a one-partition topic (time to the topic's last offset),
  - FileStream sink: that topic into a file (time, from the sink's creation, to its last line),
  - Debezium PostgreSQL (pgoutput): `--rows` rows inserted in one transaction into a captured table, from
    the commit to the last change event in the topic (streaming, not the snapshot).
A connector's own start is inside each time (as a team sees it); the load average is printed beside.
The PostgreSQL cluster (scripts/throwaway_postgres.sh) is shared by both engines, each with its own table
and replication slot. Everything started here is stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from controlplane.connect import rest, workers  # noqa: E402
from tests.fixtures.apache_kafka import ApacheKafkaNode  # noqa: E402
from tests.fixtures.broker import BrokerProcess  # noqa: E402

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector"
OURS, KAFKA = "streamhub", "apache-kafka"


@contextmanager
def engine(name: str, base: Path) -> Iterator[str]:
    if name == OURS:
        broker = BrokerProcess(base / OURS, {"num.partitions": "1"})
        broker.start()
        try:
            yield broker.bootstrap
        finally:
            broker.kill9()
        return
    node = ApacheKafkaNode(base / KAFKA, {"num.partitions": "1"})
    node.start()
    try:
        yield node.bootstrap
    finally:
        node.kill9()


@contextmanager
def connect_worker(bootstrap: str, base: Path) -> Iterator[rest.ConnectRest]:
    plan = workers.WorkerPlan(index=1, rest_port=workers.free_port(set()), directory=base / "worker")
    login = workers.ClusterLogin(bootstrap, "PLAINTEXT", "", "", "")
    group = workers.WorkerGroup(f"bench-connect-{uuid.uuid4().hex[:6]}", 1, base / "secrets")
    workers.write_worker_config(plan, login, group)
    pid = workers.start_worker(plan)
    try:
        wait(lambda: rest.answers(plan.url), 180, "the Connect worker to serve")
        yield rest.ConnectRest([plan.url])
    finally:
        workers.stop_worker(plan, pid)


def wait(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def end_offset(admin: AdminClient, bootstrap: str, topic: str) -> int:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-watermarks"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1]
    except Exception:  # the topic is not created yet
        return 0
    finally:
        consumer.close()


def create_topic(admin: AdminClient, topic: str) -> None:
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(60)


def filestream(connect: rest.ConnectRest, bootstrap: str, base: Path, lines: int) -> tuple[float, float]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"bench-lines-{uuid.uuid4().hex[:6]}"
    create_topic(admin, topic)
    source_file, sink_file = base / "in.txt", base / "out.txt"
    source_file.write_text("".join(f"line {index} {'x' * 80}\n" for index in range(lines)))
    started = time.monotonic()
    connect.put_config(
        "bench-source", {"connector.class": FILE_SOURCE, "file": str(source_file), "topic": topic}
    )
    wait(lambda: end_offset(admin, bootstrap, topic) >= lines, 600, "the source to carry every line")
    source_seconds = time.monotonic() - started
    started = time.monotonic()
    connect.put_config("bench-sink", {"connector.class": FILE_SINK, "file": str(sink_file), "topics": topic})

    def copied() -> bool:
        return sink_file.exists() and sink_file.stat().st_size >= source_file.stat().st_size

    wait(copied, 600, "the sink to write every line")
    sink_seconds = time.monotonic() - started
    assert sink_file.read_text() == source_file.read_text(), "the sink's file differs from the source's"
    for name in ("bench-source", "bench-sink"):
        connect.delete(name)
    return lines / source_seconds, lines / sink_seconds


def debezium(connect: rest.ConnectRest, bootstrap: str, database_url: str, rows: int) -> float:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    suffix = uuid.uuid4().hex[:6]
    table, prefix = f"accounts_{suffix}", f"bench{suffix}"
    with psycopg.connect(database_url, autocommit=True) as database:
        database.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, balance integer NOT NULL)")
        database.execute(f"INSERT INTO {table} VALUES (0, 0)")  # the snapshot's row: the topic then exists
    host, port = database_url.split("@", 1)[1].split("/", 1)[0].split(":")
    topic = f"{prefix}.public.{table}"
    connect.put_config(
        "bench-cdc",
        {
            "connector.class": DEBEZIUM,
            "plugin.name": "pgoutput",
            "database.hostname": host,
            "database.port": port,
            "database.user": "postgres",
            "database.dbname": "streamhub",
            "topic.prefix": prefix,
            "table.include.list": f"public.{table}",
            "slot.name": f"bench_{suffix}",
            "publication.name": f"bench_{suffix}",
            "publication.autocreate.mode": "filtered",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "1",
        },
    )
    wait(lambda: end_offset(admin, bootstrap, topic) >= 1, 180, "the snapshot's row")
    with psycopg.connect(database_url, autocommit=True) as database:
        database.execute(f"INSERT INTO {table} SELECT n, n FROM generate_series(1, %s) AS n", (rows,))
    started = time.monotonic()
    wait(lambda: end_offset(admin, bootstrap, topic) >= rows + 1, 900, "every change event")
    seconds = time.monotonic() - started
    connect.delete("bench-cdc")
    return rows / seconds


@contextmanager
def postgres() -> Iterator[str]:
    script = REPO / "scripts" / "throwaway_postgres.sh"
    started = subprocess.run(
        [str(script), "start"],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "PG_EXTRA_OPTIONS": "-c wal_level=logical -c max_replication_slots=8 -c max_wal_senders=8",
        },
    )
    exports = dict(line.removeprefix("export ").split("=", 1) for line in started.stdout.splitlines())
    try:
        yield exports["DATABASE_URL"]
    finally:
        subprocess.run([str(script), "stop", exports["PG_DIR"]], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--engines", default=f"{OURS},{KAFKA}")
    args = parser.parse_args()
    results = []
    with postgres() as database_url, tempfile.TemporaryDirectory(prefix="connect-bench-") as temporary:
        for name in args.engines.split(","):
            base = Path(temporary) / name
            base.mkdir()
            with engine(name, base) as bootstrap, connect_worker(bootstrap, base) as connect:
                source, sink = filestream(connect, bootstrap, base, args.lines)
                cdc = debezium(connect, bootstrap, database_url, args.rows)
                results.append((name, source, sink, cdc, os.getloadavg()[0]))
                print(f"{name}: done", flush=True)
    print(
        f"\nKafka Connect throughput (records/s; {args.lines} lines, {args.rows} rows; one worker, one node)"
    )
    print(f"{'engine':<14}{'FileStream source':>19}{'FileStream sink':>17}{'Debezium PG':>13}{'load':>7}")
    for name, source, sink, cdc, load in results:
        print(f"{name:<14}{source:>19,.0f}{sink:>17,.0f}{cdc:>13,.0f}{load:>7.1f}")


if __name__ == "__main__":
    main()
