"""Every change to people goes through these functions: they check the actor's rights, write, and audit.

Only org admins manage people, and only people of organizations they administer: an admin of one
organization cannot deactivate or reset someone who also belongs to another (that person's access there is
not theirs to end), and nobody but a platform administrator acts on a platform administrator.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import Conflict, Forbidden, ServiceError
from controlplane.people.choices import IdentitySource, LinkPurpose, PersonStatus
from controlplane.people.models import Identity, PasswordLink
from controlplane.tenancy.access import Actor, org_roles, require_org_admin, require_role_within
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team

logger = logging.getLogger(__name__)

# The console page that reads the token from the URL's fragment: a fragment never reaches a server, so the
# token stays out of access logs, proxies and Referer headers.
SET_PASSWORD_PATH = "/set-password"
INVALID_LINK_MESSAGE = (
    "This link is not valid: it has expired, was used already or was replaced by a newer one. "
    "Ask an administrator for a new link."
)
# Django's console backend would write the e-mail, link included, into the process's log.
_LOGGING_EMAIL_BACKENDS = {"django.core.mail.backends.console.EmailBackend"}


@dataclass(frozen=True)
class IssuedLink:
    """A link as it is shown once to the admin who made it; only its token's hash is kept."""

    url: str
    purpose: str
    expires_at: datetime
    emailed: bool


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def identity_source(user: Any) -> str:
    try:
        return user.identity.source
    except Identity.DoesNotExist:
        return IdentitySource.LOCAL


def open_link(user: Any) -> PasswordLink | None:
    """The person's link that still works, if any."""
    return (
        PasswordLink.objects.filter(
            user=user, used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
        )
        .order_by("-created_at")
        .first()
    )


def person_status(user: Any) -> str:
    if not user.is_active:
        return PersonStatus.DEACTIVATED
    if identity_source(user) == IdentitySource.LOCAL and not user.has_usable_password():
        return PersonStatus.INVITED
    return PersonStatus.ACTIVE


def snapshot_person(user: Any) -> dict[str, Any]:
    return {
        "username": user.get_username(),
        "email": user.email,
        "status": person_status(user),
        "source": identity_source(user),
    }


def _person_change(action: str, user: Any, organization_id: int | None, **fields: Any) -> Change:
    change = Change(action=action, resource_type="user", organization_id=organization_id, **fields)
    change.on(user, name=user.get_username())
    return change


def _home_organization_id(user: Any) -> int | None:
    """The organization a person's audit events are filed under: the first one they belong to."""
    return (
        OrgMembership.objects.filter(user=user)
        .order_by("organization_id")
        .values_list("organization_id", flat=True)
        .first()
    )


def require_people_admin(actor: Actor, user: Any) -> None:
    """The actor must administer every organization the person belongs to (a person in none: platform
    administrators only), and only platform administrators act on platform administrators."""
    if actor.is_system:
        return
    if actor.user is not None and actor.user.pk == user.pk:
        raise Forbidden("You cannot do this to your own account; ask another admin.")
    # A personal API key with a lesser role caps the admin's role; only a full admin role manages people.
    administered = {org for org, role in org_roles(actor).items() if role == TeamRole.TEAM_ADMIN}
    theirs = set(OrgMembership.objects.filter(user=user).values_list("organization_id", flat=True))
    is_platform_admin = actor.user is not None and actor.user.is_superuser and actor.api_key is None
    if user.is_superuser and not is_platform_admin:
        raise Forbidden("Only platform administrators manage platform administrators.")
    if not theirs and not is_platform_admin:
        raise Forbidden("Only platform administrators manage people outside every organization.")
    if not theirs <= administered:
        raise Forbidden("This person also belongs to an organization you do not administer.")


def _link_ttl(purpose: str) -> timedelta:
    hours = settings.INVITE_LINK_TTL_HOURS if purpose == LinkPurpose.INVITE else settings.RESET_LINK_TTL_HOURS
    return timedelta(hours=hours)


