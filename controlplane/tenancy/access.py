"""Who is acting, and what they may see and change.

People act with their team roles; org admins act as team admins of every team in their organization
(Django superusers of every organization). An API key acts for its owner — a person (a personal key) or
a service account (inside the account's team) — and its role caps what that owner may do through it,
so a "viewer" key is read-only whoever owns it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from django.db.models import Q

from controlplane.core.errors import Forbidden
from controlplane.tenancy.choices import ROLE_RANK, TeamRole
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team


class ActingKey(Protocol):
    """What access rules read of an API key (`controlplane.accounts.models.ApiKey`: the accounts app stands on
    this one, so it is named by its shape here)."""

    key_id: str
    role: str
    service_account: Any  # the key's service account, None for a personal key


@dataclass(frozen=True)
class Actor:
    """The caller of a service function, as the audit log records it."""

    user: Any | None = None  # a Django user: the person, or the owner of a personal key
    api_key: ActingKey | None = None
    client_address: str | None = None
    is_system: bool = False  # management commands and bootstrapping, never a request
    # The person called with their identity provider's access token (a script), not a console session.
    via_access_token: bool = False

    @classmethod
    def system(cls) -> Actor:
        return cls(is_system=True)

    @property
    def via(self) -> str:
        if self.is_system:
            return "system"
        if self.api_key is not None:
            return "api_key"
        return "access_token" if self.via_access_token else "session"

    @property
    def service_account(self) -> Any:
        return self.api_key.service_account if self.api_key is not None else None

    @property
    def key_role(self) -> str | None:
        return self.api_key.role if self.api_key is not None else None

    @property
    def name(self) -> str:
        if self.is_system:
            return "system"
        if self.service_account is not None:
            return f"service-account:{self.service_account.name}"
        return self.user.get_username() if self.user is not None else "anonymous"


@runtime_checkable
class Credentials(Protocol):
    """What an API authentication class leaves in `request.auth` when it knows how its caller acts (an API
    key, an identity provider's access token). The classes live with what they check, in the apps above this
    one (accounts, people): the scoped API builds the Actor through this, without importing them."""

    def actor(self, user: Any, client_address: str | None) -> Actor:
        """The Actor of a request authenticated as `user` (request.user) from `client_address`."""
        ...


def _capped(role: str, cap: str | None) -> str:
    return role if cap is None or ROLE_RANK[role] <= ROLE_RANK[cap] else cap


def _highest(*roles: str | None) -> str | None:
    present = [role for role in roles if role is not None]
    return max(present, key=ROLE_RANK.__getitem__) if present else None


def org_roles(actor: Actor) -> dict[int, str]:
    """Organizations the actor administers, with the role it may act with there."""
    if actor.is_system:
        return dict.fromkeys(Organization.objects.values_list("id", flat=True), TeamRole.TEAM_ADMIN)
    if actor.service_account is not None or actor.user is None:
        return {}
    role = _capped(TeamRole.TEAM_ADMIN, actor.key_role)
    if actor.user.is_superuser:
        org_ids = Organization.objects.values_list("id", flat=True)
    else:
        org_ids = OrgMembership.objects.filter(user=actor.user, is_org_admin=True).values_list(
            "organization_id", flat=True
        )
    return dict.fromkeys(org_ids, role)


def team_roles(actor: Actor) -> dict[int, str]:
    """Teams the actor belongs to directly (or through its service account), with its role there."""
    if actor.service_account is not None:
        return {actor.service_account.team_id: actor.key_role}
    if actor.user is None:
        return {}
    memberships = Membership.objects.filter(user=actor.user).values_list("team_id", "role")
    return {team_id: _capped(role, actor.key_role) for team_id, role in memberships}


def role_in_team(actor: Actor, team: Team) -> str | None:
    return _highest(org_roles(actor).get(team.organization_id), team_roles(actor).get(team.id))


def visible_teams_q(actor: Actor, path: str = "") -> Q:
    """A filter for rows belonging to teams the actor may see; `path` leads from the row to its team."""
    prefix = f"{path}__" if path else ""
    return Q(**{f"{prefix}organization_id__in": list(org_roles(actor))}) | Q(
        **{f"{prefix}id__in": list(team_roles(actor))}
    )


def visible_organization_ids(actor: Actor) -> set[int]:
    org_ids = set(org_roles(actor))
    org_ids.update(
        Team.objects.filter(id__in=list(team_roles(actor))).values_list("organization_id", flat=True)
    )
    if actor.user is not None and actor.service_account is None:
        org_ids.update(
            OrgMembership.objects.filter(user=actor.user).values_list("organization_id", flat=True)
        )
    return org_ids


def administered_team_ids(actor: Actor) -> set[int]:
    """Teams whose audit trail the actor may read: those it administers as a team admin."""
    return {team_id for team_id, role in team_roles(actor).items() if role == TeamRole.TEAM_ADMIN}


def require_team_role(actor: Actor, team: Team, minimum: str) -> str:
    role = role_in_team(actor, team)
    if role is None or ROLE_RANK[role] < ROLE_RANK[minimum]:
        # An outsider learns neither the team's name nor that it exists (a principal, prefix or topic
        # named in the request may belong to any team): the team is named only to its own members.
        where = f"team {team.name}" if role is not None else "the team that owns it"
        raise Forbidden(
            f"This needs the {TeamRole(minimum).label.lower()} role in {where}.",
            details={"required_role": minimum, "your_role": role},
        )
    return role


def require_org_admin(actor: Actor, organization: Organization) -> None:
    if org_roles(actor).get(organization.id) != TeamRole.TEAM_ADMIN:
        named = (
            organization.name if organization.id in visible_organization_ids(actor) else "the organization"
        )
        raise Forbidden(f"Only admins of {named} may do this.")


def require_role_within(actor_role: str, requested_role: str) -> None:
    """Nobody hands out more than they have: a developer cannot mint a team-admin key."""
    if ROLE_RANK[requested_role] > ROLE_RANK[actor_role]:
        raise Forbidden(
            "You cannot grant a role above your own.",
            details={"requested_role": requested_role, "your_role": actor_role},
        )
