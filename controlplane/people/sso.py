"""What a single sign-on does here: find (or create) the person by the provider's issuer and subject, and
bring their organizations, teams and roles in line with the mapping rules — joins and leaves — at every
sign-in and every renewal. Every change is written to the audit log, in the organization it concerns.

A person is matched only by issuer and subject, never by e-mail: whoever controls an e-mail address at the
provider must not take over a local account that happens to share it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from controlplane.audit.choices import Result
from controlplane.audit.services import record_event
from controlplane.core.changes import Change
from controlplane.people.choices import IdentitySource
from controlplane.people.mapping import MappingRule, claim_values, matching_rules
from controlplane.people.models import Identity
from controlplane.people.oidc import OidcConfig, OidcError
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import ROLE_RANK
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team

logger = logging.getLogger(__name__)


@dataclass
class Wanted:
    """What the rules grant: organization id -> org admin, team id -> role."""

    organizations: dict[int, bool]
    teams: dict[int, str]


def _organization(reference: str) -> Organization | None:
    return Organization.objects.filter(Q(name=reference) | Q(slug=reference)).first()


def wanted_access(rules: list[MappingRule], claims: dict[str, Any]) -> Wanted:
    wanted = Wanted(organizations={}, teams={})
    for rule in matching_rules(rules, claims):
        organization = _organization(rule.organization)
        if organization is None:
            logger.warning(
                "Mapping rule for %r names an unknown organization %r", rule.value, rule.organization
            )
            continue
        wanted.organizations[organization.id] = (
            wanted.organizations.get(organization.id, False) or rule.org_admin
        )
        if not rule.team:
            continue
        team = Team.objects.filter(Q(name=rule.team) | Q(slug=rule.team), organization=organization).first()
        if team is None:
            logger.warning(
                "Mapping rule for %r names an unknown team %r in %s", rule.value, rule.team, organization
            )
            continue
        current = wanted.teams.get(team.id)
        if current is None or ROLE_RANK[rule.role] > ROLE_RANK[current]:
            wanted.teams[team.id] = rule.role
    return wanted


def _unique_username(preferred: str, subject: str) -> str:
    """The provider's username if free; a taken one is never reused (that would be someone else's account)."""
    user_model = get_user_model()
    base = (preferred or f"sso-{subject}")[:140]
    candidate, number = base, 1
    while user_model.objects.filter(username__iexact=candidate).exists():
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def _record(
    actor: Actor,
    action: str,
    user: Any,
    *,
    organization_id: int | None,
    team: Team | None = None,
    before: dict | None = None,
    after: dict | None = None,
) -> None:
    change = Change(
        action=action,
        resource_type="user",
        organization_id=organization_id,
        team_id=team.id if team is not None else None,
        team_name=team.name if team is not None else "",
        before=before,
        after=after,
    )
    change.on(user, name=user.get_username())
    record_event(actor=actor, change=change, result=Result.SUCCESS)


def _find_or_create(
    config: OidcConfig, claims: dict[str, Any], actor_address: str | None
) -> tuple[Any, bool]:
    identity = (
        Identity.objects.select_related("user")
        .filter(source=IdentitySource.OIDC, issuer=config.issuer, subject=claims["sub"])
        .first()
    )
    if identity is not None:
        return identity.user, False
    user_model = get_user_model()
    preferred = (claim_values(claims, config.username_claim) or [""])[0]
    email = (claim_values(claims, config.email_claim) or [""])[0]
    user = user_model(username=_unique_username(preferred, claims["sub"]), email=email[:254])
    user.set_unusable_password()  # the provider vouches for this person; no password is kept here
    user.save()
    Identity.objects.create(
        user=user, source=IdentitySource.OIDC, issuer=config.issuer, subject=claims["sub"]
    )
    _record(
        Actor(user=user, client_address=actor_address),
        "user.sso_create",
        user,
        organization_id=None,
        after={"username": user.username, "email": user.email, "issuer": config.issuer},
    )
    return user, True


def _sync_organizations(actor: Actor, user: Any, wanted: Wanted, manage_manual: bool) -> None:
    current = {
        membership.organization_id: membership for membership in OrgMembership.objects.filter(user=user)
    }
    for organization_id, is_admin in wanted.organizations.items():
        membership = current.get(organization_id)
        if membership is None:
            OrgMembership.objects.create(
                user=user, organization_id=organization_id, is_org_admin=is_admin, from_idp=True
            )
            _record(
                actor,
                "user.sso_join_organization",
                user,
                organization_id=organization_id,
                after={"is_org_admin": is_admin},
            )
        elif (membership.from_idp or manage_manual) and membership.is_org_admin != is_admin:
            before = {"is_org_admin": membership.is_org_admin}
            membership.is_org_admin, membership.from_idp = is_admin, True
            membership.save(update_fields=["is_org_admin", "from_idp"])
            _record(
                actor,
                "user.sso_change_organization_role",
                user,
                organization_id=organization_id,
                before=before,
                after={"is_org_admin": is_admin},
            )
    for organization_id, membership in current.items():
        if organization_id not in wanted.organizations and (membership.from_idp or manage_manual):
            membership.delete()
            _record(
                actor,
                "user.sso_leave_organization",
                user,
                organization_id=organization_id,
                before={"is_org_admin": membership.is_org_admin},
            )


def _sync_teams(actor: Actor, user: Any, wanted: Wanted, manage_manual: bool) -> None:
    current = {
        membership.team_id: membership
        for membership in Membership.objects.filter(user=user).select_related("team")
    }
    teams = Team.objects.in_bulk(list(wanted.teams))
    for team_id, role in wanted.teams.items():
        team = teams[team_id]
        membership = current.get(team_id)
        if membership is None:
            Membership.objects.create(user=user, team=team, role=role, from_idp=True)
            _record(
                actor,
                "user.sso_join_team",
                user,
                organization_id=team.organization_id,
                team=team,
                after={"role": role},
            )
        elif (membership.from_idp or manage_manual) and membership.role != role:
            before = {"role": membership.role}
            membership.role, membership.from_idp = role, True
            membership.save(update_fields=["role", "from_idp"])
            _record(
                actor,
                "user.sso_change_team_role",
                user,
                organization_id=team.organization_id,
                team=team,
                before=before,
                after={"role": role},
            )
    for team_id, membership in current.items():
        if team_id not in wanted.teams and (membership.from_idp or manage_manual):
            membership.delete()
            _record(
                actor,
                "user.sso_leave_team",
                user,
                organization_id=membership.team.organization_id,
                team=membership.team,
                before={"role": membership.role},
            )


def sign_in(config: OidcConfig, claims: dict[str, Any], *, client_address: str | None = None) -> Any:
    """The person the verified claims are about, created on their first sign-in, with access as the
    mapping rules give it now. Raises OidcError for a deactivated person (nothing is changed then)."""
    with transaction.atomic():
        user, _created = _find_or_create(config, claims, client_address)
        if not user.is_active:
            raise OidcError("Your account is deactivated here; ask an administrator.")
        actor = Actor(user=user, client_address=client_address)
        wanted = wanted_access(settings.OIDC_MAPPING_RULES, claims)
        manage_manual = settings.OIDC_MANAGE_MANUAL_MEMBERSHIPS
        _sync_teams(actor, user, wanted, manage_manual)
        _sync_organizations(actor, user, wanted, manage_manual)
        Identity.objects.filter(user=user).update(
            idp_groups=claim_values(claims, config.groups_claim)[:500], last_sso_login_at=timezone.now()
        )
    return user
