"""Moving a replica between log dirs of one broker (AlterReplicaLogDirs): the future log, the swap,
and what a crash at each step of the swap leaves."""

import os
from pathlib import Path

import pytest

from broker.log.config import LogConfig
from broker.log.errors import LogDirNotFoundError, LogStorageError, ReplicaNotAvailableError
from broker.log.log_manager import FUTURE_DIR_SUFFIX, LogManager

from .helpers import append_values, crash, read_records


def _manager(tmp_path: Path) -> LogManager:
    manager = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig(segment_bytes=4096))
    manager.load()
    return manager


def _move_fully(manager: LogManager) -> list[tuple[str, int]]:
    while manager.copy_futures(64 << 10):
        pass
    return manager.finish_caught_up_moves()


def test_a_moved_replica_keeps_every_record_and_the_same_object(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    log = manager.create("events", 0, manager.default_config)
    assert log.directory.parent.name == "a"
    append_values(log, 500, per_batch=7)
    before = read_records(log)

    manager.move_replica("events", 0, str(tmp_path / "b"))
    assert manager.has_moves()
    (target, topic, partition, _size, lag) = manager.future_usage()[0]
    assert (target.name, topic, partition, lag) == ("b", "events", 0, 500)

    assert _move_fully(manager) == [("events", 0)]
    assert manager.get("events", 0) is log
    assert log.directory == tmp_path / "b" / "events-0"
    assert read_records(log) == before
    assert not (tmp_path / "a" / "events-0").exists()
    assert manager.future_usage() == []
    # It keeps serving appends in its new place, and reopens from there.
    append_values(log, 3)
    manager.close()
    reopened = _manager(tmp_path)
    moved = reopened.get("events", 0)
    assert moved is not None
    assert moved.directory.parent.name == "b"
    assert len(read_records(moved)) == 503
    reopened.close()


def test_appends_between_copy_passes_are_all_in_the_moved_log(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    log = manager.create("events", 0, manager.default_config)
    append_values(log, 100)
    manager.move_replica("events", 0, str(tmp_path / "b"))
    for _ in range(5):
        manager.copy_futures(2 << 10)
        append_values(log, 40, per_batch=3)
    log.leader_epochs.assign(4, log.log_end_offset)  # a new leader epoch that no batch carries yet
    assert _move_fully(manager) == [("events", 0)]
    assert [offset for offset, _key, _value in read_records(log)] == list(range(300))
    assert log.end_offset_for_leader_epoch(0) == (0, 300)
    assert log.leader_epochs.latest_epoch == 4


def test_a_truncation_during_the_copy_makes_it_start_over(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    log = manager.create("events", 0, manager.default_config)
    append_values(log, 50)
    manager.move_replica("events", 0, str(tmp_path / "b"))
    manager.copy_futures(1 << 20)
    log.truncate_to(20)  # a follower's log diverged from its leader's
    append_values(log, 10, size=12)  # different records at offsets 20..29
    assert _move_fully(manager) == [("events", 0)]
    records = read_records(log)
    assert len(records) == 30
    assert records[25][2] == b"%012d" % 5


def test_moving_to_the_current_dir_is_a_no_op_that_cancels_a_move(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    log = manager.create("events", 0, manager.default_config)
    append_values(log, 10)
    manager.move_replica("events", 0, str(tmp_path / "b"))
    manager.move_replica("events", 0, str(tmp_path / "a"))
    assert manager.future_usage() == []
    assert manager.finish_caught_up_moves() == []
    assert not any(p.name.endswith(FUTURE_DIR_SUFFIX) for p in (tmp_path / "b").iterdir())
    assert log.directory.parent.name == "a"


def test_bad_targets_get_kafkas_errors(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    manager.create("events", 0, manager.default_config)
    with pytest.raises(LogDirNotFoundError):
        manager.move_replica("events", 0, str(tmp_path / "elsewhere"))
    with pytest.raises(ReplicaNotAvailableError):
        manager.move_replica("events", 1, str(tmp_path / "b"))
    # ... but the wish is kept: the partition is created there when it comes.
    assert manager.create("events", 1, manager.default_config).directory.parent.name == "b"


def _interrupted_move(tmp_path: Path) -> tuple[Path, Path]:
    """A move whose future log is complete, then a crash: returns (current dir, future dir)."""
    manager = _manager(tmp_path)
    log = manager.create("events", 0, manager.default_config)
    append_values(log, 200, per_batch=5)
    log.flush()
    manager.move_replica("events", 0, str(tmp_path / "b"))
    while manager.copy_futures(64 << 10):
        pass
    future = manager._futures[("events", 0)].future
    future.flush()
    crash(future)
    crash(log)
    return log.directory, future.directory


def test_a_crash_before_the_swap_keeps_the_old_copy_and_drops_the_future(tmp_path: Path) -> None:
    current, future = _interrupted_move(tmp_path)
    manager = _manager(tmp_path)
    log = manager.get("events", 0)
    assert log is not None
    assert log.directory == current
    assert len(read_records(log)) == 200
    assert not future.exists()


def test_a_crash_in_the_middle_of_the_swap_promotes_the_complete_future(tmp_path: Path) -> None:
    current, _future = _interrupted_move(tmp_path)
    # The swap renamed the current log away and the process died before the future took its name.
    os.rename(current, current.with_name("events-0.0123.delete"))
    manager = _manager(tmp_path)
    log = manager.get("events", 0)
    assert log is not None
    assert log.directory == tmp_path / "b" / "events-0"
    assert len(read_records(log)) == 200
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == []


def test_an_unreadable_log_dir_goes_offline_and_the_others_serve(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("not a directory")
    manager = _manager(tmp_path)
    assert list(manager.offline_dirs) == [tmp_path / "a"]
    assert [d.name for d, _ in manager.dir_usage()] == ["b"]
    assert manager.create("events", 0, manager.default_config).directory.parent.name == "b"
    with pytest.raises(LogStorageError):
        manager.move_replica("events", 0, str(tmp_path / "a"))


def test_wishes_for_partitions_not_here_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("broker.log.log_manager.MAX_PREFERRED_DIRS", 3)
    manager = _manager(tmp_path)
    for partition in range(5):
        with pytest.raises(ReplicaNotAvailableError):
            manager.move_replica("later", partition, str(tmp_path / "b"))
    assert sorted(manager._preferred_dirs) == [("later", 2), ("later", 3), ("later", 4)]


def test_a_failed_write_takes_its_log_dir_offline(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    log = manager.create("events", 0, manager.default_config)
    append_values(log, 3)
    os.close(log.active_segment._fd)  # the disk goes away under the open file: writes fail with EBADF
    with pytest.raises(LogStorageError):
        append_values(log, 1)
    assert list(manager.offline_dirs) == [tmp_path / "a"]
    assert [d.name for d, _ in manager.dir_usage()] == ["b"]
    assert manager.create("events", 1, manager.default_config).directory.parent.name == "b"
