"""DescribeLogDirs (35)."""

from __future__ import annotations

import shutil
from collections import defaultdict
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext


async def handle_describe_log_dirs(ctx: RequestContext, request: Any) -> dict[str, Any]:
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed, "results": []}
    wanted: dict[str, set[int]] | None = None
    if request.topics is not None:
        wanted = {t.topic: set(t.partitions) for t in request.topics}
    results = []
    for log_dir, partitions in ctx.broker.partitions.log_dir_usage():
        topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for topic, partition, size in sorted(partitions):
            if wanted is not None and partition not in wanted.get(topic, ()):
                continue
            topics[topic].append(
                {
                    "partition_index": partition,
                    "partition_size": size,
                    "offset_lag": 0,
                    "is_future_key": False,
                }
            )
        try:
            usage = shutil.disk_usage(log_dir)
            total, usable = usage.total, usage.free
        except OSError:
            total = usable = -1
        results.append(
            {
                "error_code": ErrorCode.none,
                "log_dir": str(log_dir),
                "topics": [{"name": name, "partitions": parts} for name, parts in sorted(topics.items())],
                "total_bytes": total,
                "usable_bytes": usable,
            }
        )
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results": results}


APIS = {35: (1, 4, handle_describe_log_dirs)}
