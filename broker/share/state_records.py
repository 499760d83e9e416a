"""`__share_group_state` records as Kafka 4.2's share coordinator writes them (ShareSnapshotKey/Value).

Key: int16 record type 0 (ShareSnapshot), then GroupId (string), TopicId (uuid), Partition (int32), not
flexible. Value: int16 version 0, then SnapshotEpoch, StateEpoch, LeaderEpoch (int32), StartOffset,
CreateTimestamp, WriteTimestamp (int64) and StateBatches (FirstOffset, LastOffset, DeliveryState int8,
DeliveryCount int16), flexible. The partition holding a key is Kafka's: abs(hash("group:topicId:partition")), the topic id in Kafka's base64.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass

from broker.metadata.coordinator_records import (
    CoordinatorRecordError,
    RecordReader,
    RecordWriter,
    partition_for_key,
)

SHARE_STATE_TOPIC = "__share_group_state"
SHARE_SNAPSHOT = 0
SHARE_UPDATE = 1

StateBatch = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class ShareSnapshot:
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    state_batches: tuple[StateBatch, ...]


def share_coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """Kafka's coordinator key of a share-partition: the topic id as Kafka prints it (URL-safe base64, unpadded)."""
    printed = base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
    return f"{group_id}:{printed}:{partition}"


def is_share_coordinator_key(key: str) -> bool:
    """Whether `key` reads as Kafka's share coordinator key: group, base64 topic id and partition, by colons."""
    parts = key.split(":")
    if len(parts) != 3 or len(parts[1]) != 22 or not parts[2].lstrip("-").isdigit():
        return False
    try:
        return len(base64.urlsafe_b64decode(parts[1] + "==")) == 16
    except ValueError:
        return False


def share_state_partition(group_id: str, topic_id: uuid.UUID, partition: int, num_partitions: int) -> int:
    return partition_for_key(share_coordinator_key(group_id, topic_id, partition), num_partitions)


def encode_key(group_id: str, topic_id: uuid.UUID, partition: int) -> bytes:
    writer = RecordWriter()
    writer.int16(SHARE_SNAPSHOT)
    writer.string(group_id)
    writer.parts.append(topic_id.bytes)
    writer.int32(partition)
    return writer.getvalue()


def decode_key(data: bytes) -> tuple[str, uuid.UUID, int] | None:
    """(group, topic id, partition) of a snapshot key; None for the other record types (ShareUpdate)."""
    reader = RecordReader(data)
    if reader.int16() != SHARE_SNAPSHOT:
        return None
    group_id = reader.string()
    topic_id = uuid.UUID(bytes=reader.take(16))
    partition = reader.int32()
    reader.expect_end()
    return group_id, topic_id, partition


def encode_value(snapshot: ShareSnapshot) -> bytes:
    writer = RecordWriter(flexible=True)
    writer.int16(0)
    writer.int32(snapshot.snapshot_epoch)
    writer.int32(snapshot.state_epoch)
    writer.int32(snapshot.leader_epoch)
    writer.int64(snapshot.start_offset)
    writer.int64(snapshot.create_timestamp)
    writer.int64(snapshot.write_timestamp)
    writer.array_length(len(snapshot.state_batches))
    for first, last, state, count in snapshot.state_batches:
        writer.int64(first)
        writer.int64(last)
        writer.int8(state)
        writer.int16(count)
        writer.no_tagged_fields()
    writer.no_tagged_fields()
    return writer.getvalue()


def decode_value(data: bytes) -> ShareSnapshot:
    reader = RecordReader(data, flexible=True)
    version = reader.int16()
    if version != 0:
        raise CoordinatorRecordError(f"unknown ShareSnapshotValue version {version}")
    snapshot_epoch, state_epoch, leader_epoch = reader.int32(), reader.int32(), reader.int32()
    start_offset, created, written = reader.int64(), reader.int64(), reader.int64()
    batches = []
    for _ in range(reader.array_length()):
        batches.append((reader.int64(), reader.int64(), reader.int8(), reader.int16()))
        reader.skip_tagged_fields()
    reader.skip_tagged_fields()
    return ShareSnapshot(
        snapshot_epoch, state_epoch, leader_epoch, start_offset, created, written, tuple(batches)
    )
