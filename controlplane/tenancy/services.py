"""Every change to tenancy goes through these functions: they check the actor's rights, write, and audit."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.utils.text import slugify

from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import Conflict, Forbidden, ServiceError
from controlplane.tenancy.access import (
    Actor,
    require_org_admin,
    require_role_within,
    require_team_role,
)
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.guardrails import LIMIT_FIELDS
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team, TeamPolicy, TeamPrefix
from controlplane.tenancy.policy import PolicyViolation, evaluate_topic_request
from controlplane.tenancy.validators import find_overlap, validate_display_name, validate_prefix

POLICY_FIELDS = ("naming_pattern", *LIMIT_FIELDS, "allowed_topic_configs")


def snapshot_team(team: Team) -> dict[str, Any]:
    return {"name": team.name, "slug": team.slug, "description": team.description}


def snapshot_membership(membership: Membership) -> dict[str, Any]:
    return {"user": membership.user.get_username(), "team": membership.team.name, "role": membership.role}


def snapshot_org_membership(membership: OrgMembership) -> dict[str, Any]:
    return {"user": membership.user.get_username(), "is_org_admin": membership.is_org_admin}


def snapshot_prefix(team_prefix: TeamPrefix) -> dict[str, Any]:
    return {
        "team": team_prefix.team.name,
        "resource_type": team_prefix.resource_type,
        "prefix": team_prefix.prefix,
    }


def snapshot_policy(policy: TeamPolicy) -> dict[str, Any]:
    return {name: getattr(policy, name) for name in POLICY_FIELDS}


def _team_change(action: str, resource_type: str, team: Team, **fields: Any) -> Change:
    return Change(
        action=action,
        resource_type=resource_type,
        organization_id=team.organization_id,
        team_id=team.id,
        team_name=team.name,
        **fields,
    )


def _existing_org_membership_change(action: str, membership: OrgMembership) -> Change:
    change = Change(
        action=action,
        resource_type="org_membership",
        organization_id=membership.organization_id,
        before=snapshot_org_membership(membership),
    )
    change.on(membership, name=membership.user.get_username())
    return change


def require_platform_admin(actor: Actor) -> None:
    """Organizations are the platform's tenants: only a superuser signed in with a password (not through an API
    key, which is scoped to teams) or the system creates one."""
    if not (
        actor.is_system or (actor.user is not None and actor.user.is_superuser and actor.api_key is None)
    ):
        raise Forbidden("Only platform administrators create organizations.")


def _validated_name(name: str, kind: str) -> None:
    try:
        validate_display_name(name, kind)
    except ValidationError as error:
        raise ServiceError(error.messages[0], code="invalid_name") from error


def create_organization(
    *, actor: Actor, name: str, slug: str = "", first_admin: Any | None = None
) -> Organization:
    change = Change(action="organization.create", resource_type="organization", resource_name=name)
    with audited_change(actor=actor, change=change):
        require_platform_admin(actor)
        _validated_name(name, "organization")
        slug = slug or slugify(name)
        if Organization.objects.filter(name=name).exists() or Organization.objects.filter(slug=slug).exists():
            raise Conflict(f"An organization named {name!r} already exists.", code="duplicate")
        organization = Organization.objects.create(name=name, slug=slug)
        if first_admin is not None:  # the platform admin who made it manages it, and sees it
            OrgMembership.objects.create(user=first_admin, organization=organization, is_org_admin=True)
        change.on(organization)
        change.organization_id = organization.id
        change.after = {"name": name, "slug": slug}
    return organization


def add_org_member(
    *, actor: Actor, organization: Organization, user: Any, is_org_admin: bool
) -> OrgMembership:
    change = Change(
        action="org_membership.create", resource_type="org_membership", organization_id=organization.id
    )
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, organization)
        if OrgMembership.objects.filter(organization=organization, user=user).exists():
            raise Conflict(f"{user.get_username()} already belongs to {organization.name}.", code="duplicate")
        membership = OrgMembership.objects.create(
            organization=organization, user=user, is_org_admin=is_org_admin
        )
        change.on(membership, name=user.get_username())
        change.after = snapshot_org_membership(membership)
    return membership


def update_org_member(*, actor: Actor, membership: OrgMembership, is_org_admin: bool) -> OrgMembership:
    change = _existing_org_membership_change("org_membership.update", membership)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, membership.organization)
        membership.is_org_admin = is_org_admin
        membership.save(update_fields=["is_org_admin"])
        change.after = snapshot_org_membership(membership)
    return membership


def remove_org_member(*, actor: Actor, membership: OrgMembership) -> None:
    """Leaving an organization also ends every team membership in it."""
    change = _existing_org_membership_change("org_membership.delete", membership)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, membership.organization)
        Membership.objects.filter(user=membership.user, team__organization=membership.organization).delete()
        membership.delete()


def create_team(
    *, actor: Actor, organization: Organization, name: str, slug: str = "", description: str = ""
) -> Team:
    change = Change(
        action="team.create", resource_type="team", organization_id=organization.id, resource_name=name
    )
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, organization)
        _validated_name(name, "team")
        slug = slug or slugify(name)
        if not slug:
            raise ServiceError(
                "The name needs at least one letter or digit for its slug.", code="invalid_name"
            )
        teams = Team.objects.filter(organization=organization)
        if teams.filter(name=name).exists() or teams.filter(slug=slug).exists():
            raise Conflict(f"Team {name!r} already exists in {organization.name}.", code="duplicate")
        team = Team.objects.create(organization=organization, name=name, slug=slug, description=description)
        TeamPolicy.objects.create(team=team)
        change.on(team)
        change.team_id, change.team_name = team.id, team.name
        change.after = snapshot_team(team)
    return team


def update_team(*, actor: Actor, team: Team, name: str | None = None, description: str | None = None) -> Team:
    change = _team_change("team.update", "team", team, before=snapshot_team(team))
    change.on(team)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, team, TeamRole.TEAM_ADMIN)
        if name is not None and name != team.name:
            _validated_name(name, "team")
            if Team.objects.filter(organization_id=team.organization_id, name=name).exists():
                raise Conflict(f"Team {name!r} already exists.", code="duplicate")
            team.name = name
        if description is not None:
            team.description = description
        team.save(update_fields=["name", "description"])
        change.after = snapshot_team(team)
    return team


def delete_team(*, actor: Actor, team: Team) -> None:
    change = _team_change("team.delete", "team", team, before=snapshot_team(team))
    change.on(team)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, team.organization)
        # Service accounts may hold credentials and ACLs on clusters; they are removed deliberately first.
        accounts = list(team.service_accounts.values_list("name", flat=True))
        if accounts:
            raise Conflict(
                "Delete the team's service accounts first.",
                code="team_not_empty",
                details={"service_accounts": accounts},
            )
        try:
            with transaction.atomic():
                team.delete()
        except ProtectedError as error:
            # Topics, ACL bindings, quotas and job runs live on clusters or in history: never dropped silently.
            kinds = sorted({str(row._meta.verbose_name_plural) for row in error.protected_objects})
            raise Conflict(
                f"The team still owns {', '.join(kinds)}: delete them or hand them to another team first.",
                code="team_not_empty",
                details={"owned": kinds},
            ) from error


def add_member(*, actor: Actor, team: Team, user: Any, role: str) -> Membership:
    change = _team_change("membership.create", "membership", team, resource_name=user.get_username())
    with audited_change(actor=actor, change=change):
        actor_role = require_team_role(actor, team, TeamRole.TEAM_ADMIN)
        require_role_within(actor_role, role)
        if Membership.objects.filter(team=team, user=user).exists():
            raise Conflict(f"{user.get_username()} is already in team {team.name}.", code="duplicate")
        OrgMembership.objects.get_or_create(organization_id=team.organization_id, user=user)
        membership = Membership.objects.create(team=team, user=user, role=role)
        change.on(membership, name=user.get_username())
        change.after = snapshot_membership(membership)
    return membership


def change_member_role(*, actor: Actor, membership: Membership, role: str) -> Membership:
    change = _team_change(
        "membership.update", "membership", membership.team, before=snapshot_membership(membership)
    )
    change.on(membership, name=membership.user.get_username())
    with audited_change(actor=actor, change=change):
        actor_role = require_team_role(actor, membership.team, TeamRole.TEAM_ADMIN)
        require_role_within(actor_role, role)
        membership.role = role
        membership.save(update_fields=["role"])
        change.after = snapshot_membership(membership)
    return membership


def remove_member(*, actor: Actor, membership: Membership) -> None:
    change = _team_change(
        "membership.delete", "membership", membership.team, before=snapshot_membership(membership)
    )
    change.on(membership, name=membership.user.get_username())
    with audited_change(actor=actor, change=change):
        require_team_role(actor, membership.team, TeamRole.TEAM_ADMIN)
        membership.delete()


def add_prefix(*, actor: Actor, team: Team, resource_type: str, prefix: str) -> TeamPrefix:
    """Prefixes are handed out by org admins, so a team cannot claim another team's namespace."""
    change = _team_change("prefix.create", "prefix", team, resource_name=f"{resource_type}:{prefix}")
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, team.organization)
        if resource_type not in PrefixResourceType.values:
            raise ServiceError(f"Unknown resource type {resource_type!r}.", code="invalid_prefix")
        try:
            validate_prefix(resource_type, prefix)
        except ValidationError as error:
            raise ServiceError(error.messages[0], code="invalid_prefix") from error
        # Lock the organization row so two concurrent requests cannot both claim overlapping prefixes.
        Organization.objects.select_for_update().get(pk=team.organization_id)
        existing = TeamPrefix.objects.filter(
            organization_id=team.organization_id, resource_type=resource_type
        ).select_related("team")
        if existing.filter(team=team, prefix=prefix).exists():
            raise Conflict(f"Team {team.name} already owns {prefix!r}.", code="duplicate")
        others = {row.prefix: row.team.name for row in existing if row.team_id != team.id}
        clash = find_overlap(prefix, list(others))
        if clash is not None:
            raise Conflict(
                f"{prefix!r} overlaps {clash!r}, owned by team {others[clash]}.",
                code="prefix_overlap",
                details={"prefix": clash, "team": others[clash]},
            )
        team_prefix = TeamPrefix.objects.create(
            organization_id=team.organization_id, team=team, resource_type=resource_type, prefix=prefix
        )
        change.on(team_prefix)
        change.after = snapshot_prefix(team_prefix)
    return team_prefix


