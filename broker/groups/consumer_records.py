"""Kafka's `__consumer_offsets` records of consumer-protocol (KIP-848) groups.

Key versions (Kafka calls them the record's api key) 3 to 8, as Kafka 4.0 writes them:
3 ConsumerGroupMetadata (group epoch), 4 ConsumerGroupPartitionMetadata (the subscribed topics
the target assignment was computed from), 5 ConsumerGroupMemberMetadata (one member's
subscription), 6 ConsumerGroupTargetAssignmentMetadata (assignment epoch),
7 ConsumerGroupTargetAssignmentMember (one member's target), 8 ConsumerGroupCurrentMemberAssignment
(one member's epochs and owned partitions). Keys use classic int16-length strings; every value is
version 0 of a flexible schema (compact strings and arrays, tagged fields, which we skip).
A null value is a tombstone.
"""

from __future__ import annotations

import dataclasses
import struct
import uuid
from dataclasses import dataclass

from broker.groups.offsets_format import OffsetsFormatError
from broker.metadata.coordinator_records import RecordReader, RecordWriter

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_ASSIGNMENT_METADATA = 6
TARGET_ASSIGNMENT_MEMBER = 7
CURRENT_MEMBER_ASSIGNMENT = 8
CONSUMER_RECORD_TYPES = frozenset(range(GROUP_METADATA, CURRENT_MEMBER_ASSIGNMENT + 1))
_MEMBER_RECORD_TYPES = frozenset({MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT})

TopicPartitions = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class ConsumerRecordKey:
    record_type: int
    group_id: str
    member_id: str | None = None  # only in member records (5, 7, 8)


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    topic_id: uuid.UUID
    name: str
    partitions: int


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """What a classic-protocol member of a consumer group joined with (tag 0 of the member
    metadata): its protocols (name, ConsumerProtocolSubscription bytes) and session timeout."""

    session_timeout_ms: int
    supported_protocols: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class MemberMetadataValue:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic: ClassicMemberMetadata | None = None  # None: a consumer-protocol member


@dataclass(frozen=True, slots=True)
class CurrentAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: TopicPartitions
    pending_revocation: TopicPartitions


class _RecordWriter(RecordWriter):
    def int8(self, value: int) -> None:
        self.parts.append(struct.pack(">b", value))

    def uuid(self, value: uuid.UUID) -> None:
        self.parts.append(value.bytes)

    def topic_partitions(self, value: TopicPartitions) -> None:
        self.array_length(len(value))
        for topic_id, partitions in value:
            self.uuid(topic_id)
            self.array_length(len(partitions))
            for partition in partitions:
                self.int32(partition)
            self.no_tagged_fields()


class _RecordReader(RecordReader):
    def int8(self) -> int:
        return struct.unpack(">b", self._take(1))[0]

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(bytes=bytes(self._take(16)))

    def topic_partitions(self) -> TopicPartitions:
        topics = []
        for _ in range(self.array_length()):
            topic_id = self.uuid()
            partitions = tuple(self.int32() for _ in range(self.array_length()))
            self.skip_tagged_fields()  # KIP-1251's AssignmentEpochs, when a newer Kafka wrote it
            topics.append((topic_id, partitions))
        return tuple(topics)


def _value_writer() -> _RecordWriter:
    writer = _RecordWriter(flexible=True)
    writer.int16(0)
    return writer


def _value_reader(data: bytes) -> _RecordReader:
    reader = _RecordReader(data, flexible=True)
    version = reader.int16()
    if version != 0:
        raise OffsetsFormatError(f"unknown consumer group record value version {version}")
    return reader


def _finish(reader: _RecordReader) -> None:
    reader.skip_tagged_fields()
    reader.expect_end()


# --- keys --------------------------------------------------------------------------------------


def encode_key(key: ConsumerRecordKey) -> bytes:
    writer = _RecordWriter()
    writer.int16(key.record_type)
    writer.string(key.group_id)
    if key.record_type in _MEMBER_RECORD_TYPES:
        writer.string(key.member_id or "")
    return writer.getvalue()


def decode_key(data: bytes) -> ConsumerRecordKey | None:
    """The key of a consumer group record; None for the other record types of the topic."""
    reader = _RecordReader(data)
    record_type = reader.int16()
    if record_type not in CONSUMER_RECORD_TYPES:
        return None
    group_id = reader.string()
    member_id = reader.string() if record_type in _MEMBER_RECORD_TYPES else None
    reader.expect_end()
    return ConsumerRecordKey(record_type, group_id, member_id)


# --- values ------------------------------------------------------------------------------------


def encode_epoch(epoch: int) -> bytes:
    """ConsumerGroupMetadataValue (group epoch) and TargetAssignmentMetadataValue (assignment epoch)."""
    writer = _value_writer()
    writer.int32(epoch)
    writer.no_tagged_fields()
    return writer.getvalue()


def decode_epoch(data: bytes) -> int:
    reader = _value_reader(data)
    epoch = reader.int32()
    _finish(reader)
    return epoch