def _revoke_open_links(user: Any, now: datetime) -> None:
    PasswordLink.objects.filter(user=user, used_at__isnull=True, revoked_at__isnull=True).update(
        revoked_at=now
    )


def _issue_link(*, actor: Actor, user: Any, purpose: str, base_url: str) -> IssuedLink:
    """Makes a new link (voiding the person's earlier ones) and e-mails it when an e-mail can be sent."""
    now = timezone.now()
    _revoke_open_links(user, now)
    token = secrets.token_urlsafe(32)
    link = PasswordLink.objects.create(
        user=user,
        purpose=purpose,
        token_hash=hash_token(token),
        expires_at=now + _link_ttl(purpose),
        created_by=actor.user if actor.user is not None and actor.service_account is None else None,
    )
    url = f"{base_url.rstrip('/')}{SET_PASSWORD_PATH}#token={token}"
    emailed = False
    if user.email and settings.EMAIL_BACKEND not in _LOGGING_EMAIL_BACKENDS:
        transaction.on_commit(lambda: _send_link(user, purpose, url, link.expires_at))
        emailed = True
    return IssuedLink(url=url, purpose=purpose, expires_at=link.expires_at, emailed=emailed)


def _send_link(user: Any, purpose: str, url: str, expires_at: datetime) -> None:
    what = (
        "You are invited to StreamHub" if purpose == LinkPurpose.INVITE else "Reset your StreamHub password"
    )
    body = (
        f"Hello {user.get_username()},\n\n{what}: set your password at\n\n{url}\n\n"
        f"The link works once, until {expires_at:%Y-%m-%d %H:%M} UTC.\n"
    )
    try:
        send_mail(what, body, None, [user.email])
    except Exception:  # the admin still has the link to pass on; the failure must not undo the change
        logger.exception("Could not e-mail the %s link to user %s", purpose, user.pk)


def _validated_password(password: str, user: Any) -> None:
    try:
        password_validation.validate_password(password, user)
    except ValidationError as error:
        raise ServiceError(
            " ".join(error.messages), code="weak_password", details={"password": error.messages}
        ) from error


def create_person(
    *,
    actor: Actor,
    organization: Organization,
    username: str,
    email: str = "",
    is_org_admin: bool = False,
    teams: list[tuple[Team, str]] | None = None,
    password: str | None = None,
    base_url: str,
) -> tuple[Any, IssuedLink | None]:
    """Creates a local person in `organization`, with a password or, without one, an invitation link.
    Team roles given here are granted at once (an invited person has them when they first sign in)."""
    user_model = get_user_model()
    change = Change(
        action="user.create" if password else "user.invite",
        resource_type="user",
        organization_id=organization.id,
        resource_name=username,
    )
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, organization)
        if user_model.objects.filter(username__iexact=username).exists():
            raise Conflict(f"The username {username!r} is taken.", code="duplicate")
        for team, role in teams or []:
            if team.organization_id != organization.id:
                raise ServiceError(f"Team {team.pk} is not in {organization.name}.", code="invalid_team")
            require_role_within(TeamRole.TEAM_ADMIN, role)
        user = user_model(username=username, email=email)
        if password:
            _validated_password(password, user)
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
        Identity.objects.create(user=user, source=IdentitySource.LOCAL)
        OrgMembership.objects.create(organization=organization, user=user, is_org_admin=is_org_admin)
        for team, role in teams or []:
            Membership.objects.create(team=team, user=user, role=role)
        link = None
        if not password:
            link = _issue_link(actor=actor, user=user, purpose=LinkPurpose.INVITE, base_url=base_url)
        change.on(user, name=username)
        change.after = {
            **snapshot_person(user),
            "is_org_admin": is_org_admin,
            "teams": {team.name: role for team, role in teams or []},
            **({"link_expires_at": link.expires_at.isoformat(), "emailed": link.emailed} if link else {}),
        }
    return user, link


