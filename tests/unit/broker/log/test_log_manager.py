import threading
import time
from pathlib import Path

import pytest

from broker.log import log_manager as log_manager_module
from broker.log.config import LogConfig
from broker.log.log_manager import LogManager, parse_partition_dir_name

from .helpers import NOW_MS, append_values, read_records


def test_partition_directory_names_parse_with_dashes_in_topics() -> None:
    assert parse_partition_dir_name("my-topic-12") == ("my-topic", 12)
    assert parse_partition_dir_name("orders.v1-0") == ("orders.v1", 0)
    assert parse_partition_dir_name("no_partition") is None
    assert parse_partition_dir_name("topic-x") is None


def test_create_is_idempotent_and_spreads_partitions_over_dirs(tmp_path: Path) -> None:
    manager = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    manager.load()
    logs = [manager.create("orders", p, LogConfig()) for p in range(4)]
    assert manager.create("orders", 0, LogConfig()) is logs[0]
    assert {log.directory.parent.name for log in logs} == {"a", "b"}
    assert manager.get("orders", 3) is logs[3]
    assert manager.get("orders", 9) is None
    manager.close()


def test_it_places_new_partitions_in_the_dir_with_fewest_after_loads_and_deletes(tmp_path: Path) -> None:
    first = LogManager([tmp_path / "a"], LogConfig())
    first.load()
    for partition in range(3):
        first.create("old", partition, LogConfig())
    first.close()
    manager = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    manager.load()  # "a" already holds three partitions

    placed = [manager.create("new", p, LogConfig()).directory.parent.name for p in range(3)]
    assert placed == ["b", "b", "b"]
    manager.delete_topic("old")
    assert manager.create("new", 3, LogConfig()).directory.parent.name == "a"
    manager.close()


def test_load_reopens_every_partition_with_its_data(tmp_path: Path) -> None:
    manager = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    manager.load()
    for partition in range(3):
        append_values(manager.create("events", partition, LogConfig()), partition + 1)
    manager.close()
    reloaded = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    reloaded.load()
    assert sorted((log.topic, log.partition, log.log_end_offset) for log in reloaded.partitions()) == [
        ("events", 0, 1),
        ("events", 1, 2),
        ("events", 2, 3),
    ]
    assert read_records(reloaded.get("events", 2))[-1][0] == 2  # type: ignore[arg-type]
    reloaded.close()


