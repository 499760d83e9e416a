"""Down-conversion of record batches to the magic 0/1 message sets that Fetch v0-3 clients read."""

from __future__ import annotations

import struct
import zlib

import pytest

from broker.wire.records.codecs import Codec
from broker.wire.records.legacy import down_convert
from broker.wire.records.records import Record, TimestampType, build_batch


def _messages(message_set: bytes) -> list[dict[str, object]]:
    """Parse an old-format message set as a Kafka 0.10 client does, checking every CRC."""
    found, position = [], 0
    while position < len(message_set):
        offset, size = struct.unpack_from(">qi", message_set, position)
        message = message_set[position + 12 : position + 12 + size]
        position += 12 + size
        (crc,) = struct.unpack_from(">I", message, 0)
        assert crc == zlib.crc32(message[4:]), "bad CRC"
        magic, attributes = message[4], message[5]
        cursor = 6
        timestamp = None
        if magic == 1:
            (timestamp,) = struct.unpack_from(">q", message, cursor)
            cursor += 8
        fields = []
        for _ in range(2):
            (length,) = struct.unpack_from(">i", message, cursor)
            cursor += 4
            fields.append(None if length < 0 else bytes(message[cursor : cursor + length]))
            cursor += max(length, 0)
        found.append(
            {
                "offset": offset,
                "magic": magic,
                "attributes": attributes,
                "timestamp": timestamp,
                "key": fields[0],
                "value": fields[1],
            }
        )
    return found


def test_records_become_messages_of_the_asked_magic_with_their_offsets_and_timestamps() -> None:
    batch = build_batch(
        [Record(b"k1", b"v1", (("h", b"x"),), timestamp=1000), Record(None, None, timestamp=2000)],
        base_offset=40,
        codec=Codec.GZIP,
    )
    magic_one = _messages(down_convert(batch, 1))
    assert [(m["offset"], m["key"], m["value"], m["timestamp"]) for m in magic_one] == [
        (40, b"k1", b"v1", 1000),
        (41, None, None, 2000),
    ]
    assert {m["magic"] for m in magic_one} == {1}
    assert {m["attributes"] for m in magic_one} == {0}, "uncompressed, CreateTime"
    magic_zero = _messages(down_convert(batch, 0))
    assert [(m["offset"], m["magic"], m["timestamp"]) for m in magic_zero] == [(40, 0, None), (41, 0, None)]


def test_log_append_time_is_flagged_and_earlier_offsets_and_control_batches_are_left_out() -> None:
    appended = build_batch(
        [Record(b"a", b"1", timestamp=5), Record(b"b", b"2", timestamp=6)],
        base_offset=0,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        max_timestamp=9999,
    )
    marker = build_batch(
        [Record(b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00")],
        base_offset=2,
        control=True,
        transactional=True,
        producer_id=7,
        producer_epoch=0,
    )
    messages = _messages(down_convert(appended + marker, 1, from_offset=1))
    assert [(m["offset"], m["timestamp"], m["attributes"]) for m in messages] == [(1, 9999, 0x08)]


def test_a_batch_cut_off_by_the_byte_limit_ends_the_set() -> None:
    first = build_batch([Record(b"a", b"1", timestamp=1)], base_offset=0)
    second = build_batch([Record(b"b", b"2", timestamp=1)], base_offset=1)
    messages = _messages(down_convert(first + second[:-5], 1))
    assert [m["offset"] for m in messages] == [0]
    with pytest.raises(ValueError, match="magic 0 or 1"):
        down_convert(first, 2)
