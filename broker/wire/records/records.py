"""Records inside a v2 batch: varint encoding, decoding (with decompression) and batch building."""

import enum
import struct
import time
from collections.abc import Sequence
from typing import NamedTuple

from crc32c import crc32c

from broker.wire.records.batch import (
    ATTRIBUTES_AT,
    CONTROL_FLAG,
    CRC_AT,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_FLAG,
    TRANSACTIONAL_FLAG,
    BatchView,
)
from broker.wire.records.codecs import Codec, compress, decompress
from broker.wire.records.errors import CorruptRecordError, InvalidRecordError

Header = tuple[str, bytes | None]


class TimestampType(enum.IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class Record(NamedTuple):
    """One record (a tuple: cheap to make by the thousand when decoding). `timestamp` is absolute (ms); `offset_delta` is relative to the batch's base offset.

    When building a batch, a None timestamp means "now" and a None offset_delta means "next in order".
    """

    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None
    offset_delta: int | None = None
    attributes: int = 0


def encode_varint(value: int, out: bytearray) -> None:
    """Zig-zag then LEB128, as Kafka's ByteUtils.writeVarint/writeVarlong."""
    unsigned = (value << 1) ^ (value >> 63)
    while unsigned > 0x7F:
        out.append((unsigned & 0x7F) | 0x80)
        unsigned >>= 7
    out.append(unsigned)


def decode_varint(buffer: bytes | memoryview, position: int) -> tuple[int, int]:
    """Returns (value, next position). Raises CorruptRecordError on truncation or an over-long varint."""
    result = 0
    shift = 0
    end = len(buffer)
    while True:
        if position >= end:
            raise CorruptRecordError("truncated varint")
        byte = buffer[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), position
        shift += 7
        if shift > 63:
            raise CorruptRecordError("varint is too long")


def decode_records(batch: BatchView) -> list[Record]:
    """Decode (decompressing if needed) every record of a batch, checking the count and the framing."""
    return decode_records_with_spans(batch, None)[0]


def decode_records_with_spans(
    batch: BatchView, spans: list[tuple[int, int]] | None
) -> tuple[list[Record], bytes]:
    """Records plus the uncompressed records section; fills `spans` with each record's [start, end).

    Compaction copies the encoded bytes of the records it keeps: their deltas stay valid as long as
    the batch keeps its base offset and base timestamp.
    """
    payload = batch.records_payload()
    data = decompress(batch.codec, payload) if batch.codec != Codec.NONE else bytes(payload)
    try:
        records = _decode_record_list(
            data, batch.record_count, batch.base_timestamp, batch.last_offset_delta, spans
        )
    except IndexError:
        raise CorruptRecordError("a record runs past the end of the batch") from None
    return records, data


def _decode_record_list(
    data: bytes,
    count: int,
    base_timestamp: int,
    last_offset_delta: int,
    spans: list[tuple[int, int]] | None = None,
) -> list[Record]:
    # The hot loop of compaction and key validation. Varints of one or two bytes (nearly all of them)
    # are decoded inline (here and in _decode_nullable_bytes), longer ones by decode_varint; running
    # off the end raises IndexError, which the caller turns into CORRUPT_MESSAGE.
    records: list[Record] = []
    append = records.append
    position = 0
    end = len(data)
    for _ in range(count):
        record_start = position
        # length
        byte = data[position]
        if byte < 0x80:
            length = (byte >> 1) ^ -(byte & 1)
            position += 1
        elif data[position + 1] < 0x80:
            raw = (byte & 0x7F) | (data[position + 1] << 7)
            length = (raw >> 1) ^ -(raw & 1)
            position += 2
        else:
            length, position = decode_varint(data, position)
        record_end = position + length
        if length <= 0 or record_end > end:
            raise CorruptRecordError("record length runs past the batch")
        attributes = data[position]
        position += 1
        # timestamp delta
        byte = data[position]
        if byte < 0x80:
            timestamp_delta = (byte >> 1) ^ -(byte & 1)
            position += 1
        else:
            timestamp_delta, position = decode_varint(data, position)
        # offset delta
        byte = data[position]
        if byte < 0x80:
            offset_delta = (byte >> 1) ^ -(byte & 1)
            position += 1
        elif data[position + 1] < 0x80:
            raw = (byte & 0x7F) | (data[position + 1] << 7)
            offset_delta = (raw >> 1) ^ -(raw & 1)
            position += 2
        else:
            offset_delta, position = decode_varint(data, position)
        # key, value
        key, position = _decode_nullable_bytes(data, position, record_end)
        value, position = _decode_nullable_bytes(data, position, record_end)
        # headers
        if data[position] == 0:
            headers: tuple[Header, ...] = ()
            position += 1
        else:
            headers, position = _decode_headers(data, position, record_end)
        if position != record_end:
            raise CorruptRecordError("record length does not match its fields")
        if offset_delta < 0 or offset_delta > last_offset_delta:
            raise InvalidRecordError(f"offset delta {offset_delta} outside the batch")
        append(Record(key, value, headers, base_timestamp + timestamp_delta, offset_delta, attributes))
        if spans is not None:
            spans.append((record_start, record_end))
    if position != end:
        raise InvalidRecordError(f"batch declares {count} records but holds more bytes")
    return records


def _decode_nullable_bytes(buffer: bytes, position: int, limit: int) -> tuple[bytes | None, int]:
    byte = buffer[position]
    if byte < 0x80:
        length = (byte >> 1) ^ -(byte & 1)
        position += 1
    elif buffer[position + 1] < 0x80:
        raw = (byte & 0x7F) | (buffer[position + 1] << 7)
        length = (raw >> 1) ^ -(raw & 1)
        position += 2
    else:
        length, position = decode_varint(buffer, position)
    if length < 0:
        return None, position  # Kafka reads any negative length as null
    end = position + length
    if end > limit:
        raise CorruptRecordError(f"bad field length {length}")
    return buffer[position:end], end


def _decode_headers(data: bytes, position: int, record_end: int) -> tuple[tuple[Header, ...], int]:
    count, position = decode_varint(data, position)
    if count < 0 or count > record_end - position:
        raise CorruptRecordError(f"bad header count {count}")
    headers: list[Header] = []
    for _ in range(count):
        header_key, position = _decode_nullable_bytes(data, position, record_end)
        if header_key is None:
            raise CorruptRecordError("null header key")
        header_value, position = _decode_nullable_bytes(data, position, record_end)
        # Kafka reads a header key that is not UTF-8 with replacement characters (Utils.utf8).
        headers.append((header_key.decode(errors="replace"), header_value))
    return tuple(headers), position


def encode_record(record: Record, offset_delta: int, timestamp_delta: int, out: bytearray) -> None:
    body = bytearray()
    body.append(record.attributes & 0xFF)
    encode_varint(timestamp_delta, body)
    encode_varint(offset_delta, body)
    for field in (record.key, record.value):
        if field is None:
            encode_varint(-1, body)
        else:
            encode_varint(len(field), body)
            body += field
    encode_varint(len(record.headers), body)
    for header_key, header_value in record.headers:
        encoded_key = header_key.encode()
        encode_varint(len(encoded_key), body)
        body += encoded_key
        if header_value is None:
            encode_varint(-1, body)
        else:
            encode_varint(len(header_value), body)
            body += header_value
    encode_varint(len(body), out)
    out += body


def build_batch(
    records: Sequence[Record],
    *,
    base_offset: int = 0,
    codec: Codec = Codec.NONE,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    transactional: bool = False,
    control: bool = False,
    partition_leader_epoch: int = 0,
    last_offset_delta: int | None = None,
    max_timestamp: int | None = None,
) -> bytes:
    """A complete, CRC-valid v2 batch.

    `last_offset_delta` lets compaction keep a batch's original offset span even when records were
    removed (an empty batch keeps producer state alive); `max_timestamp` overrides the computed one
    (LogAppendTime batches carry the append time there).
    """
    now_ms = int(time.time() * 1000)
    timestamps = [now_ms if r.timestamp is None else r.timestamp for r in records]
    base_timestamp = timestamps[0] if timestamps else (max_timestamp if max_timestamp is not None else -1)
    body = bytearray()
    next_delta = 0
    highest_delta = -1
    for record, timestamp in zip(records, timestamps, strict=True):
        delta = next_delta if record.offset_delta is None else record.offset_delta
        if delta < next_delta:
            raise ValueError("record offset deltas must increase")
        encode_record(record, delta, timestamp - base_timestamp, body)
        highest_delta = delta
        next_delta = delta + 1
    if last_offset_delta is None:
        if not records:
            raise ValueError("an empty batch needs an explicit last_offset_delta")
        last_offset_delta = highest_delta
    elif last_offset_delta < highest_delta:
        raise ValueError("last_offset_delta is below the last record's offset delta")
    if max_timestamp is None:
        max_timestamp = max(timestamps) if timestamps else -1
    attributes = int(codec)
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_FLAG
    if transactional:
        attributes |= TRANSACTIONAL_FLAG
    if control:
        attributes |= CONTROL_FLAG
    return assemble_batch(
        body,
        len(records),
        attributes=attributes,
        base_offset=base_offset,
        last_offset_delta=last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        partition_leader_epoch=partition_leader_epoch,
    )


def assemble_batch(
    encoded_records: bytes | bytearray,
    record_count: int,
    *,
    attributes: int,
    base_offset: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    partition_leader_epoch: int,
) -> bytes:
    """Header + (compressed, per the attributes' codec) already-encoded records, with its CRC."""
    codec = Codec(attributes & 0x07)
    payload = compress(codec, encoded_records) if codec != Codec.NONE else encoded_records
    out = bytearray(HEADER_SIZE)
    HEADER.pack_into(
        out,
        0,
        base_offset,
        HEADER_SIZE - LOG_OVERHEAD + len(payload),
        partition_leader_epoch,
        2,
        0,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        record_count,
    )
    out += payload
    struct.pack_into(">I", out, CRC_AT, crc32c(memoryview(out)[ATTRIBUTES_AT:]))
    return bytes(out)
