"""Streams groups (KIP-1071) on a 3-node cluster of our broker, with Apache Kafka as the oracle on request.

    .venv/bin/python bench/streams_groups.py [--records 200] [--apache-kafka]

The exactly_once_v2 windowed count (jvm/ecosystem/src/streamhub/ecosystem/WindowedCount.java) with
`group.protocol=streams`: one instance processes the input, a second joins, the first leaves (SIGTERM), each step
`--records` records over 8 keys. Prints, per engine, the time to the first instance running, how long the join took
(the second instance's JVM start to its member in the group, then to the four tasks split 2/2: StreamsGroupDescribe
on the group's coordinator), each step's time to all its output (the joining step starts once the tasks are split),
and the check: updates read read_committed, duplicates, whether every key-window counts 1..n.
Topics have 4 partitions and 3 replicas. Starts the cluster (and Apache Kafka) in a temporary directory and stops
everything it started.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.apache_kafka import ApacheKafkaCluster
from tests.fixtures.cluster import start_cluster
from tests.fixtures.servers import wait_until
from tests.integration.jvm.test_streams_groups import (
    OutputReader,
    StreamsApp,
    _active_tasks,
    _describe,
    _produce,
)

PARTITIONS = 4
NOT_COORDINATOR = 16


def _group(bootstrap: str, group_id: str) -> Any:
    """The group as its coordinator describes it (the other brokers answer NOT_COORDINATOR)."""
    for address in bootstrap.split(","):
        group = _describe(address, group_id)
        if group.error_code != NOT_COORDINATOR:
            return group
    raise LookupError(f"no broker coordinates {group_id}")


def run(name: str, bootstrap: str, work: Path, records: int) -> None:
    suffix = uuid.uuid4().hex[:6]
    source, sink, application_id = f"in-{suffix}", f"out-{suffix}", f"app-{suffix}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for topic in (source, sink):
        admin.create_topics([NewTopic(topic, PARTITIONS, 3)])[topic].result(30)
    reader = OutputReader(bootstrap, sink)
    apps: list[StreamsApp] = []
    started = time.monotonic()
    timings: list[str] = []

    def step(label: str, total: int, before: Callable[[], None] | None = None) -> None:
        if before is not None:
            before()
        began = time.monotonic()
        _produce(bootstrap, source, records)
        reader.read_until(total, 120)
        timings.append(f"{label} {time.monotonic() - began:.1f}s")

    try:
        first = StreamsApp(work, bootstrap, application_id, source, sink, "first")
        apps.append(first)
        wait_until(
            lambda: first.running() or first.process.poll() is not None, 180, "the first instance", 0.5
        )
        timings.append(f"first running after {time.monotonic() - started:.1f}s")
        step("one instance", records)
        second = StreamsApp(work, bootstrap, application_id, source, sink, "second")
        apps.append(second)
        launched = time.monotonic()
        wait_until(lambda: len(_group(bootstrap, application_id).members) == 2, 180, "the second member", 0.2)
        joined = time.monotonic()
        wait_until(
            lambda: [len(tasks) for tasks in _active_tasks(_group(bootstrap, application_id))] == [2, 2],
            180,
            "the tasks split 2/2",
            0.2,
        )
        timings.append(
            f"second joined {joined - launched:.1f}s after its start, tasks split {time.monotonic() - joined:.1f}s later"
        )
        step("a second joining", 2 * records)
        step("the first leaving", 3 * records, first.stop)
    finally:
        for app in apps:
            app.stop()
        reader.close()
    seen = Counter(reader.updates)
    by_window: dict[str, list[int]] = {}
    for key_window, count in reader.updates:
        by_window.setdefault(key_window, []).append(count)
    exact = all(sorted(counts) == list(range(1, len(counts) + 1)) for counts in by_window.values())
    print(
        f"{name}: {'; '.join(timings)}; updates {len(reader.updates)}/{3 * records}, "
        f"duplicates {sum(1 for times in seen.values() if times > 1)}, counts 1..n exactly once: {exact}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument(
        "--apache-kafka", action="store_true", help="the same run on 3 Apache Kafka nodes too"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-streams-groups-") as directory:
        base = Path(directory)
        cluster = start_cluster(base / "ours", 3)
        try:
            run("ours, 3 nodes", cluster.bootstrap, base, args.records)
        finally:
            cluster.stop()
        if args.apache_kafka:
            oracle = ApacheKafkaCluster(base / "apache-kafka", 3)
            oracle.start()
            try:
                run("Apache Kafka 4.2, 3 nodes", oracle.bootstrap, base, args.records)
            finally:
                oracle.stop()


if __name__ == "__main__":
    main()
