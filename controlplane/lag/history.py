"""Lag history: raw samples in Redis for the last hour, 1-minute and 1-hour rollups in the database.

Raw samples live in one Redis sorted set per group (score = sample time, member = one compact JSON
sample holding every partition), and the partitions' (log-end offset, time) points in one sorted set per
cluster. Sorted sets trim by time in one command (ZREMRANGEBYSCORE) and answer a time range in one
(ZRANGEBYSCORE), which is all the health window, the interpolation and the <= 1 h chart need. Memory is
about groups x partitions x (retention / interval) x 25 bytes: 1,000 groups of 10 partitions sampled
every 15 s for an hour is ~60 MB. Older history is the database's rollups.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from django.conf import settings
from django.db.models import Avg, Max, Sum, TextField
from django.db.models.functions import Cast

from controlplane.clusters.log_ends import add_log_ends, partition_key
from controlplane.lag.choices import Resolution, RollupResolution
from controlplane.lag.models import LagRollup

MINUTE_RETENTION = timedelta(days=7)
HOUR_RETENTION = timedelta(days=90)


def lag_redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=10, socket_connect_timeout=5)


def _group_key(group_id: int) -> str:
    return f"lag:raw:{group_id}"


@dataclass(frozen=True)
class PartitionSample:
    topic: str
    partition: int
    committed_offset: int | None
    log_end_offset: int
    lag_messages: int
    lag_seconds: float | None


@dataclass(frozen=True)
class GroupSample:
    time: float  # unix seconds
    partitions: tuple[PartitionSample, ...]

    @property
    def lag_messages(self) -> int:
        """The group's lag as Kafka counts it: partitions without a committed offset are left out."""
        return sum(p.lag_messages for p in self.partitions if p.committed_offset is not None)

    @property
    def lag_seconds(self) -> float | None:
        known = [p.lag_seconds for p in self.partitions if p.lag_seconds is not None]
        return max(known) if known else None

    def encode(self) -> str:
        rows = [
            [
                p.topic,
                p.partition,
                p.committed_offset,
                p.log_end_offset,
                p.lag_messages,
                _round(p.lag_seconds),
            ]
            for p in self.partitions
        ]
        return json.dumps([round(self.time, 3), rows], separators=(",", ":"))

    @classmethod
    def decode(cls, raw: bytes | str) -> GroupSample:
        time, rows = json.loads(raw)
        return cls(time=time, partitions=tuple(PartitionSample(*row) for row in rows))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# --- raw samples ----------------------------------------------------------------------------------


def record_samples(
    client: redis.Redis,
    *,
    cluster_id: int,
    time: float,
    groups: dict[int, GroupSample],
    log_ends: dict[tuple[str, int], int],
) -> None:
    """Adds one run's samples and trims everything older than LAG_RAW_RETENTION_SECONDS."""
    retention = settings.LAG_RAW_RETENTION_SECONDS
    oldest = time - retention
    pipe = client.pipeline(transaction=False)
    for group_id, sample in groups.items():
        key = _group_key(group_id)
        pipe.zadd(key, {sample.encode(): sample.time})
        pipe.zremrangebyscore(key, "-inf", f"({oldest}")
        # A group that disappears stops being sampled: its key goes by itself.
        pipe.expire(key, retention + 60)
    add_log_ends(pipe, cluster_id=cluster_id, time=time, log_ends=log_ends)
    pipe.execute()


def group_samples(
    client: redis.Redis, group_ids: Iterable[int], *, since: float, until: float = float("inf")
) -> dict[int, list[GroupSample]]:
    """Raw samples per group in [since, until], oldest first (one round trip for all groups)."""
    ids = list(group_ids)
    pipe = client.pipeline(transaction=False)
    for group_id in ids:
        pipe.zrangebyscore(_group_key(group_id), since, until)
    return {
        group_id: [GroupSample.decode(raw) for raw in rows]
        for group_id, rows in zip(ids, pipe.execute(), strict=True)
    }


# --- rollups --------------------------------------------------------------------------------------


def _bucket_start(time: float, seconds: int) -> float:
    return time - time % seconds


