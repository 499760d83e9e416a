"""Small helpers shared by the broker integration tests."""

from __future__ import annotations

import time

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec


def create_topic(bootstrap: str, name: str, partitions: int = 1, **config: str) -> str:
    # Keep the AdminClient referenced until the future resolves: a collected client fails
    # its pending futures with _DESTROY.
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config)])[name].result(10)
    wait_until_led(admin, name, partitions)
    return name


def wait_until_led(admin: AdminClient, name: str, partitions: int, timeout_s: float = 10.0) -> None:
    """Until every partition's leader serves it. CreateTopics is answered once the controller committed the
    topic; the leader opens the new logs a moment later (off its event loop), as Apache Kafka's brokers do,
    and a Fetch sent in between is answered NOT_LEADER_OR_FOLLOWER. Clients retry; these tests send raw
    requests and expect data, so they wait here as a client would."""
    deadline = time.monotonic() + timeout_s
    requests = {TopicPartition(name, index): OffsetSpec.latest() for index in range(partitions)}
    while True:
        futures = admin.list_offsets(requests, request_timeout=5)
        try:
            for future in futures.values():
                future.result(5)
            return
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
