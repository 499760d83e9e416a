"""Check every record of a producer's batch the way Kafka reads it, without building a record.

Kafka's broker decompresses and walks each record a producer sends (LogValidator, DefaultRecord.readFrom)
before it appends the batch; a batch whose records do not parse is refused whole, so no consumer ever
meets it. This walk follows Kafka's reading rules: varints of at most 5 bytes (10 for the timestamp
delta), a body length that must be exactly what its fields use, -1 as the length of a null key or value,
a negative header count or header key length being an error, and as many records as the header
declares with no bytes left over. It also demands what Kafka's own clients always write and what our
readers rely on: offset deltas 0, 1, 2, … in order (Kafka itself takes other deltas in uncompressed
batches, giving two records one offset), and no key, value or header value length below -1 (Kafka reads
one as null, librdkafka stops reading the partition there; see the README).

It is the hot path of Produce, so it builds nothing per record: a loop with varints of one or two bytes
decoded inline (longer ones by `_read_varint`), and for large batches one loop over the lengths only,
the fields then read for all records at once with numpy. numpy is imported by the first such batch, not
when the broker starts (0.1 s of CPU, a tenth of a broker's start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from broker.wire.records.errors import InvalidRecordError

if TYPE_CHECKING:
    import numpy as np

_INT32_MASK = 0xFFFFFFFF
_INT64_MASK = 0xFFFFFFFFFFFFFFFF
# Attributes, timestamp delta, offset delta, key length, value length, header count: one byte at least.
_SMALLEST_RECORD_BODY = 6


class RecordsShape(NamedTuple):
    """What the broker needs to know about a batch's records once they parse."""

    keyless: list[int]  # batch indexes of records without a key (filled only when asked for)
    min_timestamp_delta: int
    max_timestamp_delta: int
    # Every record's timestamp delta, when the batch was checked all at once (many records), else None.
    timestamp_deltas: np.ndarray | None = None


def _read_varint(data: bytes | bytearray, position: int, max_bytes: int, mask: int) -> tuple[int, int]:
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


def check_records(
    data: bytes | bytearray, count: int, *, start: int = 0, collect_keyless: bool = False
) -> RecordsShape:
    """Walk the `count` records of an uncompressed records section, `data[start:]` (not copied); raise
    InvalidRecordError (Kafka's INVALID_RECORD) at the first thing Kafka would not read, or when bytes
    are left over.

    A batch of many records is checked field by field over all records at once (numpy) after one loop
    over their lengths; whatever that finds wrong, or cannot decide, is walked again one record at a
    time, which names the fault."""
    if count > (len(data) - start) // (_SMALLEST_RECORD_BODY + 1):
        raise InvalidRecordError(f"the batch declares {count} records in {len(data) - start} bytes")
    if count >= VECTORIZED_FROM_RECORDS:
        shape = _check_vectorized(data, start, count, collect_keyless)
        if shape is not None:
            return shape
    try:
        return _walk(data, start, count, collect_keyless)
    except IndexError:
        raise InvalidRecordError("a record runs past the end of the batch") from None


# Below this many records numpy's cost per call is more than the one-record-at-a-time walk's.
VECTORIZED_FROM_RECORDS = 100
# Records with more headers than this are walked one at a time: the vectorized check takes one pass over
# every record per header.
_VECTORIZED_MAX_HEADERS = 4


def _record_starts(data: bytes | bytearray, position: int, count: int) -> list[int] | None:
    """Where each record (its length varint) starts, following the lengths only; None if they do not add
    up to exactly `count` records. The one loop over records of the vectorized check: kept minimal."""
    starts: list[int] = []
    add = starts.append
    try:
        # A length is read as if it were not negative (no zig-zag sign): a negative one sends the walk
        # astray, and the vectorized check, which decodes every length properly, refuses the batch.
        for _ in range(count):
            add(position)
            byte = data[position]
            if byte < 0x80:
                position += 1 + (byte >> 1)
            elif data[position + 1] < 0x80:
                position += 2 + (((byte & 0x7F) | (data[position + 1] << 7)) >> 1)
            else:
                length, position = _read_varint(data, position, 5, _INT32_MASK)
                position += length
    except (IndexError, InvalidRecordError):
        return None
    return starts if position == len(data) else None


class _Undecided(Exception):
    """The vectorized check found something wrong: the one-record-at-a-time walk decides and names it."""


