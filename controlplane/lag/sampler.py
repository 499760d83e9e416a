"""One sampling run over a cluster: read offsets and groups, judge every partition, keep history, hand the
run to alert evaluation.

A run reads (over the Kafka protocol only) every partition's log-start, log-end and last-stable offsets,
every group's state and committed offsets, and members for groups whose state changed or whose members
are older than LAG_MEMBERS_REFRESH_SECONDS. Lag uses the last stable offset, so open transactions do not
count as lag. Runs of one cluster never overlap: `sample_cluster_exclusively` holds a Redis lock.
"""

from __future__ import annotations

import bisect
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import redis
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Model

from controlplane.clusters.connections import connection_for
from controlplane.clusters.log_ends import log_end_history, partition_key
from controlplane.clusters.models import Cluster
from controlplane.clusters.ownership import owner_in, prefix_table
from controlplane.groups.choices import PROTOCOL_ONLY_TYPES, GroupType
from controlplane.groups.models import ConsumerGroup
from controlplane.kafka.lag_reads import ClusterReader, DescribedGroup, PartitionOffsets
from controlplane.lag import history, timelag
from controlplane.lag.health import PartitionState, classify
from controlplane.lag.history import GroupSample, PartitionSample
from controlplane.lag.models import GroupLag
from controlplane.lag.observations import (
    HEALTH_SEVERITY,
    GroupObservation,
    Health,
    PartitionObservation,
    SamplingRun,
    worst_health,
)
from controlplane.lag.signals import sampling_run_finished
from controlplane.tenancy.choices import PrefixResourceType

logger = logging.getLogger(__name__)

INACTIVE_STATES = frozenset({"EMPTY", "DEAD"})
# Record timestamps are fetched at most this many rounds per run (one offset per partition per round);
# the rest are interpolated this run and fetched in the next.
TIMESTAMP_FETCH_ROUNDS = 3
_TIMESTAMP_CACHE_SIZE = 200_000
# (cluster id, topic, partition, offset) -> timestamp in ms; records never change, so entries stay valid.
_timestamps: OrderedDict[tuple[int, str, int, int], int] = OrderedDict()


