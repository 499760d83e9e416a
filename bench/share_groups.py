"""Share groups (KIP-932) next to a consumer group, on our broker and Apache Kafka 4.2 in the same run.

    .venv/bin/python bench/share_groups.py [--records 50000] [--samples 30] [--ours-only]

One topic of 4 partitions holds `--records` records of 100 bytes. For a share group of 1, 4 and 16
ShareConsumers (confluent-kafka, implicit acknowledgement: every record accepted) and a consumer group of as
many Consumers, each on a new group reading from the earliest offset: records/s from the first record to the
last one received (every record once; a share group may deliver a record twice only if a lock ran out).
Redelivery latency on a one-partition topic: RELEASE (a ShareConsumer releases one record at a time and commits;
the time until the same record arrives again, `--samples` rounds) and lock expiry (a member acquires one batch of
`--samples` records and goes silent; the time from its lock's expiry, `group.share.record.lock.duration.ms` = 1000
on both brokers, until another member receives each record: one round, so its spread is small). Each engine runs as one node started here in a temporary directory and
stopped at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from confluent_kafka import AcknowledgeType, Consumer, Producer, ShareConsumer  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from tests.fixtures.apache_kafka import ApacheKafkaNode  # noqa: E402
from tests.fixtures.broker import BrokerProcess  # noqa: E402

PARTITIONS = 4
LOCK_MS = 1000
SIZES = (1, 4, 16)
SHARE_PROPERTIES = {
    "group.share.record.lock.duration.ms": str(LOCK_MS),
    "group.share.min.record.lock.duration.ms": str(LOCK_MS),
}


def _topic(admin: AdminClient, partitions: int) -> str:
    name = f"bench-share-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def _earliest(admin: AdminClient, group: str) -> None:
    resource = ConfigResource(
        ConfigResource.Type.GROUP,
        group,
        incremental_configs=[
            ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(30)


def _produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    payload = b"x" * 100
    for index in range(count):
        producer.produce(topic, value=payload, key=str(index).encode(), partition=index % partitions)
        if index % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def _rate(make: Callable[[], object], records: int, members: int, timeout_s: float = 300) -> float:
    """Records/s of `members` consumers on one group, from the first record to the last."""
    received: set[tuple[int, int]] = set()
    lock = threading.Lock()
    first: list[float] = []
    stop = threading.Event()
    consumers = [make() for _ in range(members)]

    def work(consumer: object) -> None:
        while not stop.is_set():
            messages = (
                consumer.poll(0.5) if isinstance(consumer, ShareConsumer) else consumer.consume(500, 0.5)
            )
            batch = [(m.partition(), m.offset()) for m in messages if m.error() is None]
            if batch:
                with lock:
                    if not first:
                        first.append(time.monotonic())
                    received.update(batch)
                    if len(received) >= records:
                        stop.set()

    threads = [threading.Thread(target=work, args=(c,), daemon=True) for c in consumers]
    for thread in threads:
        thread.start()
    finished = stop.wait(timeout_s)
    end = time.monotonic()
    stop.set()
    for thread in threads:
        thread.join(5)
    for consumer in consumers:
        consumer.close()
    if not finished:
        return float("nan")
    return records / max(end - first[0], 1e-6)


def _release_latency(bootstrap: str, admin: AdminClient, samples: int) -> list[float]:
    """Rounds of: one new record arrives, is released and committed (the clock starts as the commit is sent),
    and arrives again."""
    topic = _topic(admin, 1)
    group = f"bench-release-{uuid.uuid4().hex[:8]}"
    _earliest(admin, group)
    producer = Producer({"bootstrap.servers": bootstrap})
    consumer = ShareConsumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    )
    consumer.subscribe([topic])
    latencies: list[float] = []
    deadline = time.monotonic() + 120
    try:
        for round_ in range(samples):
            producer.produce(topic, value=f"r{round_}".encode(), partition=0)
            producer.flush(10)
            released_at: float | None = None
            while time.monotonic() < deadline:
                messages = [m for m in consumer.poll(0.1) if m.error() is None]
                for message in messages:
                    if message.delivery_count() == 1:
                        consumer.acknowledge(message, AcknowledgeType.RELEASE)
                    else:
                        if released_at is not None:
                            latencies.append(time.monotonic() - released_at)
                        consumer.acknowledge(message, AcknowledgeType.ACCEPT)
                if messages:
                    if released_at is None:
                        released_at = time.monotonic()
                    consumer.commit_sync()
                if len(latencies) > round_:
                    break
    finally:
        consumer.close()
    return latencies


def _expiry_latency(bootstrap: str, admin: AdminClient, samples: int) -> list[float]:
    """A silent member acquires records; another receives each after its lock expires."""
    topic = _topic(admin, 1)
    group = f"bench-expiry-{uuid.uuid4().hex[:8]}"
    _earliest(admin, group)
    config = {"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit"}
    silent = ShareConsumer(config)
    silent.subscribe([topic])
    worker = ShareConsumer(config)
    worker.subscribe([topic])
    # Both members are in the group (the worker polls once) before the records exist.
    worker.poll(2.0)
    _produce(bootstrap, topic, samples, 1)
    acquired_at: dict[int, float] = {}
    deadline = time.monotonic() + 60
    while not acquired_at and time.monotonic() < deadline:
        for message in silent.poll(0.2):
            if message.error() is None:
                acquired_at[message.offset()] = time.monotonic()
    latencies: list[float] = []
    deadline = time.monotonic() + 60
    try:
        while len(latencies) < len(acquired_at) and time.monotonic() < deadline:
            for message in worker.poll(0.1):
                if message.error() is not None:
                    continue
                if message.offset() in acquired_at and message.delivery_count() > 1:
                    latencies.append(time.monotonic() - acquired_at[message.offset()] - LOCK_MS / 1000)
                worker.acknowledge(message, AcknowledgeType.ACCEPT)
            worker.commit_sync()
    finally:
        worker.close()
        silent.close()
    return latencies


def _ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms (n={len(ordered)})"


def run(name: str, bootstrap: str, records: int, samples: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = _topic(admin, PARTITIONS)
    _produce(bootstrap, topic, records, PARTITIONS)
    print(f"\n{name}: {records} records of 100 bytes on {PARTITIONS} partitions", flush=True)
    for members in SIZES:
        group = f"bench-sg-{uuid.uuid4().hex[:8]}"
        _earliest(admin, group)

        def share(group: str = group) -> ShareConsumer:
            consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
            consumer.subscribe([topic])
            return consumer

        def classic(group: str = f"bench-cg-{uuid.uuid4().hex[:8]}") -> Consumer:
            consumer = Consumer(
                {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"}
            )
            consumer.subscribe([topic])
            return consumer

        share_rate = _rate(share, records, members)
        group_rate = _rate(classic, records, members)
        print(
            f"  {members:>2} consumers: share group {share_rate:>9.0f} records/s,"
            f" consumer group {group_rate:>9.0f} records/s",
            flush=True,
        )
    print(f"  redelivery after RELEASE: {_ms(_release_latency(bootstrap, admin, samples))}", flush=True)
    print(f"  redelivery after lock expiry: {_ms(_expiry_latency(bootstrap, admin, samples))}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=50000)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--ours-only", action="store_true", help="skip Apache Kafka")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-share-groups-") as directory:
        base = Path(directory)
        ours = BrokerProcess(base / "ours", dict(SHARE_PROPERTIES))
        ours.start()
        try:
            run("ours, 1 node", ours.bootstrap, args.records, args.samples)
        finally:
            ours.kill9()
        if not args.ours_only:
            oracle = ApacheKafkaNode(base / "apache-kafka", dict(SHARE_PROPERTIES))
            oracle.start()
            try:
                run("Apache Kafka 4.2, 1 node", oracle.bootstrap, args.records, args.samples)
            finally:
                oracle.stop()


if __name__ == "__main__":
    main()
