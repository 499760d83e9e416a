"""A cluster's partition budget: partition replicas per broker (4,000 by default, Kafka's rule of thumb; org
admins set it per cluster) times its brokers: the brokers the last health check listed, or the brokers it was
provisioned with, whichever is more. Every topic the control plane knows on the cluster counts, managed or
not, at its observed size when known.

Topics are reached through the cluster's reverse relation, so the clusters app does not import the topics app
(which sits above it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from django.db.models import F, Sum
from django.db.models.functions import Coalesce

from controlplane.clusters.models import Cluster
from controlplane.tenancy.guardrails import DEFAULT_PARTITION_REPLICAS_PER_BROKER


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


def partition_budget(cluster: Cluster, *, exclude_topic_id: int | None = None) -> PartitionBudget:
    """The budget and its use, leaving out topic `exclude_topic_id` (one about to be resized)."""
    topics = cluster.topics.all()
    if exclude_topic_id is not None:
        topics = topics.exclude(pk=exclude_topic_id)
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
