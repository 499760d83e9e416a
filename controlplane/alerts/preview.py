"""Which consumer groups a lag rule would match now, and whether each would breach, from the latest
sampling run's rows (GroupLag): what the rule form shows before a rule is saved."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from controlplane.alerts.choices import LAG_METRICS
from controlplane.alerts.conditions import RuleSpec, breaches, subjects_of
from controlplane.lag.models import GroupLag
from controlplane.lag.observations import GroupObservation, PartitionObservation
from controlplane.tenancy.access import Actor, org_roles, require_org_admin, visible_teams_q
from controlplane.tenancy.models import Team

PREVIEW_LIMIT = 100


def _observation(row: GroupLag) -> GroupObservation:
    return GroupObservation(
        cluster_id=row.cluster_id,
        group_id=row.group_id,
        group=row.group.name,
        team_id=row.group.team_id,
        status=row.status,
        reason=row.reason,
        member_count=row.member_count,
        lag_messages=row.lag_messages,
        lag_seconds=row.lag_seconds,
        time_to_catch_up_seconds=row.time_to_catch_up_seconds,
        partitions=tuple(PartitionObservation(**partition) for partition in row.partitions),
    )


def preview_rule(*, actor: Actor, team: Team, values: dict[str, Any]) -> dict[str, Any]:
    """The groups (visible to the actor) the rule would match now, worst first, with whether each breaches
    now; `count` is the number of matches, `groups` at most PREVIEW_LIMIT of them."""
    if values.get("all_teams"):
        require_org_admin(actor, team.organization)
    metric = values.get("metric", "lag_messages")
    spec = RuleSpec(
        id=0, name="preview", team_id=team.id, cluster_id=getattr(values.get("cluster"), "pk", None),
        group_pattern=values.get("group_pattern") or "*", topic_pattern=values.get("topic_pattern") or "*",
        granularity=values.get("granularity", "group"), metric=metric, comparison=values.get("comparison", "gt"),
        threshold=values.get("threshold"), resolve_threshold=None, statuses=frozenset(values.get("statuses") or ()),
        for_seconds=0, renotify_interval_seconds=None, send_resolved=False, severity="info",
        all_teams=bool(values.get("all_teams")),
    )  # fmt: skip
    if metric not in LAG_METRICS:
        return {"count": 0, "groups": []}  # cluster-health rules match brokers and clusters, not groups
    visible = visible_teams_q(actor, "group__team") | Q(
        group__team__isnull=True, cluster__organization_id__in=list(org_roles(actor))
    )
    rows = (
        GroupLag.objects.filter(visible, cluster__organization_id=team.organization_id)
        .select_related("group", "group__team", "cluster")
        .order_by("-severity", "-lag_messages")
    )
    if spec.cluster_id is not None:
        rows = rows.filter(cluster_id=spec.cluster_id)
    if not spec.all_teams:
        rows = rows.filter(group__team=team)
    matches = []
    for row in rows.iterator(chunk_size=500):
        observation = _observation(row)
        if not spec.applies_to(observation):
            continue
        subjects = subjects_of(spec, observation)
        if not subjects:
            continue
        matches.append(
            {
                "group_id": row.group_id,
                "group": row.group.name,
                "cluster": row.cluster_id,
                "cluster_name": row.cluster.name,
                "team_name": row.group.team.name if row.group.team_id else None,
                "status": row.status,
                "lag_messages": row.lag_messages,
                "lag_seconds": row.lag_seconds,
                "breaches_now": any(breaches(spec, subject) for subject in subjects),
            }
        )
    return {"count": len(matches), "groups": matches[:PREVIEW_LIMIT]}
