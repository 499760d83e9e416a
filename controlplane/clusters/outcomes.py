"""Changes to a cluster with a definite outcome.

A change a team asks of a cluster (create a topic, add partitions, ...) is recorded as an Operation before
anything is sent, outside any database transaction, so a slow cluster never holds a database lock and a
crash between the cluster's answer and the database write leaves a record the reconciler can attribute.

The cluster's answer decides the outcome when there is one: success is recorded in the database, the audit
log and the operation in one transaction; a refusal (Kafka said no) is recorded as a failure. No answer (a
timeout, a dropped connection) decides nothing: Kafka may still apply a request it did not answer in time.
Then the control plane reads the cluster back. If the change is there it succeeded; if not, the operation
stays running (the API answers 202 with it) and is looked at again whenever it is polled or the settle beat
runs, until the change shows (succeeded) or `SETTLE_WINDOW` passes without it (failed, with what was seen).
While the cluster cannot be read at all, nothing is concluded until `GIVE_UP_AFTER`. Whatever still
appears after a failure is adopted by the reconciler for the operation's team and request.

Each kind registers a `ChangeHandler`: how to look at the cluster, and what to write when it succeeded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from django.db import transaction
from django.utils import timezone

from controlplane.audit.choices import Result
from controlplane.audit.services import record_event_as
from controlplane.clusters.choices import ACTIVE_OPERATION_STATES, OPERATION_STEPS, OperationState
from controlplane.clusters.models import Cluster, Operation
from controlplane.core.changes import Change
from controlplane.core.errors import ServiceError, Unavailable
from controlplane.core.request_ids import current_request_id
from controlplane.kafka.errors import ClusterUnreachable, KafkaGatewayError
from controlplane.kafka.refusals import refusal_for

logger = logging.getLogger(__name__)

# How long a change the cluster did not confirm may still show up before the operation fails.
SETTLE_WINDOW = timedelta(seconds=60)
# How long an unreadable cluster is waited for before the operation fails as unconfirmed.
GIVE_UP_AFTER = timedelta(hours=1)
# A poll of a running operation looks at the cluster at most this often.
LOOK_INTERVAL = timedelta(seconds=1)
# Kafka's names for "no answer in time": the request may or may not have been applied.
AMBIGUOUS_ERRORS = {"REQUEST_TIMED_OUT", "_TIMED_OUT", "NOT_CONTROLLER", "_TRANSPORT", "NETWORK_EXCEPTION"}

STEP_SEND, STEP_CONFIRM = 2, 3


@dataclass(frozen=True)
class Look:
    """What a handler saw on the cluster: whether the change is there, and the state it read."""

    applied: bool
    observed: dict[str, Any] = field(default_factory=dict)
    summary: str = ""


class ChangeHandler(Protocol):
    def look(self, operation: Operation) -> Look:
        """Reads the cluster (raises KafkaGatewayError when it cannot)."""

    def record_success(self, operation: Operation, look: Look | None) -> dict[str, Any]:
        """Writes the change to the database (inside the outcome's transaction); returns the audit's after."""


HANDLERS: dict[str, ChangeHandler] = {}


def handles(kind: str) -> Callable[[type], type]:
    def register(handler_class: type) -> type:
        HANDLERS[kind] = handler_class()
        return handler_class

    return register


def is_ambiguous(error: KafkaGatewayError) -> bool:
    return isinstance(error, ClusterUnreachable) or error.error_name in AMBIGUOUS_ERRORS


class OutcomeUnknown(Unavailable):
    """The cluster did not answer in time and does not show the change yet: neither success nor failure."""

    default_code = "outcome_unknown"
    audit_result = Result.UNKNOWN


@contextmanager
def confirmed_change(look: Callable[[], bool]) -> Iterator[None]:
    """For changes answered within the request (ACLs, quotas, credentials, group offsets): a refusal is an
    API refusal as with `kafka_refusals`; no answer in time is not a failure until the cluster has been
    read back with `look` (True: the change is there). There, the block counts as done and the caller
    records its success; not there, the caller's audit records the unknown outcome and the API answers
    503 outcome_unknown, which says it may still happen (the reconciler then reports it as drift)."""
    try:
        yield
    except KafkaGatewayError as error:
        if not is_ambiguous(error):
            raise refusal_for(error) from error
        try:
            applied = look()
        except KafkaGatewayError:
            applied = False
        if not applied:
            raise OutcomeUnknown(
                "The cluster did not answer in time and does not show the change yet; it may still apply "
                "it. Look again shortly before retrying.",
                details={"kafka_error": error.error_name},
            ) from error
        logger.info("the cluster applied a change it did not confirm in time (%s)", error.error_name)


def _note(operation: Operation, message: str) -> None:
    """Appends a log line; a repeat of the last one (polls of an unreadable cluster) only moves its time."""
    line = {"at": timezone.now().isoformat(), "message": message}
    if operation.log and operation.log[-1].get("message") == message:
        operation.log = [*operation.log[:-1], line]
    else:
        operation.log = [*operation.log, line]


def begin(
    *,
    kind: str,
    cluster: Cluster,
    change: Change,
    actor: dict[str, Any],
    parameters: dict[str, Any],
    team_id: int | None,
) -> Operation:
    """Records the change about to be sent; committed at once (never inside the caller's transaction)."""
    now = timezone.now()
    operation = Operation.objects.create(
        cluster=cluster,
        kind=kind,
        state=OperationState.RUNNING,
        steps=OPERATION_STEPS[kind],
        current_step=STEP_SEND,
        parameters={**parameters, "audit": _audit_fields(change)},
        requested_by=actor["actor_name"],
        team_id=team_id,
        resource_type=change.resource_type,
        resource_name=change.resource_name,
        request_id=current_request_id(),
        actor=actor,
        started_at=now,
        settle_by=now + SETTLE_WINDOW,
        log=[
            {
                "at": now.isoformat(),
                "message": f"{kind} {change.resource_name} requested by {actor['actor_name']}",
            }
        ],
    )
    return operation


def _audit_fields(change: Change) -> dict[str, Any]:
    return {
        "action": change.action,
        "resource_type": change.resource_type,
        "organization_id": change.organization_id,
        "team_id": change.team_id,
        "team_name": change.team_name,
        "resource_id": change.resource_id,
        "resource_name": change.resource_name,
        "before": change.before,
        "extra": change.extra,
    }


def _change_of(operation: Operation) -> Change:
    fields = operation.parameters["audit"]
    return Change(**{**fields, "extra": {**fields["extra"], "operation": operation.id}})


def run(operation: Operation, send: Callable[[], None]) -> Operation:
    """Sends the change and settles what can be settled now. Raises the refusal when the cluster said no;
    returns the operation, `succeeded` or still `running` (outcome not known yet).

    The cluster is read first: one that cannot be read now is refused with nothing sent, which is certain,
    instead of sending into it and leaving the outcome open."""
    try:
        HANDLERS[operation.kind].look(operation)
    except KafkaGatewayError as error:
        refusal = refusal_for(error, outcome="Nothing was sent, so nothing changed.")
        fail(operation, refusal.message, observed={"kafka_error": error.error_name})
        raise refusal from error
    try:
        send()
    except KafkaGatewayError as error:
        if not is_ambiguous(error):
            refusal = refusal_for(error)
            fail(operation, refusal.message, observed={"kafka_error": error.error_name})
            raise refusal from error
        _note(operation, f"no answer from the cluster ({error.error_name}); reading it back")
        operation.current_step = STEP_CONFIRM
        operation.save(update_fields=["log", "current_step"])
        return settle(operation)
    return succeed(operation, None)


def run_batch(
    operations: list[Operation], send: Callable[[], Mapping[str, KafkaGatewayError | None]]
) -> list[Operation | ServiceError]:
    """run() for operations of one kind sent in one request whose answer is per resource (`send` maps each
    operation's resource name to its error, None when done): the cluster is read once first, then each
    operation is settled by its own answer. Each result is the operation or the refusal it met."""
    try:
        HANDLERS[operations[0].kind].look(operations[0])
    except KafkaGatewayError as error:
        refusal = refusal_for(error, outcome="Nothing was sent, so nothing changed.")
        for operation in operations:
            fail(operation, refusal.message, observed={"kafka_error": error.error_name})
        return [refusal] * len(operations)
    try:
        answers = send()
    except KafkaGatewayError as error:  # the request as a whole: every operation met the same answer
        answers = {operation.resource_name: error for operation in operations}
    results: list[Operation | ServiceError] = []
    for operation in operations:
        error = answers[operation.resource_name]
        if error is None:
            results.append(succeed(operation, None))
        elif not is_ambiguous(error):
            refusal = refusal_for(error)
            fail(operation, refusal.message, observed={"kafka_error": error.error_name})
            results.append(refusal)
        else:
            _note(operation, f"no answer from the cluster ({error.error_name}); reading it back")
            operation.current_step = STEP_CONFIRM
            operation.save(update_fields=["log", "current_step"])
            results.append(settle(operation))
    return results


def succeed(operation: Operation, look: Look | None) -> Operation:
    handler = HANDLERS[operation.kind]
    with transaction.atomic():
        locked = Operation.objects.select_for_update().get(pk=operation.pk)
        if locked.state not in ACTIVE_OPERATION_STATES:
            return locked
        change = _change_of(locked)
        change.after = handler.record_success(locked, look)
        record_event_as(locked.actor, change=change, result=Result.SUCCESS, request_id=locked.request_id)
        locked.state, locked.finished_at = OperationState.SUCCEEDED, timezone.now()
        locked.current_step = len(locked.steps)
        locked.observed = look.observed if look is not None else {"confirmed_by": "the cluster's answer"}
        _note(locked, "confirmed on the cluster" if look is not None else "the cluster confirmed it")
        locked.save()
    return locked


def fail(
    operation: Operation, reason: str, *, observed: dict[str, Any] | None = None, unconfirmed: bool = False
) -> Operation:
    """Records the failure. `unconfirmed`: the cluster never said no, the change just did not show in time,
    so the reconciler may still adopt it if it appears (a refusal is never adopted)."""
    with transaction.atomic():
        locked = Operation.objects.select_for_update().get(pk=operation.pk)
        if locked.state not in ACTIVE_OPERATION_STATES:
            return locked
        locked.parameters = {**locked.parameters, "unconfirmed": unconfirmed}
        record_event_as(
            locked.actor,
            change=_change_of(locked),
            result=Result.FAILURE,
            reason=reason,
            request_id=locked.request_id,
        )
        locked.state, locked.finished_at, locked.error = OperationState.FAILED, timezone.now(), reason
        locked.observed = observed or {}
        _note(locked, f"failed: {reason}")
        locked.save()
    return locked


def settle(operation: Operation) -> Operation:
    """Looks at the cluster once and records the outcome if it is known by now."""
    if operation.state not in ACTIVE_OPERATION_STATES or operation.kind not in HANDLERS:
        return operation
    now = timezone.now()
    try:
        look = HANDLERS[operation.kind].look(operation)
    except KafkaGatewayError as error:
        if now - operation.created_at >= GIVE_UP_AFTER:
            return fail(
                operation,
                f"The cluster could not be read for {GIVE_UP_AFTER} to confirm the change ({error.error_name}); "
                "if it shows up later, the reconciler adopts it.",
                unconfirmed=True,
            )
        _note(operation, f"could not read the cluster yet ({error.error_name})")
        operation.checked_at = now
        operation.save(update_fields=["log", "checked_at"])
        return operation
    if look.applied:
        return succeed(operation, look)
    if operation.settle_by is not None and now >= operation.settle_by:
        return fail(
            operation,
            f"The cluster did not apply the change within {int(SETTLE_WINDOW.total_seconds())} s: {look.summary}",
            observed=look.observed,
            unconfirmed=True,
        )
    _note(operation, f"not on the cluster yet: {look.summary}")
    operation.checked_at = now
    operation.save(update_fields=["log", "checked_at"])
    return operation


def adopt(operation: Operation, look: Look) -> Operation:
    """A change reported failed as unconfirmed that the cluster shows after all (the reconciler found it):
    recorded now for the team and the request that asked for it, and the operation corrected."""
    handler = HANDLERS[operation.kind]
    with transaction.atomic():
        locked = Operation.objects.select_for_update().get(pk=operation.pk)
        if locked.state != OperationState.FAILED or not locked.parameters.get("unconfirmed"):
            return locked
        change = _change_of(locked)
        change.extra = {**change.extra, "adopted_by": "reconciler"}
        change.after = handler.record_success(locked, look)
        reason = (
            "Reported failed after the cluster did not show it in time; it appeared later and was adopted."
        )
        record_event_as(
            locked.actor, change=change, result=Result.SUCCESS, reason=reason, request_id=locked.request_id
        )
        locked.state, locked.error, locked.observed = OperationState.SUCCEEDED, "", look.observed
        locked.finished_at = timezone.now()
        locked.current_step = len(locked.steps)
        _note(locked, "the change appeared on the cluster after all; adopted by the reconciler")
        locked.save()
    return locked


def adoptable(cluster: Cluster, kind: str, resource_name: str) -> Operation | None:
    """The latest change of this kind to the resource that failed unconfirmed, if it is the latest
    change to the resource at all (a later change decides what the resource should be)."""
    latest = (
        Operation.objects.filter(cluster=cluster, resource_name=resource_name, kind__in=list(HANDLERS))
        .order_by("-created_at", "-id")
        .first()
    )
    if latest is None or latest.kind != kind or latest.state != OperationState.FAILED:
        return None
    return latest if latest.parameters.get("unconfirmed") else None


def settle_if_due(operation: Operation) -> Operation:
    """For polls: looks again only when the last look is older than LOOK_INTERVAL."""
    if operation.state not in ACTIVE_OPERATION_STATES or operation.kind not in HANDLERS:
        return operation
    if operation.checked_at is not None and timezone.now() - operation.checked_at < LOOK_INTERVAL:
        return operation
    return settle(operation)


def settle_running(cluster: Cluster | None = None) -> int:
    """Looks at every running change operation (the beat, the reconciler); returns how many finished."""
    running = Operation.objects.filter(state__in=ACTIVE_OPERATION_STATES, kind__in=list(HANDLERS))
    if cluster is not None:
        running = running.filter(cluster=cluster)
    finished = 0
    for operation in running.select_related("cluster"):
        try:
            finished += settle(operation).state not in ACTIVE_OPERATION_STATES
        except ServiceError as refusal:  # the handler found the change impossible to record
            fail(operation, refusal.message)
            finished += 1
    return finished