def encode_partition_metadata(epoch: int, topics: tuple[TopicMetadata, ...]) -> bytes:
    writer = _value_writer()
    writer.int32(epoch)
    writer.array_length(len(topics))
    for topic in topics:
        writer.uuid(topic.topic_id)
        writer.string(topic.name)
        writer.int32(topic.partitions)
        writer.array_length(0)  # partition racks: not kept, the assignors read them from the metadata image
        writer.no_tagged_fields()
    writer.no_tagged_fields()
    return writer.getvalue()


def decode_partition_metadata(data: bytes) -> tuple[int, tuple[TopicMetadata, ...]]:
    reader = _value_reader(data)
    epoch = reader.int32()
    topics = []
    for _ in range(reader.array_length()):
        topic_id = reader.uuid()
        name = reader.string()
        partitions = reader.int32()
        for _rack_entry in range(reader.array_length()):
            reader.int32()
            for _rack in range(reader.array_length()):
                reader.string()
            reader.skip_tagged_fields()
        reader.skip_tagged_fields()
        topics.append(TopicMetadata(topic_id, name, partitions))
    _finish(reader)
    return epoch, tuple(topics)


def encode_member_metadata(value: MemberMetadataValue) -> bytes:
    writer = _value_writer()
    writer.string(value.instance_id)
    writer.string(value.rack_id)
    writer.string(value.client_id)
    writer.string(value.client_host)
    writer.array_length(len(value.subscribed_topic_names))
    for name in value.subscribed_topic_names:
        writer.string(name)
    writer.string(value.subscribed_topic_regex)
    writer.int32(value.rebalance_timeout_ms)
    writer.string(value.server_assignor)
    if value.classic is None:
        writer.no_tagged_fields()
    else:
        classic = _RecordWriter(flexible=True)
        classic.int32(value.classic.session_timeout_ms)
        classic.array_length(len(value.classic.supported_protocols))
        for name, metadata in value.classic.supported_protocols:
            classic.string(name)
            classic.bytes_(metadata)
            classic.no_tagged_fields()
        classic.no_tagged_fields()
        payload = classic.getvalue()
        writer.uvarint(1)  # one tagged field: tag 0, ClassicMemberMetadata
        writer.uvarint(_CLASSIC_MEMBER_METADATA_TAG)
        writer.uvarint(len(payload))
        writer.parts.append(payload)
    return writer.getvalue()


_CLASSIC_MEMBER_METADATA_TAG = 0


def _decode_classic_member_metadata(payload: bytes) -> ClassicMemberMetadata:
    reader = _RecordReader(payload, flexible=True)
    session_timeout_ms = reader.int32()
    protocols = []
    for _ in range(reader.array_length()):
        name = reader.string()
        metadata = reader.bytes_()
        reader.skip_tagged_fields()
        protocols.append((name, metadata))
    _finish(reader)
    return ClassicMemberMetadata(session_timeout_ms, tuple(protocols))


def decode_member_metadata(data: bytes) -> MemberMetadataValue:
    reader = _value_reader(data)
    value = MemberMetadataValue(
        instance_id=reader.nullable_string(),
        rack_id=reader.nullable_string(),
        client_id=reader.string(),
        client_host=reader.string(),
        subscribed_topic_names=tuple(reader.string() for _ in range(reader.array_length())),
        subscribed_topic_regex=reader.nullable_string(),
        rebalance_timeout_ms=reader.int32(),
        server_assignor=reader.nullable_string(),
    )
    classic = None
    for _ in range(reader.uvarint()):  # tagged fields: tag 0 is ClassicMemberMetadata
        tag, size = reader.uvarint(), reader.uvarint()
        payload = reader.take(size)
        if tag == _CLASSIC_MEMBER_METADATA_TAG:
            classic = _decode_classic_member_metadata(payload)
    reader.expect_end()
    return dataclasses.replace(value, classic=classic)


def encode_target_member(assignment: TopicPartitions) -> bytes:
    writer = _value_writer()
    writer.topic_partitions(assignment)
    writer.no_tagged_fields()
    return writer.getvalue()


def decode_target_member(data: bytes) -> TopicPartitions:
    reader = _value_reader(data)
    assignment = reader.topic_partitions()
    _finish(reader)
    return assignment


def encode_current_assignment(value: CurrentAssignmentValue) -> bytes:
    writer = _value_writer()
    writer.int32(value.member_epoch)
    writer.int32(value.previous_member_epoch)
    writer.int8(value.state)
    writer.topic_partitions(value.assigned)
    writer.topic_partitions(value.pending_revocation)
    writer.no_tagged_fields()
    return writer.getvalue()


def decode_current_assignment(data: bytes) -> CurrentAssignmentValue:
    reader = _value_reader(data)
    value = CurrentAssignmentValue(
        member_epoch=reader.int32(),
        previous_member_epoch=reader.int32(),
        state=reader.int8(),
        assigned=reader.topic_partitions(),
        pending_revocation=reader.topic_partitions(),
    )
    _finish(reader)
    return value
