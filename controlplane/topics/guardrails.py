"""The guardrails that need the database: a topic within its cluster's partition budget
(`controlplane/clusters/capacity.py`) and a team's rate of changes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import QuerySet
from django.utils import timezone

from controlplane.audit.choices import Result
from controlplane.audit.models import AuditEvent
from controlplane.clusters.capacity import cluster_brokers, partition_budget
from controlplane.clusters.choices import ACTIVE_OPERATION_STATES
from controlplane.clusters.models import Cluster, Operation
from controlplane.core.errors import PolicyViolated, RateLimited
from controlplane.tenancy.guardrails import effective_limits
from controlplane.tenancy.models import Team, TeamPolicy
from controlplane.topics.models import Topic

RATE_WINDOW = timedelta(minutes=1)
# Audit resource types whose changes reach a cluster, and actions among them that do not.
CLUSTER_CHANGING_RESOURCES = [
    "topic",
    "acl_binding",
    "access_grant",
    "client_quota",
    "scram_credential",
    "consumer_group",
]
NOT_CLUSTER_CHANGES = ["topic.adopt", "acl.adopt", "quota.adopt", "topic.produce_test_message"]


def check_cluster_capacity(
    cluster: Cluster, *, partitions: int, replication_factor: int, exclude: Topic | None = None
) -> None:
    """Refuses a topic of this size (or growing `exclude` to it) when the brokers cannot carry it."""
    listed = len((cluster.health or {}).get("broker_ids") or [])
    if listed and replication_factor > cluster_brokers(cluster):
        raise PolicyViolated(
            f"Replication factor {replication_factor} needs that many brokers; {cluster.name} has "
            f"{cluster_brokers(cluster)}.",
            code="not_enough_brokers",
            details={"brokers": cluster_brokers(cluster), "replication_factor": replication_factor},
        )
    wanted = partitions * replication_factor
    if exclude is not None and wanted <= _replicas_of(exclude):
        return  # not growing: a config change of a topic on a full cluster is fine
    budget = partition_budget(cluster, exclude_topic_id=None if exclude is None else exclude.pk)
    if budget.used_replicas + wanted > budget.max_replicas:
        raise PolicyViolated(
            f"{cluster.name} can carry {budget.max_replicas} partition replicas ({budget.per_broker} per broker "
            f"on {budget.brokers} brokers); {budget.used_replicas} are in use and this needs {wanted}.",
            code="cluster_partition_budget_exceeded",
            details={"budget": budget.as_dict(), "requested_replicas": wanted},
        )


def _replicas_of(topic: Topic) -> int:
    partitions = topic.observed_partitions or topic.partitions
    return partitions * (topic.observed_replication_factor or topic.replication_factor)


@dataclass(frozen=True)
class ChangeRoom:
    """A team's limit of cluster changes per minute and those it made in the last minute."""

    limit_per_minute: int
    recent: int

    @property
    def left(self) -> int:
        return max(self.limit_per_minute - self.recent, 0)


def _changes_in_window(team: Team) -> tuple[int, QuerySet[AuditEvent], QuerySet[Operation]]:
    """A team's limit, and its cluster-changing requests in the last minute: those recorded as done or of
    unknown outcome in the audit log, and changes still being confirmed (not in the log yet). Refusals do
    not count, so being refused for the rate never extends it."""
    policy = TeamPolicy.objects.filter(team=team).first()
    allowed = effective_limits(policy, team.organization.guardrails).admin_operations_per_minute
    since = timezone.now() - RATE_WINDOW
    recorded = AuditEvent.objects.filter(
        team_id=team.id,
        timestamp__gte=since,
        resource_type__in=CLUSTER_CHANGING_RESOURCES,
        result__in=[Result.SUCCESS, Result.UNKNOWN],
    ).exclude(action__in=NOT_CLUSTER_CHANGES)
    confirming = Operation.objects.filter(team=team, created_at__gte=since, state__in=ACTIVE_OPERATION_STATES)
    return allowed, recorded, confirming


def change_room(team: Team) -> ChangeRoom:
    """How many cluster changes the team may make now (a plan compares its own count with it)."""
    allowed, recorded, confirming = _changes_in_window(team)
    return ChangeRoom(limit_per_minute=allowed, recent=recorded.count() + confirming.count())


# Set while a plan checks its changes: the plan counts all of them against change_room() at once, which
# each change's own count (its simulation records nothing) could not do.
_rate_counted_by_plan: ContextVar[bool] = ContextVar("rate_counted_by_plan", default=False)


@contextmanager
def change_rate_counted_by_plan() -> Iterator[None]:
    """Within it check_change_rate passes: the caller (a plan) counts its changes as a whole."""
    token = _rate_counted_by_plan.set(True)
    try:
        yield
    finally:
        _rate_counted_by_plan.reset(token)


def check_change_rate(team: Team, *, batched: int = 0) -> None:
    """Refuses a cluster change once the team made its limit's worth in the last minute; `batched`: changes
    checked before this one to go in the same request, not recorded yet."""
    if _rate_counted_by_plan.get():
        return
    allowed, recorded, confirming = _changes_in_window(team)
    recent = recorded.count() + confirming.count() + batched
    if recent >= allowed:
        raise RateLimited(
            f"Team {team.name} made {recent} cluster changes in the last minute; its limit is {allowed} per "
            "minute. Retry shortly, or ask an org admin to raise the limit.",
            details={"limit_per_minute": allowed, "retry_after_seconds": int(RATE_WINDOW.total_seconds())},
        )
