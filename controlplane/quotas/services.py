"""Client quotas: a team sets them for its own service accounts (optionally per client id); defaults,
bare client ids and other principals are for org admins. Written with AlterClientQuotas, audited."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.clusters.outcomes import confirmed_change
from controlplane.clusters.ownership import require_cluster_admin, require_same_organization
from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import Conflict, Forbidden, ServiceError
from controlplane.kafka.quotas import alter_client_quota, describe_client_quotas
from controlplane.quotas.choices import QuotaKey, entity_key
from controlplane.quotas.models import ClientQuota
from controlplane.tenancy.access import Actor, org_roles, require_team_role, role_in_team
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team
from controlplane.topics.guardrails import check_change_rate


def snapshot_quota(quota: ClientQuota) -> dict[str, Any]:
    return {"entity": quota.entity, "values": quota.values, "managed": quota.managed}


def _change(action: str, cluster: Cluster, team: Team | None, **fields: Any) -> Change:
    return Change(
        action=action,
        resource_type="client_quota",
        organization_id=cluster.organization_id,
        team_id=team.id if team is not None else None,
        team_name=team.name if team is not None else "",
        **fields,
    )


def validate_entity(entity: Mapping[str, str | None]) -> dict[str, str | None]:
    if not entity or set(entity) - {"user", "client-id"}:
        raise ServiceError("A quota entity has a user, a client-id or both.", code="invalid_entity")
    if any(name == "" for name in entity.values()):
        raise ServiceError("Use null for a default entity, not an empty name.", code="invalid_entity")
    return dict(entity)


def validate_values(values: Mapping[str, float | None]) -> None:
    unknown = sorted(set(values) - set(QuotaKey.values))
    if unknown:
        raise ServiceError(f"Unknown quota key: {', '.join(unknown)}.", code="unknown_quota_key")
    for key, value in values.items():
        if value is not None and value <= 0:
            raise ServiceError(f"{key} must be positive.", code="invalid_quota_value")


def owning_team(cluster: Cluster, entity: Mapping[str, str | None]) -> Team | None:
    """The team of the service account a user entity names, if any."""
    user = entity.get("user")
    if not user:
        return None
    account = (
        ServiceAccount.objects.filter(organization_id=cluster.organization_id, name=user)
        .select_related("team")
        .first()
    )
    return account.team if account is not None else None


def _require_control(actor: Actor, cluster: Cluster, team: Team | None) -> None:
    if org_roles(actor).get(cluster.organization_id) == TeamRole.TEAM_ADMIN:
        return
    if team is None or role_in_team(actor, team) is None:
        # Another team's principal gets the answer an unowned one gets: who owns it is not the caller's to know.
        raise Forbidden(
            "Only org admins set default, client-id and other principals' quotas.", code="outside_team_scope"
        )
    require_same_organization(cluster, team)
    require_team_role(actor, team, TeamRole.DEVELOPER)


def _observed_as(cluster: Cluster, key: str, to_set: Mapping[str, float], to_remove: list[str]) -> bool:
    """Whether the cluster shows the entity's quota with these keys set and those removed."""
    entries = describe_client_quotas(connection_for(cluster))
    values = next((entry.values for entry in entries if entity_key(entry.entity) == key), {})
    return all(values.get(k) == v for k, v in to_set.items()) and not set(to_remove) & set(values)


def check_quota(
    *, actor: Actor, cluster: Cluster, entity: Mapping[str, str | None], values: Mapping[str, float | None]
) -> None:
    """What `set_quota` checks before the cluster is asked."""
    team = owning_team(cluster, validate_entity(entity))
    _require_control(actor, cluster, team)
    if team is not None:
        check_change_rate(team)
    validate_values(values)


def check_quota_delete(*, actor: Actor, quota: ClientQuota) -> None:
    """What `delete_quota` checks."""
    _require_control(actor, quota.cluster, quota.team)
    if quota.team is not None:
        check_change_rate(quota.team)


def set_quota(
    *, actor: Actor, cluster: Cluster, entity: Mapping[str, str | None], values: Mapping[str, float | None]
) -> ClientQuota:
    """Sets (or with None removes) quota keys for the entity; creates its row on first use."""
    entity = validate_entity(entity)
    key = entity_key(entity)
    team = owning_team(cluster, entity)
    existing = ClientQuota.objects.filter(cluster=cluster, entity_key=key).first()
    change = _change(
        "quota.set", cluster, team, resource_name=key, before=snapshot_quota(existing) if existing else None
    )
    with audited_change(actor=actor, change=change):
        check_quota(actor=actor, cluster=cluster, entity=entity, values=values)
        to_set = {k: float(v) for k, v in values.items() if v is not None}
        to_remove = [k for k, v in values.items() if v is None]
        with confirmed_change(lambda: _observed_as(cluster, key, to_set, to_remove)):
            alter_client_quota(
                connection_for(cluster), entity=entity, set_values=to_set, remove_keys=to_remove
            )
        quota = existing or ClientQuota(cluster=cluster, entity=entity, entity_key=key)
        merged = {**{k: v for k, v in quota.values.items() if k not in to_remove}, **to_set}
        quota.team, quota.managed, quota.values = team, True, merged
        quota.exists_on_cluster, quota.observed_values, quota.observed_at = (
            bool(merged),
            merged,
            timezone.now(),
        )
        quota.save()
        change.on(quota, name=key)
        change.after = snapshot_quota(quota)
    return quota


def delete_quota(*, actor: Actor, quota: ClientQuota) -> None:
    change = _change("quota.delete", quota.cluster, quota.team, before=snapshot_quota(quota))
    change.on(quota, name=quota.entity_key)
    with audited_change(actor=actor, change=change):
        check_quota_delete(actor=actor, quota=quota)
        keys = set(quota.values) | set(quota.observed_values)
        with confirmed_change(lambda: _observed_as(quota.cluster, quota.entity_key, {}, sorted(keys))):
            alter_client_quota(
                connection_for(quota.cluster), entity=quota.entity, set_values={}, remove_keys=sorted(keys)
            )
        quota.delete()


def adopt_quota(*, actor: Actor, quota: ClientQuota) -> ClientQuota:
    """An org admin makes an unmanaged quota managed (owned by the service account's team, if any)."""
    change = _change("quota.adopt", quota.cluster, quota.team, before=snapshot_quota(quota))
    change.on(quota, name=quota.entity_key)
    with audited_change(actor=actor, change=change):
        require_cluster_admin(actor, quota.cluster)
        if quota.managed:
            raise Conflict("The quota is already managed.", code="already_managed")
        quota.managed, quota.values = True, dict(quota.observed_values)
        quota.team = owning_team(quota.cluster, quota.entity)
        quota.save()
        change.after = snapshot_quota(quota)
    return quota
