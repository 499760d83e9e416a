"""Applying a plan as one change set: every change goes through the domain service the API uses (which checks,
writes, audits and reaches the cluster as for any request), in dependency order, and the change set records
what happened to each. The first change that fails stops the rest (reported `skipped`): a cluster that stopped
answering is not asked a thousand more times. A change sent but not confirmed is `pending` (its operation
settles it) or `unknown`, never `failed`: only what certainly did not happen is reported failed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction

from controlplane.accounts.models import ServiceAccount
from controlplane.accounts.services import (
    create_service_account,
    delete_service_account,
    update_service_account,
)
from controlplane.acls.models import AccessGrant
from controlplane.acls.services import apply_template, revoke_grant
from controlplane.audit.choices import Result
from controlplane.audit.services import Change, record_event
from controlplane.clusters.choices import OperationState
from controlplane.clusters.models import Operation
from controlplane.clusters.outcomes import OutcomeUnknown
from controlplane.core.api.errors import Conflict, ServiceError
from controlplane.core.request_ids import current_request_id
from controlplane.declarative import alerting, streaming
from controlplane.declarative.choices import (
    CLAIMED_WITHOUT_CLUSTER,
    Action,
    ChangeSetState,
    ChangeStatus,
    Kind,
)
from controlplane.declarative.documents import Document, config_value
from controlplane.declarative.models import ChangeSet, ManagedResource
from controlplane.declarative.planning import MANAGED_BY, Plan, PlannedChange, plan_documents
from controlplane.declarative.schemas import apply_schema, delete_schema_subject
from controlplane.quotas.models import ClientQuota
from controlplane.quotas.services import delete_quota, set_quota
from controlplane.tenancy.access import Actor
from controlplane.topics.models import Topic
from controlplane.topics.services import add_partitions, create_topic, delete_topic, update_topic_configs

logger = logging.getLogger(__name__)
CREDENTIAL_FIELDS = {Kind.ALERT_CHANNEL: ("url",), Kind.STREAMING_JOB: ("password",)}


class PlanRefused(Conflict):
    """Well-formed documents whose plan refuses some change (an unknown team, a name outside the team's
    prefixes, a resource another file set owns): they conflict with what the server holds, hence 409."""

    default_code = "plan_refused"


class _Outcome:
    """What one change came to: a status, the refusal's reason and the operations that follow it."""

    def __init__(self) -> None:
        self.status = ChangeStatus.APPLIED
        self.reason: dict[str, Any] | None = None
        self.operations: list[int] = []
        self.resource_id: int | None = None
        # Steps of a change of several (partitions then configs; a grant revoked then re-created) already done.
        self.done: list[str] = []

    def follow(self, operation: Operation) -> None:
        self.operations.append(operation.pk)
        self.done.append(operation.kind)
        if operation.state in (OperationState.PENDING, OperationState.RUNNING):
            self.status = ChangeStatus.PENDING
        elif operation.state == OperationState.FAILED:
            raise ServiceError(
                operation.error or "The cluster did not make the change.", code="operation_failed"
            )


