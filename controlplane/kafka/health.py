"""Cluster health in one look, for the alert rules on brokers, partitions and disks."""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import KafkaException
from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest as DescribeLogDirsRequestV4

from controlplane.kafka.configs import describe_topic_configs
from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    admin_client,
    protocol_connection,
    raise_typed,
)
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.wire import WireConnection


@dataclass(frozen=True)
class ClusterHealthReport:
    """What the cluster says about its own health in one look: listed (unfenced) brokers, the controller,
    partition replication against each topic's `min.insync.replicas`, and each broker's fullest log-dir
    volume (DescribeLogDirs v4; None when the broker did not say or could not be asked)."""

    controller_id: int
    broker_ids: frozenset[int]
    partition_count: int
    under_replicated_partitions: int
    offline_partitions: int
    under_min_isr_partitions: int
    disk_used_percent: dict[int, float | None]


def _volume_used_percent(wire: WireConnection) -> float | None:
    # No topics asked: the answer carries only each log dir's volume sizes, not every partition's size.
    response = wire.request(DescribeLogDirsRequestV4(topics=()))
    used = [
        100.0 * (int(result.total_bytes) - int(result.usable_bytes)) / int(result.total_bytes)
        for result in response.results
        if result.error_code == 0 and int(result.total_bytes) > 0 and int(result.usable_bytes) >= 0
    ]
    return max(used) if used else None


def describe_cluster_health(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> ClusterHealthReport:
    """One Metadata request, one DescribeConfigs over the topics (their effective min.insync.replicas) and
    one DescribeLogDirs per listed broker. Raises ClusterUnreachable (and the other gateway errors) when the
    cluster cannot be asked at all; a single broker that cannot be asked for its disks reads as unknown."""
    admin = admin_client(connection, timeout_seconds)
    try:
        metadata = admin.list_topics(timeout=timeout_seconds)
    except KafkaException as error:
        raise_typed(error.args[0] if error.args else None, "Metadata request failed")
    topics = {name: topic for name, topic in metadata.topics.items() if topic.error is None}
    min_isr: dict[str, int] = {}
    if topics:
        configs = describe_topic_configs(connection, topics, timeout_seconds=timeout_seconds)
        for name, entries in configs.items():
            value = entries.get("min.insync.replicas")
            min_isr[name] = int(value.value) if value is not None and value.value else 1
    partitions = [(name, p) for name, topic in topics.items() for p in topic.partitions.values()]
    disks: dict[int, float | None] = {}
    for broker in metadata.brokers.values():
        try:
            with protocol_connection(connection, timeout_seconds, f"{broker.host}:{broker.port}") as wire:
                disks[broker.id] = _volume_used_percent(wire)
        except KafkaGatewayError:
            disks[broker.id] = None
    return ClusterHealthReport(
        controller_id=metadata.controller_id,
        broker_ids=frozenset(metadata.brokers),
        partition_count=len(partitions),
        under_replicated_partitions=sum(1 for _, p in partitions if len(p.isrs) < len(p.replicas)),
        offline_partitions=sum(1 for _, p in partitions if p.leader < 0),
        under_min_isr_partitions=sum(
            1 for name, p in partitions if p.leader >= 0 and len(p.isrs) < min_isr.get(name, 1)
        ),
        disk_used_percent=disks,
    )
