import threading

from broker.log.cleaner import clean_log
from broker.wire.records.batch import iter_batches
from broker.wire.records.codecs import Codec
from broker.wire.records.records import Record, build_batch, decode_records

from .conftest import LogFactory
from .helpers import NOW_MS, batch_of, read_records

COMPACT = {"cleanup_policy": "compact", "segment_bytes": 600, "min_cleanable_dirty_ratio": 0.01}
OLD = NOW_MS - 3_600_000


def write_keys(log, keys: list[str], *, timestamp: int = OLD, codec: Codec = Codec.NONE) -> None:
    for key in keys:
        value = None if key.endswith("!") else f"value-of-{key}".encode()
        log.append_as_leader(
            batch_of(value, keys=[key.rstrip("!").encode()], timestamp=timestamp, codec=codec),
            leader_epoch=0,
            now_ms=NOW_MS,
        )
    log.high_watermark = log.log_end_offset


def latest_by_key(log) -> dict[bytes, tuple[int, bytes | None]]:
    latest: dict[bytes, tuple[int, bytes | None]] = {}
    for offset, key, value in read_records(log):
        assert key is not None
        latest[key] = (offset, value)
    return latest


def test_compaction_keeps_only_the_latest_record_per_key(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    write_keys(log, [f"k{i % 5}" for i in range(60)])
    before = latest_by_key(log)
    stats = clean_log(log, NOW_MS)
    assert stats is not None
    assert stats.records_retained < stats.records_read
    records = read_records(log)
    closed_end = log.active_segment.base_offset
    cleaned_keys = [key for offset, key, _ in records if offset < closed_end]
    assert len(cleaned_keys) == len(set(cleaned_keys))
    assert latest_by_key(log) == before
    offsets = [offset for offset, _, _ in records]
    assert offsets == sorted(offsets)
    assert len(offsets) < 60  # the gaps are where superseded records were


def test_compaction_never_touches_the_active_segment(open_log: LogFactory) -> None:
    log = open_log(**{**COMPACT, "segment_bytes": 100_000})
    write_keys(log, ["a", "a", "a"])
    assert clean_log(log, NOW_MS) is None
    assert len(read_records(log)) == 3


def test_tombstones_are_removed_after_delete_retention_ms(open_log: LogFactory) -> None:
    log = open_log(**COMPACT, delete_retention_ms=86_400_000)
    write_keys(log, [f"k{i % 4}" for i in range(30)] + ["k1!"] + [f"x{i}" for i in range(20)])
    clean_log(log, NOW_MS)
    assert latest_by_key(log)[b"k1"][1] is None
    log.update_config(log.config.__class__.from_properties({"delete.retention.ms": "1000"}, base=log.config))
    log.append_as_leader(batch_of(b"new", keys=[b"k2"], timestamp=OLD), leader_epoch=0, now_ms=NOW_MS)
    write_keys(log, [f"y{i}" for i in range(20)])
    stats = clean_log(log, NOW_MS)
    assert stats is not None
    assert stats.tombstones_removed == 1
    assert b"k1" not in latest_by_key(log)
    assert latest_by_key(log)[b"k0"][1] == b"value-of-k0"


def test_compressed_batches_are_recompressed_with_their_codec(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    write_keys(log, [f"k{i % 3}" for i in range(40)], codec=Codec.ZSTD)
    clean_log(log, NOW_MS)
    codecs = {batch.codec for batch in iter_batches(log.read(0, 1 << 20))}
    assert codecs == {Codec.ZSTD}
    assert {key: value for key, (_, value) in latest_by_key(log).items()} == {
        b"k0": b"value-of-k0",
        b"k1": b"value-of-k1",
        b"k2": b"value-of-k2",
    }


def test_min_compaction_lag_protects_recent_segments(open_log: LogFactory) -> None:
    log = open_log(**COMPACT, min_compaction_lag_ms=60_000)
    write_keys(log, [f"k{i % 2}" for i in range(40)], timestamp=NOW_MS)
    assert clean_log(log, NOW_MS) is None
    assert clean_log(log, NOW_MS + 120_000) is not None


def test_a_log_below_the_dirty_ratio_is_left_alone_until_max_compaction_lag(open_log: LogFactory) -> None:
    log = open_log(**{**COMPACT, "min_cleanable_dirty_ratio": 0.9, "max_compaction_lag_ms": 3_600_000})
    write_keys(log, [f"k{i % 2}" for i in range(40)])
    assert clean_log(log, NOW_MS) is not None  # all dirty: ratio 1.0
    write_keys(log, [f"k{i % 2}" for i in range(8)], timestamp=NOW_MS)
    assert clean_log(log, NOW_MS) is None  # a little dirt on a clean log
    assert clean_log(log, NOW_MS + 7_200_000) is not None  # but not forever


def test_compaction_survives_a_restart(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    write_keys(log, [f"k{i % 5}" for i in range(60)])
    clean_log(log, NOW_MS)
    expected = read_records(log)
    log.close()
    reopened = open_log(**COMPACT)
    assert read_records(reopened) == expected
    assert not list(reopened.directory.glob("*.swap"))


def test_idempotent_producer_state_outlives_its_compacted_records(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    for sequence in range(10):
        raw = batch_of(
            b"v%d" % sequence,
            keys=[b"same"],
            timestamp=OLD,
            producer_id=9,
            producer_epoch=0,
            base_sequence=sequence,
        )
        log.append_as_leader(raw, leader_epoch=0, now_ms=NOW_MS)
    log.high_watermark = log.log_end_offset
    log.roll(NOW_MS)
    clean_log(log, NOW_MS)
    assert [value for _, _, value in read_records(log)] == [b"v9"]
    log.close()
    reopened = open_log(**COMPACT)
    retry = batch_of(b"v9", keys=[b"same"], producer_id=9, producer_epoch=0, base_sequence=9)
    assert reopened.append_as_leader(retry, leader_epoch=0, now_ms=NOW_MS).base_offset == 9


def test_appends_and_reads_continue_while_a_clean_runs(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    write_keys(log, [f"k{i % 7}" for i in range(200)])
    result: list[object] = []
    cleaner = threading.Thread(target=lambda: result.append(clean_log(log, NOW_MS)))
    cleaner.start()
    write_keys(log, [f"k{i % 7}" for i in range(50)])
    while cleaner.is_alive():
        assert read_records(log)[-1][0] == log.log_end_offset - 1
    cleaner.join()
    assert result[0] is not None
    assert log.log_end_offset == 250
    assert latest_by_key(log)[b"k0"][0] == 249


def test_a_filtered_batch_keeps_its_offsets_timestamps_and_producer_fields(open_log: LogFactory) -> None:
    log = open_log(**COMPACT)
    raw = build_batch(
        [
            Record(b"a", b"1", timestamp=OLD),
            Record(b"b", b"2", timestamp=OLD + 5),
            Record(b"c", b"3", timestamp=OLD + 9),
        ],
        producer_id=77,
        producer_epoch=2,
        base_sequence=0,
        codec=Codec.GZIP,
    )
    log.append_as_leader(raw, leader_epoch=4, now_ms=NOW_MS)
    write_keys(log, ["b"] + [f"pad{i}" for i in range(20)])
    clean_log(log, NOW_MS)
    first = next(iter_batches(log.read(0, 1 << 20)))
    assert (first.base_offset, first.last_offset, first.record_count) == (0, 2, 2)
    assert (first.producer_id, first.producer_epoch, first.base_sequence) == (77, 2, 0)
    assert first.partition_leader_epoch == 4
    assert first.codec == Codec.GZIP
    assert [(r.key, r.timestamp, r.offset_delta) for r in decode_records(first)] == [
        (b"a", OLD, 0),
        (b"c", OLD + 9, 2),
    ]
    assert first.max_timestamp == OLD + 9


def test_compact_and_delete_topics_get_both_retention_and_compaction(open_log: LogFactory) -> None:
    log = open_log(**{**COMPACT, "cleanup_policy": "compact,delete"}, retention_ms=86_400_000)
    write_keys(log, [f"k{i % 3}" for i in range(30)], timestamp=NOW_MS - 2 * 86_400_000)
    write_keys(log, [f"k{i % 3}" for i in range(30)], timestamp=NOW_MS - 1000)
    log.roll(NOW_MS)
    assert log.apply_retention(NOW_MS) > 0
    assert log.log_start_offset >= 25
    assert clean_log(log, NOW_MS) is not None
    assert {key: value for key, (_, value) in latest_by_key(log).items()} == {
        b"k0": b"value-of-k0",
        b"k1": b"value-of-k1",
        b"k2": b"value-of-k2",
    }
    assert len(read_records(log)) == 3


def test_a_swap_is_refused_when_retention_removed_the_segments_meanwhile(open_log: LogFactory) -> None:
    log = open_log(**{**COMPACT, "cleanup_policy": "compact,delete"}, retention_ms=1000)
    write_keys(log, [f"k{i}" for i in range(30)])
    segments, _ = log.segments_snapshot()
    group = list(segments[:2])
    log.apply_retention(NOW_MS)  # removes the segments a slow clean would be about to replace
    before = read_records(log)
    assert log.replace_segments(group, None, NOW_MS) is False
    assert read_records(log) == before
