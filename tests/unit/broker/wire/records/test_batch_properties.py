"""Property tests: build → parse round-trips, and damaged input only ever raises typed errors."""

import struct

from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.wire.records.batch import HEADER_SIZE, iter_batches
from broker.wire.records.codecs import Codec
from broker.wire.records.errors import StorageError
from broker.wire.records.records import Record, build_batch, decode_records

optional_bytes = st.none() | st.binary(max_size=64)
headers = st.lists(st.tuples(st.text(max_size=8), optional_bytes), max_size=3).map(tuple)
records_strategy = st.lists(
    st.tuples(optional_bytes, optional_bytes, headers, st.integers(min_value=0, max_value=2**41)).map(
        lambda fields: Record(*fields)
    ),
    min_size=1,
    max_size=20,
)
codecs = st.sampled_from(list(Codec))
# (position, XOR mask) pairs; positions wrap around whatever stretch of bytes a test flips.
byte_flips = st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=4)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(
    records=records_strategy,
    codec=codecs,
    base_offset=st.integers(0, 2**62),
    producer_id=st.integers(-1, 2**62),
)
def test_built_batches_parse_back_to_the_same_records(
    records: list[Record], codec: Codec, base_offset: int, producer_id: int
) -> None:
    raw = build_batch(records, codec=codec, base_offset=base_offset, producer_id=producer_id, base_sequence=0)
    (batch,) = iter_batches(raw)
    batch.check_crc()
    assert batch.base_offset == base_offset
    assert batch.producer_id == producer_id
    assert batch.record_count == len(records)
    assert batch.last_offset == base_offset + len(records) - 1
    assert batch.max_timestamp == max(r.timestamp or 0 for r in records)
    decoded = decode_records(batch)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in decoded] == [
        (r.key, r.value, r.headers, r.timestamp) for r in records
    ]


def _error_code_of_parsing(data: bytes) -> int | None:
    """Parse, check and decode everything; the Kafka error code of the typed error raised, if any."""
    try:
        for batch in iter_batches(data):
            batch.check_crc()
            decode_records(batch)
    except StorageError as error:
        return error.error_code
    return None


@FAST
@given(
    records=records_strategy,
    codec=codecs,
    flips=byte_flips,
)
def test_mutated_batches_raise_only_typed_errors(
    records: list[Record], codec: Codec, flips: list[tuple[int, int]]
) -> None:
    raw = bytearray(build_batch(records, codec=codec))
    for position, mask in flips:
        raw[position % len(raw)] ^= mask
    assert _error_code_of_parsing(bytes(raw)) in (None, 2, 76, 87)


@FAST
@given(records=records_strategy, codec=codecs, cut=st.integers(0, 10**6))
def test_truncated_batches_raise_only_typed_errors(records: list[Record], codec: Codec, cut: int) -> None:
    raw = build_batch(records, codec=codec) * 2
    truncated = raw[: cut % len(raw)]
    assert _error_code_of_parsing(truncated) in (None, 2)


@FAST
@given(data=st.binary(max_size=300))
def test_random_bytes_never_crash_the_parser(data: bytes) -> None:
    assert _error_code_of_parsing(data) in (None, 2, 76, 87)


@FAST
@given(
    records=records_strategy,
    codec=codecs,
    flips=byte_flips,
)
def test_garbage_records_behind_a_valid_crc_raise_only_typed_errors(
    records: list[Record], codec: Codec, flips: list[tuple[int, int]]
) -> None:
    # A buggy client can send a correct CRC over nonsense: the record decoder itself must hold up.
    raw = bytearray(build_batch(records, codec=codec))
    body_length = len(raw) - HEADER_SIZE
    for position, mask in flips:
        raw[HEADER_SIZE + position % body_length] ^= mask
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    assert _error_code_of_parsing(bytes(raw)) in (None, 2, 87)
