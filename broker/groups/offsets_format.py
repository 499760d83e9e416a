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

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
# Kafka 3.x writes the newest non-flexible versions: OffsetCommitValue v3 (v1 when
# the commit carries an explicit expire timestamp), GroupMetadataValue v3.
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3
FIRST_FLEXIBLE_VALUE_VERSION = 4


class OffsetsFormatError(ValueError):
    """A `__consumer_offsets` record that does not follow Kafka's schema."""


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


class _Writer:
    def __init__(self, flexible: bool = False) -> None:
        self.flexible = flexible
        self.parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self.parts.append(struct.pack(">h", value))

    def int32(self, value: int) -> None:
        self.parts.append(struct.pack(">i", value))

    def int64(self, value: int) -> None:
        self.parts.append(struct.pack(">q", value))

    def uvarint(self, value: int) -> None:
        out = bytearray()
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        self.parts.append(bytes(out))

    def string(self, value: str | None) -> None:
        if value is None:
            if self.flexible:
                self.uvarint(0)
            else:
                self.int16(-1)
            return
        encoded = value.encode()
        if self.flexible:
            self.uvarint(len(encoded) + 1)
        else:
            if len(encoded) > 0x7FFF:
                raise OffsetsFormatError("string longer than 32767 bytes")
            self.int16(len(encoded))
        self.parts.append(encoded)

    def bytes_(self, value: bytes) -> None:
        if self.flexible:
            self.uvarint(len(value) + 1)
        else:
            self.int32(len(value))
        self.parts.append(value)

    def array_length(self, count: int) -> None:
        if self.flexible:
            self.uvarint(count + 1)
        else:
            self.int32(count)

    def no_tagged_fields(self) -> None:
        if self.flexible:
            self.uvarint(0)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def encode_offset_commit_key(key: OffsetCommitKey) -> bytes:
    writer = _Writer()
    writer.int16(OFFSET_COMMIT_KEY_VERSION)
    writer.string(key.group)
    writer.string(key.topic)
    writer.int32(key.partition)
    return writer.getvalue()


def encode_group_metadata_key(key: GroupMetadataKey) -> bytes:
    writer = _Writer()
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
    writer = _Writer(flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
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
    writer = _Writer(flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
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


class _Reader:
    def __init__(self, data: bytes, flexible: bool = False) -> None:
        self.data = memoryview(data)
        self.position = 0
        self.flexible = flexible

    def _take(self, size: int) -> memoryview:
        end = self.position + size
        if size < 0 or end > len(self.data):
            raise OffsetsFormatError("record is truncated")
        chunk = self.data[self.position : end]
        self.position = end
        return chunk

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def uvarint(self) -> int:
        result = 0
        shift = 0
        while True:
            byte = self._take(1)[0]
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 35:
                raise OffsetsFormatError("varint is too long")

    def nullable_string(self) -> str | None:
        length = self.uvarint() - 1 if self.flexible else self.int16()
        if length < 0:
            return None
        try:
            return bytes(self._take(length)).decode()
        except UnicodeDecodeError as error:
            raise OffsetsFormatError("string is not UTF-8") from error

    def string(self) -> str:
        value = self.nullable_string()
        if value is None:
            raise OffsetsFormatError("null in a non-nullable string")
        return value

    def bytes_(self) -> bytes:
        length = self.uvarint() - 1 if self.flexible else self.int32()
        if length < 0:
            raise OffsetsFormatError("null in a non-nullable bytes field")
        return bytes(self._take(length))

    def array_length(self) -> int:
        length = self.uvarint() - 1 if self.flexible else self.int32()
        if length < 0:
            raise OffsetsFormatError("null array")
        return length

    def skip_tagged_fields(self) -> None:
        if not self.flexible:
            return
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint())

    def expect_end(self) -> None:
        if self.position != len(self.data):
            raise OffsetsFormatError("trailing bytes after the record")


def decode_key(data: bytes) -> OffsetCommitKey | GroupMetadataKey | None:
    """Decodes a record key; None for key versions this coordinator does not use (e.g. KIP-848)."""
    reader = _Reader(data)
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
    reader = _Reader(data, flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
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
    reader = _Reader(data, flexible=version >= FIRST_FLEXIBLE_VALUE_VERSION)
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


def java_string_hash(value: str) -> int:
    """Java's `String.hashCode()`: 31-based over UTF-16 code units, as a signed int32."""
    encoded = value.encode("utf-16-be")
    result = 0
    for index in range(0, len(encoded), 2):
        code_unit = (encoded[index] << 8) | encoded[index + 1]
        result = (31 * result + code_unit) & 0xFFFFFFFF
    return result - (1 << 32) if result & 0x80000000 else result


def java_utils_abs(value: int) -> int:
    """Kafka's `Utils.abs`: Math.abs, except that Integer.MIN_VALUE maps to 0."""
    return 0 if value == -(2**31) else abs(value)


def partition_for_group(group_id: str, num_partitions: int) -> int:
    """The `__consumer_offsets` partition that holds a group, exactly as Kafka computes it."""
    return java_utils_abs(java_string_hash(group_id)) % num_partitions
