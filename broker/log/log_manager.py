"""All partition logs of a broker across its log directories."""

import contextlib
import logging
import math
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from broker.log.checkpoint import MalformedCheckpointError, read_number, read_offsets, write_offsets
from broker.log.cleaner import CleanerStats, clean_log
from broker.log.config import LogConfig
from broker.log.errors import LogDirNotFoundError, LogStorageError, ReplicaNotAvailableError
from broker.log.partition_log import LEGACY_HIGH_WATERMARK_FILE, PartitionLog
from broker.log.producer_state import PRODUCER_ID_EXPIRATION_MS
from broker.wire.records.errors import StorageError

logger = logging.getLogger(__name__)

DELETE_DIR_SUFFIX = ".delete"
# `<topic>-<partition>.<id>-future`: the copy of a replica moving into this log dir (AlterReplicaLogDirs).
FUTURE_DIR_SUFFIX = "-future"
# Log dirs asked for partitions not here yet, kept at most (the oldest wish goes first).
MAX_PREFERRED_DIRS = 10_000
# Every replica's high watermark in its log dir, one file per dir as Kafka's (a file per partition, rewritten
# whenever its watermark moved, was 10,000 file replacements per interval at 10,000 partitions).
HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint"


class _CleanerThrottle:
    """Holds the cleaner threads back so that the bytes they read and write average at most `rate` per
    second since the pass began (Kafka's Throttler on log.cleaner.io.max.bytes.per.second)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.started = time.monotonic()
        self.bytes = 0
        self._lock = threading.Lock()

    def spent(self, count: int) -> None:
        if math.isinf(self.rate) or self.rate <= 0:
            return
        with self._lock:
            self.bytes += count
            due = self.started + self.bytes / self.rate
        time.sleep(max(0.0, due - time.monotonic()))


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """`<topic>-<partition>` → (topic, partition); None for anything else (topics may contain '-')."""
    topic, separator, number = name.rpartition("-")
    if not separator or not topic or not number.isdigit():
        return None
    return topic, int(number)


def _fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable (a crash must not undo half of a move's swap)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class FutureLog:
    """A replica being copied into another log dir while `current` keeps serving."""

    current: PartitionLog
    future: PartitionLog
    # `current.truncations` when the copy last started over: a truncation since makes it start over.
    copied_since: int
    # Whether the last copy pass reached the current log's end: then only what arrived since is left,
    # and the swap may copy it with appends held.
    caught_up: bool = False

    @property
    def offset_lag(self) -> int:
        return max(self.current.log_end_offset - self.future.log_end_offset, 0)

    def restart_if_truncated(self) -> None:
        truncations = self.current.truncations
        if truncations != self.copied_since:
            self.future.truncate_fully_and_start_at(self.current.log_start_offset)
            self.copied_since = truncations

    def copy(self, max_bytes: int) -> int:
        """Copy up to `max_bytes` of the current log's tail into the future log; returns bytes copied."""
        self.restart_if_truncated()
        if self.future.log_end_offset < self.current.log_start_offset:
            self.future.truncate_fully_and_start_at(self.current.log_start_offset)
        copied = 0
        while copied < max_bytes and self.future.log_end_offset < self.current.log_end_offset:
            data = self.current.read(self.future.log_end_offset, min(max_bytes - copied, 1 << 20))
            if not data:
                break
            self.future.append_as_follower(data)
            copied += len(data)
        self.caught_up = self.future.log_end_offset >= self.current.log_end_offset
        return copied


