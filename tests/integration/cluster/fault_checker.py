"""Fault-injection soak for a local cluster: real clients, brokers killed, paused and restarted, then a check.

Shared by the suite (tests/integration/cluster/test_fault_tolerance.py, ~45 s of faults) and
`bench/cluster_soak.py` (minutes of faults). While `FaultInjector` kill -9s, SIGSTOPs and SIGTERMs one
broker at a time (never two down), an idempotent `acks=all` producer writes records that carry its own
sequence number and records every acknowledged (partition, offset, seq), and a consumer group member
records what it read and the high watermarks it was shown. Afterwards a fresh consumer reads every
partition from the beginning and `check_soak` verifies:

- every acknowledged record is in the log exactly once, at the offset it was acknowledged with;
- per partition the producer's records are in the order of their sequence numbers (no reordering, no
  gaps: nothing the producer sent before an acknowledged record is missing unless it failed);
- every record the group member read is still in the log at the same offset (nothing it saw below the
  high watermark disappeared), and no high watermark it saw lies beyond the final log end.

Network partitions are not injected: they need network namespaces (root), which CI does not have; a
SIGSTOPped broker is the stand-in for a node cut off from the others.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.cluster import LocalCluster

# Client settings a paused (SIGSTOPped) leader must not be able to stall beyond a few seconds: librdkafka
# waits socket.timeout.ms (60 s by default) for an answer to a Produce request from a broker whose socket
# stays open (request.timeout.ms is only the broker's acks timeout): without this, a paused leader stalled its
# partitions for the whole pause (bench/cluster_failover.py --hold 9: 9.2-9.4 s), with 3 s for 3.9-5.0 s.
PRODUCER_SETTINGS = {
    "acks": "all",
    "enable.idempotence": "true",
    "linger.ms": "5",
    "request.timeout.ms": "5000",
    "socket.timeout.ms": "3000",
    "message.timeout.ms": "120000",
    "socket.keepalive.enable": "true",
}
FAULT_KINDS = ("kill9", "pause", "sigterm")


def value_of(producer_name: str, seq: int, size: int) -> bytes:
    head = f"{producer_name}:{seq}:".encode()
    return head + b"x" * max(0, size - len(head))


def parse_value(value: bytes) -> tuple[str, int]:
    producer_name, seq, _ = value.split(b":", 2)
    return producer_name.decode(), int(seq)


def create_topic(cluster: LocalCluster, topic: str, partitions: int, replication_factor: int = 3) -> None:
    """Create `topic` and wait until every replica of every partition is in its ISR."""
    admin = AdminClient(cluster.client_config())
    new_topic = NewTopic(topic, partitions, replication_factor)
    admin.create_topics([new_topic], operation_timeout=20)[topic].result(timeout=30)
    if not wait_for_isr(cluster, topic, timeout_s=30):
        raise TimeoutError(f"{topic}: ISR incomplete 30 s after creation: {partition_states(cluster, topic)}")


def partition_states(cluster: LocalCluster, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
    """partition -> (leader, replicas, isr) as one live broker reports it."""
    admin = AdminClient(cluster.client_config())
    described = admin.list_topics(topic, timeout=5).topics[topic]
    if described.error is not None:
        raise KafkaException(described.error)
    return {
        p: (meta.leader, list(meta.replicas), list(meta.isrs)) for p, meta in described.partitions.items()
    }


def wait_for_isr(cluster: LocalCluster, topic: str, timeout_s: float, *, size: int | None = None) -> bool:
    """True once every partition has a leader and `size` replicas (default: all) in its ISR; False after
    `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            states = partition_states(cluster, topic)
            if states and all(
                leader >= 0 and len(isr) >= (len(replicas) if size is None else size)
                for leader, replicas, isr in states.values()
            ):
                return True
        except KafkaException:
            pass
        time.sleep(0.25)
    return False


@dataclass
class ProducedRecords:
    """What one producer sent (seq n went to partition n % partitions) and what was acknowledged."""

    name: str
    partitions: int
    sent: int = 0
    # partition -> [(offset, seq)] in acknowledgement order
    acked: dict[int, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    failed: dict[int, str] = field(default_factory=dict)  # seq -> error name


@dataclass
class ConsumedRecords:
    """What a consumer read: (partition, offset) -> value, and the high watermarks it was shown."""

    seen: dict[tuple[int, int], bytes] = field(default_factory=dict)
    conflicts: list[tuple[int, int, bytes, bytes]] = field(default_factory=list)  # same offset, other value
    beyond_watermark: list[tuple[int, int, int]] = field(default_factory=list)  # (partition, offset, high)
    high_watermarks: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    errors: Counter[str] = field(default_factory=Counter)

    def record(self, partition: int, offset: int, value: bytes, high_watermark: int | None) -> None:
        earlier = self.seen.setdefault((partition, offset), value)
        if earlier != value:
            self.conflicts.append((partition, offset, earlier, value))
        if high_watermark is not None and high_watermark >= 0:
            if offset >= high_watermark:
                self.beyond_watermark.append((partition, offset, high_watermark))
            self.high_watermarks[partition] = max(self.high_watermarks[partition], high_watermark)


class AckedProducer(threading.Thread):
    """Produces `rate` records/s round-robin over the partitions; records every delivery report."""

    def __init__(
        self,
        cluster: LocalCluster,
        topic: str,
        partitions: int,
        *,
        name: str = "p1",
        rate: float = 300.0,
        value_size: int = 100,
        settings: dict[str, str] | None = None,
    ) -> None:
        super().__init__(name=f"producer-{name}", daemon=True)
        self.producer = Producer(cluster.client_config(**(PRODUCER_SETTINGS | (settings or {}))))
        self.topic = topic
        self.rate, self.value_size = rate, value_size
        self.records = ProducedRecords(name, partitions)
        self.ack_times: list[float] = []
        self.ack_times_by_partition: dict[int, list[float]] = defaultdict(list)
        self.fatal: str | None = None
        self._stopping = threading.Event()

    def _on_delivery(self, error: KafkaError | None, message: Message) -> None:
        _, seq = parse_value(message.value())
        if error is not None:
            self.records.failed[seq] = error.name()
            if error.fatal():
                self.fatal = error.str()
            return
        self.records.acked[message.partition()].append((message.offset(), seq))
        acked_at = time.monotonic()
        self.ack_times.append(acked_at)
        self.ack_times_by_partition[message.partition()].append(acked_at)

    def run(self) -> None:
        records = self.records
        started = time.monotonic()
        while not self._stopping.is_set() and self.fatal is None:
            due = int((time.monotonic() - started) * self.rate) - records.sent
            for _ in range(max(0, due)):
                seq = records.sent
                try:
                    self.producer.produce(
                        self.topic,
                        value_of(records.name, seq, self.value_size),
                        partition=seq % records.partitions,
                        on_delivery=self._on_delivery,
                    )
                except BufferError:
                    break
                records.sent += 1
            self.producer.poll(0.01)

    def stop(self, flush_timeout_s: float = 60.0) -> int:
        """Stop producing and wait for outstanding delivery reports; returns how many never came."""
        self._stopping.set()
        self.join()
        return self.producer.flush(flush_timeout_s)

    def max_stall_s(self, since: float) -> float:
        """The longest time without an acknowledgement after `since` (monotonic) while producing."""
        times = [since] + [t for t in self.ack_times if t >= since]
        return max((b - a for a, b in itertools.pairwise(times)), default=0.0)

    def max_partition_stall_s(self, since: float, until: float) -> float:
        """The longest time any one partition went without an acknowledgement between `since` and
        `until` (monotonic): a failover stalls only the partitions whose leader moves, which the other
        partitions' acknowledgements would hide from `max_stall_s`."""
        longest = 0.0
        for partition in range(self.records.partitions):
            times = self.ack_times_by_partition.get(partition, [])
            window = [since] + [t for t in times if since <= t <= until] + [until]
            longest = max(longest, max(b - a for a, b in itertools.pairwise(window)))
        return longest


class WatchingConsumer(threading.Thread):
    """A consumer group member recording every (partition, offset) -> value it read and the high watermarks."""

    def __init__(self, cluster: LocalCluster, topic: str, group: str) -> None:
        super().__init__(name=f"consumer-{group}", daemon=True)
        self.consumer = Consumer(
            cluster.client_config(
                **{
                    "group.id": group,
                    "auto.offset.reset": "earliest",
                    "session.timeout.ms": "6000",
                    "heartbeat.interval.ms": "1000",
                    "enable.partition.eof": "false",
                }
            )
        )
        self.topic = topic
        self.records = ConsumedRecords()
        self._stopping = threading.Event()

    def run(self) -> None:
        self.consumer.subscribe([self.topic])
        try:
            while not self._stopping.is_set():
                message = self.consumer.poll(0.2)
                if message is None:
                    continue
                if message.error() is not None:
                    self.records.errors[message.error().name()] += 1
                    continue
                # The cached high watermark is the one the last Fetch response for this partition carried.
                _, high = self.consumer.get_watermark_offsets(
                    TopicPartition(self.topic, message.partition()), cached=True
                )
                self.records.record(message.partition(), message.offset(), message.value(), high)
        finally:
            self.consumer.close()

    def stop(self) -> None:
        self._stopping.set()
        self.join(30)


def read_everything(
    cluster: LocalCluster, topic: str, partitions: int, timeout_s: float = 60.0
) -> dict[int, list[tuple[int, bytes]]]:
    """partition -> [(offset, value)] from the beginning to the high watermark, read by a fresh consumer."""
    consumer = Consumer(
        cluster.client_config(**{"group.id": f"checker-{time.monotonic_ns()}", "enable.auto.commit": "false"})
    )
    try:
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(partitions)
        }
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        records: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
        positions = dict.fromkeys(range(partitions), 0)
        deadline = time.monotonic() + timeout_s
        while any(positions[p] < ends[p] for p in range(partitions)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"read only up to {positions} of {ends} within {timeout_s}s")
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            records[message.partition()].append((message.offset(), message.value()))
            positions[message.partition()] = message.offset() + 1
        return records
    finally:
        consumer.close()


@dataclass
class SoakReport:
    acked: int = 0
    sent: int = 0
    failed_deliveries: Counter[str] = field(default_factory=Counter)
    log_records: int = 0
    losses: list[tuple[int, int, int]] = field(default_factory=list)  # (partition, offset, seq)
    moved: list[tuple[int, int, int]] = field(
        default_factory=list
    )  # acked at an offset holding another record
    duplicates: list[tuple[int, int]] = field(default_factory=list)  # (partition, seq)
    reorderings: list[tuple[int, int, int]] = field(default_factory=list)  # (partition, offset, seq)
    gaps: list[tuple[int, int]] = field(
        default_factory=list
    )  # (partition, seq) sent earlier, absent, not failed
    consumed: int = 0
    consumed_then_vanished: list[tuple[int, int]] = field(default_factory=list)
    watermark_beyond_end: list[tuple[int, int, int]] = field(
        default_factory=list
    )  # (partition, seen, final end)
    consumer_conflicts: int = 0
    consumer_errors: Counter[str] = field(default_factory=Counter)
    read_beyond_watermark: list[tuple[int, int, int]] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    isr_not_restored: int = 0
    shutdown_hangs: int = 0
    max_produce_stall_s: float = 0.0
    fault_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (
            self.losses
            or self.moved
            or self.duplicates
            or self.reorderings
            or self.gaps
            or self.consumed_then_vanished
            or self.watermark_beyond_end
            or self.consumer_conflicts
            or self.read_beyond_watermark
        )

    def summary(self) -> dict[str, Any]:
        return {
            "fault_seconds": round(self.fault_seconds, 1),
            "faults": dict(self.faults),
            "isr_not_restored_before_next_fault": self.isr_not_restored,
            "sigterm_shutdowns_that_hung": self.shutdown_hangs,
            "records_sent": self.sent,
            "records_acked": self.acked,
            "failed_deliveries": dict(self.failed_deliveries),
            "records_in_log": self.log_records,
            "losses": len(self.losses),
            "acked_offset_holds_other_record": len(self.moved),
            "duplicates": len(self.duplicates),
            "reorderings": len(self.reorderings),
            "gaps": len(self.gaps),
            "consumer_reads": self.consumed,
            "consumed_then_vanished": len(self.consumed_then_vanished),
            "watermark_beyond_final_end": len(self.watermark_beyond_end),
            "consumer_conflicting_reads": self.consumer_conflicts,
            "read_beyond_watermark": len(self.read_beyond_watermark),
            "consumer_errors": dict(self.consumer_errors),
            "max_produce_stall_s": round(self.max_produce_stall_s, 2),
            "ok": self.ok,
            "first_problems": {
                "losses": self.losses[:5],
                "moved": self.moved[:5],
                "duplicates": self.duplicates[:5],
                "reorderings": self.reorderings[:5],
                "gaps": self.gaps[:5],
                "consumed_then_vanished": self.consumed_then_vanished[:5],
                "watermark_beyond_end": self.watermark_beyond_end[:5],
            },
        }


def check_soak(
    produced: ProducedRecords, consumed: ConsumedRecords, log: dict[int, list[tuple[int, bytes]]]
) -> SoakReport:
    """Compare what was acknowledged and consumed with the final `log` (partition -> [(offset, value)])."""
    report = SoakReport(sent=produced.sent, failed_deliveries=Counter(produced.failed.values()))
    report.acked = sum(len(acks) for acks in produced.acked.values())
    report.log_records = sum(len(records) for records in log.values())
    log_by_offset = {partition: dict(records) for partition, records in log.items()}
    for partition, records in log.items():
        by_offset = log_by_offset[partition]
        mine = [
            (offset, seq)
            for offset, value in records
            for name, seq in [parse_value(value)]
            if name == produced.name
        ]
        counts = Counter(seq for _, seq in mine)
        report.duplicates += [(partition, seq) for seq, n in counts.items() if n > 1]
        report.reorderings += [
            (partition, offset, seq)
            for (_, before), (offset, seq) in itertools.pairwise(mine)
            if seq <= before
        ]
        for offset, seq in produced.acked.get(partition, []):
            value = by_offset.get(offset)
            if seq not in counts:
                report.losses.append((partition, offset, seq))
            elif value is None or parse_value(value) != (produced.name, seq):
                report.moved.append((partition, offset, seq))
        # Everything sent to this partition before its last record in the log must be there, unless it failed.
        last = max(counts, default=-1)
        report.gaps += [
            (partition, seq)
            for seq in range(partition, last, produced.partitions)
            if seq not in counts and seq not in produced.failed
        ]
        final_end = records[-1][0] + 1 if records else 0
        high = consumed.high_watermarks.get(partition, 0)
        if high > final_end:
            report.watermark_beyond_end.append((partition, high, final_end))
    for (partition, offset), value in consumed.seen.items():
        if log_by_offset.get(partition, {}).get(offset) != value:
            report.consumed_then_vanished.append((partition, offset))
    report.consumed = len(consumed.seen)
    report.consumer_conflicts = len(consumed.conflicts)
    report.read_beyond_watermark = consumed.beyond_watermark
    report.consumer_errors = consumed.errors
    return report


class FaultInjector:
    """Injects one fault at a time into a random broker, restores it, and waits for the cluster to heal."""

    def __init__(
        self,
        cluster: LocalCluster,
        topic: str,
        *,
        seed: int | None = None,
        hold_s: tuple[float, float] = (0.5, 3.0),
        pause_hold_s: tuple[float, float] = (1.0, 5.0),
        heal_timeout_s: float = 30.0,
        log: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.cluster, self.topic = cluster, topic
        self.random = random.Random(seed)
        # Pauses run longer: past broker.session.timeout.ms the paused broker is fenced while it still
        # believes it leads, and must not acknowledge anything when it wakes up.
        self.hold_s, self.pause_hold_s, self.heal_timeout_s = hold_s, pause_hold_s, heal_timeout_s
        self.faults: Counter[str] = Counter()
        self.isr_not_restored = 0
        self.shutdown_hangs = 0
        self.log = log

    def inject_one(self) -> None:
        node = self.random.choice(self.cluster.brokers)
        kind = self.random.choice(FAULT_KINDS)
        hold = self.random.uniform(*(self.pause_hold_s if kind == "pause" else self.hold_s))
        self.log(f"{time.strftime('%H:%M:%S')} {kind} node {node.node_id} for {hold:.1f}s")
        if kind == "kill9":
            node.kill9()
            time.sleep(hold)
            node.start()
        elif kind == "pause":
            node.pause()
            time.sleep(hold)
            node.resume()
        else:
            try:
                node.stop(timeout=self.heal_timeout_s)
            except RuntimeError as hung:
                # stop() killed it after the timeout: a broker bug to report, not a reason to end the soak.
                self.shutdown_hangs += 1
                self.log(f"{hung} (killed)")
            time.sleep(hold)
            node.start()
        self.faults[kind] += 1
        self.cluster.wait_ready(self.heal_timeout_s)
        if not wait_for_isr(self.cluster, self.topic, self.heal_timeout_s):
            self.isr_not_restored += 1
            self.log(
                f"ISR of {self.topic} not complete {self.heal_timeout_s}s after restoring node {node.node_id}"
            )

    def run(self, seconds: float, pause_between_s: tuple[float, float] = (0.5, 2.0)) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.inject_one()
            time.sleep(self.random.uniform(*pause_between_s))


def run_soak(
    cluster: LocalCluster,
    fault_seconds: float,
    *,
    topic: str = "soak",
    partitions: int = 3,
    rate: float = 300.0,
    seed: int | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> SoakReport:
    """Create `topic`, run producer, group member and faults for `fault_seconds`, then read back and check."""
    create_topic(cluster, topic, partitions)
    producer = AckedProducer(cluster, topic, partitions, rate=rate)
    consumer = WatchingConsumer(cluster, topic, group=f"{topic}-watchers")
    injector = FaultInjector(cluster, topic, seed=seed, log=log)
    producer.start()
    consumer.start()
    time.sleep(2)  # some acknowledged traffic before the first fault
    faults_started = time.monotonic()
    try:
        injector.run(fault_seconds)
    finally:
        fault_time = time.monotonic() - faults_started
        undelivered = producer.stop()
        log(f"faults over after {fault_time:.0f}s; {undelivered} delivery reports outstanding after flush")
    cluster.wait_ready()
    wait_for_isr(cluster, topic, 30)
    time.sleep(1)  # let the group member read the tail
    consumer.stop()
    report = check_soak(producer.records, consumer.records, read_everything(cluster, topic, partitions))
    report.faults = injector.faults
    report.isr_not_restored = injector.isr_not_restored
    report.shutdown_hangs = injector.shutdown_hangs
    report.max_produce_stall_s = producer.max_stall_s(faults_started)
    report.fault_seconds = fault_time
    if producer.fatal is not None:
        report.failed_deliveries[f"fatal: {producer.fatal}"] += 1
    return report
