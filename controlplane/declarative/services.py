"""Applying a plan as one change set: every change goes through the domain service the API uses (which checks,
writes, audits and reaches the cluster as for any request), in dependency order, and the change set records
what happened to each. Topic creations of one cluster and team go in batches, one CreateTopics request each,
every topic still checked, recorded and reported on its own. The first change that fails stops the rest
(reported `skipped`; the rest of its batch was sent with it and is reported as it came out): a cluster that
stopped answering is not asked a thousand more times. A change sent but not confirmed is `pending` (its operation
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
from controlplane.acls.services import GrantRequest, apply_template, apply_templates, revoke_grant
from controlplane.audit.choices import Result
from controlplane.audit.services import record_event
from controlplane.clusters.choices import OperationState
from controlplane.clusters.models import Operation
from controlplane.clusters.outcomes import OutcomeUnknown
from controlplane.core.changes import Change
from controlplane.core.errors import Conflict, ServiceError
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
from controlplane.kafka.topics import NewTopicSpec
from controlplane.quotas.models import ClientQuota
from controlplane.quotas.services import delete_quota, set_quota
from controlplane.tenancy.access import Actor
from controlplane.topics.models import Topic
from controlplane.topics.services import (
    add_partitions,
    create_topics,
    delete_topic,
    update_topic_configs,
)

logger = logging.getLogger(__name__)
# Topics per CreateTopics request and grants per CreateAcls request: a few requests for a thousand, each
# answered well within the request timeout by a loaded broker (a KRaft controller writes each request's
# records as one batch), and a partial failure costs at most one batch sent into a cluster that refuses.
TOPIC_CREATE_BATCH = 100
GRANT_CREATE_BATCH = 100
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

    def refused(self, refusal: ServiceError) -> None:
        """The change met `refusal`; one whose outcome is unknown may still have happened."""
        if isinstance(refusal, OutcomeUnknown):
            self.status = ChangeStatus.UNKNOWN
        else:
            self.status = ChangeStatus.PARTIAL if self.done else ChangeStatus.FAILED
        self.reason = {"code": refusal.code, "message": refusal.message, **refusal.details}

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
    """A topic's update or deletion (creations go in batches: _create_topics)."""
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


def _apply_change(actor: Actor, change: PlannedChange) -> _Outcome:
    outcome = _Outcome()
    outcome.resource_id = change.target_id
    try:
        APPLIERS[change.kind](actor, change, outcome)
    except ServiceError as refusal:
        outcome.refused(refusal)
    except Exception as error:  # a bug mid-change: it may have happened, so it is not reported failed
        logger.exception("applying %s %s failed unexpectedly", change.kind, change.name)
        outcome.status = ChangeStatus.UNKNOWN
        outcome.reason = {"code": "internal_error", "message": repr(error)}
    return outcome


def _creations_from(pending: list[PlannedChange], start: int) -> list[PlannedChange]:
    """The creations of topics (or of grants) of one cluster and team from `start` on, at most a batch,
    sent in one CreateTopics (CreateAcls) request; empty when the change at `start` is no such creation."""
    first = pending[start]
    sizes = {Kind.TOPIC: TOPIC_CREATE_BATCH, Kind.ACCESS_GRANT: GRANT_CREATE_BATCH}
    if first.action != Action.CREATE or first.kind not in sizes:
        return []
    batch = [first]
    for change in pending[start + 1 : start + sizes[first.kind]]:
        same_place = (change.cluster_row.pk, change.team_row.pk) == (first.cluster_row.pk, first.team_row.pk)
        if (change.kind, change.action) != (first.kind, Action.CREATE) or not same_place:
            break
        batch.append(change)
    return batch


def _create_batch(actor: Actor, batch: list[PlannedChange]) -> list[_Outcome]:
    outcomes = [_Outcome() for _ in batch]
    try:
        if batch[0].kind == Kind.TOPIC:
            results = _create_topics(actor, batch)
        else:
            results = _create_grants(actor, batch)
    except Exception as error:  # a bug mid-batch: any of them may have happened
        logger.exception("creating %d %s failed unexpectedly", len(batch), batch[0].kind)
        for outcome in outcomes:
            outcome.status = ChangeStatus.UNKNOWN
            outcome.reason = {"code": "internal_error", "message": repr(error)}
        return outcomes
    for outcome, result in zip(outcomes, results, strict=True):
        if isinstance(result, ServiceError):
            outcome.refused(result)
        elif isinstance(result, AccessGrant):
            outcome.resource_id = result.pk
        else:
            try:
                outcome.follow(result)
            except ServiceError as refusal:
                outcome.refused(refusal)
    return outcomes


def _create_grants(actor: Actor, batch: list[PlannedChange]) -> list[AccessGrant | ServiceError]:
    accounts = {
        account.name: account
        for account in ServiceAccount.objects.filter(
            organization_id=batch[0].team_row.organization_id,
            name__in={change.spec["serviceAccount"] for change in batch},
        ).select_related("team", "organization")
    }
    return apply_templates(
        actor=actor,
        cluster=batch[0].cluster_row,
        requests=[
            GrantRequest(
                service_account=accounts[change.spec["serviceAccount"]],
                template=change.spec["template"],
                topic_prefix=change.spec["topicPrefix"],
                group_prefix=change.spec.get("groupPrefix", ""),
                transactional_id_prefix=change.spec.get("transactionalIdPrefix", ""),
            )
            for change in batch
        ],
    )


def _create_topics(actor: Actor, batch: list[PlannedChange]) -> list[Operation | ServiceError]:
    return create_topics(
        actor=actor,
        cluster=batch[0].cluster_row,
        team=batch[0].team_row,
        topics=[
            NewTopicSpec(
                name=change.name,
                partitions=change.spec["partitions"],
                replication_factor=change.diff["replicationFactor"]["to"],
                configs={k: config_value(v) for k, v in (change.spec.get("configs") or {}).items()},
            )
            for change in batch
        ],
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
    position = 0
    while position < len(pending):
        batch = _creations_from(pending, position)
        chunk = batch or [pending[position]]
        position += len(chunk)
        if stopped:
            entries += [{**change.as_dict(), "status": ChangeStatus.SKIPPED} for change in chunk]
            continue
        results = _create_batch(actor, batch) if batch else [_apply_change(actor, chunk[0])]
        applied = zip(chunk, results, strict=True)
        for change, outcome in applied:
            if outcome.status in (ChangeStatus.APPLIED, ChangeStatus.PENDING):
                _record_ownership(change_set, change, outcome.resource_id)
            else:
                stopped = True
            entries.append(
                {
                    **change.as_dict(),
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
