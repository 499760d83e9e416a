"""Partition reassignments (protocol client: librdkafka 2.16 has no calls for them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from kio.schema.alter_partition_reassignments.v0 import request as alter_reassignments
from kio.schema.list_partition_reassignments.v0 import request as list_reassignments
from kio.static.primitive import i32, i32Timedelta

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    protocol_connection,
    raise_for_code,
)


@dataclass(frozen=True)
class OngoingReassignment:
    """A partition whose replica set is changing: `replicas` is the full set while it moves (target plus
    the replicas still to be removed)."""

    topic: str
    partition: int
    replicas: list[int]
    adding: list[int]
    removing: list[int]

    @property
    def target(self) -> list[int]:
        return [replica for replica in self.replicas if replica not in self.removing]


def alter_partition_reassignments(
    connection: Connection,
    targets: Mapping[tuple[str, int], list[int] | None],
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """AlterPartitionReassignments: moves each partition to its target replicas (the first leads when
    preferred); None cancels the partition's ongoing reassignment."""
    if not targets:
        return
    by_topic: dict[str, list[alter_reassignments.ReassignablePartition]] = {}
    for (topic, partition), replicas in targets.items():
        by_topic.setdefault(topic, []).append(
            alter_reassignments.ReassignablePartition(
                partition_index=i32(partition),
                replicas=None if replicas is None else tuple(i32(r) for r in replicas),
            )
        )
    request = alter_reassignments.AlterPartitionReassignmentsRequest(
        timeout=i32Timedelta.parse(timedelta(seconds=timeout_seconds)),
        topics=tuple(
            alter_reassignments.ReassignableTopic(name=topic, partitions=tuple(partitions))
            for topic, partitions in by_topic.items()
        ),
    )
    with protocol_connection(connection, timeout_seconds) as wire:
        response = wire.request(request)
    raise_for_code(int(response.error_code), response.error_message, "AlterPartitionReassignments")
    for topic_result in response.responses:
        for partition in topic_result.partitions:
            raise_for_code(
                int(partition.error_code),
                partition.error_message
                and f"{topic_result.name}-{partition.partition_index}: {partition.error_message}",
                "AlterPartitionReassignments",
            )


def list_partition_reassignments(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> list[OngoingReassignment]:
    """Every ongoing reassignment of the cluster (ListPartitionReassignments)."""
    request = list_reassignments.ListPartitionReassignmentsRequest(
        timeout=i32Timedelta.parse(timedelta(seconds=timeout_seconds)), topics=None
    )
    with protocol_connection(connection, timeout_seconds) as wire:
        response = wire.request(request)
    raise_for_code(int(response.error_code), response.error_message, "ListPartitionReassignments")
    return sorted(
        (
            OngoingReassignment(
                topic=topic.name,
                partition=int(partition.partition_index),
                replicas=[int(r) for r in partition.replicas],
                adding=[int(r) for r in partition.adding_replicas],
                removing=[int(r) for r in partition.removing_replicas],
            )
            for topic in response.topics
            for partition in topic.partitions
        ),
        key=lambda ongoing: (ongoing.topic, ongoing.partition),
    )
