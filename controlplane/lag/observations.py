"""What one lag-sampling run observed, in the shape alert evaluation consumes.

The sampler (controlplane.lag) builds these once per run per cluster and hands them to
``controlplane.alerts.evaluation.evaluate_alerts``; alerting never talks to a cluster itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import models


class Health(models.TextChoices):
    """A partition's (and, by its worst partition, a group's) health; ordered from best to worst."""

    OK = "OK", "OK"
    LAGGING = "LAGGING", "Lagging"
    NO_COMMIT = "NO_COMMIT", "No commit"
    REWIND = "REWIND", "Rewind"
    STALLED = "STALLED", "Stalled"
    STOPPED = "STOPPED", "Stopped"
    DATA_LOSS = "DATA_LOSS", "Data loss"


# Worst wins when a group takes its partitions' statuses.
HEALTH_SEVERITY: dict[str, int] = {status: rank for rank, status in enumerate(Health.values)}


def worst_health(statuses: list[str]) -> str:
    return max(statuses, key=HEALTH_SEVERITY.__getitem__, default=Health.OK)


@dataclass(frozen=True)
class PartitionObservation:
    topic: str
    partition: int
    committed_offset: int | None  # None: the group never committed here
    log_start_offset: int
    log_end_offset: int
    lag_messages: int
    lag_seconds: float | None  # None: unknown (no timestamp and no history to interpolate on)
    lag_seconds_is_lower_bound: bool
    consume_rate: float | None  # records/s over the evaluation window
    produce_rate: float | None
    time_to_catch_up_seconds: float | None  # None: not catching up (or nothing to catch up: 0.0)
    status: str  # a Health value
    reason: str  # human sentence: why this status


@dataclass(frozen=True)
class GroupObservation:
    cluster_id: int
    group_id: int  # controlplane.groups.models.ConsumerGroup primary key
    group: str  # the group's name on the cluster
    team_id: int | None
    status: str  # worst partition's Health
    reason: str
    member_count: int
    lag_messages: int  # sum over partitions
    lag_seconds: float | None  # max over partitions
    time_to_catch_up_seconds: float | None  # max over partitions
    partitions: tuple[PartitionObservation, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class SamplingRun:
    cluster_id: int
    observed_at: datetime
    groups: tuple[GroupObservation, ...]