def _as_datetime(time: float) -> datetime:
    return datetime.fromtimestamp(time, tz=UTC)


def rollup_rows(
    group_id: int, samples: list[GroupSample], resolution: str, bucket_seconds: int
) -> list[LagRollup]:
    """Aggregates raw samples into buckets: the worst (max) and mean total lag, and per partition the worst."""
    buckets: dict[float, list[GroupSample]] = {}
    for sample in samples:
        buckets.setdefault(_bucket_start(sample.time, bucket_seconds), []).append(sample)
    rows = []
    for start, members in sorted(buckets.items()):
        partitions: dict[str, list[Any]] = {}
        for sample in members:
            for p in sample.partitions:
                worst = partitions.setdefault(partition_key(p.topic, p.partition), [0, None])
                worst[0] = max(worst[0], p.lag_messages)
                if p.lag_seconds is not None:
                    worst[1] = p.lag_seconds if worst[1] is None else max(worst[1], p.lag_seconds)
        totals = [s.lag_messages for s in members]
        seconds = [s.lag_seconds for s in members if s.lag_seconds is not None]
        rows.append(
            LagRollup(
                group_id=group_id,
                resolution=resolution,
                bucket_start=_as_datetime(start),
                samples=len(members),
                lag_messages_max=max(totals),
                lag_messages_avg=sum(totals) / len(totals),
                lag_seconds_max=max(seconds) if seconds else None,
                partitions=partitions,
            )
        )
    return rows


def roll_up_minutes(client: redis.Redis, *, group_ids: list[int], since: float, until: float) -> int:
    """Writes the 1-minute rollups of the whole minutes in [since, until) from the raw samples; a rerun
    over the same minutes changes nothing."""
    rows: list[LagRollup] = []
    for group_id, samples in group_samples(client, group_ids, since=since, until=f"({until}").items():
        rows += rollup_rows(group_id, samples, RollupResolution.MINUTE, 60)
    LagRollup.objects.bulk_create(rows, batch_size=1000, ignore_conflicts=True)
    return len(rows)


def roll_up_hour(*, group_ids: list[int], hour_start: datetime) -> int:
    """Writes the 1-hour rollups of one hour from its 1-minute rollups (idempotent)."""
    minutes = LagRollup.objects.filter(
        group_id__in=group_ids,
        resolution=RollupResolution.MINUTE,
        bucket_start__gte=hour_start,
        bucket_start__lt=hour_start + timedelta(hours=1),
    )
    totals = {
        row["group_id"]: row
        for row in minutes.values("group_id").annotate(
            samples=Sum("samples"),
            lag_messages_max=Max("lag_messages_max"),
            lag_messages_avg=Avg("lag_messages_avg"),
            lag_seconds_max=Max("lag_seconds_max"),
        )
    }
    partitions: dict[int, dict[str, list[Any]]] = {}
    for group_id, by_partition in minutes.values_list("group_id", "partitions"):
        merged = partitions.setdefault(group_id, {})
        for key, (messages, seconds) in by_partition.items():
            worst = merged.setdefault(key, [0, None])
            worst[0] = max(worst[0], messages)
            if seconds is not None:
                worst[1] = seconds if worst[1] is None else max(worst[1], seconds)
    rows = [
        LagRollup(
            group_id=group_id,
            resolution=RollupResolution.HOUR,
            bucket_start=hour_start,
            samples=row["samples"],
            lag_messages_max=row["lag_messages_max"],
            lag_messages_avg=row["lag_messages_avg"],
            lag_seconds_max=row["lag_seconds_max"],
            partitions=partitions.get(group_id, {}),
        )
        for group_id, row in totals.items()
    ]
    LagRollup.objects.bulk_create(rows, batch_size=1000, ignore_conflicts=True)
    return len(rows)


