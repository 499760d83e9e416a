"""All partition logs of a broker across its log directories."""

import contextlib
import logging
import shutil
import threading
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

from broker.log.cleaner import CleanerStats, clean_log
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.wire.records.errors import StorageError

logger = logging.getLogger(__name__)

DELETE_DIR_SUFFIX = ".delete"


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """`<topic>-<partition>` → (topic, partition); None for anything else (topics may contain '-')."""
    topic, separator, number = name.rpartition("-")
    if not separator or not topic or not number.isdigit():
        return None
    return topic, int(number)


class LogManager:
    def __init__(self, log_dirs: Sequence[Path], default_config: LogConfig) -> None:
        if not log_dirs:
            raise ValueError("at least one log directory is required")
        self.log_dirs = [Path(d) for d in log_dirs]
        self.default_config = default_config
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        # Partitions per log dir, kept up to date so placing a new partition is O(dirs), not O(partitions).
        self._partitions_per_dir: dict[Path, int] = dict.fromkeys(self.log_dirs, 0)
        # delete runs on the loop thread, create there or in the replica manager's worker thread,
        # run_cleaner in another: guard the dict's shape.
        self._lock = threading.Lock()

    def _register(self, topic: str, partition: int, log: PartitionLog) -> None:
        with self._lock:
            self._logs[(topic, partition)] = log
            parent = log.directory.parent
            self._partitions_per_dir[parent] = self._partitions_per_dir.get(parent, 0) + 1

    def load(self) -> None:
        """Open (and recover) every partition directory; finish deleting topics marked for deletion."""
        for log_dir in self.log_dirs:
            log_dir.mkdir(parents=True, exist_ok=True)
            for path in sorted(log_dir.iterdir()):
                if not path.is_dir():
                    continue
                if path.name.endswith(DELETE_DIR_SUFFIX):
                    shutil.rmtree(path, ignore_errors=True)
                    continue
                parsed = parse_partition_dir_name(path.name)
                if parsed is None:
                    continue
                topic, partition = parsed
                if (topic, partition) in self._logs:
                    logger.warning("duplicate partition directory %s ignored", path)
                    continue
                log = PartitionLog.open(path, self.default_config, topic=topic, partition=partition)
                self._register(topic, partition, log)

    def _pick_log_dir(self) -> Path:
        """The directory holding the fewest partitions, as Kafka does."""
        return min(self.log_dirs, key=lambda d: self._partitions_per_dir.get(d, 0))

    def create(self, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        """Open the partition's log, creating its directory if needed (idempotent)."""
        existing = self._logs.get((topic, partition))
        if existing is not None:
            if existing.config != config:
                existing.update_config(config)
            return existing
        directory = self._pick_log_dir() / partition_dir_name(topic, partition)
        found = False
        for log_dir in self.log_dirs:
            candidate = log_dir / partition_dir_name(topic, partition)
            if candidate.is_dir():
                directory, found = candidate, True
                break
        log = None
        if not found:
            with contextlib.suppress(FileExistsError):  # created meanwhile: opened below
                log = PartitionLog.create_new(directory, config, topic=topic, partition=partition)
        if log is None:
            log = PartitionLog.open(directory, config, topic=topic, partition=partition)
        self._register(topic, partition, log)
        return log

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def partitions(self) -> Iterable[PartitionLog]:
        return list(self._logs.values())

    def delete_partition(self, topic: str, partition: int) -> None:
        with self._lock:
            log = self._logs.pop((topic, partition), None)
            if log is not None:
                self._partitions_per_dir[log.directory.parent] -= 1
        if log is None:
            return
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

    def run_retention(self, now_ms: int) -> None:
        for log in self.partitions():
            try:
                log.apply_retention(now_ms)
            except OSError:
                logger.exception("retention failed for %s", log)
        self._remove_deleted_dirs()

    def run_cleaner(self, now_ms: int) -> list[CleanerStats]:
        stats = []
        for log in self.partitions():
            if not log.config.compacted:
                continue
            try:
                result = clean_log(log, now_ms)
            except (OSError, ValueError, StorageError):
                logger.exception("compaction failed for %s", log)
                continue
            if result is not None:
                stats.append(result)
        return stats

    def flush_due(self, now_ms: int) -> None:
        for log in self.partitions():
            log.flush_if_due(now_ms)

    def close(self) -> None:
        with self._lock:
            logs = list(self._logs.values())
            self._logs.clear()
        for log in logs:
            log.close()

    def dir_usage(self) -> list[tuple[Path, list[tuple[str, int, int]]]]:
        """Per log directory: (topic, partition, size in bytes) of every partition in it."""
        usage: dict[Path, list[tuple[str, int, int]]] = {d: [] for d in self.log_dirs}
        for log in self.partitions():
            usage.setdefault(log.directory.parent, []).append((log.topic, log.partition, log.size_bytes()))
        return list(usage.items())
