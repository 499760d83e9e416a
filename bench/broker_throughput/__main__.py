"""Produce then consume through a real broker process and print comparable numbers.

    python -m bench.broker_throughput [--messages 2000000] [--client native|python] [--sizes 100,1024]
                                      [--partitions 1] [--secure | --compare]

Starts `python -m broker` on a free port with a temporary data directory, produces to one topic
(linger.ms=5, acks=1), then consumes everything back, and prints msg/s, MB/s, produce latency
percentiles and the broker's own CPU time per message, per message size. The default client is
the librdkafka C load generator in bench/loadgen (built on first use), so the client is not the
bottleneck; --client python uses confluent-kafka producer/consumer processes instead.
With --profile the broker runs under cProfile and the top functions are printed.
With --secure every client authenticates with SASL/SCRAM-SHA-512 on a SASL_PLAINTEXT
listener as a user that is not a super user, with ACLs on, so every request is authorized;
--compare runs the plain and the secure broker one after the other and prints the ratio.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import pstats
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_serving(port: int, timeout: float = 30) -> None:
    request = struct.pack(">hhih", 18, 0, 1, -1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(struct.pack(">i", len(request)) + request)
                if len(sock.recv(8)) == 8:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("broker did not start")


BENCH_USER, BENCH_PASSWORD = "bench", "bench-secret"
ADMIN_USER, ADMIN_PASSWORD = "admin", "admin-secret"
SECURE_BROKER_PROPERTIES = [
    "authorizer.class.name=acl",
    f"super.users=User:{ADMIN_USER}",
    f"sasl.bootstrap.users={ADMIN_USER}:SCRAM-SHA-512:{ADMIN_PASSWORD};{BENCH_USER}:SCRAM-SHA-512:{BENCH_PASSWORD}",
]


def sasl_client_config(bootstrap: str, user: str, password: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": user,
        "sasl.password": password,
    }


def grant_bench_user(bootstrap: str) -> None:
    """The bench user may create topics and use topics and groups named bench-*."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    principal = f"User:{BENCH_USER}"
    allow = AclPermissionType.ALLOW
    prefixed = ResourcePatternType.PREFIXED
    bindings = [
        AclBinding(
            ResourceType.BROKER,
            "kafka-cluster",
            ResourcePatternType.LITERAL,
            principal,
            "*",
            AclOperation.CREATE,
            allow,
        ),
        AclBinding(ResourceType.TOPIC, "bench-", prefixed, principal, "*", AclOperation.ALL, allow),
        AclBinding(ResourceType.GROUP, "bench-", prefixed, principal, "*", AclOperation.READ, allow),
    ]
    admin = AdminClient(sasl_client_config(bootstrap, ADMIN_USER, ADMIN_PASSWORD))
    for future in admin.create_acls(bindings).values():
        future.result(30)


def start_broker(
    data_dir: Path, port: int, profile_path: Path | None, secure: bool = False, root: Path = REPO_ROOT
) -> subprocess.Popen[bytes]:
    """`python -m broker` of the checkout `root` (this one unless told otherwise)."""
    command = [sys.executable]
    if profile_path is not None:
        command += ["-m", "cProfile", "-o", str(profile_path)]
    command += [
        "-m",
        "broker",
        "--override",
        f"listeners={'SASL_PLAINTEXT' if secure else 'PLAINTEXT'}://127.0.0.1:{port}",
        "--override",
        f"log.dirs={data_dir}",
        "--override",
        "offsets.topic.num.partitions=1",
        "--override",
        "group.initial.rebalance.delay.ms=0",
        "--log-level",
        "WARNING",
    ]
    for prop in SECURE_BROKER_PROPERTIES if secure else []:
        command += ["--override", prop]
    return subprocess.Popen(command, cwd=root)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), to report the broker's cost per message."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce_worker(
    client: dict[str, str], topic: str, count: int, size: int, results: multiprocessing.Queue
) -> None:
    from confluent_kafka import Producer

    producer = Producer(
        {
            **client,
            "linger.ms": 5,
            "acks": "1",
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "compression.type": "none",
        }
    )
    payload = os.urandom(size)
    latencies: list[float] = []
    errors = 0

    def on_sampled_delivery(sent_at: float, error: object, _message: object) -> None:
        nonlocal errors
        if error is not None:
            errors += 1
            return
        latencies.append((time.perf_counter() - sent_at) * 1000)

    # produce_batch queues a whole list per call: per-message Python overhead would otherwise
    # cap each producer process far below what the broker can take.
    batch_size = 5_000
    template = [{"value": payload} for _ in range(batch_size)]
    started = time.perf_counter()
    sent = 0
    while sent < count:
        batch = template[: min(batch_size, count - sent)]
        batch[0] = {"value": payload, "callback": functools.partial(on_sampled_delivery, time.perf_counter())}
        pending = batch
        while pending:
            queued = producer.produce_batch(topic, pending)
            if queued == len(pending):
                break
            pending = [{k: v for k, v in m.items() if k != "_error"} for m in pending if "_error" in m]
            producer.poll(0.005)
        sent += len(batch)
        producer.poll(0)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - started
    results.put((count - remaining, elapsed, latencies, errors + remaining))


