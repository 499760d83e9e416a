"""Topics: listed with their partitions, leaders and replicas; created, grown and deleted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from confluent_kafka.admin import NewPartitions, NewTopic

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    admin_client,
    await_result,
    raise_typed,
)


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    # Replicas on brokers the cluster does not list as alive (Kafka's offline replicas).
    offline_replicas: list[int] = field(default_factory=list)

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def offline(self) -> bool:
        return self.leader < 0


@dataclass(frozen=True)
class TopicInfo:
    name: str
    internal: bool
    partitions: list[PartitionInfo]

    @property
    def replication_factor(self) -> int:
        return max((len(p.replicas) for p in self.partitions), default=0)


def list_topics(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, TopicInfo]:
    """Every topic with its partitions, leaders and replicas (one Metadata request)."""
    admin = admin_client(connection, timeout_seconds)
    try:
        metadata = admin.list_topics(timeout=timeout_seconds)
    except KafkaException as error:
        raise_typed(error.args[0] if error.args else None, "Metadata request failed")
    topics = {}
    alive = set(metadata.brokers)
    for name, topic in metadata.topics.items():
        if topic.error is not None:
            continue
        partitions = [
            PartitionInfo(
                partition=p.id,
                leader=p.leader,
                replicas=list(p.replicas),
                isr=list(p.isrs),
                offline_replicas=[replica for replica in p.replicas if replica not in alive],
            )
            for p in sorted(topic.partitions.values(), key=lambda p: p.id)
        ]
        topics[name] = TopicInfo(name=name, internal=name.startswith("__"), partitions=partitions)
    return topics


def create_topic(
    connection: Connection,
    *,
    name: str,
    partitions: int,
    replication_factor: int,
    configs: Mapping[str, str],
    validate_only: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    admin = admin_client(connection, timeout_seconds)
    new_topic = NewTopic(
        name, num_partitions=partitions, replication_factor=replication_factor, config=dict(configs)
    )
    # A positive operation timeout: Apache Kafka's controller drops a CreateTopics whose timeout is 0 as
    # already expired, while librdkafka reports it as done; the topic would never exist.
    futures = admin.create_topics(
        [new_topic],
        validate_only=validate_only,
        request_timeout=timeout_seconds,
        operation_timeout=timeout_seconds,
    )
    await_result(futures[name], "CreateTopics", timeout_seconds)


def delete_topic(
    connection: Connection, *, name: str, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    admin = admin_client(connection, timeout_seconds)
    futures = admin.delete_topics([name], request_timeout=timeout_seconds, operation_timeout=timeout_seconds)
    await_result(futures[name], "DeleteTopics", timeout_seconds)


def create_partitions(
    connection: Connection,
    *,
    name: str,
    total: int,
    validate_only: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """Grows the topic to `total` partitions (Kafka never shrinks one)."""
    admin = admin_client(connection, timeout_seconds)
    futures = admin.create_partitions(
        [NewPartitions(name, total)], validate_only=validate_only, request_timeout=timeout_seconds
    )
    await_result(futures[name], "CreatePartitions", timeout_seconds)
