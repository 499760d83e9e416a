"""Request and response schemas of the old API versions kio does not carry (it starts where Kafka 4.0 does).

Kafka 3.9 still served them and clients of that era still send them (Debian's Burrow 1.2.1, through sarama,
sends ListOffsets v0 and Fetch v0 or v2). The layouts are those of Kafka's message specs (FetchRequest.json,
ListOffsetsRequest.json, OffsetCommitRequest.json, OffsetFetchRequest.json), written in kio's style so that kio's readers and writers handle them like
its own classes. Fetch responses of any version are framed by hand (`broker.protocol.fetch_encoding`).
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from kio.schema.request_header.v1.header import RequestHeader
from kio.schema.response_header.v0.header import ResponseHeader
from kio.static.constants import EntityType
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64

FETCH = 1
LIST_OFFSETS = 2
OFFSET_COMMIT = 8
OFFSET_FETCH = 9
READ_UNCOMMITTED = i8(0)
NO_RESPONSE_LIMIT = i32(2147483647)


def _entity(api_key: int, version: int, kind: EntityType) -> Callable[[type], type]:
    """kio's class attributes (what its readers and writers look up) and its dataclass shape."""
    header = ResponseHeader if kind == EntityType.response else RequestHeader

    def make(cls: type) -> type:
        cls.__type__ = kind  # type: ignore[attr-defined]
        cls.__version__ = i16(version)  # type: ignore[attr-defined]
        cls.__flexible__ = False  # type: ignore[attr-defined]
        cls.__api_key__ = i16(api_key)  # type: ignore[attr-defined]
        cls.__header_schema__ = header  # type: ignore[attr-defined]
        return dataclass(frozen=True, slots=True, kw_only=True)(cls)

    return make


def _fetch_request_class(version: int) -> type:
    @_entity(FETCH, version, EntityType.nested)
    class FetchPartition:
        partition: i32 = field(metadata={"kafka_type": "int32"})
        fetch_offset: i64 = field(metadata={"kafka_type": "int64"})
        partition_max_bytes: i32 = field(metadata={"kafka_type": "int32"})

    @_entity(FETCH, version, EntityType.nested)
    class FetchTopic:
        topic: str = field(metadata={"kafka_type": "string"})
        partitions: tuple[FetchPartition, ...]

    if version >= 3:

        @_entity(FETCH, version, EntityType.request)
        class FetchRequest:
            replica_id: i32 = field(metadata={"kafka_type": "int32"})
            max_wait: i32Timedelta = field(metadata={"kafka_type": "timedelta_i32"})
            min_bytes: i32 = field(metadata={"kafka_type": "int32"})
            max_bytes: i32 = field(metadata={"kafka_type": "int32"})  # v3+ (KIP-74)
            topics: tuple[FetchTopic, ...]

            @property
            def isolation_level(self) -> i8:
                return READ_UNCOMMITTED  # transactions came with v4

        return FetchRequest

    @_entity(FETCH, version, EntityType.request)
    class FetchRequestBeforeV3:
        replica_id: i32 = field(metadata={"kafka_type": "int32"})
        max_wait: i32Timedelta = field(metadata={"kafka_type": "timedelta_i32"})
        min_bytes: i32 = field(metadata={"kafka_type": "int32"})
        topics: tuple[FetchTopic, ...]

        @property
        def isolation_level(self) -> i8:
            return READ_UNCOMMITTED

        @property
        def max_bytes(self) -> i32:
            return NO_RESPONSE_LIMIT  # only the per-partition limits, before v3

    return FetchRequestBeforeV3


@_entity(LIST_OFFSETS, 0, EntityType.nested)
class ListOffsetsPartitionV0:
    partition_index: i32 = field(metadata={"kafka_type": "int32"})
    timestamp: i64 = field(metadata={"kafka_type": "int64"})
    max_num_offsets: i32 = field(metadata={"kafka_type": "int32"})


@_entity(LIST_OFFSETS, 0, EntityType.nested)
class ListOffsetsTopicV0:
    name: str = field(metadata={"kafka_type": "string"})
    partitions: tuple[ListOffsetsPartitionV0, ...]


@_entity(LIST_OFFSETS, 0, EntityType.request)
class ListOffsetsRequestV0:
    replica_id: i32 = field(metadata={"kafka_type": "int32"})
    topics: tuple[ListOffsetsTopicV0, ...]


@_entity(LIST_OFFSETS, 0, EntityType.nested)
class ListOffsetsPartitionResponseV0:
    partition_index: i32 = field(metadata={"kafka_type": "int32"})
    error_code: i16 = field(metadata={"kafka_type": "error_code"})
    old_style_offsets: tuple[i64, ...] = field(metadata={"kafka_type": "int64"})


@_entity(LIST_OFFSETS, 0, EntityType.nested)
class ListOffsetsTopicResponseV0:
    name: str = field(metadata={"kafka_type": "string"})
    partitions: tuple[ListOffsetsPartitionResponseV0, ...]


@_entity(LIST_OFFSETS, 0, EntityType.response)
class ListOffsetsResponseV0:
    topics: tuple[ListOffsetsTopicResponseV0, ...]