def test_deleting_a_topic_renames_then_removes_its_directories(tmp_path: Path) -> None:
    manager = LogManager([tmp_path], LogConfig())
    manager.load()
    append_values(manager.create("doomed", 0, LogConfig()), 3)
    manager.create("kept", 0, LogConfig())
    manager.delete_topic("doomed")
    assert manager.get("doomed", 0) is None
    assert [p.name.endswith(".delete") for p in tmp_path.iterdir() if p.name.startswith("doomed")] == [True]
    recreated = manager.create("doomed", 0, LogConfig())
    assert recreated.log_end_offset == 0
    manager.run_retention(NOW_MS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doomed-0", "kept-0"]
    manager.close()


def test_dir_usage_reports_sizes_per_directory(tmp_path: Path) -> None:
    manager = LogManager([tmp_path / "a"], LogConfig())
    manager.load()
    append_values(manager.create("t", 0, LogConfig()), 5)
    [(directory, entries)] = manager.dir_usage()
    assert directory == tmp_path / "a"
    assert entries == [("t", 0, manager.get("t", 0).size_bytes())]  # type: ignore[union-attr]
    assert entries[0][2] > 0
    manager.close()


def test_the_cleaner_runs_only_on_compacted_logs(tmp_path: Path) -> None:
    manager = LogManager([tmp_path], LogConfig())
    manager.load()
    compacted = LogConfig.from_properties({"cleanup.policy": "compact", "segment.bytes": "300"})
    plain = LogConfig.from_properties({"segment.bytes": "300"})
    append_values(manager.create("c", 0, compacted), 30)
    append_values(manager.create("p", 0, plain), 30)
    stats = manager.run_cleaner(NOW_MS + 1000)
    assert len(stats) == 1
    manager.close()


def test_flush_due_fsyncs_logs_whose_flush_ms_elapsed(tmp_path: Path) -> None:
    manager = LogManager([tmp_path], LogConfig())
    manager.load()
    log = manager.create("f", 0, LogConfig.from_properties({"flush.ms": "0"}))
    append_values(log, 2)
    manager.flush_due(NOW_MS + 10**6)
    assert (log.directory / "recovery-point").read_text().strip() == "2"
    manager.close()


def test_the_cleaner_cleans_logs_in_parallel_and_keeps_to_its_io_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = LogManager([tmp_path], LogConfig())
    manager.load()
    compacted = LogConfig.from_properties({"cleanup.policy": "compact", "segment.bytes": "300"})
    for partition in range(3):
        append_values(manager.create("c", partition, compacted), 30)
    threads_seen: set[str] = set()
    original = log_manager_module.clean_log

    def clean_and_note_thread(log, now_ms):  # type: ignore[no-untyped-def]
        threads_seen.add(threading.current_thread().name)
        return original(log, now_ms)

    monkeypatch.setattr(log_manager_module, "clean_log", clean_and_note_thread)
    started = time.monotonic()
    stats = manager.run_cleaner(NOW_MS + 1000, threads=3, max_bytes_per_second=20_000)
    elapsed = time.monotonic() - started
    assert len(stats) == 3
    assert len(threads_seen) > 1, "log.cleaner.threads=3 cleans on more than one thread"
    moved = sum(s.bytes_read + s.bytes_written for s in stats)
    assert elapsed >= moved / 20_000 * 0.9, "log.cleaner.io.max.bytes.per.second holds the pass back"
    manager.close()


def test_high_watermarks_are_checkpointed_in_one_file_per_log_dir(tmp_path: Path) -> None:
    manager = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    manager.load()
    for partition in range(4):
        manager.create("orders", partition, LogConfig())
    manager.checkpoint_high_watermarks({("orders", p): 10 + p for p in range(4)})
    written = {}
    for log_dir in ("a", "b"):
        lines = (tmp_path / log_dir / "replication-offset-checkpoint").read_text().splitlines()
        assert lines[0] == "0"
        assert int(lines[1]) == len(lines) - 2 == 2
        written.update({tuple(line.split()[:2]): int(line.split()[2]) for line in lines[2:]})
    assert written == {("orders", str(p)): 10 + p for p in range(4)}
    manager.delete_partition("orders", 3)
    manager.checkpoint_high_watermarks({})  # a deleted partition leaves the checkpoint
    manager.close()
    reopened = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    reopened.load()
    assert [reopened.stored_high_watermark("orders", p) for p in range(4)] == [10, 11, 12, None]
    reopened.close()


def test_high_watermarks_of_the_per_partition_layout_survive_an_upgrade(tmp_path: Path) -> None:
    """A data dir written before per-dir checkpoints: each replica's watermark in a file of its own."""
    old = LogManager([tmp_path / "a"], LogConfig())
    old.load()
    for partition in range(2):
        append_values(old.create("orders", partition, LogConfig()), 5)
    old.close()
    for partition, stored in ((0, 3), (1, 4)):
        (tmp_path / "a" / f"orders-{partition}" / "high-watermark-checkpoint").write_text(f"{stored}\n")
    upgraded = LogManager([tmp_path / "a"], LogConfig())
    upgraded.load()
    assert upgraded.stored_high_watermark("orders", 0) == 3
    assert upgraded.stored_high_watermark("orders", 1) == 4
    upgraded.checkpoint_high_watermarks({("orders", 1): 5})
    # Carried into the log dir's checkpoint, the old files go.
    assert not list((tmp_path / "a").glob("*/high-watermark-checkpoint"))
    upgraded.close()
    again = LogManager([tmp_path / "a"], LogConfig())
    again.load()
    assert again.stored_high_watermark("orders", 0) == 3
    assert again.stored_high_watermark("orders", 1) == 5
    again.close()


def test_a_malformed_high_watermark_checkpoint_takes_its_log_dir_offline(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "replication-offset-checkpoint").write_text("0\n2\norders 0 1\n")
    manager = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    manager.load()
    assert list(manager.offline_dirs) == [tmp_path / "a"]
    assert "count says 2" in manager.offline_dirs[tmp_path / "a"]
    manager.close()
