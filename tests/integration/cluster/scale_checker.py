"""Watching a cluster while it takes a large topic: shared by test_partition_scale.py and
bench/partition_scale.py.

`Probe` plays the cluster's other clients (Metadata from every broker and one acks=all record per
round); `controller_elections` and `fencings` count what the nodes' logs say happened.
"""

from __future__ import annotations

import re
import threading
import time
from functools import partial

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.cluster import LocalCluster

PROBE_TOPIC = "probe"
PROBE_PARTITIONS = 100
PROBE_INTERVAL_S = 0.25


def controller_elections(cluster: LocalCluster) -> int:
    return sum(node.log_text().count("is the active controller for term") for node in cluster.nodes.values())


def fencings(cluster: LocalCluster) -> int:
    return sum(
        node.log_text().count("fenced a broker whose session expired") for node in cluster.nodes.values()
    )


_LOOP_STALL = re.compile(r"event loop held up for (\d+) ms \(full garbage collections: (\d+) ms of it\)")


def loop_stalls(cluster: LocalCluster) -> dict[str, list[tuple[int, int]]]:
    """Per node: (ms the loop was held up, ms of it in full garbage collections) of each logged stall."""
    return {
        str(node_id): [(int(m[1]), int(m[2])) for m in _LOOP_STALL.finditer(node.log_text())]
        for node_id, node in cluster.nodes.items()
    }


def topic_fully_replicated(cluster: LocalCluster, topic: str, partitions: int, timeout_s: float = 10) -> bool:
    """Every broker's Metadata shows every partition of `topic` with a leader and a full ISR."""
    for node in cluster.brokers:
        admin = AdminClient(cluster.client_config(**{"bootstrap.servers": node.bootstrap}))
        try:
            described = admin.list_topics(topic, timeout=timeout_s).topics.get(topic)
        except KafkaException:
            return False
        if described is None or described.error is not None or len(described.partitions) != partitions:
            return False
        for meta in described.partitions.values():
            if meta.leader < 0 or len(meta.isrs) < len(meta.replicas):
                return False
    return True


def _note_delivery(delivered: list[object], error: object, _message: object) -> None:
    delivered.append(error)


def create_when_brokers_unfenced(admin: AdminClient, topic: NewTopic, timeout_s: float = 30) -> None:
    """A just-started broker may still be fenced for a moment: RF 3 needs all three."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            admin.create_topics([topic])[topic.topic].result(30)
            return
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.INVALID_REPLICATION_FACTOR or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class Probe(threading.Thread):
    """Other clients of the cluster: Metadata from every broker and one acknowledged record per round."""

    def __init__(self, cluster: LocalCluster) -> None:
        super().__init__(name="probe", daemon=True)
        self.admins = [
            AdminClient(cluster.client_config(**{"bootstrap.servers": node.bootstrap}))
            for node in cluster.brokers
        ]
        self.producer = Producer(cluster.client_config(acks="all", **{"message.timeout.ms": "30000"}))
        self.slowest_s = 0.0
        self.failures: list[str] = []
        self.rounds = 0
        self._stopping = threading.Event()

    def run(self) -> None:
        while not self._stopping.is_set():
            for admin in self.admins:
                started = time.monotonic()
                try:
                    admin.list_topics(PROBE_TOPIC, timeout=10)
                except KafkaException as exc:
                    self.failures.append(f"metadata: {exc}")
                self.slowest_s = max(self.slowest_s, time.monotonic() - started)
            started = time.monotonic()
            delivered: list[object] = []
            self.producer.produce(PROBE_TOPIC, b"probe", on_delivery=partial(_note_delivery, delivered))
            self.producer.flush(30)
            if not delivered or delivered[0] is not None:
                self.failures.append(f"produce: {delivered[0] if delivered else 'no delivery report'}")
            self.slowest_s = max(self.slowest_s, time.monotonic() - started)
            self.rounds += 1
            self._stopping.wait(PROBE_INTERVAL_S)

    def stop(self) -> None:
        self._stopping.set()
        self.join()