def roll_up_cluster(client: redis.Redis, cluster_id: int, group_ids: list[int], now: float) -> None:
    """Rolls finished minutes (from Redis) and finished hours (from the minute rows) into the database,
    once each: Redis markers remember how far each cluster is rolled up."""
    minute_key, hour_key = f"lag:rolled_minute:{cluster_id}", f"lag:rolled_hour:{cluster_id}"
    this_minute, this_hour = now - now % 60, now - now % 3600
    rolled_minute, rolled_hour = client.mget(minute_key, hour_key)
    if rolled_minute is None:
        client.set(minute_key, this_minute)
    elif float(rolled_minute) < this_minute:
        since = max(float(rolled_minute), this_minute - settings.LAG_RAW_RETENTION_SECONDS)
        roll_up_minutes(client, group_ids=group_ids, since=since, until=this_minute)
        client.set(minute_key, this_minute)
    if rolled_hour is None:
        client.set(hour_key, this_hour)
    elif float(rolled_hour) < this_hour:
        hour = max(float(rolled_hour), this_hour - 24 * 3600)
        while hour < this_hour:
            roll_up_hour(group_ids=group_ids, hour_start=datetime.fromtimestamp(hour, tz=UTC))
            hour += 3600
        client.set(hour_key, this_hour)


def prune_rollups(now: datetime) -> int:
    """Retention: 1-minute rollups for 7 days, 1-hour rollups for 90 days."""
    deleted, _ = LagRollup.objects.filter(
        resolution=RollupResolution.MINUTE, bucket_start__lt=now - MINUTE_RETENTION
    ).delete()
    more, _ = LagRollup.objects.filter(
        resolution=RollupResolution.HOUR, bucket_start__lt=now - HOUR_RETENTION
    ).delete()
    return deleted + more


# --- the chart ------------------------------------------------------------------------------------


def pick_resolution(since: datetime, until: datetime) -> str:
    """Raw for up to an hour, 1-minute rollups up to 7 days, 1-hour rollups beyond."""
    span = until - since
    if span <= timedelta(hours=1):
        return Resolution.RAW
    if span <= MINUTE_RETENTION:
        return Resolution.MINUTE
    return Resolution.HOUR


def chart(client: redis.Redis, *, group_id: int, since: datetime, until: datetime, resolution: str) -> dict:
    """Columnar series for a chart: times, the total and every partition (null where a partition has no
    value at a time). Lag is the worst value of each rollup bucket."""
    if resolution == Resolution.RAW:
        samples = group_samples(client, [group_id], since=since.timestamp(), until=until.timestamp())[
            group_id
        ]
        points = [
            (
                _as_datetime(s.time),
                s.lag_messages,
                s.lag_seconds,
                {partition_key(p.topic, p.partition): (p.lag_messages, p.lag_seconds) for p in s.partitions},
            )
            for s in samples
        ]
    else:
        rows = list(
            LagRollup.objects.filter(
                group_id=group_id, resolution=resolution, bucket_start__gte=since, bucket_start__lte=until
            ).values_list(
                "bucket_start", "lag_messages_max", "lag_seconds_max", Cast("partitions", TextField())
            )
        )
        # One parse of all buckets' JSON: per-row decoding was most of a 24-hour chart's time.
        decoded = json.loads("[" + ",".join(text for *_rest, text in rows) + "]")
        points = [
            (start, messages, seconds, parts)
            for (start, messages, seconds, _t), parts in zip(rows, decoded, strict=True)
        ]
    keys = sorted({key for *_rest, partitions in points for key in partitions}, key=_partition_sort_key)
    series = []
    for key in keys:
        topic, partition = key.rsplit("/", 1)
        values = [partitions.get(key) for *_rest, partitions in points]
        series.append(
            {
                "topic": topic,
                "partition": int(partition),
                "lag_messages": [v[0] if v else None for v in values],
                "lag_seconds": [v[1] if v else None for v in values],
            }
        )
    return {
        "group": group_id,
        "resolution": resolution,
        "since": since,
        "until": until,
        "times": [time for time, *_rest in points],
        "total": {
            "lag_messages": [messages for _t, messages, _s, _p in points],
            "lag_seconds": [seconds for _t, _m, seconds, _p in points],
        },
        "partitions": series,
    }


def _partition_sort_key(key: str) -> tuple[str, int]:
    topic, partition = key.rsplit("/", 1)
    return topic, int(partition)
