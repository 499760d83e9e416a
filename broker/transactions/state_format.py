"""Kafka's own record format for the `__transaction_state` topic.

Key: `TransactionLogKey` v0 (int16 version 0, transactional id as an int16-length string).
Value: `TransactionLogValue` v0 (classic) or v1 (flexible: compact strings and arrays, tagged
fields 0 previous producer id, 1 next producer id, 2 client transaction version). Kafka 4.0
writes v1; both are read. A null value is a tombstone: the transactional id expired.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.metadata.coordinator_records import (
    CoordinatorRecordError,
    RecordReader,
    RecordWriter,
    partition_for_key,
)

TRANSACTION_LOG_KEY_VERSION = 0
TRANSACTION_LOG_VALUE_VERSION = 1
_PREVIOUS_PRODUCER_ID_TAG = 0
_NEXT_PRODUCER_ID_TAG = 1
_CLIENT_TRANSACTION_VERSION_TAG = 2
EMPTY_STATUS = 0

TransactionStateFormatError = CoordinatorRecordError


@dataclass(frozen=True, slots=True)
class TransactionLogValue:
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int  # TransactionState's Kafka id
    # (topic, partitions) of the transaction; empty outside one.
    partitions: tuple[tuple[str, tuple[int, ...]], ...]
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0


def encode_key(transactional_id: str) -> bytes:
    writer = RecordWriter()
    writer.int16(TRANSACTION_LOG_KEY_VERSION)
    writer.string(transactional_id)
    return writer.getvalue()


def decode_key(data: bytes) -> str | None:
    """The transactional id of a record key; None for key versions this coordinator does not know."""
    reader = RecordReader(data)
    if reader.int16() != TRANSACTION_LOG_KEY_VERSION:
        return None
    transactional_id = reader.string()
    reader.expect_end()
    return transactional_id


def encode_value(value: TransactionLogValue, version: int = TRANSACTION_LOG_VALUE_VERSION) -> bytes:
    if version not in (0, 1):
        raise TransactionStateFormatError(f"TransactionLogValue version {version} is not known")
    writer = RecordWriter()
    writer.int16(version)
    writer.flexible = version >= 1
    writer.int64(value.producer_id)
    writer.int16(value.producer_epoch)
    writer.int32(value.timeout_ms)
    writer.int8(value.status)
    # Kafka writes no partition list (null) for an Empty transactional id.
    writer.array_length(
        -1 if value.status == EMPTY_STATUS and not value.partitions else len(value.partitions)
    )
    for topic, partitions in value.partitions:
        writer.string(topic)
        writer.array_length(len(partitions))
        for partition in partitions:
            writer.int32(partition)
        writer.no_tagged_fields()
    writer.int64(value.last_update_ms)
    writer.int64(value.start_ms)
    if writer.flexible:
        # Tagged fields are written only when they differ from their defaults, in tag order.
        tagged: list[tuple[int, bytes]] = []
        if value.previous_producer_id != -1:
            tagged.append(
                (_PREVIOUS_PRODUCER_ID_TAG, value.previous_producer_id.to_bytes(8, "big", signed=True))
            )
        if value.next_producer_id != -1:
            tagged.append((_NEXT_PRODUCER_ID_TAG, value.next_producer_id.to_bytes(8, "big", signed=True)))
        if value.client_transaction_version != 0:
            tagged.append(
                (
                    _CLIENT_TRANSACTION_VERSION_TAG,
                    value.client_transaction_version.to_bytes(2, "big", signed=True),
                )
            )
        writer.uvarint(len(tagged))
        for tag, payload in tagged:
            writer.uvarint(tag)
            writer.uvarint(len(payload))
            writer.parts.append(payload)
    return writer.getvalue()


def decode_value(data: bytes) -> TransactionLogValue:
    reader = RecordReader(data)
    version = reader.int16()
    if version not in (0, 1):
        raise TransactionStateFormatError(f"TransactionLogValue version {version} is not known")
    reader.flexible = version >= 1
    producer_id = reader.int64()
    producer_epoch = reader.int16()
    timeout_ms = reader.int32()
    status = reader.int8()
    partitions: list[tuple[str, tuple[int, ...]]] = []
    for _ in range(max(reader.nullable_array_length(), 0)):
        topic = reader.string()
        indexes = tuple(reader.int32() for _ in range(reader.array_length()))
        reader.skip_tagged_fields()
        partitions.append((topic, indexes))
    last_update_ms = reader.int64()
    start_ms = reader.int64()
    previous_producer_id = next_producer_id = -1
    client_transaction_version = 0
    if reader.flexible:
        for _ in range(reader.uvarint()):
            tag = reader.uvarint()
            payload = reader.take(reader.uvarint())
            if tag == _PREVIOUS_PRODUCER_ID_TAG:
                previous_producer_id = int.from_bytes(payload, "big", signed=True)
            elif tag == _NEXT_PRODUCER_ID_TAG:
                next_producer_id = int.from_bytes(payload, "big", signed=True)
            elif tag == _CLIENT_TRANSACTION_VERSION_TAG:
                client_transaction_version = int.from_bytes(payload, "big", signed=True)
    reader.expect_end()
    return TransactionLogValue(
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        timeout_ms=timeout_ms,
        status=status,
        partitions=tuple(partitions),
        last_update_ms=last_update_ms,
        start_ms=start_ms,
        previous_producer_id=previous_producer_id,
        next_producer_id=next_producer_id,
        client_transaction_version=client_transaction_version,
    )


def partition_for_transactional_id(transactional_id: str, num_partitions: int) -> int:
    """The `__transaction_state` partition that holds a transactional id, as Kafka computes it."""
    return partition_for_key(transactional_id, num_partitions)
