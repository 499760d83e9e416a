"""Produce throughput with replication: 3 local brokers, RF 3, acks=all, next to a single broker.

    .venv/bin/python bench/replicated_produce.py [--messages 500000] [--sizes 100,1024] [--partitions 1]
                                                 [--acks 1,all]
                                                 [--paced-rate 1000] [--paced-seconds 10]

Saturated throughput comes from the librdkafka C load generator of bench/broker_throughput (one producer
thread, linger.ms=5, as many records in flight as librdkafka allows), so its latency percentiles are
queueing in the client. The paced run produces `--paced-rate` records/s with confluent-kafka for
`--paced-seconds` and reports the latency of each acknowledgement: what acks=all costs at moderate load.
Runs, per message size: one broker (topic RF 1) with acks=1 and acks=all, then a 3-broker cluster (topic
RF 3, min.insync.replicas 2) with acks=1 and acks=all. Broker CPU is summed over all broker processes.

Measured on the shared 2-core box at load average 12-15 (other test suites writing to the same disk), 300 k
records, one partition, ranges over two to three runs (msg/s, MB/s, saturated p99; paced p50/p99 in ms):

| setup | acks | 100 B | 1 KiB |
|---|---|---|---|
| 1 broker, RF 1 | 1 | 381-500 k/s, 38-50 MB/s, p99 273-438 ms; paced 4.4-5.4/24-30 | 41-149 k/s, 42-153 MB/s, p99 1.5-5.5 s |
| 1 broker, RF 1 | all | 230-330 k/s, 23-33 MB/s, p99 268-575 ms; paced 4.6-5.6/13-36 | 69-155 k/s, 70-159 MB/s, p99 1.6-4.0 s |
| 3 brokers, RF 3 | 1 | 245-371 k/s, 25-37 MB/s, p99 534-863 ms; paced 4.8/61-159 | 99-128 k/s, 101-132 MB/s, p99 1.8-2.2 s |
| 3 brokers, RF 3 | all | 133-237 k/s, 13-24 MB/s, p99 684-1548 ms; paced 6.7-7.6/914-999 | 15-33 k/s, 15-34 MB/s, p99 8.7-19.5 s |

Quiet box (load < 3), 300 k records, one partition: 100 B — 1 broker acks=all 1.57 M msg/s (157 MB/s, p99 118 ms,
paced 3.6/8.4 ms), 3 brokers RF 3 acks=all 1.05 M msg/s (105 MB/s, p99 194 ms, paced 4.7/14.5 ms); 1 KiB — 1 broker
acks=all 407 k msg/s (416 MB/s, p99 553 ms), 3 brokers RF 3 acks=all 134 k msg/s (137 MB/s, p99 2.1 s).

At 1 KiB with acks=all the three brokers write three times the bytes to one disk: py-spy shows the followers
blocked in `os.write` (LogSegment.append) under dirty-page writeback, and acks=all waits for the slowest one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from bench.broker_throughput.__main__ import (
    build_native_loadgen,
    cpu_seconds,
    free_port,
    start_broker,
    wait_until_serving,
)
from tests.fixtures.cluster import start_cluster


@dataclass
class Target:
    """Where to produce: a bootstrap list, the broker processes to charge CPU to, the topic's RF."""

    name: str
    bootstrap: str
    pids: list[int]
    replication_factor: int


def create_topic(target: Target, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, target.replication_factor)])[topic].result(30)


def broker_cpu(target: Target) -> float:
    return sum(cpu_seconds(pid) for pid in target.pids)