def _state_name(kafka_state: str) -> str:
    """Kafka's `PreparingRebalance` in the spelling the groups app uses: `PREPARING_REBALANCE`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", kafka_state).upper() if kafka_state else "UNKNOWN"


@dataclass
class _Observed:
    """What the cluster said in this run."""

    offsets: dict[tuple[str, int], PartitionOffsets]
    states: dict[str, str]
    committed: dict[str, dict[tuple[str, int], int]]
    described: dict[str, DescribedGroup]
    timestamps: dict[tuple[str, int, int], int]
    types: dict[str, str]  # group -> classic, consumer, share or streams
    # Share groups: the broker's lag per partition (acknowledged records past the start offset do not count).
    reported_lags: dict[str, dict[tuple[str, int], int]]


def _cached_timestamp(cluster_id: int, topic: str, partition: int, offset: int) -> int | None:
    key = (cluster_id, topic, partition, offset)
    found = _timestamps.get(key)
    if found is not None:
        _timestamps.move_to_end(key)
    return found


def _remember_timestamp(cluster_id: int, topic: str, partition: int, offset: int, timestamp: int) -> None:
    _timestamps[(cluster_id, topic, partition, offset)] = timestamp
    while len(_timestamps) > _TIMESTAMP_CACHE_SIZE:
        _timestamps.popitem(last=False)


def _first_unconsumed(committed: int, offsets: PartitionOffsets) -> int:
    return max(committed, offsets.log_start)


def _fetch_timestamps(
    reader: ClusterReader,
    cluster_id: int,
    offsets: dict[tuple[str, int], PartitionOffsets],
    committed: dict[str, dict[tuple[str, int], int]],
) -> dict[tuple[str, int, int], int]:
    """Timestamps of the first unconsumed record of every lagging (group, partition), from the cache or
    fetched (one Fetch per leader per round, one offset per partition in each)."""
    found: dict[tuple[str, int, int], int] = {}
    missing: dict[tuple[str, int], set[int]] = {}
    for group_offsets in committed.values():
        for tp, offset in group_offsets.items():
            partition = offsets.get(tp)
            if partition is None or offset >= partition.last_stable:
                continue
            position = _first_unconsumed(offset, partition)
            cached = _cached_timestamp(cluster_id, tp[0], tp[1], position)
            if cached is not None:
                found[(tp[0], tp[1], position)] = cached
            else:
                missing.setdefault(tp, set()).add(position)
    for _round in range(TIMESTAMP_FETCH_ROUNDS):
        wanted = {tp: min(positions) for tp, positions in missing.items() if positions}
        if not wanted:
            break
        fetched = reader.record_timestamps(wanted)
        for tp, position in wanted.items():
            missing[tp].discard(position)
            if tp in fetched:
                found[(tp[0], tp[1], position)] = fetched[tp]
                _remember_timestamp(cluster_id, tp[0], tp[1], position, fetched[tp])
    return found


def read_cluster(cluster: Cluster, *, describe: Callable[[str, str], bool]) -> _Observed:
    """Everything one run needs from the cluster; members of the active groups for which
    `describe(name, state)` is true. A share group's "committed" offsets are its share-partition start
    offsets, and its lag the broker's count of records not yet acknowledged."""
    with ClusterReader(connection_for(cluster)) as reader:
        reader.load_metadata()
        offsets = reader.partition_offsets()
        listed = reader.list_groups()
        coordinators = reader.coordinators(sorted(listed))
        types = {name: group.group_type for name, group in listed.items()}
        by_type: dict[str, dict[str, int]] = {}
        for name, node in coordinators.items():
            by_type.setdefault(types[name], {})[name] = node
        share = by_type.get(GroupType.SHARE, {})
        committed = reader.committed_offsets(
            {name: node for name, node in coordinators.items() if name not in share}
        )
        share_offsets = reader.share_offsets(share)
        committed.update(
            {
                name: {tp: offset.start_offset for tp, offset in partitions.items()}
                for name, partitions in share_offsets.items()
            }
        )
        states = {name: _state_name(group.state) for name, group in listed.items()}
        described: dict[str, DescribedGroup] = {}
        for group_type, nodes in by_type.items():
            to_describe = {
                name: node
                for name, node in nodes.items()
                if states.get(name) not in INACTIVE_STATES and describe(name, states.get(name, ""))
            }
            if group_type in PROTOCOL_ONLY_TYPES:
                described.update(reader.describe_new_groups(to_describe, group_type))
            else:
                described.update(reader.describe_groups(to_describe))
        timestamps = _fetch_timestamps(reader, cluster.pk, offsets, committed)
    reported_lags = {
        name: {tp: offset.lag for tp, offset in partitions.items() if offset.lag >= 0}
        for name, partitions in share_offsets.items()
    }
    return _Observed(offsets, states, committed, described, timestamps, types, reported_lags)


def _members_payload(described: DescribedGroup) -> list[dict[str, Any]]:
    return [
        {
            "member_id": m.member_id,
            "client_id": m.client_id,
            "host": m.host,
            "assignments": [{"topic": t, "partition": p} for t, p in m.assignments],
        }
        for m in described.members
    ]


