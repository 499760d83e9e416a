"""Topics: listed with their partitions, leaders and replicas; created, grown and deleted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from confluent_kafka.admin import NewPartitions, NewTopic
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.types import TopicName

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    admin_client,
    await_result,
    protocol_connection,
    raise_typed,
)
from controlplane.kafka.errors import KafkaGatewayError


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


def describe_topic(
    connection: Connection, name: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> TopicInfo | None:
    """One topic's partitions (None when it does not exist), from a Metadata request for that name alone
    that forbids auto-creation: reading a topic back never creates it, and costs the same on a cluster of
    ten topics or ten thousand (listing them all made each of a thousand creates slower than the last)."""
    request = MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name=TopicName(name)),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    with protocol_connection(connection, timeout_seconds) as wire:
        response = wire.request(request)
    (topic,) = response.topics
    if topic.error_code != 0:
        # As list_topics: a topic the cluster answers with an error for (unknown, or its leader not elected
        # yet) is not there for a reader.
        return None
    alive = {broker.node_id for broker in response.brokers}
    partitions = [
        PartitionInfo(
            partition=int(p.partition_index),
            leader=int(p.leader_id),
            replicas=[int(r) for r in p.replica_nodes],
            isr=[int(r) for r in p.isr_nodes],
            offline_replicas=[int(r) for r in p.replica_nodes if r not in alive],
        )
        for p in sorted(topic.partitions, key=lambda p: p.partition_index)
    ]
    return TopicInfo(name=name, internal=bool(topic.is_internal), partitions=partitions)


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
    # The operation timeout is the request's timeout_ms, which a KRaft controller takes as its deadline:
    # Apache Kafka answers 0 with REQUEST_TIMED_OUT and creates nothing, and librdkafka hides that error
    # when the operation timeout is 0 (a ZooKeeper-era "don't wait"), so the topic would silently not exist.
    futures = admin.create_topics(
        [new_topic],
        validate_only=validate_only,
        request_timeout=timeout_seconds,
        operation_timeout=timeout_seconds,
    )
    await_result(futures[name], "CreateTopics", timeout_seconds)


@dataclass(frozen=True)
class NewTopicSpec:
    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str] = field(default_factory=dict)


# Added to a batched request's deadline per topic it carries: the controller creates them one after the other,
# and a hundred topics did not all come back within the single-topic deadline from a loaded broker (the late
# ones were left "being confirmed").
SECONDS_PER_BATCHED_TOPIC = 0.1


def create_topics(
    connection: Connection,
    topics: list[NewTopicSpec],
    *,
    timeout_seconds: float | None = None,
) -> dict[str, KafkaGatewayError | None]:
    """One CreateTopics request for all of them: each topic's own answer (None when created). Kafka answers
    each topic of the request separately, so one refused leaves the others created."""
    if timeout_seconds is None:
        timeout_seconds = DEFAULT_TIMEOUT_SECONDS + SECONDS_PER_BATCHED_TOPIC * len(topics)
    admin = admin_client(connection, timeout_seconds)
    futures = admin.create_topics(
        [
            NewTopic(
                t.name,
                num_partitions=t.partitions,
                replication_factor=t.replication_factor,
                config=dict(t.configs),
            )
            for t in topics
        ],
        request_timeout=timeout_seconds,
        operation_timeout=timeout_seconds,  # not 0: see create_topic
    )
    answers: dict[str, KafkaGatewayError | None] = {}
    for topic in topics:
        try:
            await_result(futures[topic.name], "CreateTopics", timeout_seconds)
            answers[topic.name] = None
        except KafkaGatewayError as error:
            answers[topic.name] = error
    return answers


def delete_topic(
    connection: Connection, *, name: str, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    admin = admin_client(connection, timeout_seconds)
    # Not 0: see create_topic (a KRaft controller deletes nothing past its deadline).
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
    # Set explicitly, never 0: see create_topic.
    futures = admin.create_partitions(
        [NewPartitions(name, total)],
        validate_only=validate_only,
        request_timeout=timeout_seconds,
        operation_timeout=timeout_seconds,
    )
    await_result(futures[name], "CreatePartitions", timeout_seconds)
