"""Check every record of a producer's batch the way Kafka reads it, without building a record.

Kafka's broker decompresses and walks each record a producer sends (LogValidator, DefaultRecord.readFrom)
before it appends the batch; a batch whose records do not parse is refused whole, so no consumer ever
meets it. This walk follows Kafka's reading rules: varints of at most 5 bytes (10 for the timestamp
delta), a body length that must be exactly what its fields use, a negative key or value length meaning
null, a negative header count or header key length being an error, and as many records as the header
declares with no bytes left over. It also demands what Kafka's own clients always write and what our
readers rely on: offset deltas 0, 1, 2, … in order (Kafka itself takes other deltas in uncompressed
batches, giving two records one offset; see the README).

It is the hot path of Produce, so it builds nothing per record: one loop, varints of one or two bytes
decoded inline, longer ones by `_read_varint`.
"""

from typing import NamedTuple

from broker.wire.records.errors import InvalidRecordError

_INT32_MASK = 0xFFFFFFFF
_INT64_MASK = 0xFFFFFFFFFFFFFFFF
# Attributes, timestamp delta, offset delta, key length, value length, header count: one byte at least.
_SMALLEST_RECORD_BODY = 6


class RecordsShape(NamedTuple):
    """What the broker needs to know about a batch's records once they parse."""

    keyless: list[int]  # batch indexes of records without a key (filled only when asked for)
    min_timestamp_delta: int
    max_timestamp_delta: int


def _read_varint(data: bytes, position: int, max_bytes: int, mask: int) -> tuple[int, int]:
    """A zig-zag varint as Kafka's ByteUtils reads it: at most `max_bytes` bytes, bits beyond the
    type's width dropped. (value, next position); IndexError past the end of `data`."""
    raw = 0
    shift = 0
    for _ in range(max_bytes):
        byte = data[position]
        position += 1
        raw |= (byte & 0x7F) << shift
        if byte < 0x80:
            raw &= mask
            return (raw >> 1) ^ -(raw & 1), position
        shift += 7
    raise InvalidRecordError(f"varint longer than {max_bytes} bytes")


def check_records(data: bytes, count: int, *, collect_keyless: bool = False) -> RecordsShape:
    """Walk the `count` records of an uncompressed records section; raise InvalidRecordError (Kafka's
    INVALID_RECORD) at the first thing Kafka would not read, or when bytes are left over."""
    try:
        return _walk(data, count, collect_keyless)
    except IndexError:
        raise InvalidRecordError("a record runs past the end of the batch") from None


def _walk(data: bytes, count: int, collect_keyless: bool) -> RecordsShape:
    end = len(data)
    position = 0
    keyless: list[int] = []
    lowest_delta = highest_delta = 0
    for index in range(count):
        if position >= end:
            raise InvalidRecordError(f"the batch declares {count} records but holds {index}")
        byte = data[position]
        if byte < 0x80:
            length = (byte >> 1) ^ -(byte & 1)
            position += 1
        else:
            length, position = _read_varint(data, position, 5, _INT32_MASK)
        record_end = position + length
        if length < _SMALLEST_RECORD_BODY or record_end > end:
            raise InvalidRecordError(f"record {index} has a body length of {length} bytes")
        position += 1  # attributes: unused in v2, Kafka takes any value
        byte = data[position]
        if byte < 0x80:
            timestamp_delta = (byte >> 1) ^ -(byte & 1)
            position += 1
        else:
            timestamp_delta, position = _read_varint(data, position, 10, _INT64_MASK)
        if timestamp_delta > highest_delta:
            highest_delta = timestamp_delta
        elif timestamp_delta < lowest_delta:
            lowest_delta = timestamp_delta
        byte = data[position]
        if byte < 0x80:
            offset_delta = (byte >> 1) ^ -(byte & 1)
            position += 1
        elif data[position + 1] < 0x80:
            raw = (byte & 0x7F) | (data[position + 1] << 7)
            offset_delta = (raw >> 1) ^ -(raw & 1)
            position += 2
        else:
            offset_delta, position = _read_varint(data, position, 5, _INT32_MASK)
        if offset_delta != index:
            raise InvalidRecordError(f"record {index} has offset delta {offset_delta}")
        # key
        byte = data[position]
        if byte < 0x80:
            size = (byte >> 1) ^ -(byte & 1)
            position += 1
        else:
            size, position = _read_varint(data, position, 5, _INT32_MASK)
        if size >= 0:
            position += size
        elif collect_keyless:
            keyless.append(index)
        # value
        byte = data[position]
        if byte < 0x80:
            size = (byte >> 1) ^ -(byte & 1)
            position += 1
        elif data[position + 1] < 0x80:
            raw = (byte & 0x7F) | (data[position + 1] << 7)
            size = (raw >> 1) ^ -(raw & 1)
            position += 2
        else:
            size, position = _read_varint(data, position, 5, _INT32_MASK)
        if size > 0:
            position += size
        # headers
        headers = data[position]
        if headers == 0:
            position += 1
        else:
            position = _walk_headers(data, position, record_end, index)
        if position != record_end:
            raise InvalidRecordError(
                f"record {index} declares {length} bytes but its fields take {position - record_end + length}"
            )
    if position != end:
        raise InvalidRecordError(f"{end - position} bytes follow the {count} records the batch declares")
    return RecordsShape(keyless, lowest_delta, highest_delta)


def _walk_headers(data: bytes, position: int, record_end: int, index: int) -> int:
    count, position = _read_varint(data, position, 5, _INT32_MASK)
    if count < 0 or count > record_end - position:
        raise InvalidRecordError(f"record {index} has an invalid header count {count}")
    for _ in range(count):
        size, position = _read_varint(data, position, 5, _INT32_MASK)
        if size < 0:
            raise InvalidRecordError(f"record {index} has a header key of negative size {size}")
        position += size
        size, position = _read_varint(data, position, 5, _INT32_MASK)
        if size > 0:
            position += size
    return position
