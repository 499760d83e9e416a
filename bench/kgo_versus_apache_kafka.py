"""One franz-go kgo test on a 3-node cluster of ours and on a 3-node Apache Kafka 4.2, back to back (issue #36).

    .venv/bin/python -m bench.kgo_versus_apache_kafka --binary /tmp/kgo.test --run 'TestGroupETL$' \
        --records 100000 --rounds 2

`--nodes 1` runs each engine as one node instead (replication factor 1 everywhere, `KGO_TEST_RF=1`), as the client
suites' single-broker franz-go row does.

Builds nothing: `--binary` is kgo's test binary (`cd pkg/kgo && go test -c -o /tmp/kgo.test .`). Our cluster is
the client suites' (`bench/client_suites/run.py --franz-go-cluster`: Kafka's default timings, auto-creation on);
Kafka's gets the same group and internal-topic settings where the fixture's differ from Kafka's defaults (50
partitions per internal topic, a 6 s minimum session, min.insync.replicas 2, auto-creation on). Each round runs
ours, then Kafka, and prints per engine: the wall time of the binary and of each sub-test, the load average before
and after, the CPU seconds the three brokers spent during the test, and how long their threads waited for a CPU
(the run queue, /proc/<pid>/task/*/schedstat): on a shared machine a single-threaded broker process waits for
the one core it can use while a JVM's many threads are scheduled on both.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.client_suites.run import KAFKA_DEFAULT_TIMINGS
from tests.fixtures.apache_kafka import ApacheKafkaCluster
from tests.fixtures.cluster import start_cluster

OURS, KAFKA = "streamhub", "apache-kafka"
KAFKA_SETTINGS = {
    "auto.create.topics.enable": "true",
    "num.partitions": "1",
    "min.insync.replicas": "2",
    "offsets.topic.num.partitions": "50",
    "transaction.state.log.num.partitions": "50",
    "group.min.session.timeout.ms": "6000",
}
SUBTEST = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\)", re.M)


@dataclass
class Cluster:
    bootstrap: str
    pids: list[int]


@contextmanager
def engine_nodes(engine: str, work: Path, nodes: int) -> Iterator[Cluster]:
    if engine == OURS:
        ours = start_cluster(
            work, size=nodes, properties={**KAFKA_DEFAULT_TIMINGS, "auto.create.topics.enable": "true"}
        )
        try:
            yield Cluster(ours.bootstrap, [n.process.pid for n in ours.brokers if n.process is not None])
        finally:
            ours.stop()
        return
    settings = {**KAFKA_SETTINGS, "min.insync.replicas": str(min(2, nodes))}
    kafka = ApacheKafkaCluster(work, nodes, settings, heap="1g")  # kafka-server-start.sh's heap
    kafka.start()
    try:
        yield Cluster(kafka.bootstrap, [n.process.pid for n in kafka.nodes if n.process is not None])
    finally:
        kafka.stop()


def cpu_seconds(pids: list[int]) -> float:
    """User + system time of the processes (all their threads)."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def runqueue_seconds(pids: list[int]) -> float:
    """Time the processes' threads spent runnable but waiting for a CPU."""
    waited_ns = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            waited_ns += int((task / "schedstat").read_text().split()[1])
    return waited_ns / 1e9


def run_once(engine: str, args: argparse.Namespace, work: Path) -> dict[str, object]:
    with engine_nodes(engine, work, args.nodes) as cluster:
        env = {
            **os.environ,
            "KGO_SEEDS": cluster.bootstrap,
            "KGO_TEST_RF": str(min(3, args.nodes)),
            "KGO_TEST_STABLE_FETCH": "true",
            "KGO_TEST_RECORDS": str(args.records),
            "KGO_LOG_LEVEL": "none",
        }
        cpu, waited, load = cpu_seconds(cluster.pids), runqueue_seconds(cluster.pids), os.getloadavg()[0]
        started = time.monotonic()
        log = work / "kgo.log"
        with log.open("wb") as out:
            command = [str(args.binary), "-test.v", "-test.timeout=1800s", f"-test.run={args.run}"]
            subprocess.run(command, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
        return {
            "engine": engine,
            "seconds": round(time.monotonic() - started, 1),
            "load_before": round(load, 1),
            "load_after": round(os.getloadavg()[0], 1),
            "broker_cpu_seconds": round(cpu_seconds(cluster.pids) - cpu, 1),
            "broker_runqueue_seconds": round(runqueue_seconds(cluster.pids) - waited, 1),
            "tests": {
                name: (verdict, float(secs)) for verdict, name, secs in SUBTEST.findall(log.read_text())
            },
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--binary", type=Path, required=True, help="kgo's test binary (go test -c)")
    parser.add_argument("--run", default="TestGroupETL$", help="-test.run pattern")
    parser.add_argument("--records", type=int, default=500000, help="KGO_TEST_RECORDS (kgo's default 500000)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--nodes", type=int, choices=(1, 3), default=3, help="nodes per engine")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kgo-versus-") as base:
        for round_number in range(1, args.rounds + 1):
            for engine in (OURS, KAFKA):
                result = run_once(engine, args, Path(base) / f"{engine}-{round_number}")
                print(round_number, result, flush=True)


if __name__ == "__main__":
    main()
