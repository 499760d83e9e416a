"""One reconciliation pass over a cluster.

Desired state lives in the database (managed rows); observed state comes from the cluster. A pass
re-creates managed topics, ACL bindings and quotas that are missing, records what it observed (so lists
answer from the database), reports drift, and records unmanaged resources without ever deleting them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from controlplane.acls.models import AclBinding
from controlplane.clusters import outcomes
from controlplane.clusters.choices import OperationKind
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.clusters.ownership import owner_in, prefix_table
from controlplane.groups.choices import PROTOCOL_ONLY_TYPES
from controlplane.groups.models import ConsumerGroup
from controlplane.groups.services import lags_from
from controlplane.kafka.acls import create_acls, describe_acls
from controlplane.kafka.configs import describe_topic_configs
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.groups import describe_groups, list_group_offsets, list_groups
from controlplane.kafka.log_dirs import describe_partition_sizes
from controlplane.kafka.offsets import list_partition_offsets
from controlplane.kafka.quotas import alter_client_quota, describe_client_quotas
from controlplane.kafka.topics import TopicInfo, create_topic, list_topics
from controlplane.quotas.choices import entity_key
from controlplane.quotas.models import ClientQuota
from controlplane.reconcile.choices import DriftKind, RunState
from controlplane.reconcile.models import Drift, ReconcileRun
from controlplane.tenancy.choices import PrefixResourceType
from controlplane.topics.models import Topic

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 20.0
DYNAMIC_TOPIC_CONFIG = "DYNAMIC_TOPIC_CONFIG"


@dataclass
class Findings:
    drifts: list[Drift] = field(default_factory=list)
    created: list[str] = field(default_factory=list)

    def drift(self, kind: str, resource_type: str, name: str, team_id: int | None, /, **details: Any) -> None:
        self.drifts.append(
            Drift(
                kind=kind,
                resource_type=resource_type,
                resource_name=name[:600],
                team_id=team_id,
                details=details,
            )
        )


def reconcile_cluster(cluster: Cluster) -> ReconcileRun:
    run = ReconcileRun.objects.create(cluster=cluster)
    findings = Findings()
    connection = connection_for(cluster)
    try:
        log_ends = reconcile_topics(cluster, connection, findings)
        reconcile_acls(cluster, connection, findings)
        reconcile_quotas(cluster, connection, findings)
        observe_groups(cluster, connection, log_ends)
    except KafkaGatewayError as error:
        run.state, run.error = RunState.FAILED, f"{error.error_name}: {error.message}"
        logger.warning("reconciling %s failed: %s", cluster.name, error)
    except Exception as error:  # a bug must not leave the run "running" forever; the log has the trace
        run.state, run.error = RunState.FAILED, f"internal error: {error!r}"
        logger.exception("reconciling %s failed", cluster.name)
    else:
        run.state = RunState.SUCCEEDED
    with transaction.atomic():
        if run.state == RunState.SUCCEEDED:
            # The latest successful pass is the truth about drift; a failed pass leaves the last findings.
            Drift.objects.filter(cluster=cluster).delete()
            for drift in findings.drifts:
                drift.cluster, drift.run = cluster, run
            Drift.objects.bulk_create(findings.drifts)
        run.finished_at = timezone.now()
        run.summary = {
            "created": findings.created,
            "drift": {
                kind: sum(1 for d in findings.drifts if d.kind == kind)
                for kind in {d.kind for d in findings.drifts}
            },
        }
        run.save()
    return run


def reconcile_topics(
    cluster: Cluster, connection: Connection, findings: Findings
) -> dict[tuple[str, int], int]:
    """Returns the log-end offset of every partition (the group sampler needs them too)."""
    # Changes still being confirmed are settled first, so what follows sees their recorded outcome.
    outcomes.settle_running(cluster)
    observed = {
        name: info
        for name, info in list_topics(connection, timeout_seconds=TIMEOUT_SECONDS).items()
        if not info.internal
    }
    adopt_late_changes(cluster, observed, findings)
    rows = {topic.name: topic for topic in Topic.objects.filter(cluster=cluster)}
    for name, topic in rows.items():
        if topic.managed and name not in observed:
            try:
                create_topic(
                    connection,
                    name=name,
                    partitions=topic.partitions,
                    replication_factor=topic.replication_factor,
                    configs=topic.configs,
                    timeout_seconds=TIMEOUT_SECONDS,
                )
            except KafkaGatewayError as error:
                if error.error_name != "TOPIC_ALREADY_EXISTS":
                    raise
            findings.created.append(f"topic:{name}")
            findings.drift(DriftKind.MANAGED_TOPIC_MISSING, "topic", name, topic.team_id, recreated=True)
    if any(name not in observed for name, topic in rows.items() if topic.managed):
        observed = {
            n: i
            for n, i in list_topics(connection, timeout_seconds=TIMEOUT_SECONDS).items()
            if not i.internal
        }

    partitions = [(name, p.partition) for name, info in observed.items() for p in info.partitions]
    starts = list_partition_offsets(connection, partitions, spec="earliest", timeout_seconds=TIMEOUT_SECONDS)
    ends = list_partition_offsets(connection, partitions, spec="latest", timeout_seconds=TIMEOUT_SECONDS)
    sizes = describe_partition_sizes(connection, timeout_seconds=TIMEOUT_SECONDS)
    configs = describe_topic_configs(connection, list(observed), timeout_seconds=TIMEOUT_SECONDS)
    now = timezone.now()

    to_update, to_create = [], []
    for name, info in observed.items():
        overrides = {
            key: value.value
            for key, value in configs.get(name, {}).items()
            if value.source == DYNAMIC_TOPIC_CONFIG
        }
        details = [
            {
                "partition": p.partition,
                "leader": p.leader,
                "replicas": p.replicas,
                "isr": p.isr,
                "start_offset": starts.get((name, p.partition), 0),
                "end_offset": ends.get((name, p.partition), 0),
                "size_bytes": sizes.get((name, p.partition), 0),
            }
            for p in info.partitions
        ]
        topic = rows.get(name)
        if topic is None:
            topic = Topic(
                cluster=cluster, team=None, name=name, managed=False, partitions=len(info.partitions)
            )
            to_create.append(topic)
            findings.drift(DriftKind.UNMANAGED_TOPIC, "topic", name, None, partitions=len(info.partitions))
        else:
            to_update.append(topic)
        topic.exists_on_cluster = True
        topic.observed_partitions = len(info.partitions)
        topic.observed_replication_factor = info.replication_factor
        topic.observed_configs = overrides
        topic.partition_details = details
        topic.size_bytes = sum(d["size_bytes"] for d in details)
        topic.message_count = sum(max(d["end_offset"] - d["start_offset"], 0) for d in details)
        topic.observed_at = now
        if topic.managed and topic.pk is not None:
            _topic_drift(topic, findings)
    with transaction.atomic():
        Topic.objects.bulk_create(to_create, batch_size=500)
        Topic.objects.bulk_update(
            to_update,
            [
                "exists_on_cluster",
                "observed_partitions",
                "observed_replication_factor",
                "observed_configs",
                "partition_details",
                "size_bytes",
                "message_count",
                "observed_at",
            ],
            batch_size=500,
        )
        # Unmanaged topics that went away are forgotten; managed ones were re-created above.
        Topic.objects.filter(cluster=cluster, managed=False).exclude(name__in=list(observed)).delete()
    for topic in to_update:
        if not topic.managed:
            findings.drift(
                DriftKind.UNMANAGED_TOPIC, "topic", topic.name, None, partitions=topic.observed_partitions
            )
    return ends


def adopt_late_changes(cluster: Cluster, observed: dict[str, TopicInfo], findings: Findings) -> None:
    """Topic creates and deletes reported failed because the cluster did not show them in time, which it
    shows now: recorded for the team and request that asked (never re-created or left unmanaged)."""
    managed = set(Topic.objects.filter(cluster=cluster, managed=True).values_list("name", flat=True))
    for name in sorted(set(observed) - managed):
        operation = outcomes.adoptable(cluster, OperationKind.TOPIC_CREATE, name)
        if operation is not None:
            info = observed[name]
            shape = {
                "exists": True,
                "partitions": len(info.partitions),
                "replication_factor": info.replication_factor,
            }
            outcomes.adopt(operation, outcomes.Look(applied=True, observed=shape))
            findings.created.append(f"adopted topic:{name} (operation {operation.id})")
    for name in sorted(managed - set(observed)):
        operation = outcomes.adoptable(cluster, OperationKind.TOPIC_DELETE, name)
        if operation is not None:
            outcomes.adopt(operation, outcomes.Look(applied=True, observed={"exists": False}))
            findings.created.append(f"adopted deletion of topic:{name} (operation {operation.id})")


def _topic_drift(topic: Topic, findings: Findings) -> None:
    desired, observed = topic.configs, topic.observed_configs
    changed = {
        key: {"desired": desired.get(key), "observed": observed.get(key)}
        for key in sorted(set(desired) | set(observed))
        if desired.get(key) != observed.get(key)
    }
    if changed:
        findings.drift(DriftKind.TOPIC_CONFIG_CHANGED, "topic", topic.name, topic.team_id, configs=changed)
    if topic.observed_partitions != topic.partitions:
        findings.drift(
            DriftKind.TOPIC_PARTITIONS_CHANGED,
            "topic",
            topic.name,
            topic.team_id,
            desired=topic.partitions,
            observed=topic.observed_partitions,
        )


def reconcile_acls(cluster: Cluster, connection: Connection, findings: Findings) -> None:
    try:
        observed = set(describe_acls(connection, timeout_seconds=TIMEOUT_SECONDS))
    except KafkaGatewayError as error:
        if error.error_name == "SECURITY_DISABLED":
            return  # a cluster without an authorizer has no ACLs to keep in agreement
        raise
    managed = list(AclBinding.objects.filter(cluster=cluster, managed=True))
    missing = {binding.acl for binding in managed} - observed
    if missing:
        create_acls(connection, sorted(missing), timeout_seconds=TIMEOUT_SECONDS)
        for binding in managed:
            if binding.acl in missing:
                findings.drift(
                    DriftKind.MANAGED_ACL_MISSING, "acl", str(binding), binding.team_id, recreated=True
                )
        findings.created += [f"acl:{acl}" for acl in sorted(missing)]
    managed_acls = {binding.acl for binding in managed}
    unmanaged_rows = {row.acl: row for row in AclBinding.objects.filter(cluster=cluster, managed=False)}
    with transaction.atomic():
        AclBinding.objects.filter(cluster=cluster, managed=True).update(exists_on_cluster=True)
        gone = [row.pk for acl, row in unmanaged_rows.items() if acl not in observed]
        AclBinding.objects.filter(pk__in=gone).delete()
        new_rows = [
            AclBinding(cluster=cluster, managed=False, exists_on_cluster=True, **AclBinding.fields_of(acl))
            for acl in sorted(observed - managed_acls)
            if acl not in unmanaged_rows
        ]
        AclBinding.objects.bulk_create(new_rows)
    for acl in sorted(observed - managed_acls):
        findings.drift(
            DriftKind.UNMANAGED_ACL,
            "acl",
            str(AclBinding(**AclBinding.fields_of(acl))),
            None,
            **AclBinding.fields_of(acl),
        )


def reconcile_quotas(cluster: Cluster, connection: Connection, findings: Findings) -> None:
    try:
        entries = describe_client_quotas(connection, timeout_seconds=TIMEOUT_SECONDS)
    except KafkaGatewayError as error:
        if error.error_name in ("UNSUPPORTED_VERSION", "SECURITY_DISABLED"):
            return  # a cluster without quota support has nothing to reconcile
        raise
    observed = {entity_key(entry.entity): entry for entry in entries}
    rows = {row.entity_key: row for row in ClientQuota.objects.filter(cluster=cluster)}
    now = timezone.now()
    for key, row in rows.items():
        entry = observed.get(key)
        if row.managed and row.values and entry is None:
            alter_client_quota(
                connection, entity=row.entity, set_values=row.values, timeout_seconds=TIMEOUT_SECONDS
            )
            findings.created.append(f"quota:{key}")
            findings.drift(DriftKind.MANAGED_QUOTA_MISSING, "quota", key, row.team_id, recreated=True)
            row.observed_values = dict(row.values)
        elif entry is not None:
            row.observed_values = entry.values
            if row.managed and entry.values != row.values:
                findings.drift(
                    DriftKind.QUOTA_CHANGED,
                    "quota",
                    key,
                    row.team_id,
                    desired=row.values,
                    observed=entry.values,
                )
        elif not row.managed:
            row.delete()
            continue
        row.exists_on_cluster, row.observed_at = key in observed or row.managed, now
        row.save(update_fields=["observed_values", "exists_on_cluster", "observed_at"])
    for key, entry in observed.items():
        if key not in rows or not rows[key].managed:
            if key not in rows:
                ClientQuota.objects.create(
                    cluster=cluster,
                    entity=entry.entity,
                    entity_key=key,
                    managed=False,
                    values={},
                    exists_on_cluster=True,
                    observed_values=entry.values,
                    observed_at=now,
                )
            findings.drift(DriftKind.UNMANAGED_QUOTA, "quota", key, None, values=entry.values)


def observe_groups(cluster: Cluster, connection: Connection, log_ends: dict[tuple[str, int], int]) -> None:
    """Samples every group's state, committed offsets and lag into the database."""
    states = list_groups(connection, timeout_seconds=TIMEOUT_SECONDS)
    committed = list_group_offsets(connection, list(states), timeout_seconds=TIMEOUT_SECONDS)
    descriptions = describe_groups(connection, list(states), timeout_seconds=TIMEOUT_SECONDS)
    owners = prefix_table(cluster.organization_id, PrefixResourceType.GROUP)
    rows = {group.name: group for group in ConsumerGroup.objects.filter(cluster=cluster)}
    now = timezone.now()
    to_create, to_update = [], []
    for name, state in states.items():
        lags = lags_from(committed.get(name, {}), log_ends)
        group = rows.get(name) or ConsumerGroup(cluster=cluster, name=name)
        (to_update if group.pk else to_create).append(group)
        description = descriptions.get(name)
        group.team_id = owner_in(owners, name)
        group.state = description.state if description else state
        group.member_count = len(description.members) if description else 0
        group.partition_lags = lags
        group.total_lag = sum(item["lag"] for item in lags)
        group.observed_at = now
    with transaction.atomic():
        ConsumerGroup.objects.bulk_create(to_create, batch_size=500)
        ConsumerGroup.objects.bulk_update(
            to_update,
            ["team", "state", "member_count", "partition_lags", "total_lag", "observed_at"],
            batch_size=500,
        )
        # Share and Streams groups are not in librdkafka's listing: the lag sampler keeps their rows.
        ConsumerGroup.objects.filter(cluster=cluster).exclude(name__in=list(states)).exclude(
            group_type__in=PROTOCOL_ONLY_TYPES
        ).delete()