def _observe_partition(
    *,
    tp: tuple[str, int],
    committed: int | None,
    offsets: PartitionOffsets,
    history_window: list[tuple[float, int | None, int]],
    end_points: list[tuple[float, int]],
    produce_rate: float | None,
    exact_timestamp_ms: int | None,
    has_members: bool,
    assigned: bool,
    now: float,
    reported_lag: int | None = None,
) -> PartitionObservation:
    # Never committed: the partition's backlog counts from the log start, as a consumer of the group would
    # read it (and as the backlog job counts); its health reason says so. The group's total leaves it out.
    start = offsets.log_start if committed is None else _first_unconsumed(committed, offsets)
    lag = max(0, offsets.last_stable - start)
    if committed is not None and committed < offsets.log_start:
        lag = max(0, offsets.last_stable - committed)  # the deleted records count: they were never read
    if reported_lag is not None:
        lag = reported_lag
    window = [*history_window, (now, committed, lag)]
    verdict = classify(
        PartitionState(
            window=window,
            log_start_offset=offsets.log_start,
            has_members=has_members,
            assigned=assigned,
            window_seconds=settings.LAG_HEALTH_WINDOW_SECONDS,
            lagging_min_messages=settings.LAG_LAGGING_MIN_MESSAGES,
        )
    )
    lag_seconds: float | None = None
    lower_bound = committed is not None and committed < offsets.log_start
    if committed is not None and lag == 0:
        lag_seconds = 0.0
    elif committed is not None and exact_timestamp_ms is not None:
        lag_seconds = max(0.0, now - exact_timestamp_ms / 1000)
    elif committed is not None:
        appended, older_than_history = timelag.appended_at(_first_unconsumed(committed, offsets), end_points)
        if appended is not None:
            lag_seconds = max(0.0, now - appended)
            lower_bound = lower_bound or older_than_history
    consume_rate = timelag.rate([(t, c) for t, c, _lag in window if c is not None])
    return PartitionObservation(
        topic=tp[0],
        partition=tp[1],
        committed_offset=committed,
        log_start_offset=offsets.log_start,
        log_end_offset=offsets.log_end,
        lag_messages=lag,
        lag_seconds=lag_seconds,
        lag_seconds_is_lower_bound=lower_bound,
        consume_rate=consume_rate,
        produce_rate=produce_rate,
        time_to_catch_up_seconds=timelag.time_to_catch_up(lag, consume_rate, produce_rate),
        status=verdict.status,
        reason=verdict.reason,
    )


def _produce_rates(
    end_history: dict[str, list[tuple[float, int]]],
    offsets: dict[tuple[str, int], PartitionOffsets],
    now: float,
) -> dict[tuple[str, int], float | None]:
    """Records/s appended to each partition over the health window (once per partition, not per group)."""
    window_start = now - settings.LAG_HEALTH_WINDOW_SECONDS
    rates = {}
    for tp, partition in offsets.items():
        points = end_history.get(partition_key(*tp), [])
        first = bisect.bisect_left(points, (window_start, -1))
        start = points[first] if first < len(points) else None
        rates[tp] = None if start is None else timelag.rate([start, (now, partition.log_end)])
    return rates


def _group_observation(
    group: _GroupRef, partitions: list[PartitionObservation], member_count: int
) -> GroupObservation:
    status = worst_health([p.status for p in partitions])
    worst = next((p for p in partitions if p.status == status), None)
    if worst is None:
        reason = "No committed offsets and no assigned partitions."
    elif status == Health.OK:
        reason = (
            "Every partition is keeping up." if all(p.lag_messages == 0 for p in partitions) else worst.reason
        )
    else:
        reason = f"{worst.topic}/{worst.partition}: {worst.reason}"
    seconds = [p.lag_seconds for p in partitions if p.lag_seconds is not None]
    catch_up = [p.time_to_catch_up_seconds for p in partitions]
    return GroupObservation(
        cluster_id=group.cluster_id,
        group_id=group.pk,
        group=group.name,
        team_id=group.team_id,
        status=status,
        reason=reason,
        member_count=member_count,
        # Kafka's definition, as kafka-consumer-groups.sh --describe shows it (LAG "-" where nothing is
        # committed) and as the group's live page adds it up: only partitions with a committed offset count.
        lag_messages=sum(p.lag_messages for p in partitions if p.committed_offset is not None),
        lag_seconds=max(seconds) if seconds else None,
        # The slowest partition decides; any partition that is not catching up makes the group not.
        time_to_catch_up_seconds=None if None in catch_up else max(catch_up, default=0.0),
        partitions=tuple(partitions),
    )


