"""Kio entities for answers whose kio schema cannot read what Kafka sends.

No `from __future__ import annotations` here: kio reads the field types of these dataclasses at import."""

from dataclasses import dataclass, field
from typing import ClassVar

from kio.schema.describe_transactions.v0.response import TopicData
from kio.schema.errors import ErrorCode
from kio.schema.response_header.v1.header import ResponseHeader
from kio.serial import entity_reader
from kio.static.constants import EntityType
from kio.static.primitive import i16, i32, i32Timedelta, i64


# kio's DescribeTransactions v0 entities read the start time as a timestamp and refuse the -1 Kafka sends
# while no transaction is open (a producer that has only initialized): the same fields, with the start time
# read as the plain int64 it is on the wire.
@dataclass(frozen=True, slots=True, kw_only=True)
class DescribedTransaction:
    __type__: ClassVar = EntityType.nested
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = True
    __api_key__: ClassVar[i16] = i16(65)
    __header_schema__: ClassVar[type[ResponseHeader]] = ResponseHeader
    error_code: ErrorCode = field(metadata={"kafka_type": "error_code"})
    transactional_id: str = field(metadata={"kafka_type": "string"})
    transaction_state: str = field(metadata={"kafka_type": "string"})
    transaction_timeout: i32 = field(metadata={"kafka_type": "int32"})
    transaction_start_time: i64 = field(metadata={"kafka_type": "int64"})
    producer_id: i64 = field(metadata={"kafka_type": "int64"})
    producer_epoch: i16 = field(metadata={"kafka_type": "int16"})
    topics: tuple[TopicData, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeTransactionsAnswer:
    __type__: ClassVar = EntityType.response
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = True
    __api_key__: ClassVar[i16] = i16(65)
    __header_schema__: ClassVar[type[ResponseHeader]] = ResponseHeader
    throttle_time: i32Timedelta = field(metadata={"kafka_type": "timedelta_i32"})
    transaction_states: tuple[DescribedTransaction, ...]


_read_described_transactions = entity_reader(DescribeTransactionsAnswer)
# The correlation id, then the flexible response header's (empty) tagged fields.
_RESPONSE_BODY_AT = 4 + 1


def read_described_transactions(frame: bytes | memoryview) -> DescribeTransactionsAnswer:
    """The DescribeTransactions v0 answer in a response frame (from its correlation id on)."""
    answer, _ = _read_described_transactions(frame, _RESPONSE_BODY_AT)
    return answer
