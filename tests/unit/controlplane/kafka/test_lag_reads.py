"""Record timestamps from v2 record batches and consumer-protocol assignments, from bytes."""

import struct

import cramjam
import pytest

from controlplane.kafka.lag_reads import _group_type, parse_assignment, timestamp_at


def _varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _batch(
    base_offset: int, base_ts: int, deltas: list[int], codec: int = 0, log_append: bool = False
) -> bytes:
    records = b""
    for index, delta in enumerate(deltas):
        body = b"\x00" + _varint(delta) + _varint(index) + _varint(-1) + _varint(1) + b"v" + _varint(0)
        records += _varint(len(body)) + body
    if codec:
        records = bytes(COMPRESSORS[codec](records))
    attributes = codec | (0x08 if log_append else 0)
    max_ts = base_ts + max(deltas)
    after_length = struct.pack(
        ">ibIhiqqqhii", 0, 2, 0, attributes, len(deltas) - 1, base_ts, max_ts, -1, -1, -1, len(deltas)
    )
    return struct.pack(">qi", base_offset, len(after_length) + len(records)) + after_length + records


# Kafka's codec ids: gzip, snappy (raw, as librdkafka sends it), lz4 (frame), zstd.
COMPRESSORS = {
    1: cramjam.gzip.compress,
    2: cramjam.snappy.compress_raw,
    3: cramjam.lz4.compress,
    4: cramjam.zstd.compress,
}


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_it_finds_the_timestamp_of_the_record_at_an_offset(codec: int) -> None:
    data = _batch(100, 1_000_000, [0, 5, 9], codec) + _batch(103, 2_000_000, [0, 7], codec)
    assert timestamp_at(data, 100) == 1_000_000
    assert timestamp_at(data, 102) == 1_000_009
    assert timestamp_at(data, 104) == 2_000_007
    assert timestamp_at(data, 105) is None


def test_a_log_append_time_batch_gives_its_max_timestamp() -> None:
    assert timestamp_at(_batch(0, 5_000, [0, 3], log_append=True), 0) == 5_003


def test_a_batch_that_does_not_decode_gives_its_base_timestamp() -> None:
    whole = _batch(0, 9_000, [0, 4], codec=4)
    garbled = whole[:61] + b"\x00" * (len(whole) - 61)  # the zstd frame's bytes zeroed
    assert timestamp_at(garbled, 1) == 9_000


def test_a_batch_cut_short_by_the_fetch_size_gives_its_base_timestamp() -> None:
    data = _batch(0, 7_000, [0, 1, 2])
    assert timestamp_at(data[:70], 2) == 7_000


def test_it_reads_a_consumer_protocol_assignment() -> None:
    data = (
        struct.pack(">hi", 1, 1)
        + struct.pack(">h", 6)
        + b"orders"
        + struct.pack(">iii", 2, 1, 0)
        + struct.pack(">i", -1)
    )
    assert parse_assignment(data) == (("orders", 0), ("orders", 1))
    assert parse_assignment(b"") == ()


@pytest.mark.parametrize(
    ("group_type", "protocol_type", "expected"),
    [
        ("Share", "share", "share"),  # ListGroups v5 (Kafka 3.8+) names the type
        ("consumer", "consumer", "consumer"),
        ("streams", "streams", "streams"),
        ("", "consumer", "classic"),  # v4, an older broker: every consumer group is classic
        ("", "", "classic"),  # a group that only commits offsets
        ("", "share", "share"),
    ],
)
def test_a_listed_groups_type_comes_from_list_groups_v5_else_its_protocol_type(
    group_type: str, protocol_type: str, expected: str
) -> None:
    assert _group_type(group_type, protocol_type) == expected
