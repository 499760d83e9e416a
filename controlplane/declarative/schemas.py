"""The Schema kind: one registry subject (metadata.name) of a cluster, its latest schema and its
compatibility level. Plan and apply call the registry's own services (schemas/services.py) and its access
rules (schemas/access.py), so a plan refuses what the registry's API would refuse, with its message; a new
version is registered only when the schema differs from the subject's latest; a prune soft-deletes the
subject, as `DELETE /subjects/<subject>` does (its versions stay readable with `deleted=true`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction

from controlplane.audit.choices import Result
from controlplane.audit.services import record_event
from controlplane.clusters.models import Cluster
from controlplane.core.changes import Change
from controlplane.core.errors import Forbidden, ServiceError
from controlplane.declarative.choices import Action
from controlplane.schemas import services as registry
from controlplane.schemas.access import RegistryAccess, load_access
from controlplane.schemas.choices import SchemaType
from controlplane.schemas.models import RegistryConfig, SubjectVersion
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.tenancy.models import Team, TeamPrefix

# The registry's error codes, as the declarative API's refusal codes.
_REFUSAL_CODES = {
    409: "incompatible_schema",
    40301: "permission_denied",
    42201: "invalid_schema",
    42203: "invalid_compatibility",
    42205: "subject_read_only",
    42206: "subject_referenced",
}


def service_error(error: registry.RegistryError) -> ServiceError:
    """A registry refusal in the API's terms, keeping the registry's message and error code."""
    return ServiceError(
        error.message,
        code=_REFUSAL_CODES.get(error.error_code, "schema_registry_error"),
        details={"registry_error_code": error.error_code},
    )


def schema_input(spec: Mapping[str, Any]) -> registry.SchemaInput:
    return registry.SchemaInput(
        schema_type=spec.get("schemaType") or SchemaType.AVRO,
        text=spec["schema"],
        references=tuple(
            registry.Reference(ref["name"], ref["subject"], int(ref["version"]))
            for ref in spec.get("references") or []
        ),
    )


def team_subject_prefixes(team: Team) -> list[str]:
    """A subject is a team's when it starts with one of its topic or subject prefixes (schemas/access.py)."""
    return list(
        TeamPrefix.objects.filter(
            team=team, resource_type__in=[PrefixResourceType.TOPIC, PrefixResourceType.SUBJECT]
        ).values_list("prefix", flat=True)
    )


def subject_compatibility(cluster_id: int, subject: str) -> str | None:
    """The subject's own level (None when it follows the registry's)."""
    config = RegistryConfig.objects.filter(cluster_id=cluster_id, subject=subject).first()
    return (config.compatibility or None) if config is not None else None


def shown_spec(row: SubjectVersion) -> dict[str, Any]:
    return {
        "schemaType": row.schema.schema_type,
        "schema": row.schema.text,
        "references": list(row.schema.references),
    }


def reference_order(
    declared: Sequence[tuple[int, str | None, str, Mapping[str, Any]]],
) -> tuple[dict[int, int], dict[int, list[str]]]:
    """Orders Schema documents (index, cluster, subject, spec) so a subject that another one of the same plan
    and cluster references is registered first. Returns each document's rank and, for the documents on a
    cycle of references, the cycle's subjects (those are refused: no order registers them)."""
    by_subject = {(cluster, subject): index for index, cluster, subject, _ in declared}
    needs: dict[int, set[int]] = {
        index: {
            by_subject[(cluster, ref["subject"])]
            for ref in spec.get("references") or []
            if (cluster, ref["subject"]) in by_subject and by_subject[(cluster, ref["subject"])] != index
        }
        for index, cluster, _, spec in declared
    }
    subjects = {index: subject for index, _, subject, _ in declared}
    rank: dict[int, int] = {}
    waiting = sorted(needs)
    while waiting:
        ready = [index for index in waiting if needs[index] <= rank.keys()]
        if not ready:
            break
        for index in ready:
            rank[index] = len(rank)
        waiting = [index for index in waiting if index not in rank]
    # What is left waits on a cycle; each is refused naming the subjects it waits on, in the order found.
    cycles = {
        index: sorted(subjects[other] for other in needs[index] if other not in rank) for index in waiting
    }
    for index in waiting:
        rank[index] = len(rank)
    return rank, cycles


