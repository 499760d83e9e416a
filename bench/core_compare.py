"""Broker throughput and replicated produce, before vs after a change, interleaved in one run.

    .venv/bin/python bench/core_compare.py [--before PATH | --before-ref base9] [--after PATH]
                                           [--rounds 4] [--messages 1000000] [--replicated-messages 300000]
                                           [--sizes 100,1024]
                                           [--cases throughput,replicated,startup,topics,partitions]

Each tree's broker is started from that tree (`python -m broker` with the tree as working directory;
the 3-broker cluster through that tree's own `tests/fixtures/cluster.py`), and measured by the same code
(this script's tree: the librdkafka C load generator of bench/broker_throughput, and the saturated
producer of bench/replicated_produce.py):

- throughput: one broker, one partition, acks=1, per size: produce then consume everything back, after a
  first use of both sizes (20,000 messages each) whose broker CPU is its own row: a broker imports a
  handler, and numpy, on first use, and that one-off cost (about 0.1 s) would otherwise be billed to the
  first size's messages (0.2 µs of a 100 B message's 0.6 at 500,000 messages);
- replicated: 3 brokers, RF 3, min.insync.replicas 2, acks=all, per size: produce;
- startup: one broker on an empty data directory, from the process start until ApiVersions answers and a
  topic can be created (ms, and the broker's CPU ms until then);
- topics: one broker, 200 topics created then deleted one by one, each request awaited (p50 / p99 ms);
- partitions: one broker, one topic of 10,000 partitions, from CreateTopics until Metadata shows a leader
  for every partition (ms).

Runs alternate between the trees (before, after, then after, before, ...) so that load drifting on a
shared machine hits both alike. `--before` defaults to a `git worktree` of `--before-ref` created in /tmp
and removed at the end; `--after` defaults to this script's tree. Each tree-run is one child process
(`--child`), so the two trees' modules never meet in one interpreter.

Prints one JSON line per tree-run, then a line about the run (load average at start and end, minutes)
and one line per case: per tree the median, min, max and spread ((max - min) / median) of msg/s and of
broker CPU µs per message (steadier than msg/s under load, but /proc counts it in 10 ms ticks: use
enough messages), and the after/before ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HARNESS_ROOT = Path(__file__).resolve().parents[1]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --- child: measure one tree -------------------------------------------------------------------


# Enough for every first-use cost (handler imports, numpy at the first batch of 100 records or more),
# few enough that their own per-message cost stays small beside it.
FIRST_USE_MESSAGES = 20_000


def measure_tree(tree: Path, loadgen: str, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    # This tree's test fixtures (and, through them, its broker modules) first; then the harness's
    # measuring code, so that both trees are measured by the same code.
    sys.path.insert(0, str(tree))
    from tests.fixtures import cluster as cluster_fixture

    sys.path.insert(0, str(HARNESS_ROOT))
    from bench.broker_throughput.__main__ import (
        cpu_seconds,
        free_port,
        run_size_native,
        start_broker,
        wait_until_serving,
    )
    from bench.replicated_produce import Target, create_topic, saturated

    results: dict[str, dict[str, float]] = {}
    base = Path(tempfile.mkdtemp(prefix="core-compare-"))
    try:
        if "throughput" in args.cases:
            port = free_port()
            # The working directory decides which tree's `broker` package runs.
            broker = start_broker(base / "single", port, None, root=tree)
            try:
                wait_until_serving(port)
                client = {"bootstrap.servers": f"127.0.0.1:{port}"}
                cpu_at_start = cpu_seconds(broker.pid)
                for size in args.sizes:
                    run_size_native(loadgen, client, broker.pid, size, FIRST_USE_MESSAGES, 1)
                results[f"first use: {FIRST_USE_MESSAGES} messages per size produced and consumed (ms)"] = {
                    "broker_cpu_ms": (cpu_seconds(broker.pid) - cpu_at_start) * 1000
                }
                for size in args.sizes:
                    row = run_size_native(loadgen, client, broker.pid, size, args.messages, 1)
                    if row["errors"] or row["consumed"] != row["delivered"]:
                        raise RuntimeError(f"{tree}: {size} B lost or failed records: {row}")
                    results[f"produce {size} B, 1 partition, acks=1"] = {
                        "msg_per_s": row["produce_msgs"],
                        "broker_cpu_us": row["produce_cpu_us"],
                    }
                    results[f"consume {size} B, 1 partition"] = {
                        "msg_per_s": row["consume_msgs"],
                        "broker_cpu_us": row["consume_cpu_us"],
                    }
            finally:
                broker.terminate()
                broker.wait(60)
            os.sync()
        if "replicated" in args.cases:
            cluster = cluster_fixture.start_cluster(base / "cluster", 3)
            try:
                pids = [node.process.pid for node in cluster.brokers if node.process is not None]
                target = Target("3 brokers, RF 3", cluster.bootstrap, pids, 3)
                for size in args.sizes:
                    topic = f"bench-replicated-{size}-{time.monotonic_ns()}"
                    create_topic(target, topic, 1)
                    row = saturated(loadgen, target, topic, size, args.replicated_messages, "all")
                    if row["failed"]:
                        raise RuntimeError(f"{tree}: replicated {size} B failed records: {row}")
                    results[f"replicated produce {size} B, RF 3, acks=all"] = {
                        "msg_per_s": row["msg_per_s"],
                        "broker_cpu_us": row["broker_cpu_us"],
                    }
            finally:
                cluster.stop()
            os.sync()
        results.update(measure_admin(tree, base, args.cases))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return results


# --- admin latency cases (startup, topics, partitions) -------------------------------------------

# Lower is better for these rows: they report milliseconds, in the msg_per_s / broker_cpu_us columns'
# place (see `summarise`).
ADMIN_TOPICS = 200
WIDE_TOPIC_PARTITIONS = 10_000


def start_plain_broker(tree: Path, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """`python -m broker` of `tree` with no cluster settings: what `make run` starts."""
    command = [sys.executable, "-m", "broker", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}"]
    command += ["--override", f"log.dirs={data_dir}", "--log-level", "WARNING"]
    return subprocess.Popen(command, cwd=tree)


def admin_client(port: int) -> Any:
    from confluent_kafka.admin import AdminClient

    # A 10,000-partition CreateTopics may take minutes on a loaded machine: librdkafka's default socket
    # timeout (60 s) would fail it.
    return AdminClient(
        {
            "bootstrap.servers": f"127.0.0.1:{port}",
            "socket.connection.setup.timeout.ms": 1000,
            "socket.timeout.ms": 300_000,
        }
    )


def create_topic_ms(admin: Any, name: str, partitions: int = 1) -> float:
    from confluent_kafka.admin import NewTopic

    started = time.perf_counter()
    admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=120, request_timeout=120)[
        name
    ].result()
    return (time.perf_counter() - started) * 1000


def delete_topic_ms(admin: Any, name: str) -> float:
    started = time.perf_counter()
    admin.delete_topics([name], operation_timeout=120, request_timeout=120)[name].result()
    return (time.perf_counter() - started) * 1000


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def measure_admin(tree: Path, base: Path, cases: list[str]) -> dict[str, dict[str, float]]:
    from bench.broker_throughput.__main__ import cpu_seconds, free_port, wait_until_serving

    results: dict[str, dict[str, float]] = {}
    if "startup" in cases:
        port = free_port()
        started = time.perf_counter()
        broker = start_plain_broker(tree, base / "startup", port)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    create_topic_ms(admin_client(port), "startup-probe")
                    break
                except Exception:
                    if time.monotonic() > deadline or broker.poll() is not None:
                        raise
                    time.sleep(0.02)
            elapsed_ms = (time.perf_counter() - started) * 1000
            # The broker's CPU time until then: steadier than the wall time on a shared machine.
            results["startup until a topic is created (ms)"] = {
                "ms": elapsed_ms,
                "broker_cpu_ms": cpu_seconds(broker.pid) * 1000,
            }
        finally:
            broker.terminate()
            broker.wait(60)
    if "topics" in cases or "partitions" in cases:
        port = free_port()
        broker = start_plain_broker(tree, base / "admin", port)
        try:
            wait_until_serving(port)
            admin = admin_client(port)
            if "topics" in cases:
                names = [f"admin-{index}" for index in range(ADMIN_TOPICS)]
                creates = [create_topic_ms(admin, name) for name in names]
                deletes = [delete_topic_ms(admin, name) for name in names]
                results[f"create {ADMIN_TOPICS} topics one by one (ms)"] = {
                    "p50": percentile(creates, 0.5),
                    "p99": percentile(creates, 0.99),
                }
                results[f"delete {ADMIN_TOPICS} topics one by one (ms)"] = {
                    "p50": percentile(deletes, 0.5),
                    "p99": percentile(deletes, 0.99),
                }
            if "partitions" in cases:
                started = time.perf_counter()
                create_topic_ms(admin, "wide", WIDE_TOPIC_PARTITIONS)
                while True:
                    described = admin.list_topics("wide", timeout=60).topics["wide"]
                    led = [p for p in described.partitions.values() if p.leader >= 0]
                    if len(led) == WIDE_TOPIC_PARTITIONS:
                        break
                    time.sleep(0.05)
                results[f"one topic of {WIDE_TOPIC_PARTITIONS} partitions, until all have leaders (ms)"] = {
                    "ms": (time.perf_counter() - started) * 1000
                }
        finally:
            broker.terminate()
            broker.wait(60)
    return results


# --- parent: interleave the trees and summarise --------------------------------------------------


def before_worktree(ref: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=f"core-compare-{ref.replace('/', '-')}-"))
    path.rmdir()
    subprocess.run(
        ["git", "-C", str(HARNESS_ROOT), "worktree", "add", "--detach", str(path), ref],
        check=True,
        capture_output=True,
    )
    return path


def remove_worktree(path: Path) -> None:
    subprocess.run(
        ["git", "-C", str(HARNESS_ROOT), "worktree", "remove", "--force", str(path)],
        check=False,
        capture_output=True,
    )


def run_child(tree: Path, loadgen: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        str(tree),
        "--loadgen",
        loadgen,
        "--messages",
        str(args.messages),
        "--replicated-messages",
        str(args.replicated_messages),
        "--sizes",
        ",".join(str(s) for s in args.sizes),
        "--cases",
        ",".join(args.cases),
    ]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"run against {tree} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def spread(values: list[float]) -> dict[str, Any]:
    median = statistics.median(values)
    return {
        "median": round(median, 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "spread": round((max(values) - min(values)) / median, 3) if median else None,
        "runs": [round(v, 3) for v in values],
    }


def summarise(runs: dict[str, list[dict[str, dict[str, float]]]]) -> dict[str, Any]:
    cases: dict[str, Any] = {}
    for case in runs["before"][0]:
        entry: dict[str, Any] = {}
        for metric in runs["before"][0][case]:
            before = spread([run[case][metric] for run in runs["before"]])
            after = spread([run[case][metric] for run in runs["after"]])
            entry[metric] = {
                "before": before,
                "after": after,
                "ratio_after_before": round(after["median"] / before["median"], 3)
                if before["median"]
                else None,
            }
        cases[case] = entry
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, help="checkout to measure as 'before'")
    parser.add_argument("--before-ref", default="base9", help="without --before: a worktree of this ref")
    parser.add_argument("--after", type=Path, default=HARNESS_ROOT)
    parser.add_argument("--rounds", type=int, default=4, help="before/after pairs")
    parser.add_argument("--messages", type=int, default=1_000_000, help="per size, single broker")
    parser.add_argument("--replicated-messages", type=int, default=300_000, help="per size, RF 3")
    parser.add_argument("--sizes", type=lambda text: [int(s) for s in text.split(",")], default=[100, 1024])
    parser.add_argument(
        "--cases",
        type=lambda text: text.split(","),
        default=["throughput", "replicated"],
        help="throughput,replicated,startup,topics,partitions",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--loadgen", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child is not None:
        print(json.dumps(measure_tree(args.child.resolve(), args.loadgen, args)), flush=True)
        return

    sys.path.insert(0, str(HARNESS_ROOT))
    from bench.broker_throughput.__main__ import build_native_loadgen

    loadgen = build_native_loadgen()
    created = args.before is None
    before = before_worktree(args.before_ref) if created else args.before.resolve()
    after = args.after.resolve()
    load_at_start = load_average()
    started = time.monotonic()
    runs: dict[str, list[dict[str, dict[str, float]]]] = {"before": [], "after": []}
    try:
        for round_index in range(args.rounds):
            order = [("before", before), ("after", after)]
            if round_index % 2:
                order.reverse()
            for label, tree in order:
                result = run_child(tree, loadgen, args)
                runs[label].append(result)
                print(
                    json.dumps(
                        {"round": round_index, "tree": label, "load": load_average(), "results": result}
                    ),
                    flush=True,
                )
    finally:
        if created:
            remove_worktree(before)
    # One line for the run, then one line per case: easy to diff and to paste.
    print(
        json.dumps(
            {
                "before": args.before_ref if created else str(before),
                "after": str(after),
                "rounds": args.rounds,
                "messages": args.messages,
                "replicated_messages": args.replicated_messages,
                "load_average_at_start": load_at_start,
                "load_average_at_end": load_average(),
                "minutes": round((time.monotonic() - started) / 60, 1),
            }
        )
    )
    for case, entry in summarise(runs).items():
        print(json.dumps({"case": case, **entry}), flush=True)


if __name__ == "__main__":
    main()