def _apply_service_account(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    description = change.spec.get("description", "") if change.action != Action.DELETE else ""
    if change.action == Action.CREATE:
        account = create_service_account(
            actor=actor, team=change.team_row, name=change.name, description=description
        )
        outcome.resource_id = account.pk
        return
    account = ServiceAccount.objects.filter(pk=change.target_id).first()
    if change.action == Action.DELETE:
        if account is not None:
            delete_service_account(actor=actor, service_account=account)
        return
    if "description" in change.diff:
        update_service_account(actor=actor, service_account=account, description=description)
    outcome.resource_id = account.pk


def _apply_topic(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    configs = {k: config_value(v) for k, v in (change.spec.get("configs") or {}).items()}
    if change.action == Action.CREATE:
        operation = create_topic(
            actor=actor,
            cluster=change.cluster_row,
            team=change.team_row,
            name=change.name,
            partitions=change.spec["partitions"],
            replication_factor=change.diff["replicationFactor"]["to"],
            configs=configs,
        )
        outcome.follow(operation)
        return
    topic = Topic.objects.filter(pk=change.target_id).select_related("team", "cluster").first()
    if change.action == Action.DELETE:
        if topic is not None:
            outcome.follow(delete_topic(actor=actor, topic=topic, confirm_name=topic.name))
        return
    outcome.resource_id = topic.pk
    if "partitions" in change.diff:
        outcome.follow(add_partitions(actor=actor, topic=topic, partitions=change.diff["partitions"]["to"]))
        topic.refresh_from_db()
    config_changes = {
        key.removeprefix("configs."): value["to"]
        for key, value in change.diff.items()
        if key.startswith("configs.")
    }
    if config_changes:
        outcome.follow(update_topic_configs(actor=actor, topic=topic, configs=config_changes))


def _apply_grant(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    grant = AccessGrant.objects.filter(pk=change.target_id).first() if change.target_id else None
    replaced = change.action == Action.UPDATE and set(change.diff) - {MANAGED_BY, "labels"}
    if grant is not None and (change.action == Action.DELETE or replaced):
        revoke_grant(actor=actor, grant=grant)
        outcome.done.append("acl.revoke")
        grant = None
    if change.action == Action.DELETE:
        return
    if grant is None:
        account = ServiceAccount.objects.get(
            organization_id=change.team_row.organization_id, name=change.spec["serviceAccount"]
        )
        grant = apply_template(
            actor=actor,
            cluster=change.cluster_row,
            service_account=account,
            template=change.spec["template"],
            topic_prefix=change.spec["topicPrefix"],
            group_prefix=change.spec.get("groupPrefix", ""),
            transactional_id_prefix=change.spec.get("transactionalIdPrefix", ""),
        )
    outcome.resource_id = grant.pk


def _apply_quota(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    if change.action == Action.DELETE:
        quota = ClientQuota.objects.filter(pk=change.target_id).first()
        if quota is not None:
            delete_quota(actor=actor, quota=quota)
        return
    values = {
        key.removeprefix("values."): value["to"]
        for key, value in change.diff.items()
        if key.startswith("values.")
    }
    entity: dict[str, str | None] = {}
    if change.spec.get("user"):
        entity["user"] = change.spec["user"]
    if change.spec.get("clientId"):
        entity["client-id"] = change.spec["clientId"]
    if values:
        outcome.resource_id = set_quota(
            actor=actor, cluster=change.cluster_row, entity=entity, values=values
        ).pk
    else:
        outcome.resource_id = change.target_id


def _apply_schema(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    if change.action == Action.DELETE:
        delete_schema_subject(actor=actor, cluster=change.cluster_row, subject=change.name)
        return
    outcome.resource_id = apply_schema(
        actor=actor,
        cluster=change.cluster_row,
        subject=change.name,
        spec=change.spec,
        diff=change.diff,
        done=outcome.done,
    )


def _apply_alert_channel(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    outcome.resource_id = alerting.apply_channel(
        actor=actor,
        team=change.team_row,
        name=change.name,
        action=change.action,
        spec=change.spec,
        target_id=change.target_id,
    )


def _apply_alert_rule(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    outcome.resource_id = alerting.apply_rule(
        actor=actor,
        team=change.team_row,
        cluster=change.cluster_row,
        name=change.name,
        action=change.action,
        spec=change.spec,
        diff=change.diff,
        target_id=change.target_id,
    )


def _apply_streaming_job(actor: Actor, change: PlannedChange, outcome: _Outcome) -> None:
    outcome.resource_id = streaming.apply_stream(
        actor=actor,
        team=change.team_row,
        cluster=change.cluster_row,
        name=change.name,
        action=change.action,
        spec=change.spec,
        target_id=change.target_id,
        done=outcome.done,
    )


APPLIERS: dict[str, Callable[[Actor, PlannedChange, _Outcome], None]] = {
    Kind.SERVICE_ACCOUNT: _apply_service_account,
    Kind.TOPIC: _apply_topic,
    Kind.ACCESS_GRANT: _apply_grant,
    Kind.QUOTA: _apply_quota,
    Kind.SCHEMA: _apply_schema,
    Kind.ALERT_CHANNEL: _apply_alert_channel,
    Kind.ALERT_RULE: _apply_alert_rule,
    Kind.STREAMING_JOB: _apply_streaming_job,
}


def _record_ownership(change_set: ChangeSet, change: PlannedChange, resource_id: int | None) -> None:
    where = {
        "organization_id": change.team_row.organization_id,
        "kind": change.kind,
        "name": change.name,
        "cluster": change.cluster_row if change.kind not in CLAIMED_WITHOUT_CLUSTER else None,
    }
    if change.action == Action.DELETE:
        ManagedResource.objects.filter(**where).delete()
        return
    ManagedResource.objects.update_or_create(
        **where,
        defaults={
            "team": change.team_row,
            "resource_id": resource_id,
            "file_set": change_set.file_set,
            "change_set": change_set,
            "labels": dict(change.labels),
            # Credentials (a channel's URL, a stream's password): the claim keeps what the file set
            # declares, less them.
            "spec": {k: v for k, v in change.spec.items() if k not in CREDENTIAL_FIELDS.get(change.kind, ())},
        },
    )


def _state_of(statuses: list[str]) -> str:
    done = [s for s in statuses if s in (ChangeStatus.APPLIED, ChangeStatus.PENDING)]
    if len(done) == len(statuses):
        return ChangeSetState.APPLIED
    some = done or [s for s in statuses if s in (ChangeStatus.PARTIAL, ChangeStatus.UNKNOWN)]
    return ChangeSetState.PARTIAL if some else ChangeSetState.FAILED


def apply_plan(*, actor: Actor, plan: Plan, expected_plan_id: str | None = None) -> ChangeSet | None:
    """Applies the plan's changes (None when there are none). A plan with refusals is refused whole, before
    anything happens; so is one that differs from the reviewed `expected_plan_id`."""
    if expected_plan_id and expected_plan_id != plan.plan_id:
        raise Conflict(
            "The plan changed since it was reviewed (someone changed the resources or the cluster); plan again.",
            code="plan_changed",
            details={"expected_plan_id": expected_plan_id, "plan_id": plan.plan_id},
        )
    refused = [c for c in plan.changes if c.action == Action.REFUSED]
    if refused:
        first = refused[0]
        raise PlanRefused(
            f"{len(refused)} change(s) of the plan are refused; nothing was applied. The first: {first.kind} "
            f"{first.name!r}: {first.refusal['message']}",
            details={"refused": [c.as_dict() for c in refused]},
        )
    pending = [c for c in plan.changes if c.action != Action.UNCHANGED]
    if not pending:
        return None
    organization_id = pending[0].team_row.organization_id
    change_set = ChangeSet.objects.create(
        organization_id=organization_id,
        file_set=plan.file_set,
        state=ChangeSetState.FAILED,
        actor_name=actor.name,
        request_id=current_request_id() or "",
        plan_id=plan.plan_id,
    )
    entries: list[dict[str, Any]] = []
    stopped = False
    for change in pending:
        entry = change.as_dict()
        if stopped:
            entries.append({**entry, "status": ChangeStatus.SKIPPED})
            continue
        outcome = _Outcome()
        outcome.resource_id = change.target_id
        try:
            APPLIERS[change.kind](actor, change, outcome)
        except OutcomeUnknown as unknown:
            outcome.status = ChangeStatus.UNKNOWN
            outcome.reason = {
                "code": str(unknown.get_codes()),
                "message": str(unknown.detail),
                **unknown.details,
            }
        except ServiceError as refusal:
            outcome.status = ChangeStatus.PARTIAL if outcome.done else ChangeStatus.FAILED
            outcome.reason = {
                "code": str(refusal.get_codes()),
                "message": str(refusal.detail),
                **refusal.details,
            }
        except Exception as error:  # a bug mid-change: it may have happened, so it is not reported failed
            logger.exception("applying %s %s failed unexpectedly", change.kind, change.name)
            outcome.status = ChangeStatus.UNKNOWN
            outcome.reason = {"code": "internal_error", "message": repr(error)}
        if outcome.status in (ChangeStatus.APPLIED, ChangeStatus.PENDING):
            _record_ownership(change_set, change, outcome.resource_id)
        else:
            stopped = True
        entries.append(
            {
                **entry,
                "status": outcome.status,
                "reason": outcome.reason,
                "operations": outcome.operations,
                "done": outcome.done,
            }
        )
    counts = {status: sum(1 for e in entries if e["status"] == status) for status in ChangeStatus.values}
    change_set.state = _state_of([e["status"] for e in entries])
    change_set.report = {"changes": entries, "counts": counts}
    with transaction.atomic():
        change_set.save(update_fields=["state", "report"])
        audit = Change(
            action="change_set.apply",
            resource_type="change_set",
            organization_id=organization_id,
            extra={"plan_id": plan.plan_id},
            after={"file_set": plan.file_set, "state": change_set.state, "counts": counts},
        )
        teams = {c.team_row.pk: c.team_row for c in pending}
        if len(teams) == 1:
            team = next(iter(teams.values()))
            audit.team_id, audit.team_name = team.pk, team.name
        audit.on(change_set, name=f"{plan.file_set} #{change_set.pk}")
        result = Result.SUCCESS if change_set.state == ChangeSetState.APPLIED else Result.FAILURE
        if counts[ChangeStatus.UNKNOWN]:
            result = Result.UNKNOWN
        record_event(actor=actor, change=audit, result=result)
    return change_set


def plan_and_apply(
    *,
    actor: Actor,
    documents: list[Document],
    file_set: str,
    prune: bool,
    team: str | None = None,
    expected_plan_id: str | None = None,
) -> tuple[Plan, ChangeSet | None]:
    plan = plan_documents(actor=actor, documents=documents, file_set=file_set, prune=prune, team=team)
    return plan, apply_plan(actor=actor, plan=plan, expected_plan_id=expected_plan_id)
