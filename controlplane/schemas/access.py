"""Who may read and write which subjects of a cluster's registry.

A subject belongs to the team whose topic or subject prefix it starts with: `<topic>-key`, `<topic>-value`,
`<topic>-<record name>` start with the topic, and record-name subjects start with a subject prefix the team
owns. Any role in the owning team reads; developers and team admins write (an API key's role caps this, so a
viewer key is read-only). Organization admins read and write every subject of their organization's clusters
and alone change the registry-wide config and mode.
"""

from __future__ import annotations

from dataclasses import dataclass

from controlplane.clusters.choices import ClusterStatus
from controlplane.clusters.models import Cluster
from controlplane.tenancy.access import Actor, org_roles, team_roles
from controlplane.tenancy.choices import ROLE_RANK, PrefixResourceType, TeamRole
from controlplane.tenancy.models import Team, TeamPrefix


@dataclass(frozen=True)
class TeamGrant:
    prefixes: tuple[str, ...]
    role: str


@dataclass(frozen=True)
class RegistryAccess:
    """What one actor may do in one cluster's registry, loaded once (a handful of queries)."""

    organization_id: int
    # The actor's role as an organization admin (capped by its key's role), if it is one.
    org_role: str | None
    grants: tuple[TeamGrant, ...]

    def role_for(self, subject: str) -> str | None:
        roles = [grant.role for grant in self.grants if any(subject.startswith(p) for p in grant.prefixes)]
        if self.org_role is not None:
            roles.append(self.org_role)
        return max(roles, key=ROLE_RANK.__getitem__) if roles else None

    def can_read(self, subject: str) -> bool:
        return self.role_for(subject) is not None

    def can_write(self, subject: str) -> bool:
        role = self.role_for(subject)
        return role is not None and ROLE_RANK[role] >= ROLE_RANK[TeamRole.DEVELOPER]

    def can_administer(self) -> bool:
        return self.org_role == TeamRole.TEAM_ADMIN


class UnknownCluster(Exception):
    pass


def cluster_organization_id(cluster_id: int) -> int:
    """The organization owning the (live) cluster."""
    organization_id = (
        Cluster.objects.filter(pk=cluster_id)
        .exclude(status=ClusterStatus.DELETED)
        .values_list("organization_id", flat=True)
        .first()
    )
    if organization_id is None:
        raise UnknownCluster(cluster_id)
    return organization_id


def load_access(actor: Actor, cluster_id: int) -> RegistryAccess:
    """Raises UnknownCluster for a cluster that does not exist (or was deleted)."""
    organization_id = cluster_organization_id(cluster_id)
    admin_orgs = org_roles(actor)
    org_role = admin_orgs.get(organization_id)
    roles = team_roles(actor)
    teams = Team.objects.filter(id__in=list(roles), organization_id=organization_id)
    team_ids = list(teams.values_list("id", flat=True))
    prefixes: dict[int, list[str]] = {team_id: [] for team_id in team_ids}
    rows = TeamPrefix.objects.filter(
        team_id__in=team_ids, resource_type__in=[PrefixResourceType.TOPIC, PrefixResourceType.SUBJECT]
    ).values_list("team_id", "prefix")
    for team_id, prefix in rows:
        prefixes[team_id].append(prefix)
    grants = tuple(
        TeamGrant(prefixes=tuple(prefixes[team_id]), role=roles[team_id])
        for team_id in team_ids
        if prefixes[team_id]
    )
    return RegistryAccess(organization_id=organization_id, org_role=org_role, grants=grants)
