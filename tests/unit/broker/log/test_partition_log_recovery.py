import os
import shutil
from pathlib import Path

import pytest

from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.log.segment import LogSegment
from broker.wire.records.batch import iter_batches

from .conftest import LogFactory
from .helpers import NOW_MS, append_values, batch_of, crash, read_records


def _segment_file(directory: Path, base: int, kind: str = "log") -> Path:
    return directory / f"{base:020d}.{kind}"


def test_acknowledged_appends_survive_a_crash(open_log: LogFactory) -> None:
    log = open_log(segment_bytes=500)
    append_values(log, 40)
    crash(log)
    reopened = open_log(segment_bytes=500)
    assert reopened.log_end_offset == 40
    assert [value for _, _, value in read_records(reopened)] == [b"%010d" % i for i in range(40)]


def test_recovery_drops_a_torn_last_batch_cut_at_any_byte(tmp_path: Path) -> None:
    source = tmp_path / "source" / "t-0"
    log = PartitionLog.open(source, LogConfig(), topic="t", partition=0)
    for i in range(3):
        log.append_as_leader(batch_of(b"v%d" % i, b"w%d" % i), leader_epoch=0, now_ms=NOW_MS)
    whole = _segment_file(source, 0).read_bytes()
    crash(log)
    last_start = sum(b.size for b in list(iter_batches(whole))[:2])
    for cut in range(last_start, len(whole)):
        directory = tmp_path / f"cut-{cut}" / "t-0"
        shutil.copytree(source, directory)
        os.truncate(_segment_file(directory, 0), cut)
        recovered = PartitionLog.open(directory, LogConfig(), topic="t", partition=0)
        assert recovered.log_end_offset == 4, cut
        assert _segment_file(directory, 0).stat().st_size == last_start
        assert [v for _, _, v in read_records(recovered)] == [b"v0", b"w0", b"v1", b"w1"]
        assert recovered.append_as_leader(batch_of(b"again"), leader_epoch=0, now_ms=NOW_MS).base_offset == 4
        recovered.close()
        shutil.rmtree(directory.parent)


def test_recovery_drops_a_last_batch_whose_crc_does_not_match(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log()
    append_values(log, 3)
    crash(log)
    data = bytearray(_segment_file(log_dir, 0).read_bytes())
    data[-2] ^= 0x40
    _segment_file(log_dir, 0).write_bytes(bytes(data))
    reopened = open_log()
    assert reopened.log_end_offset == 2


def test_garbage_after_the_last_batch_is_cut_off(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log()
    append_values(log, 3)
    crash(log)
    with _segment_file(log_dir, 0).open("ab") as file:
        file.write(b"\x00" * 40 + b"\xff" * 100)
    reopened = open_log()
    assert reopened.log_end_offset == 3
    assert reopened.append_as_leader(batch_of(b"x"), leader_epoch=0, now_ms=NOW_MS).base_offset == 3


def test_segments_after_a_damaged_one_are_dropped(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log(segment_bytes=400)
    append_values(log, 30)
    bases = log.segments_snapshot()[1]
    crash(log)
    os.truncate(_segment_file(log_dir, bases[1]), 100)
    reopened = open_log(segment_bytes=400)
    assert [s.base_offset for s in reopened.segments_snapshot()[0]] == [bases[0], bases[1]]
    assert reopened.log_end_offset < bases[2]
    assert [o for o, _, _ in read_records(reopened)] == list(range(reopened.log_end_offset))


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-3], id="torn"),
        pytest.param(lambda data: data[8:16] + data[:8] + data[16:], id="out-of-order"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: b"\x00\x00\x00\x05\x00\x00\x00\x03" + data[8:], id="wrong-positions"),
    ],
)
def test_a_damaged_offset_index_is_rebuilt_after_a_clean_shutdown(
    open_log: LogFactory, log_dir: Path, damage: object
) -> None:
    log = open_log(index_interval_bytes=100)
    append_values(log, 60, size=40)
    log.close()
    index_path = _segment_file(log_dir, 0, "index")
    original = index_path.read_bytes()
    assert len(original) >= 32
    index_path.write_bytes(damage(original))  # type: ignore[operator]
    reopened = open_log(index_interval_bytes=100)
    for offset in range(60):
        assert next(iter_batches(reopened.read(offset, 1))).base_offset == offset
    reopened.close()
    assert index_path.read_bytes() == original


def test_missing_indexes_are_rebuilt(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log(index_interval_bytes=100, segment_bytes=1500)
    append_values(log, 60, size=40)
    log.close()
    for path in log_dir.glob("*index"):
        path.unlink()
    reopened = open_log(index_interval_bytes=100, segment_bytes=1500)
    assert reopened.log_end_offset == 60
    assert reopened.offset_for_timestamp(NOW_MS) == (0, NOW_MS)
    assert all(len(s.offset_index) > 0 for s in reopened.segments_snapshot()[0])


def test_a_clean_shutdown_needs_no_full_scan(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log()
    append_values(log, 5)
    log.close()
    assert (log_dir / ".clean-shutdown").exists()
    reopened = open_log()
    assert not (log_dir / ".clean-shutdown").exists()
    assert reopened.log_end_offset == 5


def test_an_interrupted_compaction_swap_is_completed_on_open(open_log: LogFactory, log_dir: Path) -> None:
    config = {"segment_bytes": 300}
    log = open_log(**config)
    append_values(log, 20)
    segments, bases = log.segments_snapshot()
    first, second = segments[0], segments[1]
    kept = list(first.walk(0))[-1:] + list(second.walk(0))[-1:]
    swap = LogSegment.create(log_dir, first.base_offset, log.config, NOW_MS, suffix=".swap")
    for loc in kept:
        raw = (first if loc.base_offset < bases[1] else second).read_batch(loc)
        swap.append(raw, [(0, loc.fields)])
    swap.close()
    crash(log)
    # The crash hit after the first old segment was renamed away, before the swap was renamed in.
    os.rename(_segment_file(log_dir, bases[0]), log_dir / f"{bases[0]:020d}.log.deleted")
    reopened = open_log(**config)
    offsets = [o for o, _, _ in read_records(reopened)]
    assert offsets[:2] == [kept[0].base_offset, kept[1].base_offset]
    assert offsets[2:] == list(range(bases[2], 20))
    assert not list(log_dir.glob("*.swap"))
    assert not list(log_dir.glob("*.deleted"))


def test_leftover_cleaned_files_are_removed(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log()
    append_values(log, 3)
    log.close()
    (log_dir / f"{0:020d}.log.cleaned").write_bytes(b"partial")
    reopened = open_log()
    assert reopened.log_end_offset == 3
    assert not list(log_dir.glob("*.cleaned"))


def test_foreign_files_in_the_partition_directory_are_left_alone(open_log: LogFactory, log_dir: Path) -> None:
    log = open_log()
    append_values(log, 3)
    log.close()
    (log_dir / "notes.log").write_text("not a segment")
    (log_dir / "x.snapshot").write_text("{}")
    reopened = open_log()
    assert reopened.log_end_offset == 3
    assert (log_dir / "notes.log").exists()
