"""DescribeLogDirs (35)."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode

from broker.server.context import RequestContext


async def handle_describe_log_dirs(ctx: RequestContext, request: Any) -> dict[str, Any]:
    state = ctx.broker
    wanted: dict[str, set[int]] | None = None
    if request.topics is not None:
        wanted = {t.topic: set(t.partitions) for t in request.topics}
    by_dir: dict[str, dict[str, list[dict[str, Any]]]] = {
        str(d): defaultdict(list) for d in state.config.log_dirs
    }
    for topic, partition in sorted(state.logs.partitions()):
        if wanted is not None and partition not in wanted.get(topic, ()):
            continue
        partition_log = state.logs.get(topic, partition)
        if partition_log is None:
            continue
        directory = str(Path(partition_log.directory).parent) if hasattr(partition_log, "directory") else None
        bucket = by_dir.get(directory or "", by_dir[str(state.config.log_dirs[0])])
        bucket[topic].append(
            {
                "partition_index": partition,
                "partition_size": partition_log.size_bytes(),
                "offset_lag": 0,
                "is_future_key": False,
            }
        )
    results = []
    for directory, topics in by_dir.items():
        try:
            usage = shutil.disk_usage(directory)
            total, usable = usage.total, usage.free
        except OSError:
            total = usable = -1
        results.append(
            {
                "error_code": ErrorCode.none,
                "log_dir": directory,
                "topics": [{"name": name, "partitions": parts} for name, parts in sorted(topics.items())],
                "total_bytes": total,
                "usable_bytes": usable,
            }
        )
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results": results}


APIS = {35: (1, 4, handle_describe_log_dirs)}
