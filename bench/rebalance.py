"""Rebalance time of a 10-member group: classic eager vs classic cooperative vs the consumer protocol.

    python -m bench.rebalance [--members 10] [--partitions 30] [--rounds 3]
                              [--classic-heartbeat-ms 3000] [--consumer-heartbeat-ms 5000]

Starts `python -m broker` from this checkout and a producer that keeps writing to every partition.
For each protocol, `--members - 1` confluent-kafka consumers form a group and consume; then one
more member joins. Measured from the moment it joins:

- `rebalance_s`: until every member consumes again: the group covers every partition, each member
  owns some, and each has consumed a record since its assignment last changed;
- `longest_stall_s`: the longest time one of the members that were already there consumed nothing
  (an eager rebalance stops them all; a cooperative or consumer-protocol one only moves what must move).

Heartbeat intervals are the defaults (librdkafka's 3 s for classic, Kafka's
`group.consumer.heartbeat.interval.ms` 5 s for the consumer protocol) unless given: a rebalance
advances on heartbeats, so they bound what is measured. Prints JSON (medians over `--rounds`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from bench.broker_throughput.__main__ import free_port, wait_until_serving

REPO_ROOT = Path(__file__).resolve().parents[1]
MODES = {
    "classic_eager": {"partition.assignment.strategy": "range"},
    "classic_cooperative": {"partition.assignment.strategy": "cooperative-sticky"},
    "consumer_protocol": {"group.protocol": "consumer"},
}


class Member:
    """One consumer on its own thread, recording when its assignment changed and when it consumed."""

    def __init__(self, bootstrap: str, group: str, topic: str, settings: dict[str, object]) -> None:
        self.owned: set[int] = set()
        self.assignment_changed = time.monotonic()
        self.consumed_at: list[float] = []
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "latest", **settings}
        )
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, args=(topic,), daemon=True)
        self.thread.start()

    def on_assign(self, consumer: Consumer, partitions: list) -> None:
        self.owned |= {tp.partition for tp in partitions}
        self.assignment_changed = time.monotonic()

    def on_revoke(self, consumer: Consumer, partitions: list) -> None:
        self.owned -= {tp.partition for tp in partitions}
        self.assignment_changed = time.monotonic()

    def run(self, topic: str) -> None:
        self.consumer.subscribe([topic], on_assign=self.on_assign, on_revoke=self.on_revoke)
        while not self.stopping.is_set():
            message = self.consumer.poll(0.02)
            if message is not None and message.error() is None:
                self.consumed_at.append(time.monotonic())
        self.consumer.close()

    def consumed_since(self, moment: float) -> bool:
        return bool(self.consumed_at) and self.consumed_at[-1] > moment

    def longest_gap(self, start: float, end: float) -> float:
        moments = [start, *(t for t in self.consumed_at if start < t < end), end]
        return max(b - a for a, b in itertools.pairwise(moments))


def settled(members: list[Member], partitions: int) -> bool:
    owned = [m.owned for m in members]
    return (
        all(owned)
        and sum(len(o) for o in owned) == partitions
        and all(m.consumed_since(m.assignment_changed) for m in members)
    )


def wait(condition, timeout: float, what: str) -> float:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(0.01)
    raise RuntimeError(f"{what}: not reached within {timeout}s")


def one_rebalance(bootstrap: str, topic: str, args: argparse.Namespace, settings: dict[str, object]) -> dict:
    group = f"bench-{uuid.uuid4().hex[:8]}"
    members: list[Member] = []
    try:
        # Members start a little apart, as real ones do (and so their heartbeats are not in step).
        for _ in range(args.members - 1):
            members.append(Member(bootstrap, group, topic, settings))
            time.sleep(args.start_gap_ms / 1000)
        wait(lambda: settled(members, args.partitions), 120, "the first members settling")
        time.sleep(1.0)  # steady consumption before the join
        joined_at = time.monotonic()
        members.append(Member(bootstrap, group, topic, settings))
        done_at = wait(lambda: settled(members, args.partitions), 120, "the group settling after the join")
        return {
            "rebalance_s": round(done_at - joined_at, 3),
            "longest_stall_s": round(max(m.longest_gap(joined_at, done_at) for m in members[:-1]), 3),
        }
    finally:
        for member in members:
            member.stopping.set()
        for member in members:
            member.thread.join(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--classic-heartbeat-ms", type=int, default=3000)
    parser.add_argument("--consumer-heartbeat-ms", type=int, default=5000)
    parser.add_argument("--start-gap-ms", type=int, default=300)
    args = parser.parse_args()

    port = free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-rebalance-"))
    broker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "broker",
            "--override",
            f"listeners=PLAINTEXT://127.0.0.1:{port}",
            "--override",
            f"log.dirs={data_dir}",
            "--override",
            "offsets.topic.num.partitions=1",
            "--override",
            f"group.consumer.heartbeat.interval.ms={args.consumer_heartbeat_ms}",
            "--log-level",
            "ERROR",
        ],
        cwd=REPO_ROOT,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
    )
    stop_producing = threading.Event()
    try:
        wait_until_serving(port)
        bootstrap = f"127.0.0.1:{port}"
        topic = "rebalance-bench"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(30)

        def produce() -> None:
            producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
            while not stop_producing.is_set():
                for partition in range(args.partitions):
                    producer.produce(topic, b"x", partition=partition)
                producer.poll(0)
                time.sleep(0.02)
            producer.flush(10)

        producing = threading.Thread(target=produce, daemon=True)
        producing.start()
        results = {}
        for mode, settings in MODES.items():
            if mode.startswith("classic"):
                settings = {**settings, "heartbeat.interval.ms": args.classic_heartbeat_ms}
            runs = [one_rebalance(bootstrap, topic, args, settings) for _ in range(args.rounds)]
            results[mode] = {
                "rebalance_s": statistics.median(r["rebalance_s"] for r in runs),
                "longest_stall_s": statistics.median(r["longest_stall_s"] for r in runs),
                "runs": runs,
            }
        stop_producing.set()
        producing.join(30)
        print(
            json.dumps(
                {
                    "members": args.members,
                    "partitions": args.partitions,
                    "classic_heartbeat_ms": args.classic_heartbeat_ms,
                    "consumer_heartbeat_ms": args.consumer_heartbeat_ms,
                    "load": os.getloadavg(),
                    "results": results,
                },
                indent=2,
            )
        )
    finally:
        stop_producing.set()
        broker.kill()
        broker.wait()


if __name__ == "__main__":
    main()
