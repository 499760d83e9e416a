"""The clusters' log-end history: each partition's (time, log-end offset) points of the last hour, in one
Redis sorted set per cluster (score = sample time, member = one compact JSON object of every partition).

The lag sampler writes a point per run (it reads the log ends anyway); the cluster's throughput and its
brokers' message rates are read from here, so the clusters app never depends on the lag app.
"""

from __future__ import annotations

import json

import redis
from django.conf import settings


def history_redis() -> redis.Redis:
    """The Redis the lag sampler writes the log ends to (`controlplane.lag.history` keeps its groups there)."""
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=10, socket_connect_timeout=5)


def _ends_key(cluster_id: int) -> str:
    return f"lag:ends:{cluster_id}"


def partition_key(topic: str, partition: int) -> str:
    return f"{topic}/{partition}"


def add_log_ends(
    pipe: redis.client.Pipeline, *, cluster_id: int, time: float, log_ends: dict[tuple[str, int], int]
) -> None:
    """Queues one run's log ends on `pipe`, trimming points older than LAG_RAW_RETENTION_SECONDS."""
    retention = settings.LAG_RAW_RETENTION_SECONDS
    ends = json.dumps(
        [round(time, 3), {partition_key(t, p): end for (t, p), end in log_ends.items()}],
        separators=(",", ":"),
    )
    pipe.zadd(_ends_key(cluster_id), {ends: time})
    pipe.zremrangebyscore(_ends_key(cluster_id), "-inf", f"({time - retention}")
    # A cluster that is no longer sampled: its key goes by itself.
    pipe.expire(_ends_key(cluster_id), retention + 60)


def log_end_history(
    client: redis.Redis, cluster_id: int, *, since: float = float("-inf")
) -> dict[str, list[tuple[float, int]]]:
    """Per partition ("topic/partition"), its (time, log-end offset) points, oldest first."""
    history: dict[str, list[tuple[float, int]]] = {}
    for raw in client.zrangebyscore(_ends_key(cluster_id), since, "+inf"):
        time, ends = json.loads(raw)
        for key, end in ends.items():
            history.setdefault(key, []).append((time, end))
    return history
