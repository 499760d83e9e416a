import resource
import signal

import pytest

from broker.log.errors import LogStorageError, OffsetOutOfRangeError
from broker.wire.records.batch import iter_batches
from broker.wire.records.codecs import Codec
from broker.wire.records.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
)
from broker.wire.records.records import Record, build_batch, decode_records

from .conftest import LogFactory
from .helpers import NOW_MS, append_values, batch_of, read_records


def test_it_assigns_consecutive_offsets_and_returns_them(open_log: LogFactory) -> None:
    log = open_log()
    first = log.append_as_leader(batch_of(b"a", b"b", b"c"), leader_epoch=0, now_ms=NOW_MS)
    second = log.append_as_leader(batch_of(b"d"), leader_epoch=0, now_ms=NOW_MS)
    assert (first.base_offset, first.last_offset, first.record_count) == (0, 2, 3)
    assert (second.base_offset, second.last_offset) == (3, 3)
    assert first.log_append_time_ms == -1
    assert first.max_timestamp == NOW_MS
    assert log.log_end_offset == 4
    assert [value for _, _, value in read_records(log)] == [b"a", b"b", b"c", b"d"]


def test_it_stores_batches_byte_for_byte_apart_from_offset_and_leader_epoch(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 5)
    sent = batch_of(b"x", b"y", codec=Codec.LZ4, base_offset=0)
    log.append_as_leader(sent, leader_epoch=3, now_ms=NOW_MS)
    log.high_watermark = log.log_end_offset
    stored = log.read(5, 1 << 20)
    assert stored[:8] == (5).to_bytes(8, "big")
    assert stored[12:16] == (3).to_bytes(4, "big")
    assert stored[16:] == sent[16:]


def test_consecutive_appends_get_consecutive_offsets(open_log: LogFactory) -> None:
    log = open_log()
    first = log.append_as_leader(batch_of(b"a", b"b"), leader_epoch=0, now_ms=NOW_MS)
    second = log.append_as_leader(batch_of(b"c"), leader_epoch=0, now_ms=NOW_MS)
    assert (first.base_offset, first.last_offset, second.base_offset, second.record_count) == (0, 1, 2, 1)
    log.high_watermark = log.log_end_offset
    assert [b.base_offset for b in iter_batches(log.read(0, 1 << 20))] == [0, 2]


def test_several_batches_in_one_append_are_refused_whole_as_kafka_does(open_log: LogFactory) -> None:
    log = open_log()
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(batch_of(b"a", b"b") + batch_of(b"c"), leader_epoch=0, now_ms=NOW_MS)
    assert log.log_end_offset == 0


def test_log_append_time_topics_stamp_the_batch(open_log: LogFactory) -> None:
    log = open_log(message_timestamp_type="LogAppendTime")
    result = log.append_as_leader(batch_of(b"a", timestamp=5), leader_epoch=0, now_ms=NOW_MS + 7)
    assert result.log_append_time_ms == NOW_MS + 7
    log.high_watermark = log.log_end_offset
    (batch,) = iter_batches(log.read(0, 1 << 20))
    assert batch.is_log_append_time
    assert batch.max_timestamp == NOW_MS + 7
    assert batch.is_crc_valid()


@pytest.mark.parametrize(
    ("topic_codec", "codec"), [("zstd", Codec.ZSTD), ("gzip", Codec.GZIP), ("uncompressed", Codec.NONE)]
)
def test_it_recompresses_to_the_topic_compression_type(
    open_log: LogFactory, topic_codec: str, codec: Codec
) -> None:
    log = open_log(compression_type=topic_codec)
    sent = batch_of(b"v" * 200, b"w" * 200, codec=Codec.SNAPPY if codec != Codec.SNAPPY else Codec.NONE)
    log.append_as_leader(sent, leader_epoch=0, now_ms=NOW_MS)
    log.high_watermark = log.log_end_offset
    (batch,) = iter_batches(log.read(0, 1 << 20))
    assert batch.codec == codec
    assert [r.value for r in decode_records(batch)] == [b"v" * 200, b"w" * 200]


def test_a_batch_with_a_bad_crc_is_rejected_and_nothing_is_written(open_log: LogFactory) -> None:
    log = open_log()
    bad = bytearray(batch_of(b"b"))
    bad[-1] ^= 0x01
    with pytest.raises(CorruptRecordError) as caught:
        log.append_as_leader(bytes(bad), leader_epoch=0, now_ms=NOW_MS)
    assert caught.value.error_code == 2
    assert log.log_end_offset == 0
    assert log.size_bytes() == 0


def test_a_truncated_request_holds_no_batch(open_log: LogFactory) -> None:
    log = open_log()
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(batch_of(b"a")[:-3], leader_epoch=0, now_ms=NOW_MS)
    assert log.log_end_offset == 0


def test_a_batch_over_max_message_bytes_is_too_large(open_log: LogFactory) -> None:
    log = open_log(max_message_bytes=500)
    with pytest.raises(RecordTooLargeError) as caught:
        log.append_as_leader(batch_of(b"x" * 600), leader_epoch=0, now_ms=NOW_MS)
    assert caught.value.error_code == 10
    log.append_as_leader(batch_of(b"x" * 100), leader_epoch=0, now_ms=NOW_MS)
    assert log.log_end_offset == 1


