"""The cluster as a whole: its brokers and controller (Metadata), and unregistering a broker."""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import KafkaException
from kio.schema.unregister_broker.v0.request import UnregisterBrokerRequest
from kio.static.primitive import i32

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    admin_client,
    protocol_connection,
    raise_for_code,
    raise_typed,
)


@dataclass(frozen=True)
class BrokerNode:
    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class ClusterDescription:
    cluster_id: str | None
    controller_id: int
    brokers: list[BrokerNode]
    topic_count: int
    partition_count: int
    offline_partitions: int
    # Partitions whose in-sync replicas are fewer than their replicas.
    under_replicated_partitions: int = 0


def describe_cluster(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> ClusterDescription:
    """Brokers, controller and partition health from one Metadata request."""
    admin = admin_client(connection, timeout_seconds)
    try:
        metadata = admin.list_topics(timeout=timeout_seconds)
    except KafkaException as error:
        raise_typed(error.args[0] if error.args else None, "Metadata request failed")
    partitions = [p for topic in metadata.topics.values() for p in topic.partitions.values()]
    return ClusterDescription(
        cluster_id=metadata.cluster_id,
        controller_id=metadata.controller_id,
        brokers=sorted(
            (BrokerNode(node_id=b.id, host=b.host, port=b.port) for b in metadata.brokers.values()),
            key=lambda node: node.node_id,
        ),
        topic_count=len(metadata.topics),
        partition_count=len(partitions),
        offline_partitions=sum(1 for p in partitions if p.leader < 0),
        under_replicated_partitions=sum(1 for p in partitions if len(p.isrs) < len(p.replicas)),
    )


def unregister_broker(
    connection: Connection, *, node_id: int, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    """UnregisterBroker: the controller forgets a broker that was shut down for good."""
    with protocol_connection(connection, timeout_seconds) as wire:
        response = wire.request(UnregisterBrokerRequest(broker_id=i32(node_id)))
    raise_for_code(int(response.error_code), response.error_message, "UnregisterBroker")