def remove_prefix(*, actor: Actor, team_prefix: TeamPrefix) -> None:
    change = _team_change("prefix.delete", "prefix", team_prefix.team, before=snapshot_prefix(team_prefix))
    change.on(team_prefix)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, team_prefix.team.organization)
        team_prefix.delete()


def update_policy(*, actor: Actor, policy: TeamPolicy, changes: dict[str, Any]) -> TeamPolicy:
    """Policies bind the team, so only org admins set them."""
    change = _team_change("policy.update", "policy", policy.team, before=snapshot_policy(policy))
    change.on(policy, name=policy.team.name)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, policy.team.organization)
        unknown = set(changes) - set(POLICY_FIELDS)
        if unknown:
            raise ServiceError(f"Unknown policy fields: {', '.join(sorted(unknown))}.")
        for name, value in changes.items():
            setattr(policy, name, value)
        policy.save()
        change.after = snapshot_policy(policy)
    return policy


def update_organization_guardrails(
    *, actor: Actor, organization: Organization, changes: dict[str, int | None]
) -> Organization:
    """Org admins set limits for all the organization's teams (None: back to the default); a team's own
    policy still overrides them."""
    change = Change(
        action="organization.set_guardrails",
        resource_type="organization",
        organization_id=organization.id,
        before=dict(organization.guardrails),
    )
    change.on(organization)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, organization)
        merged = {**organization.guardrails, **changes}
        organization.guardrails = {k: v for k, v in merged.items() if k in LIMIT_FIELDS and v is not None}
        organization.save(update_fields=["guardrails"])
        change.after = dict(organization.guardrails)
    return organization


def check_topic_request(
    *,
    team: Team,
    name: str,
    partitions: int,
    configs: dict[str, str],
    existing_partitions: int = 0,
    replication_factor: int | None = None,
) -> list[PolicyViolation]:
    """What the topics service asks before creating or changing a topic for `team`."""
    with transaction.atomic():
        policy, _ = TeamPolicy.objects.get_or_create(team=team)
        prefixes = team.prefixes.filter(resource_type=PrefixResourceType.TOPIC).values_list(
            "prefix", flat=True
        )
        return evaluate_topic_request(
            policy=policy,
            topic_prefixes=list(prefixes),
            name=name,
            partitions=partitions,
            configs=configs,
            existing_partitions=existing_partitions,
            replication_factor=replication_factor,
            organization_limits=team.organization.guardrails,
        )
