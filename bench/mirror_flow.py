"""Benchmark (acceptance 5 of the Connect/MM2 issue): MirrorMaker 2's replication lag under a 10,000 records/s
producer, from our broker to another of ours and from our broker to Apache Kafka (same run, one after the other).

Starts our source broker, then per target (our broker, then an Apache Kafka node) the target and MirrorMaker 2
4.2.0 in dedicated mode (`connect-mirror-maker`, the same MirrorSourceConnector a managed flow runs on a Connect
cluster, with the flow's settings: default replication policy, offset.lag.max 100, topic-config sync). A
producer writes 100-byte records at the given rate for the given seconds to a fresh topic of 4 partitions;
meanwhile every 0.5 s the source's and the replica's end offsets are compared per partition (records behind,
the measure the flow's lag API uses), and a consumer of the replica measures each record's age on arrival
(arrival time minus the source record's timestamp, which MM2 copies: end-to-end replication delay in ms).
Prints one JSON line per target, then a table.

Usage: .venv/bin/python bench/mirror_flow.py [--rate 10000] [--seconds 30] [--partitions 4]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.apache_kafka import runtime
from tests.fixtures.apache_kafka import ApacheKafkaNode
from tests.fixtures.broker import BrokerProcess

SOURCE_ALIAS = "src"
VALUE = b"x" * 100


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@contextmanager
def our_broker(directory: Path) -> Iterator[str]:
    broker = BrokerProcess(directory, {"num.partitions": "1"})
    broker.start()
    try:
        yield broker.bootstrap
    finally:
        broker.kill9()


@contextmanager
def apache_kafka(directory: Path) -> Iterator[str]:
    node = ApacheKafkaNode(directory, {"num.partitions": "1"}, heap="512m")
    node.start()
    try:
        yield node.bootstrap
    finally:
        node.kill9()


@contextmanager
def mirror_maker(directory: Path, source: str, target: str, topic: str) -> Iterator[None]:
    settings = {
        "clusters": f"{SOURCE_ALIAS}, target",
        f"{SOURCE_ALIAS}.bootstrap.servers": source,
        "target.bootstrap.servers": target,
        f"{SOURCE_ALIAS}->target.enabled": "true",
        f"{SOURCE_ALIAS}->target.topics": topic,
        "target->" + SOURCE_ALIAS + ".enabled": "false",
        "replication.factor": "1",
        **{
            f"{name}.replication.factor": "1"
            for name in ("offset-syncs.topic", "checkpoints.topic", "heartbeats.topic")
        },
        **{f"{name}.storage.replication.factor": "1" for name in ("config", "offset", "status")},
        "offset-syncs.topic.location": "target",
        "refresh.topics.interval.seconds": "1",
        "emit.checkpoints.interval.seconds": "60",
        "plugin.discovery": "service_load",
    }
    properties = directory / "mm2.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    with (directory / "mm2.log").open("wb") as log:
        process = subprocess.Popen(
            runtime.installation().command(
                runtime.TOOL_MAIN_CLASSES["connect-mirror-maker"], str(properties), heap="512m"
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield
    finally:
        process.kill()
        process.wait()


def end_offsets(consumer: Consumer, topic: str, partitions: int) -> list[int]:
    return [
        consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1]
        for partition in range(partitions)
    ]


def measure(source: str, target: str, work: Path, rate: int, seconds: float, partitions: int) -> dict:
    topic = f"bench-orders-{int(time.time())}"
    replica = f"{SOURCE_ALIAS}.{topic}"
    admin = AdminClient({"bootstrap.servers": source})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    with mirror_maker(work, source, target, topic):
        # MM2 is up once its first record is through: a warm-up record, not counted.
        producer = Producer({"bootstrap.servers": source, "linger.ms": 5, "acks": "all"})
        producer.produce(topic, VALUE)
        producer.flush(10)
        probe_source = Consumer({"bootstrap.servers": source, "group.id": "bench-probe"})
        probe_target = Consumer({"bootstrap.servers": target, "group.id": "bench-probe"})
        started = time.monotonic()
        while time.monotonic() - started < 180:
            try:
                if sum(end_offsets(probe_target, replica, partitions)) >= 1:
                    break
            except KafkaException:  # the replica does not exist yet
                pass
            time.sleep(0.5)
        else:
            raise SystemExit(f"MirrorMaker 2 copied nothing in 180 s; see {work / 'mm2.log'}")
        print(f"MM2 started copying after {time.monotonic() - started:.1f} s", file=sys.stderr)

        ages_ms: list[float] = []
        producing = threading.Event()
        producing.set()

        def consume() -> None:
            consumer = Consumer(
                {"bootstrap.servers": target, "group.id": f"bench-{topic}", "auto.offset.reset": "latest"}
            )
            consumer.subscribe([replica])
            idle_since = None
            while True:
                messages = consumer.consume(1000, timeout=0.5)
                now_ms = time.time() * 1000
                for message in messages:
                    if not message.error():
                        ages_ms.append(now_ms - message.timestamp()[1])
                if messages:
                    idle_since = None
                elif not producing.is_set():
                    idle_since = idle_since or time.monotonic()
                    if time.monotonic() - idle_since > 5:
                        break
            consumer.close()

        reader = threading.Thread(target=consume, daemon=True)
        reader.start()
        time.sleep(3)  # the replica consumer joins its group and starts at the end
        lags: list[int] = []

        def sample() -> None:
            while producing.is_set():
                behind = [
                    max(0, s - t)
                    for s, t in zip(
                        end_offsets(probe_source, topic, partitions),
                        end_offsets(probe_target, replica, partitions),
                        strict=True,
                    )
                ]
                lags.extend(behind)
                time.sleep(0.5)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        sent, begun = 0, time.monotonic()
        while (elapsed := time.monotonic() - begun) < seconds:
            due = int(elapsed * rate)
            while sent < due:
                try:
                    producer.produce(topic, VALUE)
                    sent += 1
                except BufferError:
                    producer.poll(0.01)
            producer.poll(0)
            time.sleep(0.005)
        producer.flush(60)
        achieved = sent / (time.monotonic() - begun)
        producing.clear()
        sampler.join()
        caught = time.monotonic()
        while end_offsets(probe_target, replica, partitions) != end_offsets(probe_source, topic, partitions):
            if time.monotonic() - caught > 120:
                break
            time.sleep(0.2)
        catch_up = time.monotonic() - caught
        reader.join(30)
        probe_source.close()
        probe_target.close()
    return {
        "records": sent,
        "rate_achieved": round(achieved),
        "lag_records_p50": percentile(lags, 0.5),
        "lag_records_p99": percentile(lags, 0.99),
        "lag_records_max": max(lags, default=0),
        "lag_ms_p50": round(percentile(ages_ms, 0.5)),
        "lag_ms_p99": round(percentile(ages_ms, 0.99)),
        "lag_ms_max": round(max(ages_ms, default=0)),
        "lag_ms_mean": round(statistics.fmean(ages_ms)) if ages_ms else 0,
        "replica_records_seen": len(ages_ms),
        "catch_up_seconds": round(catch_up, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=10_000, help="records per second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="mirror-flow-") as scratch:
        base = Path(scratch)
        with our_broker(base / "source") as source:
            for name, start in (
                ("streamhub -> streamhub", our_broker),
                ("streamhub -> apache-kafka", apache_kafka),
            ):
                work = base / name.replace(" ", "").replace(">", "")
                work.mkdir()
                with start(work / "target") as target:
                    results[name] = measure(source, target, work, args.rate, args.seconds, args.partitions)
                print(json.dumps({"flow": name, **results[name]}))
    print(
        f"\nMM2 replication lag, {args.rate} records/s for {args.seconds:.0f} s, {args.partitions} partitions"
    )
    print(
        f"{'flow':28} {'rate':>7} {'rec p50':>8} {'rec p99':>8} {'rec max':>8} {'ms p50':>7} {'ms p99':>7} {'ms max':>7}"
    )
    for name, row in results.items():
        print(
            f"{name:28} {row['rate_achieved']:>7} {row['lag_records_p50']:>8} {row['lag_records_p99']:>8} "
            f"{row['lag_records_max']:>8} {row['lag_ms_p50']:>7} {row['lag_ms_p99']:>7} {row['lag_ms_max']:>7}"
        )


if __name__ == "__main__":
    main()