def issue_password_link(*, actor: Actor, user: Any, base_url: str) -> IssuedLink:
    """A new one-time link: an invitation again for someone who never set a password, else a reset. Their
    current password keeps working until the link is used."""
    invited = person_status(user) == PersonStatus.INVITED
    purpose = LinkPurpose.INVITE if invited else LinkPurpose.RESET
    change = _person_change(f"user.{purpose}_link", user, _home_organization_id(user))
    with audited_change(actor=actor, change=change):
        require_people_admin(actor, user)
        if not user.is_active:
            raise Conflict("Reactivate the account first.", code="deactivated")
        if identity_source(user) != IdentitySource.LOCAL:
            raise Conflict(
                "This person signs in with single sign-on; their identity provider manages the password.",
                code="external_identity",
            )
        link = _issue_link(actor=actor, user=user, purpose=purpose, base_url=base_url)
        change.after = {
            "purpose": purpose,
            "expires_at": link.expires_at.isoformat(),
            "emailed": link.emailed,
        }
    return link


def deactivate_person(*, actor: Actor, user: Any) -> Any:
    """Signs the person out everywhere at once: sessions and personal API keys of an inactive user are
    refused, and open links are voided. Memberships stay, so reactivation restores the same access."""
    change = _person_change(
        "user.deactivate", user, _home_organization_id(user), before=snapshot_person(user)
    )
    with audited_change(actor=actor, change=change):
        require_people_admin(actor, user)
        user.is_active = False
        user.save(update_fields=["is_active"])
        _revoke_open_links(user, timezone.now())
        change.after = snapshot_person(user)
    return user


def reactivate_person(*, actor: Actor, user: Any) -> Any:
    change = _person_change(
        "user.reactivate", user, _home_organization_id(user), before=snapshot_person(user)
    )
    with audited_change(actor=actor, change=change):
        require_people_admin(actor, user)
        user.is_active = True
        user.save(update_fields=["is_active"])
        change.after = snapshot_person(user)
    return user


def update_person(*, actor: Actor, user: Any, email: str) -> Any:
    change = _person_change("user.update", user, _home_organization_id(user), before=snapshot_person(user))
    with audited_change(actor=actor, change=change):
        require_people_admin(actor, user)
        user.email = email
        user.save(update_fields=["email"])
        change.after = snapshot_person(user)
    return user


def _usable_link(token: str) -> PasswordLink:
    link = (
        PasswordLink.objects.select_related("user")
        .filter(token_hash=hash_token(token), used_at__isnull=True, revoked_at__isnull=True)
        .first()
    )
    if link is None or link.expires_at <= timezone.now() or not link.user.is_active:
        raise ServiceError(INVALID_LINK_MESSAGE, code="invalid_link")
    return link


def inspect_link(token: str) -> PasswordLink:
    """What the set-password page shows before the person types: whose link and until when."""
    return _usable_link(token)


def use_link(*, token: str, password: str, client_address: str | None = None) -> Any:
    """Sets the person's password from a one-time link; the link is spent, even if a second request with
    the same token races this one (the row is locked). The person is the actor the log records."""
    user = _usable_link(token).user
    action = "user.accept_invite" if not user.has_usable_password() else "user.reset_password"
    change = _person_change(action, user, _home_organization_id(user))
    with audited_change(actor=Actor(user=user, client_address=client_address), change=change):
        link = (
            PasswordLink.objects.select_for_update().select_related("user").get(token_hash=hash_token(token))
        )
        if link.used_at is not None or link.revoked_at is not None or link.expires_at <= timezone.now():
            raise ServiceError(INVALID_LINK_MESSAGE, code="invalid_link")
        _validated_password(password, user)
        now = timezone.now()
        user.set_password(password)
        user.save(update_fields=["password"])
        link.used_at = now
        link.save(update_fields=["used_at"])
        _revoke_open_links(user, now)
        change.after = {"purpose": link.purpose}
    return user
