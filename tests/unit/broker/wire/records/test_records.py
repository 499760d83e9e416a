import pytest

from broker.wire.records.batch import iter_batches
from broker.wire.records.codecs import Codec
from broker.wire.records.errors import CorruptRecordError, InvalidRecordError
from broker.wire.records.records import Record, build_batch, decode_records, decode_varint, encode_varint


@pytest.mark.parametrize(
    "value", [0, 1, -1, 63, -64, 64, 300, -300, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]
)
def test_varints_round_trip(value: int) -> None:
    out = bytearray()
    encode_varint(value, out)
    assert decode_varint(bytes(out), 0) == (value, len(out))


def test_varints_use_zigzag_encoding() -> None:
    out = bytearray()
    for value in (0, -1, 1, -2):
        encode_varint(value, out)
    assert bytes(out) == b"\x00\x01\x02\x03"


def test_a_truncated_varint_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        decode_varint(b"\x80\x80", 0)


def test_an_endless_varint_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        decode_varint(b"\xff" * 20, 0)


@pytest.mark.parametrize("codec", list(Codec))
def test_records_round_trip_with_keys_values_headers_and_nulls(codec: Codec) -> None:
    records = [
        Record(b"k1", b"v1", (("h1", b"x"), ("h2", None)), timestamp=5000),
        Record(None, b"no key", timestamp=4000),
        Record(b"tombstone", None, timestamp=6000),
        Record(b"", b"", (("", b""),), timestamp=5000),
    ]
    (batch,) = iter_batches(build_batch(records, codec=codec, base_offset=100))
    decoded = decode_records(batch)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in decoded] == [
        (r.key, r.value, r.headers, r.timestamp) for r in records
    ]
    assert [r.offset_delta for r in decoded] == [0, 1, 2, 3]
    assert batch.base_timestamp == 5000
    assert batch.max_timestamp == 6000


def test_explicit_offset_deltas_leave_gaps() -> None:
    records = [Record(b"a", b"1", offset_delta=0), Record(b"b", b"2", offset_delta=5)]
    (batch,) = iter_batches(build_batch(records, last_offset_delta=9))
    assert batch.last_offset_delta == 9
    assert [r.offset_delta for r in decode_records(batch)] == [0, 5]


def test_an_empty_batch_keeps_its_offset_span() -> None:
    (batch,) = iter_batches(build_batch([], base_offset=10, last_offset_delta=4, max_timestamp=7))
    assert (batch.record_count, batch.last_offset, batch.max_timestamp) == (0, 14, 7)
    assert decode_records(batch) == []


def test_decreasing_offset_deltas_are_refused_when_building() -> None:
    with pytest.raises(ValueError, match="increase"):
        build_batch([Record(b"a", b"1", offset_delta=3), Record(b"b", b"2", offset_delta=1)])


def test_a_record_count_larger_than_the_records_is_corrupt() -> None:
    raw = bytearray(build_batch([Record(b"a", b"1", timestamp=1)]))
    raw[60] = 2  # recordCount low byte: claims two records
    (batch,) = iter_batches(raw)
    with pytest.raises(CorruptRecordError):
        decode_records(batch)


def test_a_record_count_smaller_than_the_records_is_invalid() -> None:
    raw = bytearray(build_batch([Record(b"a", b"1", timestamp=1), Record(b"b", b"2", timestamp=1)]))
    raw[60] = 1
    (batch,) = iter_batches(raw)
    with pytest.raises(InvalidRecordError):
        decode_records(batch)
