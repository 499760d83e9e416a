"""Bytes on disk: every replica's size and each broker's log directories (DescribeLogDirs, which
librdkafka lacks)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from confluent_kafka import KafkaError
from kio.schema.describe_log_dirs.v1.request import DescribableLogDirTopic, DescribeLogDirsRequest
from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest as DescribeLogDirsRequestV4
from kio.static.primitive import i32

from controlplane.kafka.cluster import BrokerNode, describe_cluster
from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    protocol_connection,
    raise_for_code,
)


def describe_partition_sizes(
    connection: Connection,
    *,
    partitions: Mapping[str, list[int]] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int], int]:
    """Bytes on disk per (topic, partition) — of the given partitions, or of all — summed over every
    broker (DescribeLogDirs, which librdkafka lacks). Replicas count once each, so a replicated partition
    shows its total footprint."""
    sizes: dict[tuple[str, int], int] = {}
    for (topic, partition, _node_id), size in describe_replica_sizes(
        connection, partitions=partitions, timeout_seconds=timeout_seconds
    ).items():
        sizes[(topic, partition)] = sizes.get((topic, partition), 0) + size
    return sizes


def describe_replica_sizes(
    connection: Connection,
    *,
    partitions: Mapping[str, list[int]] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> dict[tuple[str, int, int], int]:
    """Bytes on disk per (topic, partition, broker id): each broker's own replicas (DescribeLogDirs asked
    of every broker the cluster lists)."""
    description = describe_cluster(connection, timeout_seconds=timeout_seconds)
    wanted = None
    if partitions is not None:
        wanted = tuple(
            DescribableLogDirTopic(topic=topic, partitions=tuple(i32(p) for p in numbers))
            for topic, numbers in partitions.items()
        )
    sizes: dict[tuple[str, int, int], int] = {}
    for node in description.brokers:
        with protocol_connection(connection, timeout_seconds, f"{node.host}:{node.port}") as wire:
            response = wire.request(DescribeLogDirsRequest(topics=wanted))
        for result in response.results:
            for topic in result.topics:
                for partition in topic.partitions:
                    key = (topic.name, int(partition.partition_index), node.node_id)
                    sizes[key] = sizes.get(key, 0) + int(partition.partition_size)
    return sizes


@dataclass(frozen=True)
class LogDir:
    """One log directory of a broker: its volume's size and free space (-1: the broker does not say), the
    bytes of each replica it holds, and Kafka's error for a directory it cannot use."""

    path: str
    error: str | None
    total_bytes: int
    usable_bytes: int
    replica_bytes: dict[tuple[str, int], int]

    @property
    def size_bytes(self) -> int:
        return sum(self.replica_bytes.values())


def describe_log_dirs(
    connection: Connection, broker: BrokerNode, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> list[LogDir]:
    """The broker's log directories with every replica's size (DescribeLogDirs v4, asked of that broker)."""
    with protocol_connection(connection, timeout_seconds, f"{broker.host}:{broker.port}") as wire:
        response = wire.request(DescribeLogDirsRequestV4(topics=None))
    raise_for_code(int(response.error_code), None, "DescribeLogDirs")
    return [
        LogDir(
            path=result.log_dir,
            error=None if int(result.error_code) == 0 else KafkaError(int(result.error_code)).name(),
            total_bytes=int(result.total_bytes),
            usable_bytes=int(result.usable_bytes),
            replica_bytes={
                (topic.name, int(partition.partition_index)): int(partition.partition_size)
                for topic in result.topics
                for partition in topic.partitions
            },
        )
        for result in response.results
    ]
