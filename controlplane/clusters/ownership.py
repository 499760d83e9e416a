"""Which team owns a cluster resource, and which rows a caller may see.

Resources found on a cluster belong to the team whose prefix their name starts with (the longest
prefix wins); rows without a team are unmanaged and only org admins see them.
"""

from __future__ import annotations

from django.db.models import Q

from controlplane.clusters.models import Cluster
from controlplane.core.errors import Forbidden
from controlplane.tenancy.access import Actor, org_roles, require_org_admin, visible_teams_q
from controlplane.tenancy.models import Team, TeamPrefix


def prefix_table(organization_id: int, resource_type: str) -> list[tuple[str, int]]:
    """(prefix, team id), longest first, for matching many names without a query each."""
    rows = TeamPrefix.objects.filter(organization_id=organization_id, resource_type=resource_type)
    return sorted(((row.prefix, row.team_id) for row in rows), key=lambda item: -len(item[0]))


def owner_in(table: list[tuple[str, int]], name: str) -> int | None:
    return next((team_id for prefix, team_id in table if name.startswith(prefix)), None)


def visible_rows_q(actor: Actor) -> Q:
    """Rows of teams the actor may see, plus unmanaged rows (no team) of clusters in organizations it
    administers."""
    return visible_teams_q(actor, "team") | Q(
        team__isnull=True, cluster__organization_id__in=list(org_roles(actor))
    )


def require_same_organization(cluster: Cluster, team: Team) -> None:
    if cluster.organization_id != team.organization_id:
        raise Forbidden("The cluster belongs to another organization.", code="other_organization")


def require_cluster_admin(actor: Actor, cluster: Cluster) -> None:
    require_org_admin(actor, cluster.organization)
