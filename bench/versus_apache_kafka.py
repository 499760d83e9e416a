"""Our broker and Apache Kafka side by side, in one run, both on disk, measured by the same clients.

    .venv/bin/python bench/versus_apache_kafka.py [--messages 500000] [--sizes 100,1024] [--nodes 1,3]
                                                  [--latency-messages 5000] [--partitions-scale 10000]
                                                  [--only streamhub|apache-kafka]

For each engine (our broker: `python -m broker` processes; Apache Kafka: the jars scripts/bootstrap.sh installs)
and each cluster size it starts the nodes (timing how long until every node answers, and their RSS once idle),
then per message size:
  - produce with the librdkafka load generator of bench/loadgen (our rdkafka_performance: one C client thread,
    linger.ms=5) and with Kafka's own `kafka-producer-perf-test` (ProducerPerformance, the Java client), acks=1
    on one node and acks=all on three nodes (topic RF 3, min.insync.replicas 2);
  - consume everything back with the load generator and with `kafka-consumer-perf-test` (ConsumerPerformance);
  - end-to-end latency p50/p99/p99.9 with Kafka's EndToEndLatency tool (one record at a time, produce to fetch).
With `--partitions-scale N` (three nodes only) it also creates a topic of N partitions RF 3, times until every
partition's ISR is full, and produces spread over all of them with the load generator.
RSS is read from /proc after the runs (the JVM's heap is sized as the fixture sizes it: 384 MB, G1).
Prints one table row per measurement and, at the end, JSON lines with everything.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka.admin import AdminClient, NewTopic

from bench.broker_throughput.__main__ import build_native_loadgen
from controlplane.apache_kafka import runtime
from tests.fixtures.apache_kafka import ApacheKafkaCluster, ApacheKafkaNode
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.cluster import LocalCluster, start_cluster

PRODUCER_PERF = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER_PERF = "org.apache.kafka.tools.ConsumerPerformance"
END_TO_END_LATENCY = "org.apache.kafka.tools.EndToEndLatency"
TOOL_HEAP = "512m"


@dataclass
class Target:
    engine: str
    nodes: int
    bootstrap: str
    pids: list[int]
    startup_seconds: float


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextmanager
def streamhub(nodes: int, base: Path) -> Iterator[Target]:
    started = time.monotonic()
    if nodes == 1:
        broker = BrokerProcess(base / "streamhub", {"num.partitions": "1"})
        broker.start()
        assert broker.process is not None
        try:
            yield Target("streamhub", 1, broker.bootstrap, [broker.process.pid], time.monotonic() - started)
        finally:
            broker.kill9()
        return
    cluster: LocalCluster = start_cluster(base / "streamhub", size=nodes)
    try:
        pids = [node.process.pid for node in cluster.brokers() if node.process is not None]
        yield Target("streamhub", nodes, cluster.bootstrap, pids, time.monotonic() - started)
    finally:
        cluster.stop()


@contextmanager
def apache_kafka(nodes: int, base: Path) -> Iterator[Target]:
    started = time.monotonic()
    overrides = {"num.partitions": "1", "auto.create.topics.enable": "false"}
    if nodes == 1:
        node = ApacheKafkaNode(base / "apache-kafka", overrides)
        node.start()
        assert node.process is not None
        try:
            yield Target("apache-kafka", 1, node.bootstrap, [node.process.pid], time.monotonic() - started)
        finally:
            node.kill9()
        return
    cluster = ApacheKafkaCluster(base / "apache-kafka", nodes, {**overrides, "min.insync.replicas": "2"})
    cluster.start()
    try:
        pids = [node.process.pid for node in cluster.nodes if node.process is not None]
        yield Target("apache-kafka", nodes, cluster.bootstrap, pids, time.monotonic() - started)
    finally:
        cluster.stop()


def create_topic(bootstrap: str, name: str, partitions: int, replication: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = {"min.insync.replicas": "2"} if replication >= 3 else {}
    admin.create_topics([NewTopic(name, partitions, replication, config=configs)])[name].result(120)


def wait_isr_full(bootstrap: str, topic: str, replication: int, timeout: float) -> float:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        metadata = admin.list_topics(topic, timeout=30).topics[topic]
        if (
            metadata.error is None
            and metadata.partitions
            and all(
                len(partition.isrs) == replication and partition.leader >= 0
                for partition in metadata.partitions.values()
            )
        ):
            return time.monotonic() - started
        time.sleep(0.5)
    raise TimeoutError(f"{topic}: ISRs not full after {timeout}s")


def loadgen(binary: str, mode: str, target: Target, topic: str, messages: int, size: int, acks: str) -> dict:
    args = [binary, mode, "-b", target.bootstrap, "-t", topic, "-n", str(messages)]
    args += ["-s", str(size), "-a", acks, "-l", "5"] if mode == "produce" else []
    done = subprocess.run(args, check=True, capture_output=True, text=True, timeout=900)
    return json.loads(done.stdout.strip().splitlines()[-1])


def kafka_tool(main_class: str, *args: str, timeout: float = 900) -> str:
    command = runtime.installation().command(main_class, *args, heap=TOOL_HEAP)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(
            f"{main_class} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return done.stdout


def producer_perf(target: Target, topic: str, messages: int, size: int, acks: str) -> dict:
    output = kafka_tool(
        PRODUCER_PERF,
        *("--topic", topic, "--num-records", str(messages), "--record-size", str(size), "--throughput", "-1"),
        *("--producer-props", f"bootstrap.servers={target.bootstrap}", f"acks={acks}", "linger.ms=5"),
        "batch.size=65536",
    )
    final = output.strip().splitlines()[-1]
    numbers = re.match(
        r"\d+ records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max "
        r"latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th",
        final,
    )
    if numbers is None:
        raise RuntimeError(f"unexpected ProducerPerformance output: {final}")
    msg_per_s, mb_per_s, _, _, p50, _, p99 = (float(value) for value in numbers.groups())
    return {"msg_per_s": msg_per_s, "mb_per_s": mb_per_s, "p50_ms": p50, "p99_ms": p99}


def consumer_perf(target: Target, topic: str, messages: int) -> dict:
    output = kafka_tool(
        CONSUMER_PERF,
        *("--bootstrap-server", target.bootstrap, "--topic", topic, "--messages", str(messages)),
        *("--timeout", "60000", "--hide-header"),
    )
    fields = output.strip().splitlines()[-1].split(",")
    # start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ...
    return {"mb_per_s": float(fields[3]), "msg_per_s": float(fields[5]), "messages": int(fields[4])}


def end_to_end_latency(target: Target, topic: str, messages: int, acks: str, size: int) -> dict:
    output = kafka_tool(END_TO_END_LATENCY, target.bootstrap, topic, str(messages), acks, str(size))
    percentiles = re.search(r"50th = ([\d.]+), 99th = ([\d.]+), 99.9th = ([\d.]+)", output)
    average = re.search(r"Avg latency: ([\d.]+) ms", output)
    if percentiles is None or average is None:
        raise RuntimeError(f"unexpected EndToEndLatency output: {output[-500:]}")
    p50, p99, p999 = (float(value) for value in percentiles.groups())
    return {"avg_ms": float(average.group(1)), "p50_ms": p50, "p99_ms": p99, "p999_ms": p999}


def measure(target: Target, args: argparse.Namespace, binary: str, report: Callable[..., None]) -> None:
    replication = min(3, target.nodes)
    acks = "all" if target.nodes >= 3 else "1"
    for size in args.sizes:
        for client in ("loadgen", "java"):
            topic = f"perf-{client}-{size}-{time.monotonic_ns()}"
            create_topic(target.bootstrap, topic, 1, replication)
            if client == "loadgen":
                produced = loadgen(binary, "produce", target, topic, args.messages, size, acks)
                consumed = loadgen(binary, "consume", target, topic, args.messages, size, acks)
            else:
                produced = producer_perf(target, topic, args.messages, size, acks)
                consumed = consumer_perf(target, topic, args.messages)
            report(target, f"produce {size} B acks={acks} ({client})", produced)
            report(target, f"consume {size} B ({client})", consumed)
        topic = f"latency-{size}-{time.monotonic_ns()}"
        create_topic(target.bootstrap, topic, 1, replication)
        report(
            target,
            f"end-to-end latency {size} B acks={acks}",
            end_to_end_latency(target, topic, args.latency_messages, acks, size),
        )
    if target.nodes >= 3 and args.partitions_scale:
        topic = f"scale-{time.monotonic_ns()}"
        started = time.monotonic()
        create_topic(target.bootstrap, topic, args.partitions_scale, 3)
        isr_full = wait_isr_full(target.bootstrap, topic, 3, timeout=1800)
        report(
            target,
            f"create {args.partitions_scale} partitions RF 3 until every ISR is full",
            {"seconds": time.monotonic() - started, "isr_wait_seconds": isr_full},
        )
        spread = loadgen(binary, "produce", target, topic, args.messages, 100, "all")
        report(target, f"produce 100 B acks=all over {args.partitions_scale} partitions (loadgen)", spread)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--sizes", type=lambda text: [int(s) for s in text.split(",")], default=[100, 1024])
    parser.add_argument("--nodes", type=lambda text: [int(s) for s in text.split(",")], default=[1, 3])
    parser.add_argument("--latency-messages", type=int, default=5000)
    parser.add_argument("--partitions-scale", type=int, default=0)
    parser.add_argument("--only", choices=["streamhub", "apache-kafka"])
    args = parser.parse_args()
    binary = build_native_loadgen()
    results: list[dict] = []

    def report(target: Target, what: str, numbers: dict) -> None:
        row = {"engine": target.engine, "nodes": target.nodes, "what": what, **numbers}
        results.append(row)
        shown = ", ".join(
            f"{key} {value:,.1f}" if isinstance(value, float) else f"{key} {value}"
            for key, value in numbers.items()
            if key
            in {
                "msg_per_s",
                "mb_per_s",
                "p50_ms",
                "p99_ms",
                "p999_ms",
                "seconds",
                "rss_mb",
                "startup_seconds",
            }
        )
        print(f"| {target.engine} | {target.nodes} | {what} | {shown} |", flush=True)

    engines = {"streamhub": streamhub, "apache-kafka": apache_kafka}
    print("| engine | nodes | measurement | numbers |\n|---|---|---|---|")
    for nodes in args.nodes:
        for engine, start in engines.items():
            if args.only and engine != args.only:
                continue
            with (
                tempfile.TemporaryDirectory(prefix=f"versus-{engine}-") as base,
                start(nodes, Path(base)) as target,
            ):
                report(
                    target, "startup until every node answers", {"startup_seconds": target.startup_seconds}
                )
                time.sleep(2)
                report(target, "RSS per node, idle", {"rss_mb": max(rss_mb(pid) for pid in target.pids)})
                measure(target, args, binary, report)
                report(
                    target,
                    "RSS per node, after the runs",
                    {"rss_mb": max(rss_mb(pid) for pid in target.pids)},
                )
    for row in results:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