def _offset_commit_classes(version: int) -> tuple[type, type]:
    """OffsetCommit v0 (no generation: a commit outside group management) and v1 (adds the generation, the
    member id and a per-partition commit timestamp, which Kafka stopped honouring; ignored here too)."""

    if version == 0:

        @_entity(OFFSET_COMMIT, version, EntityType.nested)
        class OffsetCommitPartition:
            partition_index: i32 = field(metadata={"kafka_type": "int32"})
            committed_offset: i64 = field(metadata={"kafka_type": "int64"})
            committed_metadata: str | None = field(metadata={"kafka_type": "string"})

    else:

        @_entity(OFFSET_COMMIT, version, EntityType.nested)
        class OffsetCommitPartition:  # type: ignore[no-redef]
            partition_index: i32 = field(metadata={"kafka_type": "int32"})
            committed_offset: i64 = field(metadata={"kafka_type": "int64"})
            commit_timestamp: i64 = field(metadata={"kafka_type": "int64"})
            committed_metadata: str | None = field(metadata={"kafka_type": "string"})

    @_entity(OFFSET_COMMIT, version, EntityType.nested)
    class OffsetCommitTopic:
        name: str = field(metadata={"kafka_type": "string"})
        partitions: tuple[OffsetCommitPartition, ...]

    if version == 0:

        @_entity(OFFSET_COMMIT, version, EntityType.request)
        class OffsetCommitRequest:
            group_id: str = field(metadata={"kafka_type": "string"})
            topics: tuple[OffsetCommitTopic, ...]

            @property
            def generation_id_or_member_epoch(self) -> i32:
                return i32(-1)  # not a group member: Kafka's "simple" commit

            @property
            def member_id(self) -> str:
                return ""

    else:

        @_entity(OFFSET_COMMIT, version, EntityType.request)
        class OffsetCommitRequest:  # type: ignore[no-redef]
            group_id: str = field(metadata={"kafka_type": "string"})
            generation_id_or_member_epoch: i32 = field(metadata={"kafka_type": "int32"})
            member_id: str = field(metadata={"kafka_type": "string"})
            topics: tuple[OffsetCommitTopic, ...]

    @_entity(OFFSET_COMMIT, version, EntityType.nested)
    class OffsetCommitResponsePartition:
        partition_index: i32 = field(metadata={"kafka_type": "int32"})
        error_code: i16 = field(metadata={"kafka_type": "error_code"})

    @_entity(OFFSET_COMMIT, version, EntityType.nested)
    class OffsetCommitResponseTopic:
        name: str = field(metadata={"kafka_type": "string"})
        partitions: tuple[OffsetCommitResponsePartition, ...]

    @_entity(OFFSET_COMMIT, version, EntityType.response)
    class OffsetCommitResponse:
        topics: tuple[OffsetCommitResponseTopic, ...]

    return OffsetCommitRequest, OffsetCommitResponse


# OffsetFetch v0 has v1's layout (v0 read ZooKeeper-stored offsets in Kafka 0.8; both read the log since).
@_entity(OFFSET_FETCH, 0, EntityType.nested)
class OffsetFetchTopicV0:
    name: str = field(metadata={"kafka_type": "string"})
    partition_indexes: tuple[i32, ...] = field(metadata={"kafka_type": "int32"})


@_entity(OFFSET_FETCH, 0, EntityType.request)
class OffsetFetchRequestV0:
    group_id: str = field(metadata={"kafka_type": "string"})
    topics: tuple[OffsetFetchTopicV0, ...]


@_entity(OFFSET_FETCH, 0, EntityType.nested)
class OffsetFetchResponsePartitionV0:
    partition_index: i32 = field(metadata={"kafka_type": "int32"})
    committed_offset: i64 = field(metadata={"kafka_type": "int64"})
    metadata: str | None = field(metadata={"kafka_type": "string"})
    error_code: i16 = field(metadata={"kafka_type": "error_code"})


@_entity(OFFSET_FETCH, 0, EntityType.nested)
class OffsetFetchResponseTopicV0:
    name: str = field(metadata={"kafka_type": "string"})
    partitions: tuple[OffsetFetchResponsePartitionV0, ...]


@_entity(OFFSET_FETCH, 0, EntityType.response)
class OffsetFetchResponseV0:
    topics: tuple[OffsetFetchResponseTopicV0, ...]


_OFFSET_COMMIT = {version: _offset_commit_classes(version) for version in (0, 1)}

# (api key, version) -> class, for what kio lacks.
LEGACY_REQUESTS: dict[tuple[int, int], type] = {
    **{(FETCH, version): _fetch_request_class(version) for version in range(4)},
    (LIST_OFFSETS, 0): ListOffsetsRequestV0,
    **{(OFFSET_COMMIT, version): classes[0] for version, classes in _OFFSET_COMMIT.items()},
    (OFFSET_FETCH, 0): OffsetFetchRequestV0,
}
LEGACY_RESPONSES: dict[tuple[int, int], type] = {
    (LIST_OFFSETS, 0): ListOffsetsResponseV0,
    **{(OFFSET_COMMIT, version): classes[1] for version, classes in _OFFSET_COMMIT.items()},
    (OFFSET_FETCH, 0): OffsetFetchResponseV0,
}