def test_client_control_batches_are_invalid(open_log: LogFactory) -> None:
    log = open_log()
    control = build_batch([Record(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")], control=True)
    with pytest.raises(InvalidRecordError) as caught:
        log.append_as_leader(control, leader_epoch=0, now_ms=NOW_MS)
    assert caught.value.error_code == 87


def test_compacted_topics_refuse_records_without_a_key(open_log: LogFactory) -> None:
    log = open_log(cleanup_policy="compact")
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(batch_of(b"v", keys=[None]), leader_epoch=0, now_ms=NOW_MS)
    log.append_as_leader(batch_of(b"v", keys=[b"k"]), leader_epoch=0, now_ms=NOW_MS)
    assert log.log_end_offset == 1


def test_timestamps_outside_the_allowed_window_are_invalid(open_log: LogFactory) -> None:
    log = open_log(message_timestamp_before_max_ms=1000, message_timestamp_after_max_ms=1000)
    for timestamp in (NOW_MS - 5000, NOW_MS + 5000):
        with pytest.raises(InvalidTimestampError) as caught:
            log.append_as_leader(batch_of(b"a", timestamp=timestamp), leader_epoch=0, now_ms=NOW_MS)
        assert caught.value.error_code == 32
    log.append_as_leader(batch_of(b"a", timestamp=NOW_MS - 500), leader_epoch=0, now_ms=NOW_MS)
    assert log.log_end_offset == 1


def test_a_record_count_that_disagrees_with_the_offset_delta_is_invalid(open_log: LogFactory) -> None:
    log = open_log()
    raw = build_batch([Record(b"k", b"v", timestamp=NOW_MS)], last_offset_delta=3)
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)


def test_an_empty_request_appends_nothing(open_log: LogFactory) -> None:
    log = open_log()
    result = log.append_as_leader(b"", leader_epoch=0, now_ms=NOW_MS)
    assert (result.base_offset, result.record_count) == (-1, 0)
    assert log.log_end_offset == 0


def test_reads_return_whole_batches_within_max_bytes(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 20, size=100)
    one_batch = len(log.read(0, 1))
    data = log.read(0, one_batch * 3 + one_batch // 2)
    assert len(data) == one_batch * 3
    assert [b.base_offset for b in iter_batches(data)] == [0, 1, 2]


def test_a_read_returns_one_oversized_batch_only_when_min_one_message(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 2, size=1000)
    assert len(log.read(0, 10)) > 1000
    assert log.read(0, 10, min_one_message=False) == b""


def test_a_read_starts_at_the_batch_holding_the_offset(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 10, per_batch=5)
    (batch, _) = iter_batches(log.read(3, 1 << 20))
    assert batch.base_offset == 0
    assert [b.base_offset for b in iter_batches(log.read(5, 1 << 20))] == [5]


def test_reads_stop_at_max_offset(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 10)
    assert [b.base_offset for b in iter_batches(log.read(0, 1 << 20, max_offset=4))] == [0, 1, 2, 3]
    assert log.read(4, 1 << 20, max_offset=4) == b""


def test_reads_at_the_log_end_are_empty_and_beyond_it_out_of_range(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 3)
    assert log.read(3, 1000) == b""
    with pytest.raises(OffsetOutOfRangeError) as caught:
        log.read(4, 1000)
    assert caught.value.error_code == 1


def test_append_listeners_are_called_after_every_append(open_log: LogFactory) -> None:
    log = open_log()
    calls: list[int] = []
    log.add_append_listener(lambda: calls.append(log.log_end_offset))
    append_values(log, 3)
    assert calls == [1, 2, 3]


def test_flush_messages_triggers_a_flush_that_records_the_recovery_point(open_log: LogFactory) -> None:
    log = open_log(flush_messages=2)
    append_values(log, 3)
    assert (log.directory / "recovery-point").read_text().strip() == "2"


def test_a_follower_append_keeps_the_given_offsets(open_log: LogFactory) -> None:
    log = open_log()
    log.append_as_follower(batch_of(b"a", b"b", base_offset=0, partition_leader_epoch=2))
    log.append_as_follower(batch_of(b"c", base_offset=7, partition_leader_epoch=3))
    assert log.log_end_offset == 8
    assert [offset for offset, _, _ in read_records(log)] == [0, 1, 7]
    assert log.end_offset_for_leader_epoch(2) == (2, 7)
    with pytest.raises(InvalidRecordError):
        log.append_as_follower(batch_of(b"d", base_offset=3))


def test_a_failed_disk_write_leaves_no_partial_batch(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 2)
    size = log.size_bytes()
    # A real EFBIG from the kernel: cap this process's file size just above the current log.
    previous_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 50, hard))
    try:
        with pytest.raises(LogStorageError) as caught:
            log.append_as_leader(batch_of(b"x" * 500), leader_epoch=0, now_ms=NOW_MS)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous_handler)
    assert caught.value.error_code == 56
    assert log.size_bytes() == size
    assert (log.directory / "00000000000000000000.log").stat().st_size == size
    assert log.append_as_leader(batch_of(b"y"), leader_epoch=0, now_ms=NOW_MS).base_offset == 2
    log.high_watermark = log.log_end_offset
    assert [value for _, _, value in read_records(log)][-1] == b"y"