def _varints(
    data: np.ndarray, at: np.ndarray, ends: np.ndarray, max_bytes: int, bits: int
) -> tuple[np.ndarray, np.ndarray]:
    """The zig-zag varint at each position of `at` (as `_read_varint` reads one), and the positions after
    them. Every position must lie inside its record; a varint cut by the end of `data` comes out too long
    or ending past its record, which the caller refuses."""
    import numpy as np  # on first use (module docstring)

    if (at >= ends).any():
        raise _Undecided
    first = data.take(at, mode="clip").astype(np.int64)
    if first.max() < 0x80:  # every varint is one byte: most fields of most records
        return (first >> 1) ^ -(first & 1), at + 1
    second = data.take(at + 1, mode="clip").astype(np.int64)
    long = first >= 0x80
    if second.max(where=long, initial=0) < 0x80:  # none longer than two bytes
        raw = np.where(long, (first & 0x7F) | (second << 7), first)
        return (raw >> 1) ^ -(raw & 1), at + 1 + long
    raw = np.zeros(len(at), dtype=np.uint64)
    size = np.zeros(len(at), dtype=np.int64)
    going = np.ones(len(at), dtype=bool)
    for index in range(max_bytes):
        byte = data.take(at + index, mode="clip").astype(np.uint64)
        raw |= np.where(going, (byte & np.uint64(0x7F)) << np.uint64(7 * index), np.uint64(0))
        size += going
        going &= byte >= 0x80
        if not going.any():
            break
    else:
        raise _Undecided  # longer than the type allows
    if bits == 32:
        raw &= np.uint64(_INT32_MASK)
    value = (raw >> np.uint64(1)).astype(np.int64) ^ -((raw & np.uint64(1)).astype(np.int64))
    return value, at + size


def _check_vectorized(
    data: bytes | bytearray, start: int, count: int, collect_keyless: bool
) -> RecordsShape | None:
    """`_walk` over all records at once; None when something is wrong or a record has many headers."""
    import numpy as np  # on first use (module docstring)

    starts = _record_starts(data, start, count)
    if starts is None:
        return None
    array = np.frombuffer(data, dtype=np.uint8)
    at = np.array(starts, dtype=np.int64)
    ends = np.append(at[1:], len(data))
    try:
        lengths, at = _varints(array, at, ends, 5, 32)
        if (lengths < _SMALLEST_RECORD_BODY).any() or not np.array_equal(at + lengths, ends):
            return None
        timestamp_deltas, at = _varints(array, at + 1, ends, 10, 64)  # past the attributes
        offset_deltas, at = _varints(array, at, ends, 5, 32)
        if not np.array_equal(offset_deltas, np.arange(count)):
            return None
        key_sizes, at = _varints(array, at, ends, 5, 32)
        value_sizes, at = _varints(array, at + np.maximum(key_sizes, 0), ends, 5, 32)
        header_counts, at = _varints(array, at + np.maximum(value_sizes, 0), ends, 5, 32)
        if (
            (key_sizes < -1).any()
            or (value_sizes < -1).any()
            or (header_counts < 0).any()
            or header_counts.max() > _VECTORIZED_MAX_HEADERS
        ):
            return None
        for _ in range(int(header_counts.max())):
            more = header_counts > 0
            reading = np.flatnonzero(more)
            header_key_sizes, after = _varints(array, at[reading], ends[reading], 5, 32)
            if (header_key_sizes < 0).any():
                return None
            header_value_sizes, after = _varints(array, after + header_key_sizes, ends[reading], 5, 32)
            if (header_value_sizes < -1).any():
                return None
            at[reading] = after + np.maximum(header_value_sizes, 0)
            header_counts = header_counts - more
    except _Undecided:
        return None
    if not np.array_equal(at, ends):
        return None
    keyless = np.flatnonzero(key_sizes < 0).tolist() if collect_keyless else []
    return RecordsShape(
        keyless, min(int(timestamp_deltas.min()), 0), max(int(timestamp_deltas.max()), 0), timestamp_deltas
    )


def _walk(data: bytes | bytearray, position: int, count: int, collect_keyless: bool) -> RecordsShape:
    end = len(data)
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
        elif size < -1:
            raise InvalidRecordError(f"record {index} has a key of size {size}")
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
        if size >= 0:
            position += size
        elif size < -1:
            raise InvalidRecordError(f"record {index} has a value of size {size}")
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


def _walk_headers(data: bytes | bytearray, position: int, record_end: int, index: int) -> int:
    count, position = _read_varint(data, position, 5, _INT32_MASK)
    if count < 0 or count > record_end - position:
        raise InvalidRecordError(f"record {index} has an invalid header count {count}")
    for _ in range(count):
        size, position = _read_varint(data, position, 5, _INT32_MASK)
        if size < 0:
            raise InvalidRecordError(f"record {index} has a header key of negative size {size}")
        position += size
        size, position = _read_varint(data, position, 5, _INT32_MASK)
        if size >= 0:
            position += size
        elif size < -1:
            raise InvalidRecordError(f"record {index} has a header value of size {size}")
    return position
