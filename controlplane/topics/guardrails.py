"""The guardrails that need the database: a cluster's partition budget and a team's rate of changes.

A cluster's budget is partition replicas per broker (4,000 by default, Kafka's rule of thumb; org admins
set it per cluster) times its brokers: the brokers the last health check listed, or the brokers it was
provisioned with, whichever is more. Every topic the control plane knows on the cluster counts, managed or
not, at its observed size when known.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import timedelta

from django.db.models import F, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from controlplane.audit.choices import Result
from controlplane.audit.models import AuditEvent
from controlplane.clusters.choices import ACTIVE_OPERATION_STATES
from controlplane.clusters.models import Cluster, Operation
from controlplane.core.api.errors import PolicyViolated, ServiceError
from controlplane.tenancy.guardrails import DEFAULT_PARTITION_REPLICAS_PER_BROKER, effective_limits
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


class RateLimited(ServiceError):
    status_code = 429
    default_code = "rate_limited"


@dataclass(frozen=True)
class PartitionBudget:
    per_broker: int
    brokers: int
    max_replicas: int
    used_replicas: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def cluster_brokers(cluster: Cluster) -> int:
    listed = len((cluster.health or {}).get("broker_ids") or [])
    return max(listed, cluster.broker_count, 1)


def partition_budget(cluster: Cluster, *, exclude: Topic | None = None) -> PartitionBudget:
    topics = Topic.objects.filter(cluster=cluster)
    if exclude is not None:
        topics = topics.exclude(pk=exclude.pk)
    used = topics.aggregate(
        replicas=Sum(
            Coalesce(F("observed_partitions"), F("partitions"))
            * Coalesce(F("observed_replication_factor"), F("replication_factor"))
        )
    )["replicas"]
    per_broker = cluster.partition_replicas_per_broker or DEFAULT_PARTITION_REPLICAS_PER_BROKER
    brokers = cluster_brokers(cluster)
    return PartitionBudget(
        per_broker=per_broker, brokers=brokers, max_replicas=per_broker * brokers, used_replicas=used or 0
    )


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
    budget = partition_budget(cluster, exclude=exclude)
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


def check_change_rate(team: Team) -> None:
    """A team's cluster-changing requests in the last minute: those recorded as done or of unknown outcome
    in the audit log, and changes still being confirmed (not in the log yet). Refusals do not count, so
    being refused for the rate never extends it."""
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
    recent = recorded.count() + confirming.count()
    if recent >= allowed:
        raise RateLimited(
            f"Team {team.name} made {recent} cluster changes in the last minute; its limit is {allowed} per "
            "minute. Retry shortly, or ask an org admin to raise the limit.",
            details={"limit_per_minute": allowed, "retry_after_seconds": int(RATE_WINDOW.total_seconds())},
        )