def saturated(
    loadgen: str, target: Target, topic: str, size: int, messages: int, acks: str
) -> dict[str, float]:
    before = broker_cpu(target)
    done = subprocess.run(
        [
            loadgen,
            "produce",
            "-b",
            target.bootstrap,
            "-t",
            topic,
            "-n",
            str(messages),
            "-s",
            str(size),
            "-l",
            "5",
            "-a",
            acks,
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    if not done.stdout.strip():
        raise RuntimeError(f"load generator failed: {done.stderr}")
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    outcome["broker_cpu_us"] = (broker_cpu(target) - before) / max(outcome["messages"], 1) * 1e6
    return outcome


def paced(target: Target, topic: str, size: int, acks: str, rate: float, seconds: float) -> dict[str, float]:
    producer = Producer({"bootstrap.servers": target.bootstrap, "acks": acks, "linger.ms": "5"})
    latencies: list[float] = []
    failed = 0

    def delivered(sent_at: float, error: KafkaError | None, _message: Message) -> None:
        nonlocal failed
        if error is not None:
            failed += 1
        else:
            latencies.append((time.perf_counter() - sent_at) * 1000)

    payload = b"p" * size
    started = time.perf_counter()
    sent = 0
    while time.perf_counter() - started < seconds:
        due = int((time.perf_counter() - started) * rate) - sent
        for _ in range(due):
            now = time.perf_counter()
            producer.produce(topic, payload, on_delivery=lambda e, m, t=now: delivered(t, e, m))
            sent += 1
        producer.poll(0.001)
    producer.flush(60)
    latencies.sort()
    return {
        "messages": len(latencies),
        "failed": failed,
        "p50_ms": statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": latencies[int(len(latencies) * 0.99)] if latencies else float("nan"),
    }


def measure(loadgen: str, target: Target, args: argparse.Namespace) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for size in args.sizes:
        for acks in args.acks:
            topic = f"bench-{size}-{acks}-{time.monotonic_ns()}"
            create_topic(target, topic, args.partitions)
            full = saturated(loadgen, target, topic, size, args.messages, acks)
            slow = paced(target, topic, size, acks, args.paced_rate, args.paced_seconds)
            row = {
                "setup": target.name,
                "acks": acks,
                "size": size,
                "msg_per_s": full["msg_per_s"],
                "mb_per_s": full["mb_per_s"],
                "p50_ms": full["p50_ms"],
                "p99_ms": full["p99_ms"],
                "failed": full["failed"] + slow["failed"],
                "broker_cpu_us": full["broker_cpu_us"],
                "paced_p50_ms": slow["p50_ms"],
                "paced_p99_ms": slow["p99_ms"],
            }
            print_row(row)
            rows.append(row)
    return rows


HEADER = (
    f"{'setup':<22} {'acks':>4} {'size':>5} {'msg/s':>10} {'MB/s':>7} {'p50 ms':>8} {'p99 ms':>8} "
    f"{'CPU µs/msg':>10} {'paced p50':>9} {'paced p99':>9} {'failed':>6}"
)


def print_row(row: dict[str, object]) -> None:
    print(
        f"{row['setup']:<22} {row['acks']:>4} {row['size']:>5} {row['msg_per_s']:>10,.0f} {row['mb_per_s']:>7.1f} "
        f"{row['p50_ms']:>8.1f} {row['p99_ms']:>8.1f} {row['broker_cpu_us']:>10.2f} "
        f"{row['paced_p50_ms']:>9.2f} {row['paced_p99_ms']:>9.2f} {row['failed']:>6}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--sizes", type=lambda text: [int(s) for s in text.split(",")], default=[100, 1024])
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--acks", type=lambda text: text.split(","), default=["1", "all"])
    parser.add_argument("--paced-rate", type=float, default=1000.0)
    parser.add_argument("--paced-seconds", type=float, default=10.0)
    args = parser.parse_args()
    loadgen = build_native_loadgen()
    base = Path(tempfile.mkdtemp(prefix="replicated-produce-"))
    print(HEADER)
    rows: list[dict[str, object]] = []
    port = free_port()
    single = start_broker(base / "single", port, None)
    try:
        wait_until_serving(port)
        rows += measure(loadgen, Target("1 broker, RF 1", f"127.0.0.1:{port}", [single.pid], 1), args)
    finally:
        single.terminate()
        single.wait(60)
    cluster = start_cluster(base / "cluster", 3)
    try:
        pids = [node.process.pid for node in cluster.brokers if node.process is not None]
        target = Target("3 brokers, RF 3, mISR 2", cluster.bootstrap, pids, 3)
        rows += measure(loadgen, target, args)
    finally:
        cluster.stop()
    shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
