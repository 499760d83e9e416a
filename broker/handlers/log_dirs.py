"""AlterReplicaLogDirs (34) and DescribeLogDirs (35): a broker's log directories (log.dirs) and the
replicas in each, and moving a replica from one to another."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from kio.schema.alter_replica_log_dirs.v2.response import (
    AlterReplicaLogDirPartitionResult,
    AlterReplicaLogDirsResponse,
    AlterReplicaLogDirTopicResult,
)
from kio.schema.describe_log_dirs.v4.response import (
    DescribeLogDirsPartition,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.protocol.responses import NOT_THROTTLED


async def handle_describe_log_dirs(ctx: RequestContext, request: Any) -> DescribeLogDirsResponse:
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return DescribeLogDirsResponse(
            throttle_time=NOT_THROTTLED, error_code=ErrorCode.cluster_authorization_failed, results=()
        )
    wanted: dict[str, set[int]] | None = None
    if request.topics is not None:
        wanted = {t.topic: set(t.partitions) for t in request.topics}
    results = []
    futures: dict[Path, list[tuple[str, int, int, int]]] = defaultdict(list)
    for log_dir, topic, partition, size, lag in ctx.broker.partitions.future_log_usage():
        futures[log_dir].append((topic, partition, size, lag))
    for log_dir, partitions in ctx.broker.partitions.log_dir_usage():
        topics: dict[str, list[DescribeLogDirsPartition]] = defaultdict(list)
        # Kafka lists a moving replica twice: its current log, and its future log in the target dir.
        replicas = [(t, p, size, 0, False) for t, p, size in partitions]
        replicas += [(t, p, size, lag, True) for t, p, size, lag in futures.get(log_dir, ())]
        for topic, partition, size, lag, is_future in sorted(replicas):
            if wanted is not None and partition not in wanted.get(topic, ()):
                continue
            topics[topic].append(
                DescribeLogDirsPartition(
                    partition_index=partition, partition_size=size, offset_lag=lag, is_future_key=is_future
                )
            )
        try:
            usage = shutil.disk_usage(log_dir)
            total, usable = usage.total, usage.free
        except OSError:
            total = usable = -1
        results.append(
            DescribeLogDirsResult(
                error_code=ErrorCode.none,
                log_dir=str(log_dir),
                topics=tuple(
                    DescribeLogDirsTopic(name=name, partitions=tuple(parts))
                    for name, parts in sorted(topics.items())
                ),
                total_bytes=total,
                usable_bytes=usable,
            )
        )
    for log_dir in ctx.broker.partitions.offline_log_dirs():
        results.append(
            DescribeLogDirsResult(
                error_code=ErrorCode.kafka_storage_error,
                log_dir=str(log_dir),
                topics=(),
                total_bytes=-1,
                usable_bytes=-1,
            )
        )
    return DescribeLogDirsResponse(
        throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, results=tuple(results)
    )


async def handle_alter_replica_log_dirs(ctx: RequestContext, request: Any) -> AlterReplicaLogDirsResponse:
    """Move replicas of this broker to other log dirs of it. Kafka answers every partition with
    CLUSTER_AUTHORIZATION_FAILED when ALTER on the cluster is denied; LOG_DIR_NOT_FOUND names a dir
    outside log.dirs, REPLICA_NOT_AVAILABLE a partition this broker has no replica of (the dir is
    remembered for when it gets one), KAFKA_STORAGE_ERROR an offline dir."""
    allowed = ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    results: dict[str, list[AlterReplicaLogDirPartitionResult]] = defaultdict(list)
    for log_dir in request.dirs:
        for topic in log_dir.topics:
            for partition in topic.partitions:
                if allowed:
                    error = ctx.broker.partitions.move_replica(topic.name, int(partition), log_dir.path)
                else:
                    error = ErrorCode.cluster_authorization_failed
                results[topic.name].append(
                    AlterReplicaLogDirPartitionResult(partition_index=partition, error_code=error)
                )
    return AlterReplicaLogDirsResponse(
        throttle_time=NOT_THROTTLED,
        results=tuple(
            AlterReplicaLogDirTopicResult(topic_name=name, partitions=tuple(parts))
            for name, parts in results.items()
        ),
    )
