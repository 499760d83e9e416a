import os
from collections.abc import Iterator

import pytest

from broker.log.segment import BatchLocation
from broker.wire.records.batch import iter_batches

from .conftest import LogFactory
from .helpers import NOW_MS, append_values, batch_of, read_records


def test_reading_from_any_offset_finds_its_batch_across_many_segments(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=2000, index_interval_bytes=150)
    for i in range(120):
        values = [b"v" * (10 + (i * 37) % 90) for _ in range(1 + i % 4)]
        log.append_as_leader(batch_of(*values), leader_epoch=0, now_ms=NOW_MS)
    log.high_watermark = log.log_end_offset
    segments, _ = log.segments_snapshot()
    assert len(segments) > 10
    assert all(len(segment.offset_index) > 0 for segment in segments[:-1])
    for offset in range(log.log_end_offset):
        first = next(iter_batches(log.read(offset, 1)))
        assert first.base_offset <= offset <= first.last_offset
    assert [offset for offset, _, _ in read_records(log)] == list(range(log.log_end_offset))


def test_a_large_read_spans_segments_and_returns_whole_batches(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=1000)
    append_values(log, 100, size=50)
    data = log.read(10, 3000)
    batches = list(iter_batches(data))
    assert batches[0].base_offset == 10
    assert [b.base_offset for b in batches] == list(range(10, 10 + len(batches)))
    assert 3000 - batches[0].size < len(data) <= 3000


def test_segments_roll_before_they_exceed_segment_bytes(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=1000)
    append_values(log, 100, size=50)
    segments, bases = log.segments_snapshot()
    assert len(segments) > 5
    assert all(segment.size <= 1000 for segment in segments)
    assert list(bases) == sorted(bases)
    assert sorted(p.name for p in log.directory.glob("*.log"))[1] == f"{bases[1]:020d}.log"


def test_segments_roll_after_segment_ms(open_log: LogFactory) -> None:
    log = open_log(segment_ms=1000)
    log.append_as_leader(batch_of(b"a"), leader_epoch=0, now_ms=NOW_MS)
    log.append_as_leader(batch_of(b"b"), leader_epoch=0, now_ms=NOW_MS + 500)
    assert len(log.segments_snapshot()[0]) == 1
    log.append_as_leader(batch_of(b"c"), leader_epoch=0, now_ms=NOW_MS + 1500)
    assert [s.base_offset for s in log.segments_snapshot()[0]] == [0, 2]


def test_segments_roll_when_an_index_is_full(open_log: LogFactory) -> None:
    log = open_log(segment_index_bytes=24, index_interval_bytes=0)
    append_values(log, 12)
    segments, _ = log.segments_snapshot()
    assert len(segments) >= 3
    assert all(len(segment.time_index) <= 3 for segment in segments)
    assert [offset for offset, _, _ in read_records(log)] == list(range(12))


def test_the_offset_index_is_sparse(open_log: LogFactory) -> None:
    log = open_log(index_interval_bytes=1000)
    append_values(log, 100, size=90)
    index = log.active_segment.offset_index
    assert 5 < len(index) < 20
    position_gaps = [b - a for a, b in zip(index.positions, index.positions[1:], strict=False)]
    assert all(gap > 1000 for gap in position_gaps)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_closed_segments_hold_one_file_descriptor_each(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=300, index_interval_bytes=10)
    append_values(log, 60)
    segment_count = len(log.segments_snapshot()[0])
    assert segment_count > 10
    log.close()
    before = _open_descriptors()
    reopened = open_log(segment_bytes=300, index_interval_bytes=10)
    append_values(reopened, 1)
    assert _open_descriptors() - before <= segment_count + 3


def test_a_fetch_at_a_recently_appended_batch_does_not_walk_the_log(
    open_log: LogFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A consumer or follower fetches from where its last fetch ended, a batch just appended: found without
    reading headers from the sparse index's entry on (#36: 8% of a broker's CPU under kgo's TestGroupETL)."""
    log = open_log(index_interval_bytes=4096)
    append_values(log, 200, size=20)
    segment = log.active_segment
    walked: list[int] = []
    walk = segment.walk

    def counting_walk(start: int = 0, end: int | None = None, **kwargs: bool) -> Iterator[BatchLocation]:
        walked.append(start)
        return walk(start, end, **kwargs)

    monkeypatch.setattr(segment, "walk", counting_walk)
    batches = list(iter_batches(log.read(190, 1 << 20, max_offset=198)))
    assert [batch.base_offset for batch in batches] == list(range(190, 198))
    assert walked == []
    found = segment.find_batch(190)
    assert found is not None
    assert found.base_offset == 190
    assert walked == []


def test_recently_appended_batches_are_forgotten_when_the_log_is_truncated(open_log: LogFactory) -> None:
    """A follower truncating to the leader's log and appending other batches at the same offsets reads the new
    ones, not where the old ones were."""
    log = open_log()
    append_values(log, 10, size=20)
    log.truncate_to(5)
    log.append_as_leader(batch_of(*(b"x" * (200 + i) for i in range(5))), leader_epoch=1, now_ms=NOW_MS)
    log.high_watermark = log.log_end_offset
    # Offset 7 is now inside the batch of 5 to 9, no longer a batch of its own.
    assert [batch.base_offset for batch in iter_batches(log.read(7, 1 << 20))] == [5]
    assert [(offset, len(value or b"")) for offset, _, value in read_records(log, 5)] == [
        (5 + i, 200 + i) for i in range(5)
    ]
