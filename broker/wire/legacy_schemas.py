"""Request and response schemas of the old API versions kio does not carry (it starts where Kafka 4.0 does).

Kafka 3.9 still served them and clients of that era still send them (Debian's Burrow 1.2.1, through sarama,
sends ListOffsets v0 and Fetch v2). The layouts are those of Kafka's message specs (FetchRequest.json,
ListOffsetsRequest.json, ...), written in kio's style so that kio's readers and writers handle them like
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


# (api key, version) -> class, for what kio lacks.
LEGACY_REQUESTS: dict[tuple[int, int], type] = {
    **{(FETCH, version): _fetch_request_class(version) for version in range(4)},
    (LIST_OFFSETS, 0): ListOffsetsRequestV0,
}
LEGACY_RESPONSES: dict[tuple[int, int], type] = {(LIST_OFFSETS, 0): ListOffsetsResponseV0}