@dataclass(frozen=True)
class _GroupRef:
    pk: int
    name: str
    cluster_id: int
    team_id: int | None


def _sync_group_rows(cluster: Cluster, types: dict[str, str]) -> dict[str, _GroupRef]:
    """Ids of every listed group's ConsumerGroup row (created here when the reconciler has not seen it)."""

    def existing() -> dict[str, _GroupRef]:
        rows = ConsumerGroup.objects.filter(cluster=cluster).values_list("id", "name", "team_id")
        return {name: _GroupRef(pk, name, cluster.pk, team_id) for pk, name, team_id in rows}

    names = sorted(types)
    rows = existing()
    new_names = [name for name in names if name not in rows]
    if new_names:
        owners = prefix_table(cluster.organization_id, PrefixResourceType.GROUP)
        ConsumerGroup.objects.bulk_create(
            [
                ConsumerGroup(
                    cluster=cluster, name=name, group_type=types[name], team_id=owner_in(owners, name)
                )
                for name in new_names
            ],
            batch_size=1000,
            ignore_conflicts=True,
        )
        rows = existing()
    return {name: rows[name] for name in names if name in rows}


def sample_cluster(cluster: Cluster, *, client: redis.Redis | None = None) -> SamplingRun:
    """One sampling run (callers that may overlap use `sample_cluster_exclusively`)."""
    client = client or history.lag_redis()
    previous = {
        row["group__name"]: row
        for row in GroupLag.objects.filter(cluster=cluster).values(
            "group__name", "state", "members", "members_observed_at"
        )
    }
    refresh_before = time.time() - settings.LAG_MEMBERS_REFRESH_SECONDS

    def describe(name: str, state: str) -> bool:
        """New groups, changed states and members older than LAG_MEMBERS_REFRESH_SECONDS."""
        row = previous.get(name)
        return (
            row is None
            or row["state"] != state
            or row["members_observed_at"] is None
            or row["members_observed_at"].timestamp() < refresh_before
        )

    observed = read_cluster(cluster, describe=describe)
    now = time.time()
    groups = _sync_group_rows(
        cluster, {name: observed.types.get(name, GroupType.CLASSIC) for name in observed.states}
    )
    # The window's samples (10% slack for run-time jitter); when runs come slower than the window, the
    # previous run's sample stands in, so a change is still judged against the run before it.
    window_since = now - settings.LAG_HEALTH_WINDOW_SECONDS * 1.1
    lookback = now - max(settings.LAG_HEALTH_WINDOW_SECONDS * 1.1, 3 * settings.LAG_SAMPLING_INTERVAL_SECONDS)
    windows = {
        group_id: [sample for sample in samples if sample.time >= window_since] or samples[-1:]
        for group_id, samples in history.group_samples(
            client, [g.pk for g in groups.values()], since=lookback
        ).items()
    }
    end_history = log_end_history(client, cluster.pk)
    produce_rates = _produce_rates(end_history, observed.offsets, now)

    observations, samples, lag_rows = [], {}, []
    observed_at = datetime.fromtimestamp(now, tz=UTC)
    for name, group in groups.items():
        state = observed.states[name]
        described = observed.described.get(name)
        members = (
            _members_payload(described)
            if described is not None
            else ([] if state in INACTIVE_STATES else previous.get(name, {}).get("members", []))
        )
        has_members = state not in INACTIVE_STATES and (described is None or bool(described.members))
        assigned = {(a["topic"], a["partition"]) for m in members for a in m["assignments"]}
        committed = observed.committed.get(name, {})
        reported = observed.reported_lags.get(name, {})
        past: dict[tuple[str, int], list[tuple[float, int | None, int]]] = {}
        for sample in windows.get(group.pk, []):
            for p in sample.partitions:
                past.setdefault((p.topic, p.partition), []).append(
                    (sample.time, p.committed_offset, p.lag_messages)
                )
        partitions = []
        # Every partition of the topics the group reads (commits to, or is assigned): one it never committed
        # counts from the log start.
        topics = {topic for topic, _partition in (*committed, *assigned)}
        for tp in sorted(set(committed) | assigned | {tp for tp in observed.offsets if tp[0] in topics}):
            offsets = observed.offsets.get(tp)
            if offsets is None:
                continue  # a deleted topic's leftover commits
            offset = committed.get(tp)
            position = None if offset is None else _first_unconsumed(offset, offsets)
            partitions.append(
                _observe_partition(
                    tp=tp,
                    committed=offset,
                    offsets=offsets,
                    history_window=past.get(tp, []),
                    end_points=end_history.get(partition_key(*tp), []),
                    produce_rate=produce_rates.get(tp),
                    exact_timestamp_ms=None if position is None else observed.timestamps.get((*tp, position)),
                    has_members=has_members,
                    assigned=tp in assigned if members else has_members,
                    now=now,
                    reported_lag=reported.get(tp),
                )
            )
        observation = _group_observation(group, partitions, len(members) if has_members else 0)
        observations.append(observation)
        samples[group.pk] = GroupSample(
            time=now,
            partitions=tuple(
                PartitionSample(
                    p.topic, p.partition, p.committed_offset, p.log_end_offset, p.lag_messages, p.lag_seconds
                )
                for p in partitions
            ),
        )
        members_observed_at = (
            observed_at if described is not None else previous.get(name, {}).get("members_observed_at")
        )
        lag_rows.append(_lag_row(observation, state, members, members_observed_at, observed_at))

    _save(cluster, lag_rows, observations, observed.types)
    history.record_samples(
        client,
        cluster_id=cluster.pk,
        time=now,
        groups=samples,
        log_ends={tp: o.log_end for tp, o in observed.offsets.items()},
    )
    run = SamplingRun(cluster_id=cluster.pk, observed_at=observed_at, groups=tuple(observations))
    _evaluate_alerts(run)
    return run


