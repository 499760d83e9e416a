"""Consumer groups: listed, described, their committed offsets read, altered and deleted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.offset_delete.v0 import request as offset_delete
from kio.static.primitive import i8, i32

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    admin_client,
    await_result,
    protocol_connection,
    raise_for_code,
    raise_typed,
)


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    client_id: str
    host: str
    assignments: list[tuple[str, int]]


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol: str
    members: list[GroupMember]


def list_groups(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, str]:
    """Every consumer group id with its state."""
    admin = admin_client(connection, timeout_seconds)
    result = await_result(
        admin.list_consumer_groups(request_timeout=timeout_seconds), "ListGroups", timeout_seconds
    )
    return {listing.group_id: listing.state.name for listing in result.valid}


def describe_groups(
    connection: Connection, group_ids: Iterable[str], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, GroupDescription]:
    ids = list(group_ids)
    if not ids:
        return {}
    admin = admin_client(connection, timeout_seconds)
    futures = admin.describe_consumer_groups(ids, request_timeout=timeout_seconds)
    described = {}
    for group_id, future in futures.items():
        group = await_result(future, "DescribeGroups", timeout_seconds)
        members = [
            GroupMember(
                member_id=member.member_id,
                client_id=member.client_id,
                host=member.host,
                assignments=sorted(
                    (tp.topic, tp.partition)
                    for tp in (member.assignment.topic_partitions if member.assignment else [])
                ),
            )
            for member in group.members
        ]
        described[group_id] = GroupDescription(
            group_id=group_id,
            state=group.state.name,
            protocol=group.partition_assignor or "",
            members=members,
        )
    return described


def list_group_offsets(
    connection: Connection, group_ids: Iterable[str], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, dict[tuple[str, int], int]]:
    """Committed offsets of each group (librdkafka asks one group per request, so they go out together)."""
    ids = list(group_ids)
    if not ids:
        return {}
    admin = admin_client(connection, timeout_seconds)
    futures = {
        group_id: admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id)], request_timeout=timeout_seconds
        )[group_id]
        for group_id in ids
    }
    offsets = {}
    for group_id, future in futures.items():
        result = await_result(future, "OffsetFetch", timeout_seconds)
        offsets[group_id] = {
            (tp.topic, tp.partition): int(tp.offset) for tp in result.topic_partitions if tp.offset >= 0
        }
    return offsets


def alter_group_offsets(
    connection: Connection,
    *,
    group_id: str,
    offsets: Mapping[tuple[str, int], int],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """Commits the given offsets for the group (the cluster refuses while the group has members)."""
    admin = admin_client(connection, timeout_seconds)
    request = ConsumerGroupTopicPartitions(
        group_id, [TopicPartition(topic, partition, offset) for (topic, partition), offset in offsets.items()]
    )
    future = admin.alter_consumer_group_offsets([request], request_timeout=timeout_seconds)[group_id]
    result = await_result(future, "OffsetCommit", timeout_seconds)
    for tp in result.topic_partitions:
        if tp.error is not None:
            raise_typed(tp.error, "OffsetCommit failed")


def delete_group(
    connection: Connection, *, group_id: str, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    admin = admin_client(connection, timeout_seconds)
    future = admin.delete_consumer_groups([group_id], request_timeout=timeout_seconds)[group_id]
    await_result(future, "DeleteGroups", timeout_seconds)


def delete_group_offsets(
    connection: Connection,
    *,
    group_id: str,
    topic: str,
    partitions: Iterable[int],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """OffsetDelete (librdkafka lacks it) at the group's coordinator."""
    with protocol_connection(connection, timeout_seconds) as wire:
        coordinator = wire.request(FindCoordinatorRequest(key=group_id, key_type=i8(0)))
    raise_for_code(int(coordinator.error_code), coordinator.error_message, "FindCoordinator")
    request = offset_delete.OffsetDeleteRequest(
        group_id=group_id,
        topics=(
            offset_delete.OffsetDeleteRequestTopic(
                name=topic,
                partitions=tuple(
                    offset_delete.OffsetDeleteRequestPartition(partition_index=i32(p)) for p in partitions
                ),
            ),
        ),
    )
    with protocol_connection(connection, timeout_seconds, f"{coordinator.host}:{coordinator.port}") as wire:
        response = wire.request(request)
    raise_for_code(int(response.error_code), None, "OffsetDelete")
    for topic_result in response.topics:
        for partition in topic_result.partitions:
            raise_for_code(int(partition.error_code), None, "OffsetDelete")
