import struct

import pytest
from crc32c import crc32c

from broker.wire.records.batch import (
    iter_batches,
    read_batch_header,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
)
from broker.wire.records.codecs import Codec
from broker.wire.records.errors import CorruptRecordError, InvalidRecordError, UnsupportedCompressionError
from broker.wire.records.records import Record, TimestampType, build_batch


def make_batch(count: int = 3, **kwargs: object) -> bytes:
    records = [Record(b"key-%d" % i, b"value-%d" % i, timestamp=1000 + i) for i in range(count)]
    return build_batch(records, **kwargs)  # type: ignore[arg-type]


def test_it_reads_every_header_field() -> None:
    raw = make_batch(
        4,
        base_offset=42,
        producer_id=7,
        producer_epoch=3,
        base_sequence=10,
        partition_leader_epoch=5,
        transactional=True,
        codec=Codec.GZIP,
    )
    (batch,) = iter_batches(raw)
    assert batch.base_offset == 42
    assert batch.last_offset == 45
    assert batch.next_offset == 46
    assert batch.record_count == 4
    assert batch.size == len(raw)
    assert batch.partition_leader_epoch == 5
    assert batch.producer_id == 7
    assert batch.producer_epoch == 3
    assert batch.base_sequence == 10
    assert batch.last_sequence == 13
    assert batch.is_transactional
    assert not batch.is_control
    assert batch.codec == Codec.GZIP
    assert batch.base_timestamp == 1000
    assert batch.max_timestamp == 1003
    assert batch.is_crc_valid()


def test_it_walks_concatenated_batches() -> None:
    raw = make_batch(2, base_offset=0) + make_batch(3, base_offset=2) + make_batch(1, base_offset=5)
    assert [(b.base_offset, b.record_count) for b in iter_batches(raw)] == [(0, 2), (2, 3), (5, 1)]


@pytest.mark.parametrize("cut", [1, 11, 12, 60, 61, 70])
def test_it_raises_on_a_truncated_buffer(cut: int) -> None:
    raw = make_batch(3) + make_batch(3)
    truncated = raw[: len(raw) // 2 + cut] if cut < len(raw) // 2 else raw[:cut]
    with pytest.raises(CorruptRecordError):
        list(iter_batches(truncated))


def test_it_rejects_a_batch_with_a_bad_crc() -> None:
    raw = bytearray(make_batch(3))
    raw[-1] ^= 0xFF
    (batch,) = iter_batches(raw)
    with pytest.raises(CorruptRecordError) as caught:
        batch.check_crc()
    assert caught.value.error_code == 2


def test_it_rejects_an_unknown_magic_as_corrupt_and_an_old_one_as_invalid() -> None:
    """Kafka's answers: CORRUPT_MESSAGE for a magic it does not know, INVALID_RECORD for magic 0/1."""
    raw = bytearray(make_batch(1))
    raw[16] = 3
    with pytest.raises(CorruptRecordError, match="magic"):
        list(iter_batches(raw))
    raw[16] = 1
    with pytest.raises(InvalidRecordError, match="magic"):
        list(iter_batches(raw))


def test_it_rejects_a_length_smaller_than_a_header() -> None:
    raw = bytearray(make_batch(1))
    struct.pack_into(">i", raw, 8, 10)
    with pytest.raises(CorruptRecordError):
        read_batch_header(memoryview(raw), 0)


def test_it_rejects_an_unknown_codec_with_its_own_error_code() -> None:
    raw = bytearray(make_batch(1))
    struct.pack_into(">h", raw, 21, 6)
    (batch,) = iter_batches(raw)
    with pytest.raises(UnsupportedCompressionError) as caught:
        _ = batch.codec
    assert caught.value.error_code == 76


def test_rewriting_base_offset_and_leader_epoch_keeps_the_crc_valid() -> None:
    raw = bytearray(make_batch(3))
    set_base_offset(raw, 0, 1234)
    set_partition_leader_epoch(raw, 0, 9)
    (batch,) = iter_batches(raw)
    assert (batch.base_offset, batch.partition_leader_epoch) == (1234, 9)
    assert batch.is_crc_valid()


def test_setting_log_append_time_sets_the_flag_the_max_timestamp_and_a_new_crc() -> None:
    raw = bytearray(make_batch(3) + make_batch(2))
    first_size = next(iter_batches(raw)).size
    set_log_append_time(raw, first_size, 999_999)
    first, second = iter_batches(raw)
    assert not first.is_log_append_time
    assert second.is_log_append_time
    assert second.max_timestamp == 999_999
    assert second.is_crc_valid()
    assert second.crc == crc32c(bytes(raw[first_size + 21 :]))


def test_build_batch_marks_log_append_time_batches() -> None:
    raw = make_batch(2, timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=5555)
    (batch,) = iter_batches(raw)
    assert batch.is_log_append_time
    assert batch.max_timestamp == 5555