def _lag_row(
    observation: GroupObservation,
    state: str,
    members: list[dict[str, Any]],
    members_observed_at: datetime | None,
    observed_at: datetime,
) -> tuple[Any, ...]:
    """The GroupLag row's values, in the model's field order (LAG_COLUMNS)."""
    lower_bound = any(
        p.lag_seconds_is_lower_bound
        for p in observation.partitions
        if p.lag_seconds == observation.lag_seconds
    )
    consumed = [p.consume_rate for p in observation.partitions if p.consume_rate is not None]
    produced = [p.produce_rate for p in observation.partitions if p.produce_rate is not None]
    return (
        observation.group_id,
        observation.cluster_id,
        observation.status,
        HEALTH_SEVERITY[observation.status],
        observation.reason[:500],
        observation.lag_messages,
        observation.lag_seconds,
        lower_bound,
        observation.time_to_catch_up_seconds,
        sum(consumed) if consumed else None,
        sum(produced) if produced else None,
        state,
        observation.member_count,
        members,
        members_observed_at,
        [vars(p) for p in observation.partitions],
        observed_at,
    )


# Every GroupLag column, in the model's order (the order _lag_row returns them in).
LAG_COLUMNS = [field.name for field in GroupLag._meta.concrete_fields]
GROUP_COLUMNS = ["group_type", "state", "member_count", "total_lag", "partition_lags", "observed_at", "id"]


def _adapter(model: type[Model], name: str) -> Callable[[Any], Any]:
    """How the database driver wants one column's Python value (what the field's save would do)."""
    field = model._meta.get_field(name)
    internal = field.get_internal_type()
    if internal == "JSONField":
        return lambda value: connection.ops.adapt_json_value(value, None)
    if internal == "DateTimeField":
        return connection.ops.adapt_datetimefield_value
    return lambda value: value


