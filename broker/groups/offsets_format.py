"""Kafka's own record format for the `__consumer_offsets` topic.

Every record key starts with an int16 "key version" that says what the record is:
0 and 1 are offset commits (group, topic, partition), 2 is group metadata (group).
Values start with their own int16 schema version. The layouts follow Kafka's
`OffsetCommitKey/Value.json` and `GroupMetadataKey/Value.json`: values 0-3 use
classic (int16-length) strings, version 4 is the first flexible version (compact
strings, unsigned-varint lengths, tagged fields).

A null value is a tombstone: the offset or the group was deleted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from broker.metadata.coordinator_records import (
    CoordinatorRecordError,
    RecordReader,
    RecordWriter,
    partition_for_key,
)

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
# Kafka 3.x writes the newest non-flexible versions: OffsetCommitValue v3 (v1 when
# the commit carries an explicit expire timestamp), GroupMetadataValue v3.
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3
FIRST_FLEXIBLE_VALUE_VERSION = 4


OffsetsFormatError = (
    CoordinatorRecordError  # a `__consumer_offsets` record that does not follow Kafka's schema
)


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    group: str


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    offset: int
    metadata: str
    commit_timestamp: int
    leader_epoch: int = -1
    expire_timestamp: int = -1


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    member_id: str
    client_id: str
    client_host: str
    session_timeout: int
    subscription: bytes
    assignment: bytes
    rebalance_timeout: int = -1
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: tuple[MemberMetadata, ...] = field(default_factory=tuple)


# --- writing -----------------------------------------------------------------------------------


def encode_offset_commit_key(key: OffsetCommitKey) -> bytes:
    writer = RecordWriter()
    writer.int16(OFFSET_COMMIT_KEY_VERSION)
    writer.string(key.group)
    writer.string(key.topic)
    writer.int32(key.partition)
    return writer.getvalue()


def encode_group_metadata_key(key: GroupMetadataKey) -> bytes:
    writer = RecordWriter()
    writer.int16(GROUP_METADATA_KEY_VERSION)
    writer.string(key.group)
    return writer.getvalue()


def offset_commit_value_version(value: OffsetCommitValue) -> int:
    """The version Kafka picks: only v1 can carry an expire timestamp."""
    if value.expire_timestamp >= 0:
        return OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY
    return OFFSET_COMMIT_VALUE_VERSION


def encode_offset_commit_value(value: OffsetCommitValue, version: int | None = None) -> bytes:
    if version is None:
        version = offset_commit_value_version(value)
    if not 0 <= version <= 4:
        raise OffsetsFormatError(f"unknown OffsetCommitValue version {version}")
    writer = RecordWriter(flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
    writer.int16(version)
    writer.int64(value.offset)
    if version >= 3:
        writer.int32(value.leader_epoch)
    writer.string(value.metadata)
    writer.int64(value.commit_timestamp)
    if version == 1:
        writer.int64(value.expire_timestamp)
    writer.no_tagged_fields()
    return writer.getvalue()


def encode_group_metadata_value(
    value: GroupMetadataValue, version: int = GROUP_METADATA_VALUE_VERSION
) -> bytes:
    if not 0 <= version <= 4:
        raise OffsetsFormatError(f"unknown GroupMetadataValue version {version}")
    writer = RecordWriter(flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
    writer.int16(version)
    writer.string(value.protocol_type)
    writer.int32(value.generation)
    writer.string(value.protocol)
    writer.string(value.leader)
    if version >= 2:
        writer.int64(value.current_state_timestamp)
    writer.array_length(len(value.members))
    for member in value.members:
        writer.string(member.member_id)
        if version >= 3:
            writer.string(member.group_instance_id)
        writer.string(member.client_id)
        writer.string(member.client_host)
        if version >= 1:
            writer.int32(member.rebalance_timeout)
        writer.int32(member.session_timeout)
        writer.bytes_(member.subscription)
        writer.bytes_(member.assignment)
        writer.no_tagged_fields()
    writer.no_tagged_fields()
    return writer.getvalue()


# --- reading -----------------------------------------------------------------------------------


def decode_key(data: bytes) -> OffsetCommitKey | GroupMetadataKey | None:
    """Decodes a record key; None for key versions this coordinator does not use (e.g. KIP-848)."""
    reader = RecordReader(data)
    version = reader.int16()
    if version in (0, 1):
        key: OffsetCommitKey | GroupMetadataKey = OffsetCommitKey(
            group=reader.string(), topic=reader.string(), partition=reader.int32()
        )
    elif version == GROUP_METADATA_KEY_VERSION:
        key = GroupMetadataKey(group=reader.string())
    else:
        return None
    reader.expect_end()
    return key


def decode_offset_commit_value(data: bytes) -> OffsetCommitValue:
    version = struct.unpack(">h", data[:2])[0] if len(data) >= 2 else -1
    if not 0 <= version <= 4:
        raise OffsetsFormatError(f"unknown OffsetCommitValue version {version}")
    reader = RecordReader(data, flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
    reader.int16()
    offset = reader.int64()
    leader_epoch = reader.int32() if version >= 3 else -1
    metadata = reader.string()
    commit_timestamp = reader.int64()
    expire_timestamp = reader.int64() if version == 1 else -1
    reader.skip_tagged_fields()
    reader.expect_end()
    return OffsetCommitValue(
        offset=offset,
        metadata=metadata,
        commit_timestamp=commit_timestamp,
        leader_epoch=leader_epoch,
        expire_timestamp=expire_timestamp,
    )


def decode_group_metadata_value(data: bytes) -> GroupMetadataValue:
    version = struct.unpack(">h", data[:2])[0] if len(data) >= 2 else -1
    if not 0 <= version <= 4:
        raise OffsetsFormatError(f"unknown GroupMetadataValue version {version}")
    reader = RecordReader(data, flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
    reader.int16()
    protocol_type = reader.string()
    generation = reader.int32()
    protocol = reader.nullable_string()
    leader = reader.nullable_string()
    current_state_timestamp = reader.int64() if version >= 2 else -1
    members = []
    for _ in range(reader.array_length()):
        member_id = reader.string()
        group_instance_id = reader.nullable_string() if version >= 3 else None
        client_id = reader.string()
        client_host = reader.string()
        rebalance_timeout = reader.int32() if version >= 1 else -1
        session_timeout = reader.int32()
        subscription = reader.bytes_()
        assignment = reader.bytes_()
        reader.skip_tagged_fields()
        members.append(
            MemberMetadata(
                member_id=member_id,
                group_instance_id=group_instance_id,
                client_id=client_id,
                client_host=client_host,
                rebalance_timeout=rebalance_timeout if version >= 1 else session_timeout,
                session_timeout=session_timeout,
                subscription=subscription,
                assignment=assignment,
            )
        )
    reader.skip_tagged_fields()
    reader.expect_end()
    return GroupMetadataValue(
        protocol_type=protocol_type,
        generation=generation,
        protocol=protocol,
        leader=leader,
        current_state_timestamp=current_state_timestamp,
        members=tuple(members),
    )


def partition_for_group(group_id: str, num_partitions: int) -> int:
    """The `__consumer_offsets` partition that holds a group, exactly as Kafka computes it."""
    return partition_for_key(group_id, num_partitions)
