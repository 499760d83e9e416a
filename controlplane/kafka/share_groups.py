"""Share groups (KIP-932) and Streams groups (KIP-1071) over the Kafka protocol: described, their share-partition
start offsets and lag read, altered and deleted, their group configs read and changed. librdkafka's admin API
has none of these, so they go over the wire, to the group's coordinator."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kio.schema.alter_share_group_offsets.v0 import request as alter_offsets
from kio.schema.delete_share_group_offsets.v0 import request as delete_offsets
from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource
from kio.schema.describe_share_group_offsets.v1 import request as describe_offsets
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.incremental_alter_configs.v1 import request as alter_configs
from kio.schema.share_group_describe.v1.request import ShareGroupDescribeRequest
from kio.schema.streams_group_describe.v0.request import StreamsGroupDescribeRequest
from kio.static.primitive import i8, i32, i64

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    protocol_connection,
    raise_for_code,
)

# ConfigResource.Type GROUP in DescribeConfigs/IncrementalAlterConfigs (not the ACL resource type 3).
GROUP_CONFIG_RESOURCE = 32
_SET, _DELETE = 0, 1
# Group configs a share group's page shows and lets its owners change (Kafka 4.2's names).
SHARE_GROUP_CONFIGS = (
    "share.record.lock.duration.ms",
    "share.auto.offset.reset",
    "share.isolation.level",
    "share.session.timeout.ms",
    "share.heartbeat.interval.ms",
)

Partition = tuple[str, int]
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE: retriable.
_COORDINATOR_PENDING = frozenset({14, 15})
# DescribeConfigs' ConfigSource numbers, by Kafka's names.
_CONFIG_SOURCES = {
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    8: "GROUP_CONFIG",
}


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    client_id: str
    host: str
    member_epoch: int
    subscribed_topics: list[str]
    assignments: list[Partition]


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    state: str  # Kafka's spelling: Empty, Stable, Dead
    group_epoch: int
    assignor: str
    members: list[ShareMember]


@dataclass(frozen=True)
class SharePartitionOffset:
    start_offset: int  # the share-partition start offset (SPSO); -1 while the group never read it
    lag: int  # records from the SPSO to the end not yet acknowledged; -1 when the broker cannot tell


@dataclass(frozen=True)
class StreamsTasks:
    active: dict[str, list[int]] = field(default_factory=dict)  # subtopology id -> partitions
    standby: dict[str, list[int]] = field(default_factory=dict)
    warmup: dict[str, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamsMember:
    member_id: str
    client_id: str
    host: str
    process_id: str
    member_epoch: int
    tasks: StreamsTasks


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: list[str]
    repartition_sink_topics: list[str]
    state_changelog_topics: list[str]
    repartition_source_topics: list[str]


@dataclass(frozen=True)
class StreamsGroupDescription:
    group_id: str
    state: str  # Kafka's spelling: Empty, NotReady, Assigning, Reconciling, Stable, Dead
    group_epoch: int
    topology_epoch: int
    subtopologies: list[Subtopology]
    members: list[StreamsMember]


def coordinator_address(
    connection: Connection, group_id: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> str:
    """The group coordinator's address. A cluster creates __consumer_offsets on the first FindCoordinator, so
    the first answers may say the coordinator is not there yet: asked again, as clients do."""
    deadline = time.monotonic() + timeout_seconds
    with protocol_connection(connection, timeout_seconds) as wire:
        while True:
            found = wire.request(FindCoordinatorRequest(key=group_id, key_type=i8(0)))
            if int(found.error_code) not in _COORDINATOR_PENDING or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    raise_for_code(int(found.error_code), found.error_message, "FindCoordinator")
    return f"{found.host}:{int(found.port)}"


def _at_coordinator(connection: Connection, group_id: str, request: object, timeout_seconds: float) -> object:
    address = coordinator_address(connection, group_id, timeout_seconds=timeout_seconds)
    with protocol_connection(connection, timeout_seconds, address) as wire:
        return wire.request(request)


def describe_share_group(
    connection: Connection, group_id: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> ShareGroupDescription | None:
    """ShareGroupDescribe; None when there is no share group of that id."""
    request = ShareGroupDescribeRequest(group_ids=(group_id,), include_authorized_operations=False)
    (group,) = _at_coordinator(connection, group_id, request, timeout_seconds).groups
    if int(group.error_code) == 69:  # GROUP_ID_NOT_FOUND
        return None
    raise_for_code(int(group.error_code), group.error_message, "ShareGroupDescribe")
    return ShareGroupDescription(
        group_id=group.group_id,
        state=group.group_state,
        group_epoch=int(group.group_epoch),
        assignor=group.assignor_name,
        members=[
            ShareMember(
                member_id=m.member_id,
                client_id=m.client_id,
                host=m.client_host,
                member_epoch=int(m.member_epoch),
                subscribed_topics=sorted(m.subscribed_topic_names),
                assignments=sorted(
                    (tp.topic_name, int(p)) for tp in m.assignment.topic_partitions for p in tp.partitions
                ),
            )
            for m in group.members
        ],
    )


def share_group_offsets(
    connection: Connection, group_id: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[Partition, SharePartitionOffset]:
    """DescribeShareGroupOffsets v1 for every partition the group has state for."""
    request = describe_offsets.DescribeShareGroupOffsetsRequest(
        groups=(describe_offsets.DescribeShareGroupOffsetsRequestGroup(group_id=group_id, topics=None),)
    )
    (group,) = _at_coordinator(connection, group_id, request, timeout_seconds).groups
    raise_for_code(int(group.error_code), group.error_message, "DescribeShareGroupOffsets")
    return {
        (topic.topic_name, int(p.partition_index)): SharePartitionOffset(int(p.start_offset), int(p.lag))
        for topic in group.topics
        for p in topic.partitions
        if int(p.error_code) == 0
    }


def alter_share_group_offsets(
    connection: Connection,
    *,
    group_id: str,
    offsets: Mapping[Partition, int],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """AlterShareGroupOffsets: new start offsets (Kafka refuses with GROUP_NOT_EMPTY while members are in)."""
    topics: dict[str, list[alter_offsets.AlterShareGroupOffsetsRequestPartition]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        topics.setdefault(topic, []).append(
            alter_offsets.AlterShareGroupOffsetsRequestPartition(
                partition_index=i32(partition), start_offset=i64(offset)
            )
        )
    request = alter_offsets.AlterShareGroupOffsetsRequest(
        group_id=group_id,
        topics=tuple(
            alter_offsets.AlterShareGroupOffsetsRequestTopic(topic_name=name, partitions=tuple(partitions))
            for name, partitions in topics.items()
        ),
    )
    response = _at_coordinator(connection, group_id, request, timeout_seconds)
    raise_for_code(int(response.error_code), response.error_message, "AlterShareGroupOffsets")
    for topic in response.responses:
        for partition in topic.partitions:
            raise_for_code(int(partition.error_code), partition.error_message, "AlterShareGroupOffsets")


def delete_share_group_offsets(
    connection: Connection,
    *,
    group_id: str,
    topics: Iterable[str],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """DeleteShareGroupOffsets: forgets the group's state of whole topics."""
    request = delete_offsets.DeleteShareGroupOffsetsRequest(
        group_id=group_id,
        topics=tuple(
            delete_offsets.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in sorted(topics)
        ),
    )
    response = _at_coordinator(connection, group_id, request, timeout_seconds)
    raise_for_code(int(response.error_code), response.error_message, "DeleteShareGroupOffsets")
    for topic in response.responses:
        raise_for_code(int(topic.error_code), topic.error_message, "DeleteShareGroupOffsets")