class SchemaPlanner:
    """The registry's checks for one plan, its access rules loaded once per cluster. A subject the plan
    registers is registered in the plan's simulation too (rolled back with it), so a schema of the same plan
    that references it resolves the reference as applying will."""

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self.access: dict[int, RegistryAccess] = {}
        # (cluster id, schema id) of the schemas stored by the simulation: their parsed forms, cached by
        # the registry as if rows never went away, are forgotten once it is rolled back.
        self.simulated: list[tuple[int, int]] = []

    def simulate_register(self, *, cluster: Cluster, subject: str, spec: Mapping[str, Any]) -> None:
        """Registers the declared schema inside the plan's simulation (the caller rolls it back)."""
        try:
            row = registry.register_schema(
                cluster_id=cluster.pk, subject=subject, schema_input=schema_input(spec)
            )
        except registry.RegistryError as error:
            raise service_error(error) from error
        self.simulated.append((cluster.pk, row.schema.schema_id))

    def forget_simulated(self) -> None:
        registry.forget_parsed(self.simulated)
        self.simulated.clear()

    def require_write(self, cluster: Cluster, team: Team, subject: str) -> None:
        if cluster.pk not in self.access:
            self.access[cluster.pk] = load_access(self.actor, cluster.pk)
        if not self.access[cluster.pk].can_write(subject):
            raise Forbidden(f"User is denied operation Write on Subject: {subject}")
        if not any(subject.startswith(prefix) for prefix in team_subject_prefixes(team)):
            raise ServiceError(
                f"Subject {subject!r} is outside the team's topic and subject prefixes; a file set declares "
                "its own team's subjects.",
                code="other_team",
            )

    def plan(
        self, *, cluster: Cluster, team: Team, subject: str, spec: Mapping[str, Any]
    ) -> tuple[str, dict[str, dict[str, Any]], int | None]:
        """(action, diff, the latest version's row id) of declaring `spec` for the subject."""
        self.require_write(cluster, team, subject)
        wanted_level = spec.get("compatibility")
        try:
            latest, identical = registry.check_register(
                cluster_id=cluster.pk,
                subject=subject,
                schema_input=schema_input(spec),
                compatibility=wanted_level,
            )
        except registry.RegistryError as error:
            raise service_error(error) from error
        wanted = {
            "schemaType": spec.get("schemaType") or SchemaType.AVRO,
            "schema": spec["schema"],
            "references": [dict(ref) for ref in spec.get("references") or []],
        }
        diff: dict[str, dict[str, Any]] = {}
        current_level = subject_compatibility(cluster.pk, subject)
        if wanted_level is not None and wanted_level != current_level:
            diff["compatibility"] = {"from": current_level, "to": wanted_level}
        if latest is None:
            diff |= {key: {"from": None, "to": value} for key, value in wanted.items() if value}
            return Action.CREATE, diff, None
        if identical is not None and identical.pk != latest.pk:
            raise ServiceError(
                f"The schema declared for {subject!r} is its version {identical.version}, not its latest "
                f"({latest.version}); the registry answers the existing version instead of registering it "
                "again. Declare the latest schema, or delete the later versions first.",
                code="schema_is_an_older_version",
                details={"version": identical.version, "latest": latest.version},
            )
        if identical is None:
            current = shown_spec(latest)
            diff |= {
                key: {"from": current[key], "to": value}
                for key, value in wanted.items()
                if current[key] != value or key == "schema"
            }
        return (Action.UPDATE if diff else Action.UNCHANGED), diff, latest.pk

    @staticmethod
    def drift(*, cluster: Cluster, subject: str, recorded_id: int | None) -> dict[str, dict[str, Any]]:
        """A version registered (or deleted) outside the file set since it applied `recorded_id`."""
        if recorded_id is None:
            return {}
        latest = (
            SubjectVersion.objects.filter(cluster=cluster, subject=subject, deleted=False)
            .order_by("-version")
            .values_list("pk", "version")
            .first()
        )
        if latest is not None and latest[0] == recorded_id:
            return {}
        recorded = SubjectVersion.objects.filter(pk=recorded_id).values_list("version", flat=True).first()
        return {"version": {"recorded": recorded, "on_cluster": latest[1] if latest is not None else None}}

    def check_delete(self, *, cluster: Cluster, team: Team, subject: str) -> None:
        self.require_write(cluster, team, subject)
        try:
            registry.check_delete_subject(cluster_id=cluster.pk, subject=subject)
        except registry.RegistryError as error:
            raise service_error(error) from error


