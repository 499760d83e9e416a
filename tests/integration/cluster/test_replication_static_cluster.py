"""Replication between real broker processes, with leadership fixed by the static assignments file.

The static file is the tests' stand-in for the controller quorum (see tests/fixtures/
static_assignments.py, run by tests/fixtures/static_broker.py): these tests exercise the data path —
replica fetching, the ISR, the high watermark, acks=all and truncation — not leader election.
"""

from __future__ import annotations

import json
import random
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.fixtures.broker import BrokerProcess
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration

TOPIC = "replicated"
FAULT_SECONDS = 8.0


class StaticCluster:
    """Broker processes sharing one static assignments file (node ids 1..n)."""

    def __init__(self, base: Path, size: int, properties: dict[str, str]) -> None:
        base.mkdir(parents=True, exist_ok=True)
        self.assignments_path = base / "assignments.json"
        self.brokers = {
            node: BrokerProcess(
                base / f"broker-{node}",
                {
                    "node.id": str(node),
                    "replication.static.assignments": str(self.assignments_path),
                    "auto.create.topics.enable": "false",
                    "replica.fetch.wait.max.ms": "200",
                    "replica.fetch.backoff.ms": "200",
                    "replica.high.watermark.checkpoint.interval.ms": "500",
                    **properties,
                },
            )
            for node in range(1, size + 1)
        }

    def assign(self, partitions: list[dict[str, object]], topic: str = TOPIC) -> None:
        body = {
            "cluster_id": "static-replication-test",
            "brokers": {str(node): broker.bootstrap for node, broker in self.brokers.items()},
            "topics": {topic: {"partitions": partitions}},
        }
        temporary = self.assignments_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(body))
        temporary.replace(self.assignments_path)

    def start_all(self) -> None:
        """Start every broker at once (each start waits until its broker answers)."""
        with ThreadPoolExecutor(len(self.brokers)) as pool:
            list(pool.map(BrokerProcess.start, self.brokers.values()))

    def bootstrap(self, *nodes: int) -> str:
        return ",".join(self.brokers[n].bootstrap for n in nodes or self.brokers)

    def log_bytes(self, node: int, partition: int, topic: str = TOPIC) -> bytes:
        directory = self.brokers[node].log_dir / f"{topic}-{partition}"
        return b"".join(path.read_bytes() for path in sorted(directory.glob("*.log")))

    def stop_all(self) -> None:
        for broker in self.brokers.values():
            if broker.process is not None and broker.process.poll() is None:
                broker.process.send_signal(signal.SIGCONT)
            broker.kill9()


@pytest.fixture
def make_cluster(tmp_path: Path) -> Iterator:
    clusters: list[StaticCluster] = []

    def make(size: int, **properties: str) -> StaticCluster:
        cluster = StaticCluster(tmp_path / f"cluster-{len(clusters)}", size, properties)
        clusters.append(cluster)
        return cluster

    yield make
    for cluster in clusters:
        cluster.stop_all()


PRODUCER_DEFAULTS = {
    "acks": "all",
    "enable.idempotence": True,
    "linger.ms": 5,
    "message.timeout.ms": 30000,
    "topic.metadata.refresh.interval.ms": 500,
}


def produce(
    bootstrap: str, values: list[bytes], partition: int = 0, **config: object
) -> list[KafkaError | None]:
    """Produce `values` in order and return each delivery's error (None: acknowledged)."""
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS, **config})
    errors: list[KafkaError | None] = [None] * len(values)
    delivered = [False] * len(values)

    def report(index: int):
        def on_delivery(error: KafkaError | None, _message: object) -> None:
            errors[index] = error
            delivered[index] = True

        return on_delivery

    for index, value in enumerate(values):
        producer.produce(TOPIC, value, partition=partition, on_delivery=report(index))
        producer.poll(0)
    assert producer.flush(60) == 0
    assert all(delivered)
    return errors