def _write_rows(sql: str, model: type[Model], field_names: list[str], rows: list[tuple[Any, ...]]) -> None:
    """executemany of `sql` over the rows. A run writes thousands of rows: Django's bulk_update builds a
    CASE per row (about 1 ms a row), and model instances alone cost more than the writes."""
    adapters = [_adapter(model, name) for name in field_names]
    prepared = [tuple(adapt(value) for adapt, value in zip(adapters, row, strict=True)) for row in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, prepared)


def _save(
    cluster: Cluster,
    lag_rows: list[tuple[Any, ...]],
    observations: list[GroupObservation],
    types: dict[str, str],
) -> None:
    names = [GroupLag._meta.get_field(name).column for name in LAG_COLUMNS]
    upsert = (
        f"INSERT INTO {GroupLag._meta.db_table} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))}) "
        f"ON CONFLICT ({names[0]}) DO UPDATE SET "
        + ", ".join(f"{column} = EXCLUDED.{column}" for column in names[2:])
    )
    # The groups list answers from ConsumerGroup: keep its state and totals as fresh as the samples.
    update = (
        f"UPDATE {ConsumerGroup._meta.db_table} SET "
        + ", ".join(f"{ConsumerGroup._meta.get_field(name).column} = %s" for name in GROUP_COLUMNS[:-1])
        + " WHERE id = %s"
    )
    state_at, observed_at_at = LAG_COLUMNS.index("state"), LAG_COLUMNS.index("observed_at")
    group_values = [
        (
            types.get(observation.group, GroupType.CLASSIC),
            row[state_at],
            observation.member_count,
            observation.lag_messages,
            [
                {
                    "topic": p.topic,
                    "partition": p.partition,
                    "committed_offset": p.committed_offset,
                    "log_end_offset": p.log_end_offset,
                    "lag": p.lag_messages,
                }
                for p in observation.partitions
                if p.committed_offset is not None
            ],
            row[observed_at_at],
            observation.group_id,
        )
        for row, observation in zip(lag_rows, observations, strict=True)
    ]
    with transaction.atomic():
        _write_rows(upsert, GroupLag, LAG_COLUMNS, lag_rows)
        GroupLag.objects.filter(cluster=cluster).exclude(group_id__in=[row[0] for row in lag_rows]).delete()
        _write_rows(update, ConsumerGroup, GROUP_COLUMNS, group_values)
        # The reconciler's listing (librdkafka) never has share and Streams groups: gone ones go here.
        ConsumerGroup.objects.filter(cluster=cluster, group_type__in=PROTOCOL_ONLY_TYPES).exclude(
            name__in=list(types)
        ).delete()


def _evaluate_alerts(run: SamplingRun) -> None:
    """Alerting judges every run (it receives `sampling_run_finished`); a failure there must not lose the
    samples already stored."""
    for _receiver, outcome in sampling_run_finished.send_robust(sender=SamplingRun, run=run):
        if isinstance(outcome, Exception):
            logger.error(
                "alert evaluation failed for cluster %s",
                run.cluster_id,
                exc_info=(type(outcome), outcome, outcome.__traceback__),
            )


def sample_cluster_exclusively(cluster_id: int) -> SamplingRun | None:
    """Samples the cluster unless another run of it holds the lock (then returns None). The lock expires
    by itself, so a killed worker cannot block sampling for longer than a few intervals."""
    cluster = Cluster.objects.select_related("organization").filter(pk=cluster_id).first()
    if cluster is None:
        return None
    client = history.lag_redis()
    lock = client.lock(
        f"lag:sampling:{cluster_id}",
        timeout=max(30, 4 * settings.LAG_SAMPLING_INTERVAL_SECONDS),
        blocking=False,
    )
    if not lock.acquire(blocking=False):
        logger.info("lag sampling of cluster %s skipped: the previous run is still going", cluster_id)
        return None
    try:
        return sample_cluster(cluster, client=client)
    finally:
        try:
            lock.release()
        except redis.exceptions.LockError:
            logger.warning("lag sampling of cluster %s outlived its lock", cluster_id)