class LogManager:
    def __init__(self, log_dirs: Sequence[Path], default_config: LogConfig) -> None:
        if not log_dirs:
            raise ValueError("at least one log directory is required")
        self.log_dirs = [Path(d) for d in log_dirs]
        self.default_config = default_config
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        # Partitions per log dir, kept up to date so placing a new partition is O(dirs), not O(partitions).
        self._partitions_per_dir: dict[Path, int] = dict.fromkeys(self.log_dirs, 0)
        # Directories that failed (unreadable, unwritable): reported with KAFKA_STORAGE_ERROR, never used.
        self.offline_dirs: dict[Path, str] = {}
        self._futures: dict[tuple[str, int], FutureLog] = {}
        # Where AlterReplicaLogDirs asked a partition this broker does not host yet to be created.
        self._preferred_dirs: dict[tuple[str, int], Path] = {}
        self._retired: list[FutureLog] = []
        # High watermarks as the log dirs' checkpoints hold them (or, after `checkpoint_high_watermarks`,
        # are about to), by partition wherever its log lives.
        self._high_watermarks: dict[tuple[str, int], int] = {}
        # A log was deleted or moved since the checkpoints were written: they must be rewritten.
        self._high_watermarks_stale = False
        # Per-partition files of the layout before per-dir checkpoints, removed once the dir's checkpoint
        # holds their partition.
        self._legacy_high_watermark_files: list[Path] = []
        # delete runs on the loop thread, create there or in the replica manager's worker thread,
        # run_cleaner in another: guard the dict's shape.
        self._lock = threading.Lock()

    def _register(self, topic: str, partition: int, log: PartitionLog) -> None:
        log.on_storage_error = self._write_failed
        with self._lock:
            self._logs[(topic, partition)] = log
            parent = log.directory.parent
            self._partitions_per_dir[parent] = self._partitions_per_dir.get(parent, 0) + 1

    def load(self) -> None:
        """Open (and recover) every partition directory; finish deleting topics marked for deletion
        and settle interrupted replica moves. A directory that cannot be read goes offline; the
        broker serves from the others."""
        futures: list[Path] = []
        listed: dict[Path, list[Path]] = {}
        for log_dir in self.log_dirs:
            try:
                log_dir.mkdir(parents=True, exist_ok=True)
                listed[log_dir] = sorted(log_dir.iterdir())
                checkpointed = read_offsets(log_dir / HIGH_WATERMARK_CHECKPOINT)
            except (OSError, MalformedCheckpointError) as error:
                self._mark_offline(log_dir, error)
                continue
            # A replica moved between dirs just before a stop is found in its old dir's checkpoint.
            for key, offset in checkpointed.items():
                self._high_watermarks.setdefault(key, offset)
        for log_dir, entries in listed.items():
            for path in entries:
                if not path.is_dir():
                    continue
                if path.name.endswith(DELETE_DIR_SUFFIX):
                    shutil.rmtree(path, ignore_errors=True)
                    continue
                if path.name.endswith(FUTURE_DIR_SUFFIX):
                    futures.append(path)
                    continue
                parsed = parse_partition_dir_name(path.name)
                if parsed is None:
                    continue
                self._open_existing(log_dir, path, *parsed)
        for path in futures:
            self._settle_interrupted_move(path)

    def _open_existing(self, log_dir: Path, path: Path, topic: str, partition: int) -> None:
        if (topic, partition) in self._logs:
            logger.warning("duplicate partition directory %s ignored", path)
            return
        try:
            log = PartitionLog.open(path, self.default_config, topic=topic, partition=partition)
        except OSError as error:
            self._mark_offline(log_dir, error)
            return
        self._register(topic, partition, log)
        if (topic, partition) not in self._high_watermarks:
            # Written by a broker before per-dir checkpoints: an upgrade must not lose the watermark.
            legacy = path / LEGACY_HIGH_WATERMARK_FILE
            stored = read_number(legacy, -1)
            if stored >= 0:
                self._high_watermarks[(topic, partition)] = stored
                self._high_watermarks_stale = True
                self._legacy_high_watermark_files.append(legacy)

    def _settle_interrupted_move(self, path: Path) -> None:
        """A future log left by a stop mid-move. With its current log still there the move had not
        swapped: the copy is dropped (the current one is whole). Without it the swap had renamed the
        current log away and was about to promote the copy, which was complete by then: promote it."""
        parsed = parse_partition_dir_name(path.name.removesuffix(FUTURE_DIR_SUFFIX).rpartition(".")[0])
        if parsed is None:
            return
        if parsed in self._logs:
            logger.info("dropping %s: its replica move had not finished", path)
            shutil.rmtree(path, ignore_errors=True)
            return
        final = path.with_name(partition_dir_name(*parsed))
        logger.info("completing the interrupted move of %s-%d into %s", *parsed, path.parent)
        os.rename(path, final)
        _fsync_dir(path.parent)
        self._open_existing(path.parent, final, *parsed)

    def _write_failed(self, log: PartitionLog, error: Exception) -> None:
        """A write into `log` failed: its directory goes offline (reported by DescribeLogDirs, no new
        partition or move is placed there); the broker goes on serving from the other directories."""
        if log.directory.parent not in self.offline_dirs:
            self._mark_offline(log.directory.parent, error)

    def _mark_offline(self, log_dir: Path, error: Exception) -> None:
        logger.error("log dir %s is offline: %s", log_dir, error)
        self.offline_dirs[log_dir] = str(error)

    def online_dirs(self) -> list[Path]:
        return [d for d in self.log_dirs if d not in self.offline_dirs]

    def _pick_log_dir(self, topic: str, partition: int) -> Path:
        """The directory AlterReplicaLogDirs asked for, else the online one holding the fewest
        partitions, as Kafka does."""
        preferred = self._preferred_dirs.pop((topic, partition), None)
        online = self.online_dirs()
        if preferred is not None and preferred in online:
            return preferred
        if not online:
            raise LogStorageError("every log dir is offline")
        return min(online, key=lambda d: self._partitions_per_dir.get(d, 0))

    def create(self, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        """Open the partition's log, creating its directory if needed (idempotent)."""
        existing = self._logs.get((topic, partition))
        if existing is not None:
            if existing.config != config:
                existing.update_config(config)
            return existing
        directory = self._pick_log_dir(topic, partition) / partition_dir_name(topic, partition)
        found = False
        for log_dir in self.online_dirs():
            candidate = log_dir / partition_dir_name(topic, partition)
            if candidate.is_dir():
                directory, found = candidate, True
                break
        log = None
        try:
            if not found:
                with contextlib.suppress(FileExistsError):  # created meanwhile: opened below
                    log = PartitionLog.create_new(directory, config, topic=topic, partition=partition)
            if log is None:
                log = PartitionLog.open(directory, config, topic=topic, partition=partition)
        except FileExistsError:
            raise
        except OSError as error:
            # The directory failed: take it offline and place the partition on another one.
            self._mark_offline(directory.parent, error)
            return self.create(topic, partition, config)
        self._register(topic, partition, log)
        return log

    def stored_high_watermark(self, topic: str, partition: int) -> int | None:
        """The partition's high watermark as last checkpointed (None: never)."""
        return self._high_watermarks.get((topic, partition))

    def note_high_watermark(self, key: tuple[str, int], offset: int) -> None:
        """Have the next `checkpoint_high_watermarks` write `offset` for `key`."""
        self._high_watermarks[key] = offset
        self._high_watermarks_stale = True

    def checkpoint_high_watermarks(self, changed: Mapping[tuple[str, int], int]) -> None:
        """Note `changed` watermarks; when anything changed since the last call, rewrite every online log
        dir's checkpoint with the watermarks of the logs it holds (one file replacement per dir)."""
        self._high_watermarks.update(changed)
        if not changed and not self._high_watermarks_stale:
            return
        self._high_watermarks_stale = False
        per_dir: dict[Path, dict[tuple[str, int], int]] = {d: {} for d in self.online_dirs()}
        with self._lock:
            logs = list(self._logs.items())
        for key, log in logs:
            offset = self._high_watermarks.get(key)
            entries = per_dir.get(log.directory.parent)
            if offset is not None and entries is not None:
                entries[key] = offset
        for log_dir, entries in per_dir.items():
            try:
                write_offsets(log_dir / HIGH_WATERMARK_CHECKPOINT, entries)
            except OSError as error:
                self._mark_offline(log_dir, error)
                self._high_watermarks_stale = True
        if not self._high_watermarks_stale:
            for legacy in self._legacy_high_watermark_files:
                with contextlib.suppress(OSError):
                    legacy.unlink()
            self._legacy_high_watermark_files.clear()

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def partitions(self) -> Iterable[PartitionLog]:
        return list(self._logs.values())

    def delete_partition(self, topic: str, partition: int) -> None:
        self._retire_future((topic, partition))
        with self._lock:
            log = self._logs.pop((topic, partition), None)
            if log is not None:
                self._partitions_per_dir[log.directory.parent] -= 1
        if log is None:
            return
        # A topic re-created under the same name must not inherit this watermark.
        self._high_watermarks.pop((topic, partition), None)
        self._high_watermarks_stale = True
        log.close(discard=True)  # renamed away below: nothing of its state needs writing
        target = log.directory.with_name(f"{log.directory.name}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}")
        log.directory.rename(target)

    def delete_topic(self, topic: str) -> None:
        """Close the topic's logs and rename their directories to `*.delete`; run_retention removes them."""
        # list() copies in one step: a worker thread may be creating other partitions' logs meanwhile.
        for key in [key for key in list(self._logs) if key[0] == topic]:
            self.delete_partition(*key)

    def _remove_deleted_dirs(self) -> None:
        for log_dir in self.log_dirs:
            with contextlib.suppress(FileNotFoundError):
                for path in log_dir.iterdir():
                    if path.is_dir() and path.name.endswith(DELETE_DIR_SUFFIX):
                        shutil.rmtree(path, ignore_errors=True)

    def run_retention(self, now_ms: int, producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> None:
        for log in self.partitions():
            try:
                log.apply_retention(now_ms, producer_id_expiration_ms)
            except OSError:
                logger.exception("retention failed for %s", log)
        self._remove_deleted_dirs()

    def run_cleaner(
        self, now_ms: int, threads: int = 1, max_bytes_per_second: float = math.inf
    ) -> list[CleanerStats]:
        """One cleaning pass over the compacted logs, `threads` logs at a time (log.cleaner.threads), reading
        and writing at most `max_bytes_per_second` in all (log.cleaner.io.max.bytes.per.second)."""
        throttle = _CleanerThrottle(max_bytes_per_second)

        def clean(log: PartitionLog) -> CleanerStats | None:
            try:
                result = clean_log(log, now_ms)
            except (OSError, ValueError, StorageError):
                logger.exception("compaction failed for %s", log)
                return None
            if result is not None:
                throttle.spent(result.bytes_read + result.bytes_written)
            return result

        compacted = [log for log in self.partitions() if log.config.compacted]
        if threads <= 1 or len(compacted) <= 1:
            results = [clean(log) for log in compacted]
        else:
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="log-cleaner") as pool:
                results = list(pool.map(clean, compacted))
        return [result for result in results if result is not None]

    def flush_due(self, now_ms: int) -> None:
        for log in self.partitions():
            log.flush_if_due(now_ms)

    def close(self) -> None:
        with self._lock:
            logs = list(self._logs.values())
            self._logs.clear()
            # An unfinished move is dropped by the next load (its current log is whole).
            futures = [f.future for f in self._futures.values()] + [f.future for f in self._retired]
            self._futures.clear()
            self._retired.clear()
        for future in futures:
            future.close(discard=True)
        for log in logs:
            log.close()

    # ---- moving replicas between log dirs (AlterReplicaLogDirs) -------------------------------

    def _configured_dir(self, path: str) -> Path:
        wanted = Path(os.path.abspath(path))
        for log_dir in self.log_dirs:
            if Path(os.path.abspath(log_dir)) == wanted:
                return log_dir
        raise LogDirNotFoundError(f"{path} is not one of log.dirs")

    def move_replica(self, topic: str, partition: int, path: str) -> None:
        """Start moving the partition's log into log dir `path` (Kafka's AlterReplicaLogDirs): a
        future log there is filled from the current one in the background (`copy_futures`) and
        replaces it once caught up (`finish_caught_up_moves`). Moving to the dir it is in is a
        no-op that cancels a move elsewhere."""
        target = self._configured_dir(path)
        if target in self.offline_dirs:
            raise LogStorageError(f"log dir {path} is offline")
        key = (topic, partition)
        current = self._logs.get(key)
        if current is None:
            # Kafka remembers the wish: the partition is created there if it comes to this broker.
            # Bounded: requests naming partitions that never come cannot grow it without end.
            self._preferred_dirs.pop(key, None)
            if len(self._preferred_dirs) >= MAX_PREFERRED_DIRS:
                self._preferred_dirs.pop(next(iter(self._preferred_dirs)))
            self._preferred_dirs[key] = target
            raise ReplicaNotAvailableError(f"{topic}-{partition} has no replica on this broker")
        moving = self._futures.get(key)
        if moving is not None:
            if moving.future.directory.parent == target:
                return
            self._retire_future(key)
        if current.directory.parent == target:
            return
        directory = target / f"{partition_dir_name(topic, partition)}.{uuid.uuid4().hex}{FUTURE_DIR_SUFFIX}"
        try:
            future = PartitionLog.create_new(directory, current.config, topic=topic, partition=partition)
            future.truncate_fully_and_start_at(current.log_start_offset)
        except OSError as error:
            self._mark_offline(target, error)
            raise LogStorageError(f"log dir {path} failed: {error}") from error
        with self._lock:
            self._futures[key] = FutureLog(current, future, current.truncations)

    def has_moves(self) -> bool:
        return bool(self._futures or self._retired)

    def _retire_future(self, key: tuple[str, int]) -> None:
        """Stop a move; its files go once no copy pass can be using them (`finish_caught_up_moves`)."""
        with self._lock:
            moving = self._futures.pop(key, None)
            if moving is not None:
                self._retired.append(moving)

    def copy_futures(self, max_bytes: int) -> int:
        """One background pass: copy up to `max_bytes` in all into the future logs; returns bytes copied.
        Runs in a worker thread; reads of the current logs need no lock (their segment lists are
        copy-on-write), and a truncation meanwhile is caught by `FutureLog.restart_if_truncated`."""
        copied = 0
        for key, moving in list(self._futures.items()):
            if copied >= max_bytes:
                break
            try:
                copied += moving.copy(max_bytes - copied)
            except StorageError as error:  # e.g. the current log was truncated under the read
                logger.info("copying %s-%d to its new log dir will retry: %s", *key, error)
            except OSError as error:
                self._mark_offline(moving.future.directory.parent, error)
                self._retire_future(key)
        return copied

    def finish_caught_up_moves(self) -> list[tuple[str, int]]:
        """Swap every future log that is nearly caught up for its current log; returns the moved
        partitions. Runs on the event-loop thread, between copy passes, with the current log's
        appends held so nothing is written that the copy could miss.

        The swap is crash-safe: the future log is complete and flushed before the current log's
        directory is renamed to `*.delete`, and only then does the future take the partition's
        name; `load` promotes a future log whose current log is gone and drops one whose current
        log is still there, so a crash leaves the old copy or the new one, never neither."""
        with self._lock:
            retired, self._retired = self._retired, []
        for moving in retired:
            moving.future.close(discard=True)
            shutil.rmtree(moving.future.directory, ignore_errors=True)
        moved = []
        for key, moving in list(self._futures.items()):
            if not moving.caught_up:
                continue
            try:
                if self._swap(moving):
                    moved.append(key)
            except OSError as error:
                # Nothing was renamed yet, or the future is complete and `load` promotes it.
                logger.exception("moving %s-%d failed", *key)
                self._mark_offline(moving.future.directory.parent, error)
                self._retire_future(key)
        return moved

    def _swap(self, moving: FutureLog) -> bool:
        current, future = moving.current, moving.future
        key = (current.topic, current.partition)
        with current.append_lock:
            if moving.copied_since != current.truncations:
                return False  # the copy starts over in the background, not here on the event loop
            moving.copy(max_bytes=1 << 62)
            if future.log_end_offset != current.log_end_offset or moving.copied_since != current.truncations:
                return False
            future.match_start_of(current)
            future.close()  # flushed, with its producer snapshot and clean-shutdown marker
            old = current.directory
            doomed = old.with_name(f"{old.name}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}")
            final = future.directory.with_name(partition_dir_name(*key))
            current.release_files()
            try:
                os.rename(old, doomed)
            except OSError:
                current.take_over(PartitionLog.open(old, current.config, topic=key[0], partition=key[1]))
                raise
            _fsync_dir(old.parent)  # durable before the future takes the name: never both named
            try:
                os.rename(future.directory, final)
            except OSError:
                os.rename(doomed, old)
                current.take_over(PartitionLog.open(old, current.config, topic=key[0], partition=key[1]))
                raise
            _fsync_dir(final.parent)
            current.take_over(PartitionLog.open(final, current.config, topic=key[0], partition=key[1]))
        with self._lock:
            self._futures.pop(key, None)
            self._partitions_per_dir[old.parent] -= 1
            self._partitions_per_dir[final.parent] = self._partitions_per_dir.get(final.parent, 0) + 1
        # Its watermark goes into the new dir's checkpoint (until then `load` finds it in the old one).
        self._high_watermarks_stale = True
        logger.info("moved %s-%d from %s to %s", *key, old.parent, final.parent)
        return True

    def future_usage(self) -> list[tuple[Path, str, int, int, int]]:
        """(target log dir, topic, partition, bytes, offset lag) of every replica being moved."""
        return [
            (
                m.future.directory.parent,
                m.future.topic,
                m.future.partition,
                m.future.size_bytes(),
                m.offset_lag,
            )
            for m in list(self._futures.values())
        ]

    def dir_usage(self) -> list[tuple[Path, list[tuple[str, int, int]]]]:
        """Per online log directory: (topic, partition, size in bytes) of every partition in it."""
        usage: dict[Path, list[tuple[str, int, int]]] = {d: [] for d in self.online_dirs()}
        for log in self.partitions():
            if log.directory.parent in usage:  # an offline dir's replicas are not reported, as in Kafka
                usage[log.directory.parent].append((log.topic, log.partition, log.size_bytes()))
        return list(usage.items())
