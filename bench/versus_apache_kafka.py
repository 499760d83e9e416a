"""Our broker and Apache Kafka side by side, in one run, both on disk, measured by the same clients.

    .venv/bin/python bench/versus_apache_kafka.py --librdkafka DIR | --rdkafka-performance BINARY
        [--rounds 3] [--messages 300000] [--sizes 100,1024] [--latency-messages 3000]
        [--partitions-scale 10000] [--scale-messages 30000] [--nodes 1,3] [--kafka-heap 1g]

Both engines run at once (our broker: `python -m broker` processes; Apache Kafka: the jars scripts/bootstrap.sh
installs, heap as its kafka-server-start.sh sets it, 1 GB), first one node each, then three nodes each (every
node a KRaft broker and controller; topics RF 3, min.insync.replicas 2, acks=all; both with Kafka's default
heartbeat, session, election, replica lag and replica fetch timings). The machine is shared, so
every measurement is taken as a pair, our broker and Kafka back to back (which goes first alternates with the
round), and repeated `--rounds` times; the table shows medians and the 1-minute load average seen during the
pairs. Each run gets a fresh topic of one partition. Per message size:

  - produce with librdkafka's `rdkafka_performance` (examples/ of librdkafka: one C producer, linger.ms=5, its
    default batch.size of 1 MB) and with Kafka's `kafka-producer-perf-test` (ProducerPerformance, the Java
    client: linger.ms=5, batch.size=64 KB), acks=1 on one node, acks=all on three;
  - consume everything back with `rdkafka_performance -C` and with `kafka-consumer-perf-test`
    (ConsumerPerformance; its fetch rate, which leaves the group join out);
  - end-to-end latency p50/p99 with Kafka's EndToEndLatency tool (one record at a time, produce to fetch).

On three nodes with `--partitions-scale N` it then creates a topic of N partitions RF 3 on each engine (one
after the other) and times it until every partition's ISR is full in Metadata and until every replica's log is
on disk on every node, then produces `--scale-messages` 100 B records spread over all partitions, each record
to another partition (rdkafka_performance with sticky.partitioning.linger.ms=0, the Java producer with
RoundRobinPartitioner): without that both clients stick to one partition per batch.

Startup is until every node answers (and, for our three nodes, until every broker is registered); RSS is
each node's, read from /proc, idle after startup and after everything ran (the largest node is shown).
`rdkafka_performance` is built from a librdkafka source checkout that has been built (`./configure && make`):
`--librdkafka DIR` compiles DIR/examples/rdkafka_performance.c against DIR/src/librdkafka.so.
Prints each pair as it is measured, the side-by-side table at the end, then JSON lines with every sample.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from controlplane.apache_kafka import runtime
from tests.fixtures.apache_kafka import ApacheKafkaCluster, ApacheKafkaNode
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.cluster import LocalCluster, start_cluster

REPO_ROOT = Path(__file__).resolve().parents[1]
PRODUCER_PERF = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER_PERF = "org.apache.kafka.tools.ConsumerPerformance"
END_TO_END_LATENCY = "org.apache.kafka.tools.EndToEndLatency"
ROUND_ROBIN = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
TOOL_HEAP = "512m"
PARTITIONS_PER_OPERATION = 5_000
OURS = "streamhub"
KAFKA = "apache-kafka"
ENGINES = (OURS, KAFKA)
# The test fixtures give our cluster fast timings (250 ms heartbeats, followers out of the ISR after 5 s); on a loaded
# machine those alone make ISRs churn. Both engines get Apache Kafka's defaults instead.
KAFKA_DEFAULT_TIMINGS = {
    "broker.heartbeat.interval.ms": "2000",
    "broker.session.timeout.ms": "9000",
    "controller.quorum.election.timeout.ms": "1000",
    "replica.lag.time.max.ms": "30000",
    "replica.fetch.wait.max.ms": "500",
    "replica.fetch.backoff.ms": "1000",
}
# Which way is better, per reported number; the others are context.
HIGHER_IS_BETTER = {"msg_per_s", "mb_per_s"}
LOWER_IS_BETTER = {"p50_ms", "p99_ms", "seconds", "rss_mb", "failed", "errors"}


@dataclass
class Target:
    engine: str
    nodes: int
    bootstrap: str
    pids: list[int]
    log_dirs: list[Path]
    startup_seconds: float


@dataclass
class Samples:
    """Every sample of one measurement, per engine, and the load averages seen while they were taken."""

    nodes: int
    what: str
    headline: str
    runs: dict[str, list[dict[str, float]]] = field(
        default_factory=lambda: {engine: [] for engine in ENGINES}
    )
    loads: list[float] = field(default_factory=list)

    def total(self, key: str) -> float:
        """The sum of `key` over every sample of both engines (0 when none has it)."""
        return sum(run.get(key, 0.0) for runs in self.runs.values() for run in runs)

    def median(self, engine: str, key: str) -> float | None:
        values = [run[key] for run in self.runs[engine] if key in run]
        return statistics.median(values) if values else None


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def load_average() -> float:
    return os.getloadavg()[0]


@contextmanager
def streamhub(nodes: int, base: Path) -> Iterator[Target]:
    started = time.monotonic()
    if nodes == 1:
        broker = BrokerProcess(base / OURS, {"num.partitions": "1"})
        broker.start()
        assert broker.process is not None
        try:
            yield Target(
                OURS, 1, broker.bootstrap, [broker.process.pid], [broker.log_dir], time.monotonic() - started
            )
        finally:
            broker.kill9()
        return
    cluster: LocalCluster = start_cluster(base / OURS, size=nodes, properties=KAFKA_DEFAULT_TIMINGS)
    try:
        brokers = [node for node in cluster.brokers if node.process is not None]
        yield Target(
            OURS,
            nodes,
            cluster.bootstrap,
            [node.process.pid for node in brokers if node.process is not None],
            [node.data_dir / "logs" for node in brokers],
            time.monotonic() - started,
        )
    finally:
        cluster.stop()


@contextmanager
def apache_kafka(nodes: int, base: Path, heap: str) -> Iterator[Target]:
    started = time.monotonic()
    overrides = {"num.partitions": "1", "auto.create.topics.enable": "false"}
    if nodes == 1:
        node = ApacheKafkaNode(base / KAFKA, overrides, heap=heap)
        node.start()
        assert node.process is not None
        try:
            yield Target(
                KAFKA,
                1,
                node.bootstrap,
                [node.process.pid],
                [Path(node.properties["log.dirs"])],
                time.monotonic() - started,
            )
        finally:
            node.kill9()
        return
    cluster = ApacheKafkaCluster(base / KAFKA, nodes, {**overrides, "min.insync.replicas": "2"}, heap=heap)
    cluster.start()
    try:
        yield Target(
            KAFKA,
            nodes,
            cluster.bootstrap,
            [node.process.pid for node in cluster.nodes if node.process is not None],
            [Path(node.properties["log.dirs"]) for node in cluster.nodes],
            time.monotonic() - started,
        )
    finally:
        cluster.stop()


def create_topic(bootstrap: str, name: str, partitions: int, replication: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = {"min.insync.replicas": "2"} if replication >= 3 else {}
    admin.create_topics([NewTopic(name, partitions, replication, config=configs)], operation_timeout=300)[
        name
    ].result(600)


def isr_full(bootstrap: str, topic: str, replication: int) -> bool:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    metadata = admin.list_topics(topic, timeout=60).topics[topic]
    return (
        metadata.error is None
        and bool(metadata.partitions)
        and all(
            len(partition.isrs) == replication and partition.leader >= 0
            for partition in metadata.partitions.values()
        )
    )


def logs_on_disk(target: Target, topic: str) -> int:
    """The fewest log directories of `topic` any node has created so far."""
    counts = []
    for log_dir in target.log_dirs:
        with os.scandir(log_dir) as entries:
            counts.append(sum(1 for entry in entries if entry.name.rsplit("-", 1)[0] == topic))
    return min(counts)


def create_wide_topic(target: Target, topic: str, partitions: int, timeout: float = 1800) -> dict[str, float]:
    """Create `topic` (RF 3) and time it until every ISR is full and every replica's log is on disk.

    Apache Kafka's controller refuses an operation of more than 10,000 metadata records (POLICY_VIOLATION,
    "excessively large batch operation"): 10,000 partitions are created as a topic of at most 5,000, then
    added 5,000 at a time, the same steps on both engines."""
    started = time.monotonic()
    create_topic(target.bootstrap, topic, min(partitions, PARTITIONS_PER_OPERATION), 3)
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    for total in range(
        2 * PARTITIONS_PER_OPERATION, partitions + PARTITIONS_PER_OPERATION, PARTITIONS_PER_OPERATION
    ):
        grown = NewPartitions(topic, min(total, partitions))
        admin.create_partitions([grown], operation_timeout=300)[topic].result(600)
    created = time.monotonic() - started
    full = logs = None
    while full is None or logs is None:
        elapsed = time.monotonic() - started
        if elapsed > timeout:
            raise TimeoutError(f"{target.engine}: {topic} not fully replicated after {timeout} s")
        if full is None and isr_full(target.bootstrap, topic, 3):
            full = time.monotonic() - started
        if logs is None and logs_on_disk(target, topic) >= partitions:
            logs = time.monotonic() - started
        time.sleep(0.5)
    return {"create_s": created, "isr_full_s": full, "logs_on_disk_s": logs}


def rdkafka_performance_binary(librdkafka: Path, out: Path) -> str:
    """Compile librdkafka's own rdkafka_performance example against that checkout's built library."""
    library = librdkafka / "src"
    if not (library / "librdkafka.so").exists() or not (librdkafka / "config.h").exists():
        raise SystemExit(f"{librdkafka}: not a built librdkafka checkout (run ./configure && make there)")
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "gcc",
            "-O2",
            f"-I{librdkafka}",
            f"-I{library}",
            "-o",
            str(out),
            str(librdkafka / "examples" / "rdkafka_performance.c"),
            f"-L{library}",
            "-lrdkafka",
            "-lm",
            "-lpthread",
            f"-Wl,-rpath,{library}",
        ],
        check=True,
        capture_output=True,
    )
    return str(out)


PRODUCED = re.compile(
    r"% (\d+) messages produced \((\d+) bytes\), (\d+) delivered \(offset -?\d+, (\d+) failed\) "
    r"in (\d+)ms: (\d+) msgs/s and ([\d.]+) MB/s"
)
CONSUMED = re.compile(r"% (\d+) messages \((\d+) bytes\) consumed in (\d+)ms: (\d+) msgs/s \(([\d.]+) MB/s\)")


def parse_rdkafka_produced(output: str) -> dict[str, float]:
    """rdkafka_performance -P prints its summary again at every interval: the last one is the total."""
    found = PRODUCED.findall(output)
    if not found:
        raise RuntimeError(f"unexpected rdkafka_performance output: {output[-800:]}")
    _, _, delivered, failed, _, msg_per_s, mb_per_s = found[-1]
    # Records that failed (timed out) count against the rate: it is of the delivered ones.
    return {
        "msg_per_s": float(msg_per_s),
        "mb_per_s": float(mb_per_s),
        "messages": float(delivered),
        "failed": float(failed),
    }


def parse_rdkafka_consumed(output: str) -> dict[str, float]:
    found = CONSUMED.findall(output)
    if not found:
        raise RuntimeError(f"unexpected rdkafka_performance output: {output[-800:]}")
    messages, _, _, msg_per_s, mb_per_s = found[-1]
    return {"msg_per_s": float(msg_per_s), "mb_per_s": float(mb_per_s), "messages": float(messages)}


def parse_producer_perf(output: str) -> dict[str, float]:
    final = output.strip().splitlines()[-1]
    numbers = re.match(
        r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms "
        r"max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th",
        final,
    )
    if numbers is None:
        raise RuntimeError(f"unexpected ProducerPerformance output: {final}")
    sent, msg_per_s, mb_per_s, _, _, p50, _, p99 = (float(value) for value in numbers.groups())
    return {"msg_per_s": msg_per_s, "mb_per_s": mb_per_s, "messages": sent, "p50_ms": p50, "p99_ms": p99}


def parse_consumer_perf(output: str) -> dict[str, float]:
    # start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
    # rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    fields = output.strip().splitlines()[-1].split(", ")
    if len(fields) < 10:
        raise RuntimeError(f"unexpected ConsumerPerformance output: {output[-500:]}")
    return {
        "msg_per_s": float(fields[9]),
        "mb_per_s": float(fields[8]),
        "messages": float(fields[4]),
        "rebalance_ms": float(fields[6]),
    }


def parse_end_to_end(output: str) -> dict[str, float]:
    percentiles = re.search(r"50th = ([\d.]+), 99th = ([\d.]+), 99.9th = ([\d.]+)", output)
    average = re.search(r"Avg latency: ([\d.]+) ms", output)
    if percentiles is None or average is None:
        raise RuntimeError(f"unexpected EndToEndLatency output: {output[-500:]}")
    p50, p99, p999 = (float(value) for value in percentiles.groups())
    return {"avg_ms": float(average.group(1)), "p50_ms": p50, "p99_ms": p99, "p999_ms": p999}


def run(command: list[str], timeout: float = 900, *, check: bool = True) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise RuntimeError(
            f"{command[0]} … {command[-1]} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return done.stdout


def kafka_tool(main_class: str, *args: str) -> str:
    return run(runtime.installation().command(main_class, *args, heap=TOOL_HEAP))


def rdkafka_produce(binary: str, target: Target, topic: str, messages: int, size: int, acks: str) -> dict:
    spread = ["-X", "sticky.partitioning.linger.ms=0"]
    # It exits with 1 when a record failed: its summary still counts them (and a missing one raises).
    return parse_rdkafka_produced(
        run(
            [
                *(binary, "-P", "-b", target.bootstrap, "-t", topic, "-c", str(messages), "-s", str(size)),
                *("-a", "-1" if acks == "all" else acks, "-X", "linger.ms=5", "-i", "600000", *spread),
            ],
            check=False,
        )
    )


def rdkafka_consume(binary: str, target: Target, topic: str, messages: int) -> dict:
    return parse_rdkafka_consumed(
        run(
            [
                *(binary, "-C", "-b", target.bootstrap, "-t", topic, "-p", "0", "-o", "beginning"),
                *("-c", str(messages), "-i", "600000"),
            ]
        )
    )


def producer_perf(target: Target, topic: str, messages: int, size: int, acks: str, *props: str) -> dict:
    return parse_producer_perf(
        kafka_tool(
            PRODUCER_PERF,
            *("--bootstrap-server", target.bootstrap, "--topic", topic, "--num-records", str(messages)),
            *("--record-size", str(size), "--throughput", "-1", "--reporting-interval", "600000"),
            *("--command-property", f"acks={acks}", "linger.ms=5", "batch.size=65536", *props),
        )
    )


def consumer_perf(target: Target, topic: str, messages: int) -> dict:
    return parse_consumer_perf(
        kafka_tool(
            CONSUMER_PERF,
            *("--bootstrap-server", target.bootstrap, "--topic", topic, "--num-records", str(messages)),
            *("--timeout", "60000", "--hide-header"),
        )
    )


def end_to_end_latency(target: Target, topic: str, messages: int, acks: str, size: int) -> dict:
    return parse_end_to_end(
        kafka_tool(END_TO_END_LATENCY, target.bootstrap, topic, str(messages), acks, str(size))
    )


class Bench:
    def __init__(self, args: argparse.Namespace, binary: str) -> None:
        self.args = args
        self.binary = binary
        self.table: dict[tuple[int, str], Samples] = {}

    def record(
        self, target: Target, what: str, headline: str, numbers: dict[str, float], load: float
    ) -> None:
        samples = self.table.setdefault((target.nodes, what), Samples(target.nodes, what, headline))
        samples.runs[target.engine].append(numbers)
        samples.loads.append(load)
        shown = ", ".join(f"{key} {value:,.1f}" for key, value in numbers.items())
        print(f"  {target.engine:>12} | {target.nodes} | {what} | {shown} | load {load:.1f}", flush=True)

    def pairs(
        self,
        targets: dict[str, Target],
        what: str,
        headline: str,
        measure: Callable[[Target], dict[str, float]],
    ) -> None:
        """`--rounds` pairs of `measure`, our broker and Kafka back to back, alternating which goes first."""
        for round_number in range(self.args.rounds):
            order = ENGINES if round_number % 2 == 0 else ENGINES[::-1]
            for engine in order:
                load = load_average()
                try:
                    numbers = measure(targets[engine])
                except (RuntimeError, TimeoutError, subprocess.TimeoutExpired, KafkaException) as failure:
                    print(f"  {engine} | {what} | FAILED: {failure}", flush=True)
                    numbers = {"errors": 1.0}
                self.record(targets[engine], what, headline, numbers, load)

    def measure(self, targets: dict[str, Target]) -> None:
        nodes = targets[OURS].nodes
        replication = min(3, nodes)
        acks = "all" if nodes >= 3 else "1"
        messages = self.args.messages

        def fresh_topic(target: Target, prefix: str) -> str:
            topic = f"{prefix}-{time.monotonic_ns()}"
            create_topic(target.bootstrap, topic, 1, replication)
            return topic

        for size in self.args.sizes:

            def rdkafka(target: Target, size: int = size) -> dict[str, float]:
                topic = fresh_topic(target, "rdkafka")
                produced = rdkafka_produce(self.binary, target, topic, messages, size, acks)
                consumed = rdkafka_consume(self.binary, target, topic, messages)
                return {**produced, **{f"consume_{key}": value for key, value in consumed.items()}}

            def java(target: Target, size: int = size) -> dict[str, float]:
                topic = fresh_topic(target, "java")
                produced = producer_perf(target, topic, messages, size, acks)
                consumed = consumer_perf(target, topic, messages)
                return {**produced, **{f"consume_{key}": value for key, value in consumed.items()}}

            def latency(target: Target, size: int = size) -> dict[str, float]:
                topic = fresh_topic(target, "latency")
                return end_to_end_latency(target, topic, self.args.latency_messages, acks, size)

            self.pairs(
                targets, f"produce+consume {size} B acks={acks} (rdkafka_performance)", "msg_per_s", rdkafka
            )
            self.pairs(targets, f"produce+consume {size} B acks={acks} (Java perf tools)", "msg_per_s", java)
            self.pairs(
                targets, f"end-to-end latency {size} B acks={acks} (EndToEndLatency)", "p99_ms", latency
            )

    def scale(self, targets: dict[str, Target]) -> None:
        partitions = self.args.partitions_scale
        topic = f"wide-{partitions}"
        for engine in ENGINES:
            load = load_average()
            try:
                timings = create_wide_topic(targets[engine], topic, partitions)
            except (TimeoutError, KafkaException) as failure:
                print(f"  {engine} | creating {topic} | FAILED: {failure}", flush=True)
                timings = {"errors": 1.0}
            self.record(targets[engine], f"create {partitions} partitions RF 3", "isr_full_s", timings, load)

        def spread_rdkafka(target: Target) -> dict[str, float]:
            return rdkafka_produce(self.binary, target, topic, self.args.scale_messages, 100, "all")

        def spread_java(target: Target) -> dict[str, float]:
            return producer_perf(
                target, topic, self.args.scale_messages, 100, "all", f"partitioner.class={ROUND_ROBIN}"
            )

        label = f"produce 100 B acks=all spread over {partitions} partitions"
        self.pairs(targets, f"{label} (rdkafka_performance)", "msg_per_s", spread_rdkafka)
        self.pairs(targets, f"{label} (Java perf tools)", "msg_per_s", spread_java)

    def print_table(self) -> None:
        print(
            "\n| nodes | measurement | Apache Kafka | ours | ours / Kafka | goal | load |\n"
            "|---|---|---|---|---|---|---|"
        )
        for samples in self.table.values():
            keys = [samples.headline] + [
                key
                for key in (
                    "consume_msg_per_s",
                    "mb_per_s",
                    "p50_ms",
                    "p99_ms",
                    "logs_on_disk_s",
                    "failed",
                    "errors",
                )
                if key != samples.headline and samples.total(key)
            ]
            for key in keys:
                kafka, ours = samples.median(KAFKA, key), samples.median(OURS, key)
                if key in ("failed", "errors"):
                    # Not medians: how many in all the rounds.
                    kafka = sum(run.get(key, 0.0) for run in samples.runs[KAFKA])
                    ours = sum(run.get(key, 0.0) for run in samples.runs[OURS])
                if kafka is None or ours is None:
                    continue
                ratio = ours / kafka if kafka else float("inf")
                bare = key.removeprefix("consume_")
                if bare in HIGHER_IS_BETTER:
                    goal = "met" if ours >= kafka else "NOT met"
                elif bare in LOWER_IS_BETTER or key.endswith("_s"):
                    goal = "met" if ours <= kafka else "NOT met"
                else:
                    goal = ""
                loads = f"{min(samples.loads):.1f}-{max(samples.loads):.1f}"
                rounds = len(samples.runs[OURS])
                what = f"{samples.what}: {key}" + (f" (median of {rounds})" if rounds > 1 else "")
                print(
                    f"| {samples.nodes} | {what} | {kafka:,.1f} | {ours:,.1f} | {ratio:.2f} | {goal} | {loads} |"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    tool = parser.add_mutually_exclusive_group(required=True)
    tool.add_argument(
        "--librdkafka", type=Path, help="a built librdkafka checkout: compiles rdkafka_performance"
    )
    tool.add_argument("--rdkafka-performance", help="an rdkafka_performance binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--messages", type=int, default=300_000)
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(s) for s in text.split(",") if s],
        default=[100, 1024],
        help="'': none",
    )
    parser.add_argument("--nodes", type=lambda text: [int(s) for s in text.split(",")], default=[1, 3])
    parser.add_argument("--latency-messages", type=int, default=3000)
    parser.add_argument("--partitions-scale", type=int, default=10_000, help="0: skip")
    parser.add_argument("--scale-messages", type=int, default=30_000)
    parser.add_argument(
        "--kafka-heap", default="1g", help="Apache Kafka's -Xms/-Xmx (kafka-server-start.sh: 1g)"
    )
    args = parser.parse_args()
    binary = args.rdkafka_performance or rdkafka_performance_binary(
        args.librdkafka, REPO_ROOT / "var" / "bench" / "rdkafka_performance"
    )
    commit = run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"]).strip()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}, {os.cpu_count()} cores, "
        f"Apache Kafka {runtime.installation().version}, args {vars(args)}"
    )
    bench = Bench(args, binary)
    for nodes in args.nodes:
        with ExitStack() as stack:
            targets: dict[str, Target] = {}
            for engine in ENGINES:
                base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"versus-{engine}-")))
                load = load_average()
                start = (
                    streamhub(nodes, base) if engine == OURS else apache_kafka(nodes, base, args.kafka_heap)
                )
                target = stack.enter_context(start)
                targets[engine] = target
                bench.record(
                    target,
                    "startup until every node answers",
                    "seconds",
                    {"seconds": target.startup_seconds},
                    load,
                )
            time.sleep(5)
            for target in targets.values():
                rss = {"rss_mb": max(rss_mb(pid) for pid in target.pids)}
                bench.record(
                    target, "RSS of the largest node, idle after startup", "rss_mb", rss, load_average()
                )
            bench.measure(targets)
            if nodes >= 3 and args.partitions_scale:
                bench.scale(targets)
            for target in targets.values():
                rss = {"rss_mb": max(rss_mb(pid) for pid in target.pids)}
                bench.record(target, "RSS of the largest node, after the runs", "rss_mb", rss, load_average())
    bench.print_table()
    for samples in bench.table.values():
        for engine, runs in samples.runs.items():
            for numbers in runs:
                print(json.dumps({"engine": engine, "nodes": samples.nodes, "what": samples.what, **numbers}))


if __name__ == "__main__":
    main()
