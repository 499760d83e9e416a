"""Writing the audit log. Domain services wrap each change in `audited_change`, the only writer here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction

from controlplane.audit.choices import ActorType, Result
from controlplane.audit.models import AuditEvent
from controlplane.core.api.errors import Conflict, ServiceError
from controlplane.core.request_ids import current_request_id
from controlplane.tenancy.access import Actor

# Keys that must never reach the log, whatever a snapshot function returns.
SECRET_MARKERS = ("secret", "password", "hash", "token", "pepper")
REDACTED = "[redacted]"


def redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: REDACTED if any(marker in str(key).lower() for marker in SECRET_MARKERS) else redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


@dataclass
class Change:
    """What a service tells the log about the change it is making."""

    action: str
    resource_type: str
    organization_id: int | None = None
    team_id: int | None = None
    team_name: str = ""
    resource_id: str = ""
    resource_name: str = ""
    before: dict | None = None
    after: dict | None = None
    extra: dict = field(default_factory=dict)

    def on(self, resource: Any, *, name: str | None = None) -> None:
        self.resource_id = str(resource.pk)
        self.resource_name = name if name is not None else str(resource)


def _actor_type(actor: Actor) -> str:
    if actor.is_system:
        return ActorType.SYSTEM
    return ActorType.SERVICE_ACCOUNT if actor.service_account is not None else ActorType.USER


def actor_record(actor: Actor) -> dict[str, Any]:
    """How the log names an actor, as plain values: an operation keeps it to record its outcome later."""
    user = actor.user if actor.service_account is None else None
    return {
        "actor_type": _actor_type(actor),
        "actor_name": actor.name,
        "actor_user_id": user.pk if user is not None else None,
        "via": actor.via,
        "api_key_id": actor.api_key.key_id if actor.api_key is not None else "",
        "client_address": actor.client_address,
    }


def record_event(*, actor: Actor, change: Change, result: str, reason: str = "") -> AuditEvent:
    return record_event_as(actor_record(actor), change=change, result=result, reason=reason)


def record_event_as(
    actor: dict[str, Any], *, change: Change, result: str, reason: str = "", request_id: str | None = None
) -> AuditEvent:
    """Records for an `actor_record`; the request id defaults to the request being answered."""
    return AuditEvent.objects.create(
        organization_id=change.organization_id,
        team_id=change.team_id,
        team_name=change.team_name,
        actor_type=actor["actor_type"],
        actor_name=actor["actor_name"],
        actor_user_id=actor["actor_user_id"],
        via=actor["via"],
        api_key_id=actor["api_key_id"],
        action=change.action,
        resource_type=change.resource_type,
        resource_id=change.resource_id,
        resource_name=change.resource_name[:255],
        before=redact(change.before),
        after=redact(change.after),
        result=result,
        reason=reason,
        client_address=actor["client_address"],
        request_id=current_request_id() if request_id is None else request_id,
    )


@contextmanager
def audited_change(*, actor: Actor, change: Change) -> Iterator[Change]:
    """Runs a change in one transaction together with its success record.

    A refusal (a ServiceError, or a unique constraint that a concurrent request won) rolls the change
    back and is then recorded as a failure with its reason, so no attempt goes unrecorded and no
    half-applied change exists.
    """
    try:
        with transaction.atomic():
            yield change
            record_event(actor=actor, change=change, result=Result.SUCCESS)
    except ServiceError as refusal:
        result = getattr(refusal, "audit_result", Result.FAILURE)
        record_event(actor=actor, change=change, result=result, reason=str(refusal.detail))
        raise
    except IntegrityError as clash:
        reason = "It conflicts with an existing object."
        record_event(actor=actor, change=change, result=Result.FAILURE, reason=reason)
        raise Conflict(reason) from clash


@contextmanager
def audited_refusals(*, actor: Actor, change: Change) -> Iterator[Change]:
    """The checks before a change that goes to a cluster: a refusal is recorded as a failure; passing
    records nothing yet (the operation records the outcome once the cluster has been looked at)."""
    try:
        yield change
    except ServiceError as refusal:
        record_event(actor=actor, change=change, result=Result.FAILURE, reason=str(refusal.detail))
        raise
