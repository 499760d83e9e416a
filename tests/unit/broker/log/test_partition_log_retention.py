import pytest

from broker.log.errors import OffsetOutOfRangeError

from .conftest import LogFactory
from .helpers import NOW_MS, append_values, read_records

DAY_MS = 86_400_000


def test_time_retention_deletes_whole_segments_older_than_retention_ms(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500, retention_ms=DAY_MS, file_delete_delay_ms=0)
    append_values(log, 20, now_ms=NOW_MS - 2 * DAY_MS)
    old_end = log.log_end_offset
    append_values(log, 20, now_ms=NOW_MS)
    deleted = log.apply_retention(NOW_MS)
    assert deleted > 0
    assert old_end - 10 < log.log_start_offset <= old_end
    assert log.segments_snapshot()[0][0].base_offset == log.log_start_offset
    assert read_records(log)[-1][0] == 39
    assert not list(log.directory.glob("*.deleted"))


def test_when_every_segment_expires_a_new_empty_one_keeps_the_log_end(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500, retention_ms=DAY_MS)
    append_values(log, 20, now_ms=NOW_MS - 2 * DAY_MS)
    log.apply_retention(NOW_MS)
    assert log.log_start_offset == log.log_end_offset == 20
    assert log.read(20, 1000) == b""
    append_values(log, 1)
    assert read_records(log) == [(20, b"key-0", b"0000000000")]


def test_size_retention_keeps_the_newest_segments_within_retention_bytes(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=1000, retention_bytes=2500, retention_ms=-1)
    append_values(log, 100, size=50)
    before = log.size_bytes()
    log.apply_retention(NOW_MS)
    # Like Kafka, a segment goes only if what remains still holds retention.bytes.
    assert 2500 <= log.size_bytes() < 2500 + 1000 < before
    assert read_records(log)[-1][0] == 99


def test_retention_never_deletes_beyond_the_high_watermark(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500, retention_ms=DAY_MS)
    append_values(log, 20, now_ms=NOW_MS - 2 * DAY_MS)
    log.high_watermark = 5
    log.apply_retention(NOW_MS)
    assert log.log_start_offset <= 5


def test_compact_only_topics_ignore_time_retention(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500, retention_ms=DAY_MS, cleanup_policy="compact")
    append_values(log, 20, now_ms=NOW_MS - 2 * DAY_MS)
    assert log.apply_retention(NOW_MS) == 0
    assert log.log_start_offset == 0


def test_deleted_segment_files_linger_for_file_delete_delay_ms(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500, retention_ms=DAY_MS, file_delete_delay_ms=60_000)
    append_values(log, 20, now_ms=NOW_MS - 2 * DAY_MS)
    append_values(log, 1)
    log.apply_retention(NOW_MS)
    assert list(log.directory.glob("*.log.deleted"))
    log.apply_retention(NOW_MS + 60_001)
    assert not list(log.directory.glob("*.deleted"))


def test_delete_records_moves_the_log_start_and_hides_earlier_offsets(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500)
    append_values(log, 40)
    assert log.delete_records_before(25) == 25
    assert log.log_start_offset == 25
    with pytest.raises(OffsetOutOfRangeError):
        log.read(24, 1000)
    assert log.segments_snapshot()[0][0].base_offset <= 25 < log.segments_snapshot()[0][1].base_offset
    assert read_records(log, 25)[0][0] <= 25


def test_delete_records_cannot_go_past_the_high_watermark(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 10)
    log.high_watermark = 6
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records_before(7)
    assert log.delete_records_before(-1) == 6
    assert log.delete_records_before(3) == 6


def test_the_log_start_offset_survives_a_restart(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500)
    append_values(log, 40)
    log.delete_records_before(25)
    log.close()
    assert open_log(segment_bytes=500).log_start_offset == 25
