"""Writing the audit log. Domain services make their changes in `controlplane.core.changes.audited_change`,
whose records reach `log_change` here (connected in AuditConfig.ready); the apps above this one may also
record an event themselves."""

from __future__ import annotations

from typing import Any

from controlplane.audit.choices import ActorType, Result
from controlplane.audit.models import AuditEvent
from controlplane.core.changes import Change
from controlplane.core.errors import ServiceError
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


def log_change(
    sender: type, *, actor: Actor, change: Change, refusal: ServiceError | None, **kwargs: Any
) -> None:
    """Receives `controlplane.core.changes.change_recorded`: a change made, or refused with its reason (a
    refusal may say its own result: an unknown outcome is neither success nor failure)."""
    if refusal is None:
        record_event(actor=actor, change=change, result=Result.SUCCESS)
    else:
        result = getattr(refusal, "audit_result", Result.FAILURE)
        record_event(actor=actor, change=change, result=result, reason=refusal.message)