def consume_worker(
    client: dict[str, str], topic: str, partitions: list[int], results: multiprocessing.Queue
) -> None:
    """Read the given partitions to their end; report (records, first and last receive time)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            **client,
            "group.id": "bench-reader",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52_428_800,
            "max.partition.fetch.bytes": 10_485_760,
            "queued.max.messages.kbytes": 1_048_576,
        }
    )
    expected = sum(
        consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    received = 0
    first = last = time.time()
    deadline = time.monotonic() + 300
    while received < expected and time.monotonic() < deadline:
        batch = consumer.consume(10_000, 1.0)
        if batch and received == 0:
            first = time.time()
        received += sum(1 for m in batch if m.error() is None)
        last = time.time()
    consumer.close()
    results.put((received, first, last))


def consume(client: dict[str, str], topic: str, partitions: int, consumers: int) -> tuple[int, float]:
    results: multiprocessing.Queue = multiprocessing.Queue()
    workers = [
        multiprocessing.Process(
            target=consume_worker, args=(client, topic, list(range(i, partitions, consumers)), results)
        )
        for i in range(consumers)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    return sum(o[0] for o in outcomes), max(o[2] for o in outcomes) - min(o[1] for o in outcomes)


def run_size(
    client: dict[str, str],
    broker_pid: int,
    size: int,
    messages: int,
    producers: int,
    partitions: int,
    consumers: int,
) -> dict[str, float]:
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"bench-{size}-{int(time.time())}"
    admin = AdminClient(client)
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    results: multiprocessing.Queue = multiprocessing.Queue()
    per_producer = messages // producers
    workers = [
        multiprocessing.Process(target=produce_worker, args=(client, topic, per_producer, size, results))
        for _ in range(producers)
    ]
    cpu_before = cpu_seconds(broker_pid)
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    outcomes = [results.get() for _ in workers]
    produce_elapsed = time.perf_counter() - started
    for worker in workers:
        worker.join()
    delivered = sum(o[0] for o in outcomes)
    latencies = sorted(x for o in outcomes for x in o[2])
    errors = sum(o[3] for o in outcomes)
    cpu_produce = cpu_seconds(broker_pid) - cpu_before
    consumed, consume_elapsed = consume(client, topic, partitions, consumers)
    cpu_consume = cpu_seconds(broker_pid) - cpu_before - cpu_produce
    return {
        "size": size,
        "delivered": delivered,
        "errors": errors,
        "produce_msgs": delivered / produce_elapsed,
        "produce_mb": delivered * size / produce_elapsed / 1e6,
        "p50_ms": statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": latencies[int(len(latencies) * 0.99)] if latencies else float("nan"),
        "consumed": consumed,
        "consume_msgs": consumed / consume_elapsed if consume_elapsed else float("nan"),
        "consume_mb": consumed * size / consume_elapsed / 1e6 if consume_elapsed else float("nan"),
        # Broker CPU per message: how fast the broker alone could go on one core.
        "produce_cpu_us": cpu_produce / max(delivered, 1) * 1e6,
        "consume_cpu_us": cpu_consume / max(consumed, 1) * 1e6,
    }


def build_native_loadgen() -> str:
    """The librdkafka C load generator (bench/loadgen): one client thread that outruns the broker."""
    built = subprocess.run(
        [str(REPO_ROOT / "bench" / "loadgen" / "build.sh")], check=True, capture_output=True, text=True
    )
    return built.stdout.strip().splitlines()[-1]


def run_size_native(
    loadgen: str, client: dict[str, str], broker_pid: int, size: int, messages: int, partitions: int
) -> dict[str, float]:
    """Produce then consume with the C load generator; the same result fields as run_size."""
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"bench-{size}-{int(time.time())}"
    admin = AdminClient(client)  # keep the handle alive until the future completes
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    settings = [
        arg for key, value in client.items() if key != "bootstrap.servers" for arg in ("-X", f"{key}={value}")
    ]
    common = ["-b", client["bootstrap.servers"], "-t", topic, "-n", str(messages), *settings]

    def run(mode: str, *extra: str) -> dict:
        before = cpu_seconds(broker_pid)
        done = subprocess.run([loadgen, mode, *common, *extra], check=True, capture_output=True, text=True)
        outcome = json.loads(done.stdout.strip().splitlines()[-1])
        outcome["broker_cpu"] = cpu_seconds(broker_pid) - before
        return outcome

    produced = run("produce", "-s", str(size), "-l", "5", "-a", "1")
    consumed = run("consume", "-p", str(partitions))
    return {
        "size": size,
        "delivered": produced["messages"],
        "errors": produced["failed"],
        "produce_msgs": produced["msg_per_s"],
        "produce_mb": produced["mb_per_s"],
        "p50_ms": produced["p50_ms"],
        "p99_ms": produced["p99_ms"],
        "consumed": consumed["messages"],
        "consume_msgs": consumed["msg_per_s"],
        "consume_mb": consumed["mb_per_s"],
        "produce_cpu_us": produced["broker_cpu"] / max(produced["messages"], 1) * 1e6,
        "consume_cpu_us": consumed["broker_cpu"] / max(consumed["messages"], 1) * 1e6,
    }


def run_broker(args: argparse.Namespace, secure: bool) -> list[dict[str, float]]:
    port = free_port()
    results = []
    with tempfile.TemporaryDirectory(prefix="broker-bench-") as tmp:
        profile_path = Path(tmp) / "broker.prof" if args.profile else None
        broker = start_broker(Path(tmp) / "logs", port, profile_path, secure)
        try:
            wait_until_serving(port)
            bootstrap = f"127.0.0.1:{port}"
            client = {"bootstrap.servers": bootstrap}
            if secure:
                grant_bench_user(bootstrap)
                client = sasl_client_config(bootstrap, BENCH_USER, BENCH_PASSWORD)
            print(f"--- {'SASL_PLAINTEXT + SCRAM-SHA-512 + ACLs' if secure else 'PLAINTEXT, no ACLs'}")
            print(
                f"{'size':>6} {'msgs':>9} {'produce msg/s':>14} {'MB/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
                f"{'consume msg/s':>14} {'MB/s':>8}"
            )
            for size in (int(s) for s in args.sizes.split(",")):
                if args.client == "native":
                    r = run_size_native(
                        args.loadgen, client, broker.pid, size, args.messages, args.partitions
                    )
                else:
                    r = run_size(
                        client,
                        broker.pid,
                        size,
                        args.messages,
                        args.producers,
                        args.partitions,
                        args.consumers,
                    )
                results.append(r)
                print(
                    f"{r['size']:>6} {r['delivered']:>9} {r['produce_msgs']:>14,.0f} {r['produce_mb']:>8.1f} "
                    f"{r['p50_ms']:>7.1f} {r['p99_ms']:>7.1f} {r['consume_msgs']:>14,.0f} {r['consume_mb']:>8.1f}"
                    f" {r['produce_cpu_us']:>12.3f} / {r['consume_cpu_us']:.3f}"
                    + (f"  ({r['errors']} errors, {r['consumed']} consumed)" if r["errors"] else ""),
                    flush=True,
                )
        finally:
            broker.send_signal(signal.SIGTERM)
            broker.wait(60)
        if profile_path is not None and profile_path.exists():
            pstats.Stats(str(profile_path)).sort_stats("tottime").print_stats(30)
    # Write back this run's dirty pages now, so the kernel's writeback does not throttle the next run.
    os.sync()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument(
        "--client",
        choices=("native", "python"),
        default="native",
        help="native: the librdkafka C load generator, one producer and one consumer thread (default); "
        "python: confluent-kafka producer/consumer processes",
    )
    parser.add_argument("--producers", type=int, default=2, help="python client processes")
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--consumers", type=int, default=2)
    parser.add_argument("--sizes", default="100,1024")
    parser.add_argument("--profile", action="store_true", help="run the broker under cProfile")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--secure", action="store_true", help="SASL/SCRAM clients, ACLs on")
    mode.add_argument("--compare", action="store_true", help="alternate plain and secure runs, print ratios")
    parser.add_argument("--rounds", type=int, default=2, help="plain/secure pairs with --compare")
    args = parser.parse_args()
    args.loadgen = build_native_loadgen() if args.client == "native" else None

    if not args.compare:
        run_broker(args, args.secure)
        return
    # Alternating runs and medians: a shared 2-core box drifts more between runs than SASL + ACLs cost.
    plain_runs, secure_runs = [], []
    for _ in range(args.rounds):
        plain_runs.append(run_broker(args, secure=False))
        secure_runs.append(run_broker(args, secure=True))
    for index, size in enumerate(int(s) for s in args.sizes.split(",")):
        throughput = [
            s[index]["produce_msgs"] / p[index]["produce_msgs"]
            for p, s in zip(plain_runs, secure_runs, strict=True)
        ]
        cpu = [
            s[index]["produce_cpu_us"] / p[index]["produce_cpu_us"]
            for p, s in zip(plain_runs, secure_runs, strict=True)
        ]
        print(
            f"size {size:>5}: secure/plain produce throughput median {statistics.median(throughput):.1%} "
            f"(runs {', '.join(f'{r:.0%}' for r in throughput)}), "
            f"broker CPU per produced message median {statistics.median(cpu):.1%}"
        )


if __name__ == "__main__":
    main()
