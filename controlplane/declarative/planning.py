"""A plan: what applying a file set's documents would change, each change checked by the same functions the
domain services run before they act (rights, prefixes, policy, guardrails), so a refusal shows at plan time
with the reason the API would give.

Topics are compared with the cluster itself, not with what the control plane recorded, so a change made by
hand (`kafka-configs`, another tool) shows as drift and the plan puts it back. Creations are simulated inside
a transaction that is rolled back, so the checks of later documents count what earlier ones add (a team's
partition limit over all new topics, a grant for a service account the same file set creates).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from controlplane.accounts.models import ServiceAccount
from controlplane.accounts.services import check_service_account_create
from controlplane.acls.models import AccessGrant
from controlplane.acls.services import check_grant, check_revoke_grant
from controlplane.clusters.choices import ClusterStatus
from controlplane.clusters.connections import connection_for, default_replication_factor
from controlplane.clusters.models import Cluster
from controlplane.core.errors import ServiceError
from controlplane.declarative import alerting, streaming
from controlplane.declarative.choices import (
    ANY_CLUSTER_KINDS,
    APPLIED_KINDS,
    CLAIMED_WITHOUT_CLUSTER,
    ORGANIZATION_KINDS,
    Action,
    Kind,
)
from controlplane.declarative.documents import Document, config_value
from controlplane.declarative.models import ManagedResource
from controlplane.declarative.schemas import SchemaPlanner, reference_order
from controlplane.kafka.configs import describe_topic_configs
from controlplane.kafka.refusals import kafka_refusals
from controlplane.kafka.topics import TopicInfo, list_topics
from controlplane.quotas.choices import entity_key
from controlplane.quotas.models import ClientQuota
from controlplane.quotas.services import check_quota, check_quota_delete
from controlplane.tenancy.access import Actor, require_team_role, visible_organization_ids
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team
from controlplane.topics.guardrails import RATE_WINDOW, change_rate_counted_by_plan, change_room
from controlplane.topics.models import Topic
from controlplane.topics.services import (
    check_add_partitions,
    check_no_change_in_progress,
    check_topic_configs,
    check_topic_create,
    check_topic_delete,
)

DYNAMIC_TOPIC_CONFIG = "DYNAMIC_TOPIC_CONFIG"
MANAGED_BY = "managedBy"
# Topics per DescribeConfigs request: one request for a thousand topics (every config of each) did not
# come back within the request timeout from a loaded broker; a few requests of this size each do.
DESCRIBE_CONFIGS_BATCH = 200


@dataclass
class PlannedChange:
    kind: str
    name: str
    team: str
    cluster: str | None
    action: str
    diff: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Where the cluster differs from what the control plane recorded (a change made by hand).
    drift: dict[str, dict[str, Any]] = field(default_factory=dict)
    refusal: dict[str, Any] | None = None
    document: int | None = None
    # What applying needs, not shown: the document, the domain row and the resolved team and cluster.
    spec: Mapping[str, Any] = field(default_factory=dict, repr=False)
    labels: Mapping[str, str] = field(default_factory=dict, repr=False)
    team_row: Team | None = field(default=None, repr=False)
    cluster_row: Cluster | None = field(default=None, repr=False)
    target_id: int | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        shown = {
            "kind": self.kind,
            "name": self.name,
            "team": self.team,
            "cluster": self.cluster,
            "action": self.action,
            "diff": self.diff,
            "drift": self.drift,
            "document": self.document,
        }
        if self.refusal is not None:
            shown["refusal"] = self.refusal
        return shown

    def refuse(self, error: ServiceError) -> None:
        self.action = Action.REFUSED
        self.refusal = {
            "code": error.code,
            "message": error.message,
            "details": error.details,
        }


@dataclass
class Plan:
    file_set: str
    prune: bool
    changes: list[PlannedChange]
    # Resources this file set manages that no document declares any more (deleted only with prune).
    undeclared: list[dict[str, Any]] = field(default_factory=list)

    @property
    def plan_id(self) -> str:
        """A fingerprint of what would change: apply refuses a plan that changed since it was reviewed."""
        shown = [
            (c.kind, c.name, c.team, c.cluster, c.action, c.diff)
            for c in self.changes
            if c.action != Action.UNCHANGED
        ]
        return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()

    def counts(self) -> dict[str, int]:
        return {action: sum(1 for c in self.changes if c.action == action) for action in Action.values}

    def as_dict(self) -> dict[str, Any]:
        return {
            "file_set": self.file_set,
            "prune": self.prune,
            "plan_id": self.plan_id,
            "counts": self.counts(),
            "changes": [c.as_dict() for c in self.changes],
            "undeclared": self.undeclared,
        }


class _Rollback(Exception):
    """Leaves the simulation's transaction without keeping anything."""


