"""What a domain service changes, and the seam through which every change and refusal is recorded.

A service describes its change (`Change`) and makes it inside `audited_change`. The audit log writes the
records, but it stands above the apps whose changes it records first (it reads with tenancy's access rules, and
tenancy's own changes are audited too): it connects its writer to `change_recorded` in AuditConfig.ready, so
nothing here, nor in any service, imports it. No receiver is a misconfiguration, never an unrecorded change.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, transaction
from django.dispatch import Signal

from controlplane.core.errors import Conflict, ServiceError

change_recorded = Signal()
"""Sent with `actor` (a controlplane.tenancy.access.Actor), `change` and `refusal` (the ServiceError that
refused it, None for a change made); for a change made, inside its transaction."""


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


# `actor` is Any: the Actor type belongs to tenancy, an app above this one; the recorder reads it.
def record_change(*, actor: Any, change: Change, refusal: ServiceError | None = None) -> None:
    """Records one change made (`refusal` None) or refused, outside any `audited_change`."""
    if not change_recorded.send(sender=Change, actor=actor, change=change, refusal=refusal):
        raise ImproperlyConfigured("No audit log records changes: install controlplane.audit.")


@contextmanager
def audited_change(*, actor: Any, change: Change) -> Iterator[Change]:
    """Runs a change in one transaction together with its success record.

    A refusal (a ServiceError, or a unique constraint that a concurrent request won) rolls the change
    back and is then recorded as a failure with its reason, so no attempt goes unrecorded and no
    half-applied change exists.
    """
    try:
        with transaction.atomic():
            yield change
            record_change(actor=actor, change=change)
    except ServiceError as refusal:
        record_change(actor=actor, change=change, refusal=refusal)
        raise
    except IntegrityError as clash:
        conflict = Conflict("It conflicts with an existing object.")
        record_change(actor=actor, change=change, refusal=conflict)
        raise conflict from clash


@contextmanager
def audited_refusals(*, actor: Any, change: Change) -> Iterator[Change]:
    """The checks before a change that goes to a cluster: a refusal is recorded as a failure; passing
    records nothing yet (the operation records the outcome once the cluster has been looked at)."""
    try:
        yield change
    except ServiceError as refusal:
        record_change(actor=actor, change=change, refusal=refusal)
        raise