def _audit(actor: Actor, cluster: Cluster, subject: str, action: str, result: Any) -> None:
    """The event the registry's API writes for the same change (schemas/api/views.py AUDITED)."""
    record_event(
        actor=actor,
        change=Change(
            action=action,
            resource_type="schema_subject",
            organization_id=cluster.organization_id,
            resource_id=str(cluster.pk),
            resource_name=subject,
            after={"result": result},
        ),
        result=Result.SUCCESS,
    )


def apply_schema(
    *,
    actor: Actor,
    cluster: Cluster,
    subject: str,
    spec: Mapping[str, Any],
    diff: Mapping[str, Any],
    done: list[str],
) -> int | None:
    """Sets the subject's level, then registers the schema when it differs; the latest version's row id."""
    try:
        if "compatibility" in diff:
            with transaction.atomic():
                level = registry.set_config(
                    cluster_id=cluster.pk, subject=subject, body={"compatibility": spec["compatibility"]}
                )
                _audit(actor, cluster, subject, "schema_subject.config.update", level)
            done.append("schema_subject.config.update")
        # managedBy and labels are the file set's records, not the registry's
        if set(diff) - {"compatibility", "managedBy", "labels"}:
            with transaction.atomic():
                row = registry.register_schema(
                    cluster_id=cluster.pk, subject=subject, schema_input=schema_input(spec)
                )
                _audit(
                    actor,
                    cluster,
                    subject,
                    "schema.register",
                    {"subject": subject, "version": row.version, "id": row.schema.schema_id},
                )
            done.append("schema.register")
            return row.pk
    except registry.RegistryError as error:
        raise service_error(error) from error
    latest = SubjectVersion.objects.filter(cluster=cluster, subject=subject, deleted=False).order_by(
        "-version"
    )
    return latest.values_list("pk", flat=True).first()


def delete_schema_subject(*, actor: Actor, cluster: Cluster, subject: str) -> None:
    """Soft-deletes the subject; one already deleted (by hand) is left as it is."""
    try:
        with transaction.atomic():
            versions = registry.delete_subject(cluster_id=cluster.pk, subject=subject)
            _audit(actor, cluster, subject, "schema_subject.delete", versions)
    except registry.RegistryError as error:
        if error.error_code in (40401, 40404):
            return
        raise service_error(error) from error


def export_subjects(*, team: Team, cluster: Cluster) -> list[tuple[str, dict[str, Any]]]:
    """The team's live subjects on the cluster, each as (subject, spec) from its latest version."""
    prefixes = team_subject_prefixes(team)
    latest: dict[str, SubjectVersion] = {}
    for row in (
        SubjectVersion.objects.filter(cluster=cluster, deleted=False)
        .select_related("schema")
        .order_by("subject", "version")
    ):
        if any(row.subject.startswith(prefix) for prefix in prefixes):
            latest[row.subject] = row
    exported = []
    for subject, row in latest.items():
        spec: dict[str, Any] = {"schemaType": row.schema.schema_type, "schema": row.schema.text}
        if row.schema.references:
            spec["references"] = list(row.schema.references)
        level = subject_compatibility(cluster.pk, subject)
        if level:
            spec["compatibility"] = level
        exported.append((subject, spec))
    return exported
