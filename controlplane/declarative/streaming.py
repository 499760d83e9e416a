"""The StreamingJob kind: a team's long-running job of the streaming catalog on one cluster, and whether it
should run. Plan checks with the streams' own checks (jobs/streams.py), apply calls the services the API
calls: create, start, stop.

A stream's definition (job, parameters, service account, compute target) does not change once created —
its checkpoint belongs to it, as through the API — so a plan refuses such a change and says to declare a
stream of another name. The API deletes no stream either: pruning one stops it and ends the file set's
claim; its checkpoint and history stay. The service account's password is a credential: `${ENV_VAR}` or
`${file:path}` in the file set (the CLI reads it), used to create or start the stream, never shown nor kept
in a plan, a report or a claim."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.models import Cluster
from controlplane.core.errors import ServiceError
from controlplane.declarative.choices import Action
from controlplane.jobs import streams
from controlplane.jobs.choices import DesiredState
from controlplane.jobs.models import StreamingJob
from controlplane.jobs.services import default_compute_target, require_credentials
from controlplane.tenancy.access import Actor, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team

DEFINITION = ("job", "parameters", "serviceAccount", "computeTarget")


def _account(team: Team, name: str | None) -> ServiceAccount | None:
    if not name:
        return None
    account = ServiceAccount.objects.filter(organization_id=team.organization_id, name=name).first()
    if account is None:
        raise ServiceError(
            f"No service account named {name!r}; declare it in the file set or create it first.",
            code="unknown_service_account",
        )
    return account


def _definition(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "job": spec["job"],
        "parameters": dict(spec.get("parameters") or {}),
        "serviceAccount": spec.get("serviceAccount"),
        "computeTarget": spec.get("computeTarget") or default_compute_target(),
    }


def _current(stream: StreamingJob) -> dict[str, Any]:
    return {
        "job": stream.job,
        "parameters": stream.parameters,
        "serviceAccount": stream.service_account.name if stream.service_account_id else None,
        "computeTarget": stream.compute_target,
    }


def plan_stream(
    *, actor: Actor, team: Team, cluster: Cluster, name: str, spec: Mapping[str, Any]
) -> tuple[str, dict[str, dict[str, Any]], int | None]:
    wanted = _definition(spec)
    desired = spec.get("desiredState", DesiredState.RUNNING)
    password = spec.get("password", "")
    stream = (
        StreamingJob.objects.filter(team=team, name=name).select_related("cluster", "service_account").first()
    )
    if stream is None:
        streams.check_stream_create(
            actor=actor,
            team=team,
            cluster=cluster,
            name=name,
            job=wanted["job"],
            parameters=wanted["parameters"],
            service_account=_account(team, wanted["serviceAccount"]),
            password=password,
            compute_target=wanted["computeTarget"],
        )
        diff = {key: {"from": None, "to": value} for key, value in wanted.items() if value not in (None, {})}
        diff["desiredState"] = {"from": None, "to": desired}
        return Action.CREATE, diff, None
    if stream.cluster_id != cluster.pk:
        raise ServiceError(
            f"Streaming job {name!r} runs on cluster {stream.cluster.name}; a stream does not move. Declare one "
            "of another name.",
            code="stream_definition_change",
        )
    current = _current(stream)
    changed = {
        key: {"from": current[key], "to": value} for key, value in wanted.items() if current[key] != value
    }
    if changed:
        raise ServiceError(
            f"Streaming job {name!r} differs in {', '.join(sorted(changed))}; a stream's definition does not "
            "change (its checkpoint belongs to it). Declare a stream of another name; prune stops this one.",
            code="stream_definition_change",
            details={"diff": changed},
        )
    if stream.desired_state == desired:
        return Action.UNCHANGED, {}, stream.pk
    require_team_role(actor, team, TeamRole.DEVELOPER)  # start_stream's and stop_stream's check
    if desired == DesiredState.RUNNING and not stream.credential_encrypted:
        require_credentials(cluster, stream.service_account, password)
    return Action.UPDATE, {"desiredState": {"from": stream.desired_state, "to": desired}}, stream.pk


def check_stop(*, actor: Actor, resource_id: int | None) -> int | None:
    stream = StreamingJob.objects.filter(pk=resource_id).select_related("team").first()
    if stream is None:
        return None
    require_team_role(actor, stream.team, TeamRole.DEVELOPER)  # stop_stream's check
    return stream.pk


def apply_stream(
    *,
    actor: Actor,
    team: Team,
    cluster: Cluster,
    name: str,
    action: str,
    spec: Mapping[str, Any],
    target_id: int | None,
    done: list[str],
) -> int | None:
    stream = (
        StreamingJob.objects.select_related("team", "cluster", "service_account").filter(pk=target_id).first()
        if target_id
        else None
    )
    if action == Action.DELETE:
        if stream is not None and stream.desired_state != DesiredState.STOPPED:
            streams.stop_stream(actor=actor, stream=stream)
        return None
    desired = spec.get("desiredState", DesiredState.RUNNING)
    password = spec.get("password", "")
    if action == Action.CREATE:
        wanted = _definition(spec)
        stream = streams.create_stream(
            actor=actor,
            team=team,
            cluster=cluster,
            name=name,
            job=wanted["job"],
            parameters=wanted["parameters"],
            service_account=_account(team, wanted["serviceAccount"]),
            password=password,
            compute_target=wanted["computeTarget"],
        )
        done.append("streaming_job.create")
    if stream.desired_state == desired:
        return stream.pk
    if desired == DesiredState.STOPPED:
        streams.stop_stream(actor=actor, stream=stream)
    else:
        streams.start_stream(actor=actor, stream=stream, password=password)
    return stream.pk


def export_streams(team: Team, cluster: Cluster) -> list[tuple[str, dict[str, Any]]]:
    exported = []
    for stream in (
        StreamingJob.objects.filter(team=team, cluster=cluster)
        .select_related("service_account")
        .order_by("name")
    ):
        spec = {key: value for key, value in _current(stream).items() if value not in (None, {})}
        spec["desiredState"] = stream.desired_state
        if stream.service_account_id and cluster.security_protocol.startswith("SASL"):
            spec["password"] = "${" + password_env_var(stream.name) + "}"  # never the password itself
        exported.append((stream.name, spec))
    return exported


def password_env_var(name: str) -> str:
    """The environment variable an exported stream's service account password is read from."""
    return "STREAMHUB_STREAM_" + "".join(c if c.isalnum() else "_" for c in name.upper()) + "_PASSWORD"