def _tasks(task_ids: Iterable[object]) -> dict[str, list[int]]:
    return {t.subtopology_id: sorted(int(p) for p in t.partitions) for t in task_ids}


def describe_streams_group(
    connection: Connection, group_id: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> StreamsGroupDescription | None:
    """StreamsGroupDescribe; None when there is no Streams group of that id."""
    request = StreamsGroupDescribeRequest(group_ids=(group_id,), include_authorized_operations=False)
    (group,) = _at_coordinator(connection, group_id, request, timeout_seconds).groups
    if int(group.error_code) == 69:  # GROUP_ID_NOT_FOUND
        return None
    raise_for_code(int(group.error_code), group.error_message, "StreamsGroupDescribe")
    topology = group.topology
    return StreamsGroupDescription(
        group_id=group.group_id,
        state=group.group_state,
        group_epoch=int(group.group_epoch),
        topology_epoch=int(topology.epoch) if topology is not None else -1,
        subtopologies=[
            Subtopology(
                subtopology_id=s.subtopology_id,
                source_topics=sorted(s.source_topics),
                repartition_sink_topics=sorted(s.repartition_sink_topics),
                state_changelog_topics=sorted(t.name for t in s.state_changelog_topics),
                repartition_source_topics=sorted(t.name for t in s.repartition_source_topics),
            )
            for s in (topology.subtopologies or () if topology is not None else ())
        ],
        members=[
            StreamsMember(
                member_id=m.member_id,
                client_id=m.client_id,
                host=m.client_host,
                process_id=m.process_id,
                member_epoch=int(m.member_epoch),
                tasks=StreamsTasks(
                    active=_tasks(m.assignment.active_tasks),
                    standby=_tasks(m.assignment.standby_tasks),
                    warmup=_tasks(m.assignment.warmup_tasks),
                ),
            )
            for m in group.members
        ],
    )


def describe_group_configs(
    connection: Connection, group_id: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> dict[str, tuple[str | None, str]]:
    """The group's configs: name -> (value, Kafka's source name)."""
    request = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=i8(GROUP_CONFIG_RESOURCE), resource_name=group_id, configuration_keys=None
            ),
        ),
        include_synonyms=False,
        include_documentation=False,
    )
    with protocol_connection(connection, timeout_seconds) as wire:
        (result,) = wire.request(request).results
    raise_for_code(int(result.error_code), result.error_message, "DescribeConfigs")
    return {
        entry.name: (entry.value, _CONFIG_SOURCES.get(int(entry.config_source), "UNKNOWN"))
        for entry in result.configs
    }


def alter_group_configs(
    connection: Connection,
    *,
    group_id: str,
    set_configs: Mapping[str, str],
    delete_configs: Iterable[str] = (),
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """IncrementalAlterConfigs of a GROUP resource (the broker checks names and bounds)."""
    entries = [
        alter_configs.AlterableConfig(name=name, config_operation=i8(_SET), value=str(value))
        for name, value in set_configs.items()
    ] + [
        alter_configs.AlterableConfig(name=name, config_operation=i8(_DELETE), value=None)
        for name in delete_configs
    ]
    if not entries:
        return
    request = alter_configs.IncrementalAlterConfigsRequest(
        resources=(
            alter_configs.AlterConfigsResource(
                resource_type=i8(GROUP_CONFIG_RESOURCE), resource_name=group_id, configs=tuple(entries)
            ),
        ),
        validate_only=False,
    )
    with protocol_connection(connection, timeout_seconds) as wire:
        (result,) = wire.request(request).responses
    raise_for_code(int(result.error_code), result.error_message, "IncrementalAlterConfigs")
