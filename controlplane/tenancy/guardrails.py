"""Guardrails: the limits that keep one team from hurting the others on a shared cluster.

Every team has them whether or not anyone configured a policy. A limit comes from the team's policy if it
sets one, else from its organization's guardrails (`Organization.guardrails`, for all its teams), else from
the defaults below; org admins raise (or lower) limits at either level. The cluster adds its own budget of
partition replicas per broker (topics/guardrails.py), whoever asks.

Why these defaults (Kafka's own guidance, and what hurt in practice):
- 1,000 partitions per topic: a topic of 10,000 partitions (a typo, or a misunderstanding of what a
  partition costs) degraded a whole cluster; 1,000 covers any real throughput need of one topic.
- 3,000 partitions per team: about three quarters of a three-broker cluster's budget at replication
  factor 3, so one team cannot fill a shared cluster on its own.
- 4,000 partition replicas per broker: Kafka's rule of thumb for one broker (leaders, followers, open
  files and fetch sessions all grow with it); a cluster's budget is that times its brokers.
- replication factor at most 5: 3 is the norm; more copies multiply every write on the shared brokers.
- retention.ms at most 30 days, never infinite (-1) unless an org admin sets a limit: data kept forever
  fills the shared disks.
- segment.bytes 1 MiB to 1 GiB and segment.ms at least 10 minutes: tiny or frequent segments mean
  thousands of open files and index rolls per partition; Kafka's default segment is 1 GiB.
- 60 cluster-changing requests per team per minute: enough for any deployment script, not enough to
  keep a controller busy for everybody.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from controlplane.tenancy.models import TeamPolicy

DEFAULT_PARTITION_REPLICAS_PER_BROKER = 4_000


@dataclass(frozen=True)
class Limits:
    max_partitions_per_topic: int = 1_000
    max_total_partitions: int = 3_000
    max_replication_factor: int = 5
    max_retention_ms: int = 30 * 24 * 3600 * 1000
    min_segment_bytes: int = 1024 * 1024
    max_segment_bytes: int = 1024 * 1024 * 1024
    min_segment_ms: int = 10 * 60 * 1000
    admin_operations_per_minute: int = 60

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


DEFAULT_LIMITS = Limits()
LIMIT_FIELDS = tuple(DEFAULT_LIMITS.as_dict())


def effective_limits(
    policy: TeamPolicy | None, organization_limits: Mapping[str, int | None] | None = None
) -> Limits:
    """The team's limits: its policy's values where set, its organization's where not, else the defaults."""
    organization = {
        k: v for k, v in (organization_limits or {}).items() if k in LIMIT_FIELDS and v is not None
    }
    team = {
        name: getattr(policy, name)
        for name in LIMIT_FIELDS
        if policy is not None and getattr(policy, name, None) is not None
    }
    return Limits(**{**DEFAULT_LIMITS.as_dict(), **organization, **team})


def team_limits(policy: TeamPolicy) -> Limits:
    """`effective_limits` for a stored policy, with its organization's guardrails."""
    return effective_limits(policy, policy.team.organization.guardrails)