def _refused(change: PlannedChange, code: str, message: str, **details: Any) -> PlannedChange:
    change.refuse(ServiceError(message, code=code, details=details))
    return change


class Planner:
    def __init__(self, *, actor: Actor, file_set: str) -> None:
        self.actor = actor
        self.file_set = file_set
        self.organization_ids = visible_organization_ids(actor)
        self.live_topics: dict[int, dict[str, TopicInfo]] = {}
        self.live_configs: dict[int, dict[str, dict[str, str]]] = {}
        # Names are looked up once per plan: a file set names the same team and cluster in every document.
        self.clusters: dict[str, Cluster | None] = {}
        self.teams: dict[tuple[str, int | None], Team | None] = {}
        # Read once per plan, not once per document (a plan of a thousand topics with their grants made
        # thousands of lookups): every file set's claims, the recorded topics and grants of each cluster
        # read, and service accounts by name as documents name them.
        self.claims: dict[tuple[int, str, str, int | None], ManagedResource] = {
            (m.organization_id, m.kind, m.name, m.cluster_id): m
            for m in ManagedResource.objects.filter(organization_id__in=self.organization_ids)
            .select_related("team", "cluster")
            .defer("spec")
        }
        self.topics: dict[int, dict[str, Topic]] = {}
        self.grants: dict[int, list[AccessGrant]] = {}
        self.accounts: dict[tuple[int, str], ServiceAccount] = {}
        # (kind, cluster, name) of each resource the documents declare, with the first document declaring it.
        self.declared_by: dict[tuple[str, str | None, str], int] = {}
        self.schemas = SchemaPlanner(actor)
        # Schema documents on a cycle of references, with the subjects each waits on.
        self.reference_cycles: dict[int, list[str]] = {}

    # --- names -------------------------------------------------------------------------------------

    def cluster_named(self, name: str) -> Cluster | None:
        if name not in self.clusters:
            self.clusters[name] = (
                Cluster.objects.filter(organization_id__in=self.organization_ids, name=name)
                .exclude(status=ClusterStatus.DELETED)
                .first()
            )
        return self.clusters[name]

    def team_named(self, slug: str, cluster: Cluster | None) -> Team | None:
        key = (slug, cluster.organization_id if cluster is not None else None)
        if key not in self.teams:
            teams = Team.objects.filter(organization_id__in=self.organization_ids, slug=slug)
            if cluster is not None:
                teams = teams.filter(organization_id=cluster.organization_id)
            self.teams[key] = teams.select_related("organization").first()
        return self.teams[key]

    # --- the cluster as it is ------------------------------------------------------------------------

    def read_topics(self, cluster: Cluster, names: Iterable[str]) -> None:
        """One Metadata request and one DescribeConfigs per cluster: a plan of a thousand topics stays cheap.
        The control plane's records of those topics are read in the same pass."""
        if cluster.pk in self.live_topics:
            return
        declared = set(names)
        self.topics[cluster.pk] = {
            topic.name: topic
            for topic in Topic.objects.filter(cluster=cluster).select_related("team", "cluster")
            if topic.name in declared
        }
        connection = connection_for(cluster)
        with kafka_refusals():
            observed = list_topics(connection)
            wanted = [name for name in names if name in observed]
            described: dict[str, dict[str, Any]] = {}
            for start in range(0, len(wanted), DESCRIBE_CONFIGS_BATCH):
                described |= describe_topic_configs(
                    connection, wanted[start : start + DESCRIBE_CONFIGS_BATCH]
                )
        self.live_topics[cluster.pk] = observed
        self.live_configs[cluster.pk] = {
            name: {
                k: v.value
                for k, v in configs.items()
                if v.source == DYNAMIC_TOPIC_CONFIG and v.value is not None
            }
            for name, configs in described.items()
        }

    def grants_of(self, cluster: Cluster) -> dict[tuple[Any, ...], AccessGrant]:
        """The cluster's grants by what they grant (account, template, prefixes); the first of equal ones."""
        if cluster.pk not in self.grants:
            by_fields: dict[tuple[Any, ...], AccessGrant] = {}
            for grant in (
                AccessGrant.objects.filter(cluster=cluster)
                .select_related("service_account", "team", "cluster")
                .order_by("pk")
            ):
                key = (grant.service_account_id, *(getattr(grant, f) for f in GRANT_FIELDS))
                by_fields.setdefault(key, grant)
            self.grants[cluster.pk] = by_fields
        return self.grants[cluster.pk]

    def account_named(self, organization_id: int, name: str) -> ServiceAccount | None:
        """Looked up until found (the plan may create it in its simulation first), then remembered."""
        key = (organization_id, name)
        if key not in self.accounts:
            account = ServiceAccount.objects.filter(organization_id=organization_id, name=name).first()
            if account is None:
                return None
            self.accounts[key] = account
        return self.accounts[key]

    # --- ownership -----------------------------------------------------------------------------------

    def ownership(self, change: PlannedChange, organization_id: int) -> ManagedResource | None:
        """The file set's claim on the resource; another file set's claim refuses the change."""
        cluster_id = change.cluster_row.pk if change.kind not in CLAIMED_WITHOUT_CLUSTER else None
        managed = self.claims.get((organization_id, change.kind, change.name, cluster_id))
        if managed is not None and managed.team_id != change.team_row.pk:
            # Rules, channels and streams are named within their team, but claimed by name in the
            # organization (a claim's key has no team).
            _refused(
                change,
                "managed_by_other_team",
                f"{change.kind} {change.name!r} is managed as code by another team of the organization; give "
                "yours another name.",
            )
        elif managed is not None and managed.file_set != self.file_set:
            _refused(
                change,
                "managed_by_other_file_set",
                f"{change.kind} {change.name!r} is managed by file set {managed.file_set!r}; remove it there "
                "first, or apply with that file set's name.",
                file_set=managed.file_set,
                change_set=managed.change_set_id,
            )
        return managed

    def claim(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        """A resource that exists but is not yet the file set's is taken over by applying (an update of its
        owner only); its labels are the file set's to change."""
        if change.action == Action.REFUSED:
            return
        if managed is None and change.action != Action.CREATE:
            change.diff[MANAGED_BY] = {"from": None, "to": self.file_set}
        elif managed is not None and dict(managed.labels) != dict(change.labels):
            change.diff["labels"] = {"from": managed.labels, "to": dict(change.labels)}
        if change.action == Action.UNCHANGED and change.diff:
            change.action = Action.UPDATE

    # --- one document --------------------------------------------------------------------------------

    def plan_document(self, document: Document) -> PlannedChange:
        change = PlannedChange(
            kind=document.kind,
            name=document.name,
            team=document.team or "",
            cluster=document.cluster if document.kind not in ORGANIZATION_KINDS else None,
            action=Action.UNCHANGED,
            document=document.index,
            spec=document.spec,
            labels=document.labels,
        )
        placement_refusal = self.placement_refusal(document, change)
        if placement_refusal is not None:
            return placement_refusal
        if change.cluster is not None:
            change.cluster_row = self.cluster_named(change.cluster)
            if change.cluster_row is None:
                return _refused(change, "unknown_cluster", f"No cluster named {change.cluster!r}.")
        change.team_row = self.team_named(change.team, change.cluster_row)
        if change.team_row is None:
            return _refused(change, "unknown_team", f"No team with the slug {change.team!r} here.")
        managed = self.ownership(change, change.team_row.organization_id)
        if change.action == Action.REFUSED:
            return change
        try:
            {
                Kind.SERVICE_ACCOUNT: self.plan_service_account,
                Kind.TOPIC: self.plan_topic,
                Kind.ACCESS_GRANT: self.plan_grant,
                Kind.QUOTA: self.plan_quota,
                Kind.SCHEMA: self.plan_schema,
                Kind.ALERT_CHANNEL: self.plan_alert_channel,
                Kind.ALERT_RULE: self.plan_alert_rule,
                Kind.STREAMING_JOB: self.plan_streaming_job,
            }[document.kind](change, managed)
        except ServiceError as refusal:
            change.refuse(refusal)
        self.claim(change, managed)
        return change

    def placement_refusal(self, document: Document, change: PlannedChange) -> PlannedChange | None:
        """A well-formed document the plan cannot place: no team or cluster named (by the document or the
        request), or a resource an earlier document of the file set already declares."""
        if document.team is None:
            return _refused(
                change, "no_team", "No team given: name it in metadata.team or in the request's team."
            )
        if change.cluster is None and document.kind not in (*ORGANIZATION_KINDS, *ANY_CLUSTER_KINDS):
            return _refused(
                change,
                "no_cluster",
                "No cluster given: name it in metadata.cluster or in the request's cluster.",
            )
        claimed_on = change.cluster if document.kind not in CLAIMED_WITHOUT_CLUSTER else None
        first = self.declared_by.setdefault((document.kind, claimed_on, document.name), document.index)
        if first != document.index:
            return _refused(
                change,
                "declared_twice",
                f"{document.kind} {document.name!r} is declared twice (also document {first}).",
                document=first,
            )
        return None

    def plan_service_account(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        team = change.team_row
        account = ServiceAccount.objects.filter(
            organization_id=team.organization_id, name=change.name
        ).first()
        description = change.spec.get("description", "")
        if account is None:
            change.action = Action.CREATE
            change.diff = {"description": {"from": None, "to": description}}
            check_service_account_create(actor=self.actor, team=team, name=change.name)
            ServiceAccount.objects.create(
                organization_id=team.organization_id, team=team, name=change.name, description=description
            )
            return
        change.target_id = account.pk
        _require_same_team(change, account.team_id, "service account")
        if account.description != description:
            change.action = Action.UPDATE
            change.diff = {"description": {"from": account.description, "to": description}}
            # update_service_account's own check
            require_team_role(self.actor, team, TeamRole.DEVELOPER)

    def plan_topic(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        cluster, team = change.cluster_row, change.team_row
        topic = self.topics[cluster.pk].get(change.name)
        live = self.live_topics[cluster.pk].get(change.name)
        wanted_configs = {k: config_value(v) for k, v in (change.spec.get("configs") or {}).items()}
        partitions = change.spec["partitions"]
        check_no_change_in_progress(cluster=cluster, name=change.name)
        if topic is None:
            if live is not None:
                raise ServiceError(
                    f"Topic {change.name!r} exists on {cluster.name} but is not managed; an org admin adopts "
                    "it into the team first (POST /api/v1/topics/<id>/adopt/).",
                    code="unmanaged_topic",
                )
            replication = change.spec.get("replicationFactor") or default_replication_factor(cluster)
            change.action = Action.CREATE
            change.diff = {
                "partitions": {"from": None, "to": partitions},
                "replicationFactor": {"from": None, "to": replication},
                **{f"configs.{k}": {"from": None, "to": v} for k, v in sorted(wanted_configs.items())},
            }
            check_topic_create(
                actor=self.actor,
                cluster=cluster,
                team=team,
                name=change.name,
                partitions=partitions,
                replication_factor=replication,
                configs=wanted_configs,
            )
            Topic.objects.create(
                cluster=cluster,
                team=team,
                name=change.name,
                partitions=partitions,
                replication_factor=replication,
                configs=wanted_configs,
            )
            return
        change.target_id = topic.pk
        if topic.team_id is None:
            raise ServiceError(
                f"Topic {change.name!r} is not managed; an org admin adopts it into the team first.",
                code="unmanaged_topic",
            )
        _require_same_team(change, topic.team_id, "topic")
        if live is None:
            raise ServiceError(
                f"Topic {change.name!r} is missing from {cluster.name}; the reconciler re-creates managed topics "
                "on its next pass (every minute). Plan again after it.",
                code="missing_on_cluster",
            )
        live_partitions = len(live.partitions)
        live_replication = len(live.partitions[0].replicas) if live.partitions else topic.replication_factor
        live_configs = self.live_configs[cluster.pk].get(change.name, {})
        change.drift = _topic_drift(topic, live_partitions, live_configs)
        wanted_replication = change.spec.get("replicationFactor")
        if wanted_replication is not None and wanted_replication != live_replication:
            raise ServiceError(
                f"Topic {change.name!r} has replication factor {live_replication}; changing it is a partition "
                "reassignment, which this apply does not do.",
                code="replication_factor_change",
                details={"current": live_replication, "requested": wanted_replication},
            )
        config_changes = {
            key: wanted_configs.get(key)
            for key in sorted(set(wanted_configs) | set(live_configs))
            if wanted_configs.get(key) != live_configs.get(key)
        }
        change.diff = {
            f"configs.{key}": {"from": live_configs.get(key), "to": value}
            for key, value in config_changes.items()
        }
        if partitions != live_partitions:
            change.diff["partitions"] = {"from": live_partitions, "to": partitions}
            check_add_partitions(actor=self.actor, topic=topic, partitions=partitions)
            Topic.objects.filter(pk=topic.pk).update(partitions=partitions)
            topic.partitions = partitions
        if config_changes:
            check_topic_configs(actor=self.actor, topic=topic, configs=config_changes)
        if change.diff:
            change.action = Action.UPDATE

    def plan_grant(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        cluster, team = change.cluster_row, change.team_row
        account = self.account_named(team.organization_id, change.spec["serviceAccount"])
        if account is None:
            raise ServiceError(
                f"No service account named {change.spec['serviceAccount']!r}; declare it in the file set or "
                "create it first.",
                code="unknown_service_account",
            )
        wanted = _grant_fields(change.spec)
        grants = self.grants_of(cluster)
        grant = None
        if managed is not None and managed.resource_id is not None:
            grant = next((g for g in grants.values() if g.pk == managed.resource_id), None)
        if grant is None:
            grant = grants.get((account.pk, *(wanted[f] for f in GRANT_FIELDS)))
        arguments = {"actor": self.actor, "cluster": cluster, "service_account": account, **wanted}
        if grant is None:
            change.action = Action.CREATE
            change.diff = {"serviceAccount": {"from": None, "to": account.name}} | {
                key: {"from": None, "to": value} for key, value in _shown_grant(wanted).items() if value
            }
            check_grant(**arguments)
            return
        change.target_id = grant.pk
        _require_same_team(change, grant.team_id, "grant")
        current = {key: getattr(grant, key) for key in wanted}
        if current != wanted or grant.service_account_id != account.pk:
            change.action = Action.UPDATE
            change.diff = {
                key: {"from": _shown_grant(current)[key], "to": value}
                for key, value in _shown_grant(wanted).items()
                if _shown_grant(current)[key] != value
            }
            if grant.service_account_id != account.pk:
                change.diff["serviceAccount"] = {"from": grant.service_account.name, "to": account.name}
            # A grant is replaced: its bindings are revoked, the new template's created.
            check_revoke_grant(actor=self.actor, grant=grant)
            check_grant(**arguments)

    def plan_quota(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        cluster, team = change.cluster_row, change.team_row
        entity = _quota_entity(change.spec)
        quota = ClientQuota.objects.filter(cluster=cluster, entity_key=entity_key(entity)).first()
        wanted = {key: float(value) for key, value in change.spec["values"].items()}
        current = dict(quota.values) if quota is not None and quota.managed else {}
        values: dict[str, float | None] = {
            key: wanted.get(key)
            for key in sorted(set(wanted) | set(current))
            if wanted.get(key) != current.get(key)
        }
        if quota is not None:
            change.target_id = quota.pk
            if quota.team_id is not None:
                _require_same_team(change, quota.team_id, "quota")
            if quota.managed and quota.observed_values != quota.values:
                change.drift = {"values": {"recorded": quota.values, "on_cluster": quota.observed_values}}
        if quota is None or not quota.managed:
            change.action = Action.CREATE
        elif values:
            change.action = Action.UPDATE
        change.diff = {
            f"values.{key}": {"from": current.get(key), "to": value} for key, value in values.items()
        }
        if change.action != Action.UNCHANGED:
            check_quota(actor=self.actor, cluster=cluster, entity=entity, values=values)
            if change.team_row.pk != (_quota_team(cluster, entity) or team).pk:
                raise ServiceError(
                    f"The quota's user {entity.get('user')!r} belongs to another team.", code="other_team"
                )

    def plan_schema(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        waits_on = self.reference_cycles.get(change.document)
        if waits_on:
            raise ServiceError(
                f"Subject {change.name!r} is on a cycle of references through {', '.join(waits_on)}: no "
                "order registers them; break the cycle.",
                code="reference_cycle",
                details={"subjects": waits_on},
            )
        change.drift = self.schemas.drift(
            cluster=change.cluster_row,
            subject=change.name,
            recorded_id=managed.resource_id if managed is not None else None,
        )
        change.action, change.diff, change.target_id = self.schemas.plan(
            cluster=change.cluster_row, team=change.team_row, subject=change.name, spec=change.spec
        )
        if set(change.diff) - {"compatibility"}:
            # Schemas planned after this one may reference its new version.
            self.schemas.simulate_register(cluster=change.cluster_row, subject=change.name, spec=change.spec)

    def plan_alert_channel(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        change.action, change.diff, change.target_id = alerting.plan_channel(
            actor=self.actor, team=change.team_row, name=change.name, spec=change.spec
        )

    def plan_alert_rule(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        change.action, change.diff, change.target_id = alerting.plan_rule(
            actor=self.actor,
            team=change.team_row,
            cluster=change.cluster_row,
            name=change.name,
            spec=change.spec,
        )

    def plan_streaming_job(self, change: PlannedChange, managed: ManagedResource | None) -> None:
        change.action, change.diff, change.target_id = streaming.plan_stream(
            actor=self.actor,
            team=change.team_row,
            cluster=change.cluster_row,
            name=change.name,
            spec=change.spec,
        )

    # --- resources no document declares any more -----------------------------------------------------

    def plan_deletion(self, managed: ManagedResource) -> PlannedChange:
        change = PlannedChange(
            kind=managed.kind,
            name=managed.name,
            team=managed.team.slug,
            cluster=managed.cluster.name if managed.cluster_id else None,
            action=Action.DELETE,
            diff={"exists": {"from": True, "to": False}},
            team_row=managed.team,
            cluster_row=managed.cluster,
            target_id=managed.resource_id,
        )
        try:
            if managed.kind == Kind.TOPIC:
                topic = Topic.objects.filter(cluster=managed.cluster, name=managed.name).first()
                change.target_id = topic.pk if topic is not None else None
                if topic is not None:
                    check_topic_delete(actor=self.actor, topic=topic)
            elif managed.kind == Kind.ACCESS_GRANT:
                grant = AccessGrant.objects.filter(pk=managed.resource_id).first()
                if grant is not None:
                    check_revoke_grant(actor=self.actor, grant=grant)
                change.target_id = grant.pk if grant is not None else None
            elif managed.kind == Kind.QUOTA:
                quota = ClientQuota.objects.filter(pk=managed.resource_id).first()
                if quota is not None:
                    check_quota_delete(actor=self.actor, quota=quota)
                change.target_id = quota.pk if quota is not None else None
            elif managed.kind in (Kind.ALERT_RULE, Kind.ALERT_CHANNEL):
                change.target_id = alerting.check_delete(
                    actor=self.actor, kind=managed.kind, resource_id=managed.resource_id
                )
            elif managed.kind == Kind.STREAMING_JOB:
                # The API deletes no stream: pruning stops it (its checkpoint and history stay).
                change.diff = {"desiredState": {"from": None, "to": "stopped"}}
                change.target_id = streaming.check_stop(actor=self.actor, resource_id=managed.resource_id)
            elif managed.kind == Kind.SCHEMA:
                self.schemas.check_delete(cluster=managed.cluster, team=managed.team, subject=managed.name)
            elif managed.kind == Kind.SERVICE_ACCOUNT:
                account = ServiceAccount.objects.filter(pk=managed.resource_id).first()
                if account is not None:
                    require_team_role(
                        self.actor, account.team, TeamRole.TEAM_ADMIN
                    )  # delete_service_account's
                change.target_id = account.pk if account is not None else None
        except ServiceError as refusal:
            change.refuse(refusal)
        return change


def _require_same_team(change: PlannedChange, team_id: int | None, what: str) -> None:
    if team_id != change.team_row.pk:
        raise ServiceError(
            f"The {what} {change.name!r} belongs to another team; a file set declares its own team's resources.",
            code="other_team",
        )


def _topic_drift(
    topic: Topic, live_partitions: int, live_configs: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    drift: dict[str, dict[str, Any]] = {}
    if topic.partitions != live_partitions:
        drift["partitions"] = {"recorded": topic.partitions, "on_cluster": live_partitions}
    for key in sorted(set(topic.configs) | set(live_configs)):
        if topic.configs.get(key) != live_configs.get(key):
            drift[f"configs.{key}"] = {
                "recorded": topic.configs.get(key),
                "on_cluster": live_configs.get(key),
            }
    return drift


GRANT_FIELDS = ("template", "topic_prefix", "group_prefix", "transactional_id_prefix")


def _grant_fields(spec: Mapping[str, Any]) -> dict[str, str]:
    return {
        "template": spec["template"],
        "topic_prefix": spec["topicPrefix"],
        "group_prefix": spec.get("groupPrefix", ""),
        "transactional_id_prefix": spec.get("transactionalIdPrefix", ""),
    }


def _shown_grant(fields: Mapping[str, str]) -> dict[str, str]:
    return {
        "template": fields["template"],
        "topicPrefix": fields["topic_prefix"],
        "groupPrefix": fields["group_prefix"],
        "transactionalIdPrefix": fields["transactional_id_prefix"],
    }


def _quota_entity(spec: Mapping[str, Any]) -> dict[str, str | None]:
    entity: dict[str, str | None] = {}
    if spec.get("user"):
        entity["user"] = spec["user"]
    if spec.get("clientId"):
        entity["client-id"] = spec["clientId"]
    if not entity:
        raise ServiceError(
            "A quota names a user (service account), a client id or both.", code="invalid_entity"
        )
    return entity


def _quota_team(cluster: Cluster, entity: Mapping[str, str | None]) -> Team | None:
    account = ServiceAccount.objects.filter(
        organization_id=cluster.organization_id, name=entity.get("user") or ""
    )
    found = account.select_related("team").first()
    return found.team if found is not None else None


def cluster_changes(change: PlannedChange) -> int:
    """The team's rate-limited cluster changes applying `change` makes: one per request of the services
    that call check_change_rate (a topic's partitions and its configs are two; a grant replaced is revoked
    then created)."""
    if change.action == Action.DELETE:
        counted = change.kind in (Kind.TOPIC, Kind.ACCESS_GRANT, Kind.QUOTA)
        return 1 if counted and change.target_id is not None else 0
    if change.action == Action.CREATE:
        return 1 if change.kind in (Kind.TOPIC, Kind.ACCESS_GRANT, Kind.QUOTA) else 0
    if change.action != Action.UPDATE:
        return 0
    if change.kind == Kind.TOPIC:
        return ("partitions" in change.diff) + any(key.startswith("configs.") for key in change.diff)
    if change.kind == Kind.ACCESS_GRANT:
        return 2 if set(change.diff) - {MANAGED_BY, "labels"} else 0
    if change.kind == Kind.QUOTA:
        return 1 if any(key.startswith("values.") for key in change.diff) else 0
    return 0


def refuse_over_change_rate(changes: list[PlannedChange]) -> None:
    """An apply never stops midway for the team's change rate: a plan making more cluster changes than the
    team may make now refuses those past what is left, saying how many fit and why (README, "GitOps in 5
    minutes": why a refusal and not a paced apply)."""
    by_team: dict[int, list[tuple[PlannedChange, int]]] = {}
    for change in changes:
        counted = cluster_changes(change) if change.action != Action.REFUSED else 0
        if counted:
            by_team.setdefault(change.team_row.pk, []).append((change, counted))
    for counted_changes in by_team.values():
        team = counted_changes[0][0].team_row
        total = sum(counted for _, counted in counted_changes)
        room = change_room(team)
        if total <= room.left:
            continue
        details = {
            "cluster_changes": total,
            "limit_per_minute": room.limit_per_minute,
            "made_in_last_minute": room.recent,
            "fit_now": room.left,
        }
        if total > room.limit_per_minute:
            message = (
                f"The plan makes {total} cluster changes for team {team.name}; its limit is "
                f"{room.limit_per_minute} per minute, and an apply never stops midway. Apply at most "
                f"{room.limit_per_minute} changes at a time (fewer documents per apply), or ask an org admin "
                "to raise the team's admin operations per minute for the rollout."
            )
        else:
            message = (
                f"The plan makes {total} cluster changes for team {team.name}; {room.recent} were made in the "
                f"last minute and its limit is {room.limit_per_minute} per minute, so {room.left} fit now. "
                "Plan and apply again within a minute."
            )
            details["retry_after_seconds"] = int(RATE_WINDOW.total_seconds())
        used = 0
        for change, counted in counted_changes:
            used += counted
            if used > room.left:
                _refused(change, "change_rate_limit", message, **details)


def _kind_rank(kind: str) -> int:
    return APPLIED_KINDS.index(kind) if kind in APPLIED_KINDS else len(APPLIED_KINDS)


def plan_documents(
    *, actor: Actor, documents: list[Document], file_set: str, prune: bool, team: str | None = None
) -> Plan:
    """The plan of the documents as one file set. With `prune`, resources the file set manages that no
    document declares are deleted (of the documents' teams, or `team`); others are never touched."""
    planner = Planner(actor=actor, file_set=file_set)
    changes: list[PlannedChange] = []
    schema_rank, planner.reference_cycles = reference_order(
        [(d.index, d.cluster, d.name, d.spec) for d in documents if d.kind == Kind.SCHEMA]
    )
    # Within a kind, in the documents' order, but a referenced subject before the schemas referencing it.
    ordered = sorted(documents, key=lambda d: (_kind_rank(d.kind), schema_rank.get(d.index, d.index)))
    declared = {
        (d.kind, d.cluster if d.kind not in CLAIMED_WITHOUT_CLUSTER else None, d.name) for d in documents
    }
    team_slugs = {d.team for d in documents if d.team} | ({team} if team else set())
    undeclared = list(
        ManagedResource.objects.filter(
            organization_id__in=planner.organization_ids, file_set=file_set, team__slug__in=team_slugs
        ).select_related("team", "cluster")
    )
    undeclared = [
        m for m in undeclared if (m.kind, m.cluster.name if m.cluster_id else None, m.name) not in declared
    ]
    for cluster_name in sorted({d.cluster for d in documents if d.kind == Kind.TOPIC and d.cluster}):
        cluster = planner.cluster_named(cluster_name)
        if cluster is not None:
            planner.read_topics(cluster, [d.name for d in documents if d.kind == Kind.TOPIC])
    try:
        with transaction.atomic(), change_rate_counted_by_plan():
            changes = [planner.plan_document(document) for document in ordered]
            if prune:
                deletions = [planner.plan_deletion(m) for m in undeclared]
                changes += sorted(deletions, key=lambda c: -_kind_rank(c.kind))
            raise _Rollback
    except _Rollback:
        pass
    finally:
        planner.schemas.forget_simulated()
    # Counted after the simulation, whose changes the window does not see anyway.
    refuse_over_change_rate(changes)
    shown_undeclared = [
        {
            "kind": m.kind,
            "name": m.name,
            "team": m.team.slug,
            "cluster": m.cluster.name if m.cluster_id else None,
            "change_set": m.change_set_id,
        }
        for m in undeclared
    ]
    return Plan(file_set=file_set, prune=prune, changes=changes, undeclared=[] if prune else shown_undeclared)
