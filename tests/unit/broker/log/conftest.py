from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog

LogFactory = Callable[..., PartitionLog]


def make_config(**properties: object) -> LogConfig:
    """Keyword names use underscores for dots: segment_bytes=1000 -> segment.bytes=1000."""
    return LogConfig.from_properties(
        {name.replace("_", "."): str(value) for name, value in properties.items()}
    )


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "topic-0"


@pytest.fixture
def open_log(log_dir: Path) -> Iterator[LogFactory]:
    """Open (or reopen) the partition in `log_dir` with topic configs given as keywords."""
    opened: list[PartitionLog] = []

    def factory(**properties: object) -> PartitionLog:
        log = PartitionLog.open(log_dir, make_config(**properties), topic="topic", partition=0)
        opened.append(log)
        return log

    yield factory
    for log in opened:
        log.close()