class TrackedProducer:
    """An idempotent acks=all producer that remembers which records were acknowledged."""

    def __init__(self, bootstrap: str, **config: object) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS, **config})
        self.acknowledged: list[bytes] = []
        self.failures: list[KafkaError] = []

    def _on_delivery(self, error: KafkaError | None, message: Any) -> None:
        if error is None:
            self.acknowledged.append(message.value())
        else:
            self.failures.append(error)

    def send(self, value: bytes) -> bool:
        """Queue one record for partition 0; False when the client's queue is full."""
        try:
            self.producer.produce(TOPIC, value, partition=0, on_delivery=self._on_delivery)
        except BufferError:
            self.producer.poll(0.05)
            return False
        return True

    def flush(self, timeout_s: float) -> None:
        assert self.producer.flush(timeout_s) == 0
        assert self.failures == []


def consume_all(bootstrap: str, partition: int, count: int) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "replication-test-reader",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(TOPIC, partition, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(values) < count and time.monotonic() < deadline:
            for message in consumer.consume(5000, timeout=0.5):
                assert message.error() is None, message.error()
                values.append(message.value())
    finally:
        consumer.close()
    return values


def partition_view(bootstrap: str, partition: int = 0) -> tuple[int, list[int]]:
    """(leader, isr) of a partition as the broker(s) at `bootstrap` report it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = admin.list_topics(TOPIC, timeout=10).topics[TOPIC]
    info = topic.partitions[partition]
    return info.leader, sorted(info.isrs)


def test_followers_hold_byte_identical_copies_of_what_an_acks_all_producer_wrote(make_cluster) -> None:
    cluster = make_cluster(3, **{"min.insync.replicas": "2"})
    cluster.assign(
        [
            {"leader": 1, "leader_epoch": 0, "replicas": [1, 2, 3]},
            {"leader": 2, "leader_epoch": 0, "replicas": [2, 3, 1]},
        ]
    )
    cluster.start_all()
    assert partition_view(cluster.bootstrap(3), 1) == (2, [1, 2, 3])

    for partition in (0, 1):
        values = [f"p{partition}-{i}".encode() for i in range(3000)]
        assert produce(cluster.bootstrap(), values, partition) == [None] * len(values)
        leader = 1 if partition == 0 else 2

        def replicas_identical(leader: int = leader, partition: int = partition) -> bool:
            expected = cluster.log_bytes(leader, partition)
            return all(cluster.log_bytes(node, partition) == expected for node in cluster.brokers)

        wait_until(replicas_identical, 30, f"followers of partition {partition} to match the leader")
        assert len(cluster.log_bytes(leader, partition)) > 3000 * 10
        assert consume_all(cluster.bootstrap(), partition, len(values)) == values


def test_acks_all_is_refused_with_not_enough_replicas_until_a_follower_returns(make_cluster) -> None:
    cluster = make_cluster(3, **{"min.insync.replicas": "2", "replica.lag.time.max.ms": "1500"})
    cluster.assign([{"leader": 1, "leader_epoch": 0, "replicas": [1, 2, 3]}])
    cluster.start_all()
    assert produce(cluster.bootstrap(1), [b"before"]) == [None]

    cluster.brokers[2].kill9()
    cluster.brokers[3].kill9()
    wait_until(
        lambda: partition_view(cluster.bootstrap(1)) == (1, [1]), 30, "the ISR to shrink to the leader"
    )
    errors = produce(
        cluster.bootstrap(1),
        [b"unsafe"],
        **{"enable.idempotence": False, "retries": 0, "message.timeout.ms": 5000},
    )
    assert errors[0] is not None
    assert errors[0].code() == KafkaError.NOT_ENOUGH_REPLICAS

    cluster.brokers[2].start()
    wait_until(lambda: partition_view(cluster.bootstrap(1)) == (1, [1, 2]), 30, "broker 2 to rejoin the ISR")
    assert produce(cluster.bootstrap(1), [b"after"]) == [None]
    wait_until(lambda: cluster.log_bytes(2, 0) == cluster.log_bytes(1, 0), 30, "broker 2 to catch up")
    assert consume_all(cluster.bootstrap(1), 0, 2) == [b"before", b"after"]


def test_a_follower_truncates_its_divergent_tail_after_a_leader_epoch_change(make_cluster) -> None:
    cluster = make_cluster(2, **{"min.insync.replicas": "1", "replica.lag.time.max.ms": "60000"})
    cluster.assign([{"leader": 1, "leader_epoch": 0, "replicas": [1, 2]}])
    cluster.start_all()
    committed = [f"committed-{i}".encode() for i in range(10)]
    assert produce(cluster.bootstrap(1), committed) == [None] * 10
    wait_until(lambda: cluster.log_bytes(2, 0) == cluster.log_bytes(1, 0), 30, "broker 2 to catch up")

    # Broker 2 goes down; broker 1 appends records only it will ever have, then dies too.
    old_follower, old_leader = cluster.brokers[2], cluster.brokers[1]
    old_follower.kill9()
    divergent = [f"divergent-{i}".encode() for i in range(5)]
    assert (
        produce(cluster.bootstrap(1), divergent, **{"acks": "1", "enable.idempotence": False}) == [None] * 5
    )
    diverged_log = cluster.log_bytes(1, 0)
    old_leader.kill9()

    # Broker 2 comes back as the leader of epoch 1, from offset 10, and takes new records.
    cluster.assign([{"leader": 2, "leader_epoch": 1, "replicas": [1, 2], "isr": [2]}])
    old_follower.start()
    newer = [f"epoch-1-{i}".encode() for i in range(3)]
    assert produce(cluster.bootstrap(2), newer) == [None] * 3

    # Broker 1 comes back as a follower: it must drop its 5 divergent records, then copy epoch 1's.
    old_leader.start()
    wait_until(lambda: cluster.log_bytes(1, 0) == cluster.log_bytes(2, 0), 30, "broker 1 to converge")
    assert cluster.log_bytes(1, 0) != diverged_log
    assert b"divergent" not in cluster.log_bytes(1, 0)
    assert consume_all(cluster.bootstrap(2), 0, 13) == committed + newer


def test_an_idempotent_producer_keeps_going_when_leadership_moves_between_live_brokers(make_cluster) -> None:
    cluster = make_cluster(2, **{"min.insync.replicas": "2", "replica.lag.time.max.ms": "10000"})
    cluster.assign([{"leader": 1, "leader_epoch": 0, "replicas": [1, 2]}])
    cluster.start_all()
    producer = TrackedProducer(cluster.bootstrap())

    def produce_some(first: int, count: int) -> None:
        for i in range(first, first + count):
            assert producer.send(f"m-{i:05d}".encode())
            producer.producer.poll(0.001)

    produce_some(0, 500)
    # Leadership moves to broker 2 (epoch 1) while records are in flight; broker 1 follows it.
    cluster.assign([{"leader": 2, "leader_epoch": 1, "replicas": [1, 2]}])
    produce_some(500, 1500)
    producer.flush(60)
    wait_until(
        lambda: partition_view(cluster.bootstrap(1)) == (2, [1, 2]),
        30,
        "broker 1 to report broker 2 as leader",
    )
    expected = [f"m-{i:05d}".encode() for i in range(2000)]
    assert sorted(producer.acknowledged) == expected
    wait_until(lambda: cluster.log_bytes(1, 0) == cluster.log_bytes(2, 0), 30, "broker 1 to catch up")
    assert consume_all(cluster.bootstrap(), 0, 2000) == expected  # once each, in order
    # Both epochs hold records: the move really happened while the producer was writing.
    checkpoint = (cluster.brokers[1].log_dir / f"{TOPIC}-0" / "leader-epoch-checkpoint").read_text().split()
    epochs = dict(zip(checkpoint[2::2], checkpoint[3::2], strict=True))
    assert epochs["0"] == "0"
    assert 0 < int(epochs["1"]) < 2000


def test_every_acknowledged_record_survives_follower_crashes_and_pauses_once_and_in_order(
    make_cluster,
) -> None:
    """Leadership stays on broker 1: this is the followers' side (restart recovery, the checkpointed
    high watermark, truncation, catching up, ISR shrink and expand) under acks=all with
    min.insync.replicas=2."""
    cluster = make_cluster(3, **{"min.insync.replicas": "2", "replica.lag.time.max.ms": "2000"})
    cluster.assign([{"leader": 1, "leader_epoch": 0, "replicas": [1, 2, 3]}])
    cluster.start_all()
    producer = TrackedProducer(cluster.bootstrap(1), **{"linger.ms": 2, "message.timeout.ms": 60000})
    stop = threading.Event()

    def faults() -> None:
        chooser = random.Random(11)
        while not stop.is_set():
            victim = cluster.brokers[chooser.choice([2, 3])]
            assert victim.process is not None
            if chooser.random() < 0.5:
                victim.kill9()
                time.sleep(chooser.uniform(0.2, 1.5))
                victim.start()
            else:
                victim.process.send_signal(signal.SIGSTOP)
                time.sleep(chooser.uniform(0.2, 3.0))
                victim.process.send_signal(signal.SIGCONT)
            time.sleep(chooser.uniform(0.5, 1.5))

    injector = threading.Thread(target=faults, daemon=True)
    injector.start()
    sent = 0
    deadline = time.monotonic() + FAULT_SECONDS
    while time.monotonic() < deadline:
        # The queue fills up while the ISR is below min.insync.replicas.
        if producer.send(f"r-{sent:07d}".encode()):
            sent += 1
            producer.producer.poll(0.01 if sent % 50 == 0 else 0)  # about 5000 records a second
    stop.set()
    injector.join(30)
    producer.flush(90)
    assert len(producer.acknowledged) == sent > 1000

    # Every acknowledged record is there exactly once, in order, and every replica converges.
    expected = [f"r-{i:07d}".encode() for i in range(sent)]
    assert producer.acknowledged == expected
    assert consume_all(cluster.bootstrap(1), 0, sent) == expected
    wait_until(
        lambda: partition_view(cluster.bootstrap(1)) == (1, [1, 2, 3]), 60, "the ISR to be whole again"
    )
    wait_until(
        lambda: cluster.log_bytes(2, 0) == cluster.log_bytes(1, 0) == cluster.log_bytes(3, 0),
        60,
        "every follower to match the leader",
    )


def test_a_catching_up_follower_copies_no_faster_than_its_throttle(make_cluster) -> None:
    rate = 20_000
    cluster = make_cluster(
        2, **{"min.insync.replicas": "1", "follower.replication.throttled.rate": str(rate)}
    )
    cluster.assign([{"leader": 1, "leader_epoch": 0, "replicas": [1, 2], "isr": [1]}])
    cluster.brokers[1].start()
    values = [bytes([65 + i % 26]) * 1000 for i in range(1000)]  # about 1 MB (the producer does not compress)
    # Batches of about 10 kB: a fetch returns whole batches, so the throttle works at that grain.
    assert produce(cluster.bootstrap(1), values, **{"batch.size": 10_000}) == [None] * len(values)
    leader_size = len(cluster.log_bytes(1, 0))

    follower = cluster.brokers[2]
    follower.start()
    started = time.monotonic()
    wait_until(lambda: len(cluster.log_bytes(2, 0)) > 0, 30, "the follower to start copying")
    time.sleep(3)
    elapsed = time.monotonic() - started
    copied = len(cluster.log_bytes(2, 0))
    # Kafka's quota allows a burst of ten one-second windows, then the rate.
    assert copied <= rate * (10 + elapsed) + 12_000
    assert copied < leader_size / 2
    assert cluster.log_bytes(2, 0) == cluster.log_bytes(1, 0)[:copied]  # a prefix, byte for byte
