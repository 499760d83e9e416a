import os

from broker.log.partition_log import PartitionLog
from broker.wire.records.records import Record, build_batch

from .conftest import LogFactory
from .helpers import NOW_MS, append_values, batch_of, read_records


def _append_with_timestamps(log: PartitionLog, timestamps: list[list[int]]) -> None:
    for batch_timestamps in timestamps:
        records = [Record(b"k", b"v", timestamp=ts) for ts in batch_timestamps]
        log.append_as_leader(build_batch(records), leader_epoch=0, now_ms=NOW_MS)
    log.high_watermark = log.log_end_offset


def test_offset_for_timestamp_finds_the_first_record_at_or_after_it(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=300, index_interval_bytes=50)
    _append_with_timestamps(log, [[1000 + 10 * i, 1000 + 10 * i + 5] for i in range(40)])
    assert log.offset_for_timestamp(0) == (0, 1000)
    assert log.offset_for_timestamp(1005) == (1, 1005)
    assert log.offset_for_timestamp(1006) == (2, 1010)
    assert log.offset_for_timestamp(1200) == (40, 1200)
    assert log.offset_for_timestamp(1395) == (79, 1395)
    assert log.offset_for_timestamp(1396) is None


def test_offset_for_timestamp_handles_out_of_order_timestamps_inside_a_batch(open_log: LogFactory) -> None:
    log = open_log()
    _append_with_timestamps(log, [[500, 900, 100], [300, 950]])
    assert log.offset_for_timestamp(600) == (1, 900)
    assert log.offset_for_timestamp(920) == (4, 950)


def test_offset_for_timestamp_skips_records_below_the_log_start(open_log: LogFactory) -> None:
    log = open_log()
    _append_with_timestamps(log, [[1000, 2000, 3000]])
    log.delete_records_before(2)
    assert log.offset_for_timestamp(0) == (2, 3000)


def test_max_timestamp_points_at_the_record_holding_it(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=200)
    assert log.max_timestamp() is None
    _append_with_timestamps(log, [[10, 20], [70, 30], [40], [50, 60]])
    assert log.max_timestamp() == (2, 70)
    log.close()
    assert open_log(segment_bytes=200).max_timestamp() == (2, 70)


def test_log_append_time_lookups_use_the_append_time(open_log: LogFactory) -> None:
    log = open_log(message_timestamp_type="LogAppendTime")
    log.append_as_leader(batch_of(b"a", b"b", timestamp=1), leader_epoch=0, now_ms=NOW_MS)
    log.append_as_leader(batch_of(b"c", timestamp=1), leader_epoch=0, now_ms=NOW_MS + 10)
    assert log.offset_for_timestamp(NOW_MS + 5) == (2, NOW_MS + 10)
    assert log.max_timestamp() == (2, NOW_MS + 10)


def test_leader_epochs_map_to_their_end_offsets(open_log: LogFactory) -> None:
    log = open_log()
    for epoch, count in ((0, 3), (2, 4), (5, 2)):
        for _ in range(count):
            log.append_as_leader(batch_of(b"x"), leader_epoch=epoch, now_ms=NOW_MS)
    assert log.end_offset_for_leader_epoch(0) == (0, 3)
    assert log.end_offset_for_leader_epoch(1) == (0, 3)
    assert log.end_offset_for_leader_epoch(2) == (2, 7)
    assert log.end_offset_for_leader_epoch(4) == (2, 7)
    assert log.end_offset_for_leader_epoch(5) == (5, 9)
    assert log.end_offset_for_leader_epoch(6) == (-1, -1)
    assert log.end_offset_for_leader_epoch(-1) == (-1, -1)
    log.close()
    reopened = open_log()
    assert reopened.end_offset_for_leader_epoch(2) == (2, 7)
    assert (reopened.directory / "leader-epoch-checkpoint").read_text() == "0\n3\n0 0\n2 3\n5 7\n"


def test_an_epoch_older_than_the_first_known_one_ends_where_the_first_starts(open_log: LogFactory) -> None:
    log = open_log()
    log.append_as_follower(batch_of(b"x", base_offset=0, partition_leader_epoch=3))
    log.append_as_follower(batch_of(b"y", base_offset=1, partition_leader_epoch=4))
    assert log.end_offset_for_leader_epoch(1) == (1, 0)


def test_truncation_removes_whole_batches_and_later_epochs(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=400)
    for epoch in range(4):
        for _ in range(10):
            log.append_as_leader(batch_of(b"a", b"b"), leader_epoch=epoch, now_ms=NOW_MS)
    log.high_watermark = log.log_end_offset
    log.truncate_to(45)  # inside the batch [44, 45]
    assert log.log_end_offset == 44
    assert log.high_watermark == 44
    assert [offset for offset, _, _ in read_records(log)] == list(range(44))
    assert log.end_offset_for_leader_epoch(2) == (2, 44)
    assert log.end_offset_for_leader_epoch(3) == (-1, -1)
    assert log.append_as_leader(batch_of(b"z"), leader_epoch=7, now_ms=NOW_MS).base_offset == 44


def test_truncation_forgets_producer_batches_past_the_new_end(open_log: LogFactory) -> None:
    log = open_log()
    for sequence in range(3):
        raw = batch_of(b"v", producer_id=1, producer_epoch=0, base_sequence=sequence)
        log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)
    log.truncate_to(2)
    retried = batch_of(b"v", producer_id=1, producer_epoch=0, base_sequence=2)
    assert log.append_as_leader(retried, leader_epoch=0, now_ms=NOW_MS).base_offset == 2
    assert log.log_end_offset == 3


def test_truncating_below_the_first_segment_starts_the_log_over(open_log: LogFactory) -> None:
    log = open_log()
    append_values(log, 5)
    log.truncate_to(0)
    assert (log.log_start_offset, log.log_end_offset) == (0, 0)
    append_values(log, 2)
    assert [offset for offset, _, _ in read_records(log)] == [0, 1]


def test_legacy_offsets_before_lists_segment_bases_as_kafkas_list_offsets_v0(open_log: LogFactory) -> None:
    """Kafka's `legacyFetchOffsetsBefore`: each segment counts as its base offset, last modified when
    its file was; the log end counts as modified now. Newest first, at most `max_num_offsets`."""
    log = open_log(segment_bytes=200)
    _append_with_timestamps(log, [[1000]] * 12)
    segments, bases = log.segments_snapshot()
    assert len(segments) >= 3
    assert bases[0] == 0
    for number, segment in enumerate(segments):  # segment n last written at second 100 + n
        os.utime(segment.log_path, (100 + number, 100 + number))
    end = log.log_end_offset
    now_ms = 500_000
    newest_first = [end, *reversed(bases)]
    assert log.legacy_offsets_before(-1, 100, now_ms) == newest_first
    assert log.legacy_offsets_before(-1, 1, now_ms) == [end]
    assert log.legacy_offsets_before(-2, 5, now_ms) == [0]
    # Modified at or before second 101: the first two segments, newest first.
    assert log.legacy_offsets_before(101_500, 10, now_ms) == [bases[1], bases[0]]
    assert log.legacy_offsets_before(101_500, 1, now_ms) == [bases[1]]
    assert log.legacy_offsets_before(99_000, 10, now_ms) == []
    assert log.legacy_offsets_before(now_ms, 2, now_ms) == [end, bases[-1]]
    assert log.legacy_offsets_before(-1, -1, now_ms) == newest_first  # negative: no limit

    log.delete_records_before(1)  # the first segment now counts from the log start
    assert log.legacy_offsets_before(-2, 1, now_ms) == [1]
