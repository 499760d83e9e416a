"""Service accounts and API keys: every change goes through these functions, which check rights and audit."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.utils import timezone

from controlplane.accounts.keys import KeyToken, generate_token, hash_secret, parse_token, secret_matches
from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.accounts.validators import validate_service_account_name
from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import Conflict, Forbidden, ServiceError
from controlplane.tenancy.access import Actor, org_roles, require_role_within, require_team_role, team_roles
from controlplane.tenancy.choices import ROLE_RANK, TeamRole
from controlplane.tenancy.models import Team

MAX_ROTATION_OVERLAP = timedelta(days=30)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def snapshot_service_account(account: ServiceAccount) -> dict[str, Any]:
    return {
        "name": account.name,
        "team": account.team.name,
        "principal": account.principal,
        "description": account.description,
    }


def snapshot_api_key(api_key: ApiKey) -> dict[str, Any]:
    owner = api_key.service_account.principal if api_key.service_account_id else api_key.user.get_username()
    return {
        "key_id": api_key.key_id,
        "name": api_key.name,
        "role": api_key.role,
        "owner": owner,
        "expires_at": _iso(api_key.expires_at),
        "revoked_at": _iso(api_key.revoked_at),
        "overlap_until": _iso(api_key.overlap_until),
    }


def _account_change(action: str, team: Team, **fields: Any) -> Change:
    return Change(
        action=action,
        resource_type=fields.pop("resource_type", "service_account"),
        organization_id=team.organization_id,
        team_id=team.id,
        team_name=team.name,
        **fields,
    )


def _key_change(
    action: str, api_key: ApiKey | None, service_account: ServiceAccount | None, **fields: Any
) -> Change:
    if service_account is not None:
        change = _account_change(action, service_account.team, resource_type="api_key", **fields)
    else:
        change = Change(action=action, resource_type="api_key", **fields)
    if api_key is not None:
        change.on(api_key, name=api_key.key_id)
    return change


def check_service_account_create(*, actor: Actor, team: Team, name: str) -> None:
    """What `create_service_account` checks before writing."""
    require_team_role(actor, team, TeamRole.DEVELOPER)
    try:
        validate_service_account_name(name)
    except ValidationError as error:
        raise ServiceError(error.messages[0], code="invalid_name") from error
    if ServiceAccount.objects.filter(organization_id=team.organization_id, name=name).exists():
        raise Conflict(f"A service account named {name!r} already exists.", code="duplicate")


def create_service_account(*, actor: Actor, team: Team, name: str, description: str = "") -> ServiceAccount:
    change = _account_change("service_account.create", team, resource_name=name)
    with audited_change(actor=actor, change=change):
        check_service_account_create(actor=actor, team=team, name=name)
        account = ServiceAccount.objects.create(
            organization_id=team.organization_id, team=team, name=name, description=description
        )
        change.on(account)
        change.after = snapshot_service_account(account)
    return account


def update_service_account(
    *, actor: Actor, service_account: ServiceAccount, description: str
) -> ServiceAccount:
    change = _account_change(
        "service_account.update", service_account.team, before=snapshot_service_account(service_account)
    )
    change.on(service_account)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, service_account.team, TeamRole.DEVELOPER)
        service_account.description = description
        service_account.save(update_fields=["description"])
        change.after = snapshot_service_account(service_account)
    return service_account


def delete_service_account(*, actor: Actor, service_account: ServiceAccount) -> None:
    """Deleting an account ends its keys with it; only team admins may cut an application off."""
    change = _account_change(
        "service_account.delete", service_account.team, before=snapshot_service_account(service_account)
    )
    change.on(service_account)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, service_account.team, TeamRole.TEAM_ADMIN)
        service_account.delete()


def _require_key_control(
    actor: Actor, *, role: str, service_account: ServiceAccount | None, owner: Any
) -> None:
    """Service-account keys are managed by the team's developers and admins, personal keys by their owner;
    and nobody hands a key more than their own role."""
    if service_account is not None:
        actor_role = require_team_role(actor, service_account.team, TeamRole.DEVELOPER)
        require_role_within(actor_role, role)
        return
    if actor.is_system:
        return
    if actor.service_account is not None or actor.user is None or actor.user.pk != owner.pk:
        raise Forbidden("Only its owner manages a personal API key.")
    if actor.key_role is not None:
        if actor.key_role == TeamRole.VIEWER:
            raise Forbidden("A viewer key cannot change anything.")
        require_role_within(actor.key_role, role)


def _require_owner_holds(owner: Any, role: str) -> None:
    """A personal key never carries a role its owner lacks: at most the owner's highest role in any team
    (org admins act as team admins), whatever the key used for the request may do. Revoking is always
    allowed; creating and rotating (a new key with the same role) are not."""
    person = Actor(user=owner)
    highest = max(
        [*team_roles(person).values(), *org_roles(person).values()], key=ROLE_RANK.__getitem__, default=None
    )
    if highest is None:
        raise Forbidden("A personal API key needs a role in a team; you have none.")
    require_role_within(highest, role)


def create_api_key(
    *,
    actor: Actor,
    name: str,
    role: str,
    service_account: ServiceAccount | None = None,
    expires_at: datetime | None = None,
    owner_must_hold_role: bool = False,
) -> tuple[ApiKey, KeyToken]:
    """A key for `service_account`, or else a personal key for the acting person. The token is returned
    once and never stored. `owner_must_hold_role` (the API sets it) refuses a personal key whose role its
    owner does not hold in any team; fixtures and bootstrapping may mint keys before memberships exist."""
    owner = None if service_account is not None else actor.user
    change = _key_change("api_key.create", None, service_account, resource_name=name)
    with audited_change(actor=actor, change=change):
        if service_account is None and owner is None:
            raise Forbidden("A personal API key needs a person; give a service account instead.")
        _require_key_control(actor, role=role, service_account=service_account, owner=owner)
        if owner is not None and owner_must_hold_role:
            _require_owner_holds(owner, role)
        if expires_at is not None and expires_at <= timezone.now():
            raise ServiceError("The expiry time must be in the future.", code="invalid_expiry")
        token = generate_token()
        api_key = ApiKey.objects.create(
            key_id=token.key_id,
            secret_hash=hash_secret(token.secret),
            name=name,
            role=role,
            user=owner,
            service_account=service_account,
            created_by=actor.user,
            expires_at=expires_at,
        )
        change.on(api_key, name=api_key.key_id)
        change.after = snapshot_api_key(api_key)
    return api_key, token


def revoke_api_key(*, actor: Actor, api_key: ApiKey) -> ApiKey:
    change = _key_change("api_key.revoke", api_key, api_key.service_account, before=snapshot_api_key(api_key))
    with audited_change(actor=actor, change=change):
        _require_key_control(
            actor, role=api_key.role, service_account=api_key.service_account, owner=api_key.user
        )
        if api_key.revoked_at is not None:
            raise Conflict("The key is already revoked.", code="already_revoked")
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
        change.after = snapshot_api_key(api_key)
    return api_key


def rotate_api_key(
    *, actor: Actor, api_key: ApiKey, overlap: timedelta, owner_must_hold_role: bool = False
) -> tuple[ApiKey, KeyToken]:
    """A new key with the same owner, role and expiry; the old one keeps working for `overlap`."""
    change = _key_change("api_key.rotate", api_key, api_key.service_account, before=snapshot_api_key(api_key))
    with audited_change(actor=actor, change=change):
        _require_key_control(
            actor, role=api_key.role, service_account=api_key.service_account, owner=api_key.user
        )
        if api_key.user is not None and owner_must_hold_role:
            _require_owner_holds(api_key.user, api_key.role)
        if not api_key.is_usable:
            raise Conflict(f"A {api_key.status} key cannot be rotated.", code="not_rotatable")
        if api_key.overlap_until is not None:
            raise Conflict("The key was already rotated.", code="already_rotated")
        if overlap < timedelta(0) or overlap > MAX_ROTATION_OVERLAP:
            raise ServiceError("The overlap must be between 0 seconds and 30 days.", code="invalid_overlap")
        now = timezone.now()
        api_key.overlap_until = now + overlap
        api_key.save(update_fields=["overlap_until"])
        token = generate_token()
        replacement = ApiKey.objects.create(
            key_id=token.key_id,
            secret_hash=hash_secret(token.secret),
            name=api_key.name,
            role=api_key.role,
            user=api_key.user,
            service_account=api_key.service_account,
            created_by=actor.user,
            expires_at=api_key.expires_at,
            rotated_from=api_key,
        )
        change.after = {"old": snapshot_api_key(api_key), "new": snapshot_api_key(replacement)}
    return replacement, token


def authenticate_api_key(*, raw_token: str) -> ApiKey | None:
    """The usable key the token belongs to, or None. One indexed lookup by key id."""
    token = parse_token(raw_token)
    if token is None:
        return None
    api_key = (
        ApiKey.objects.select_related("user", "service_account__team").filter(key_id=token.key_id).first()
    )
    if api_key is None or not secret_matches(token.secret, api_key.secret_hash) or not api_key.is_usable:
        return None
    if api_key.user_id is not None and not api_key.user.is_active:
        return None
    _touch_last_used(api_key)
    return api_key


def _touch_last_used(api_key: ApiKey) -> None:
    """At most one write per key per interval, so a busy script does not turn every request into a write."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.API_KEY_LAST_USED_INTERVAL_SECONDS)
    if api_key.last_used_at is not None and api_key.last_used_at > stale_before:
        return
    never_or_stale = Q(last_used_at__isnull=True) | Q(last_used_at__lte=stale_before)
    ApiKey.objects.filter(never_or_stale, pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now
