"""Replication flows: MirrorMaker 2's source, checkpoint and heartbeat connectors, run for a team on a Connect
cluster attached to the target cluster (MM2's advice: replicate by consuming remotely, producing locally).

Tenancy: a flow copies only its team's topics and groups. Its patterns must begin with one of the team's
prefixes and hold no alternation outside a group (MM2 matches the whole name), so nothing they match lies
outside the team. The flow logs in to each cluster as a Kafka user of its own whose ACLs are the team's
prefixes only: on the source read-only (topics READ/DESCRIBE/DESCRIBE_CONFIGS, groups DESCRIBE, DESCRIBE on the
cluster only with ACL sync), on the target the replica topics and MM2's internal topics (all named after the
flow's unique source alias) and the team's groups (for offset sync). Passwords reach the workers through the
config provider's 0600 files; neither the connector configs, the API, the audit log nor our logs hold them.
Teams never reach Connect: only controlplane.connect.services calls it.

Lag is measured by comparing end offsets: a partition's replica is `source end - replica end` records behind.
MM2 starts a new topic at the source's earliest offset and copies every record, so both logs hold the same
records when the source's log starts at 0 and holds no transaction markers (a transactional or trimmed source
shows a constant offset difference instead; the offset syncs would then be the better measure).
"""

from __future__ import annotations

import re
import secrets as tokens
import time
from typing import Any

from controlplane.clusters.connections import connection_for, default_replication_factor
from controlplane.clusters.models import Cluster
from controlplane.connect import services as connect
from controlplane.connect.choices import ConnectClusterStatus, ConnectorState
from controlplane.connect.models import ConnectCluster
from controlplane.core.changes import Change, audited_change
from controlplane.core.encryption import decrypt_secret, encrypt_secret
from controlplane.core.errors import Conflict, ServiceError
from controlplane.kafka.acls import Acl, create_acls, delete_acls
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.groups import alter_group_offsets
from controlplane.kafka.offsets import list_partition_offsets
from controlplane.kafka.reader import TopicReader
from controlplane.kafka.scram import delete_scram_credential, upsert_scram_credential
from controlplane.kafka.topics import delete_topic, list_topics
from controlplane.replication import checkpoints
from controlplane.replication.choices import (
    CHECKPOINT_CONNECTOR,
    HEARTBEAT_CONNECTOR,
    POLICY_CLASSES,
    SOURCE_CONNECTOR,
    FlowState,
    ReplicationPolicy,
)
from controlplane.replication.models import ReplicationFlow
from controlplane.tenancy.access import Actor, require_org_admin, require_team_role
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.models import Team, TeamPrefix

NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$")
TARGET_ALIAS = "target"
SCRAM_ITERATIONS = 8192
# How often MM2 looks for new topics and groups matching the flow's patterns (its default, 10 minutes, would
# leave a topic created after the flow unreplicated for that long).
REFRESH_SECONDS = 10
HEARTBEATS_TOPIC = "heartbeats"
READ_TIMEOUT_SECONDS = 15.0
REPLICA_OPERATIONS = ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALTER", "READ", "WRITE")
CONNECTOR_KINDS = (
    ("source", SOURCE_CONNECTOR),
    ("checkpoint", CHECKPOINT_CONNECTOR),
    ("heartbeat", HEARTBEAT_CONNECTOR),
)


# --- Names ------------------------------------------------------------------------------------------------


def connector_names(flow: ReplicationFlow) -> dict[str, str]:
    return {kind: f"streamhub-replication-{flow.pk}-{kind}" for kind, _class in CONNECTOR_KINDS}


def replica_topic(flow: ReplicationFlow, topic: str) -> str:
    if flow.replication_policy == ReplicationPolicy.IDENTITY:
        return topic
    return f"{flow.source_alias}.{topic}"


def checkpoints_topic(flow: ReplicationFlow) -> str:
    return f"{flow.source_alias}.checkpoints.internal"


def offset_syncs_topic(flow: ReplicationFlow) -> str:
    # Kept on the target (offset-syncs.topic.location=target), so the source user stays read-only; MM2 then
    # names it after the source's alias.
    return f"mm2-offset-syncs.{flow.source_alias}.internal"


def _prefixes(team: Team, resource_type: str) -> list[str]:
    return list(
        TeamPrefix.objects.filter(team=team, resource_type=resource_type).values_list("prefix", flat=True)
    )


# --- Patterns ---------------------------------------------------------------------------------------------


def _has_top_level_alternation(pattern: str) -> bool:
    """Whether `|` splits the whole pattern (a match could then start anywhere): outside groups and classes."""
    depth, in_class, escaped = 0, False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


def check_pattern(pattern: str, prefixes: list[str], what: str) -> None:
    """Refuses a pattern that may match a name outside `prefixes`: see the module's docstring."""
    field = f"{what}_pattern"
    if not prefixes:
        raise ServiceError(
            f"The team owns no {what} prefix to replicate.",
            code="no_prefix",
            details={"fields": {field: ["the team has no prefix of this kind"]}},
        )
    try:
        re.compile(pattern)
    except re.error as error:
        raise ServiceError(
            f"Not a regular expression: {error}.",
            code="invalid_pattern",
            details={"fields": {field: [str(error)]}},
        ) from None
    # MM2 reads its topic and group settings as comma-separated lists of patterns.
    inside = any(pattern.startswith((re.escape(prefix), prefix.replace(".", r"\."))) for prefix in prefixes)
    if "," in pattern or not inside or _has_top_level_alternation(pattern):
        raise ServiceError(
            f"The {what} pattern must begin with one of the team's {what} prefixes (dots escaped) and may not "
            "hold commas or a top-level '|': it may only match the team's own names.",
            code=f"{what}_outside_team",
            details={
                "fields": {field: [f"{pattern!r} may match names outside the team"]},
                "prefixes": prefixes,
            },
        )


# --- ACLs ---------------------------------------------------------------------------------------------------


def _user(flow: ReplicationFlow, side: str) -> str:
    return f"User:{flow.source_principal if side == 'source' else flow.target_principal}"


def source_acls(flow: ReplicationFlow) -> list[Acl]:
    """Read-only: the team's topics (records, configs) and its groups' committed offsets."""
    principal = _user(flow, "source")
    acls = [
        Acl("TOPIC", prefix, "PREFIXED", principal, "*", op, "ALLOW")
        for prefix in _prefixes(flow.team, PrefixResourceType.TOPIC)
        for op in ("READ", "DESCRIBE", "DESCRIBE_CONFIGS")
    ]
    acls += [
        Acl("GROUP", prefix, "PREFIXED", principal, "*", "DESCRIBE", "ALLOW")
        for prefix in _prefixes(flow.team, PrefixResourceType.GROUP)
    ]
    if flow.sync_topic_acls:
        # ACL sync lists the source's ACLs (DescribeAcls), which needs DESCRIBE on the cluster; it is read-only.
        # DescribeCluster, which MM2's admin also calls, needs no grant (as in Kafka).
        acls.append(_describe_source_cluster(principal))
    return acls


def _describe_source_cluster(principal: str) -> Acl:
    return Acl("BROKER", "kafka-cluster", "LITERAL", principal, "*", "DESCRIBE", "ALLOW")


def _replica_prefixes(flow: ReplicationFlow) -> list[str]:
    """Where the flow's topics live on the target: its alias's prefix, and the team's own prefixes when replicas
    keep their names (identity policy)."""
    prefixes = [f"{flow.source_alias}."]
    if flow.replication_policy == ReplicationPolicy.IDENTITY:
        prefixes += _prefixes(flow.team, PrefixResourceType.TOPIC)
    return prefixes


def target_acls(flow: ReplicationFlow) -> list[Acl]:
    """The flow's user on the target: its replica and internal topics, the heartbeats topic, the team's groups
    (offset sync and failover commit their translated offsets), and with ACL sync the right to create ACLs."""
    principal = _user(flow, "target")
    acls = [
        Acl("TOPIC", prefix, "PREFIXED", principal, "*", op, "ALLOW")
        for prefix in _replica_prefixes(flow)
        for op in REPLICA_OPERATIONS
    ]
    acls += [
        Acl("TOPIC", offset_syncs_topic(flow), "LITERAL", principal, "*", op, "ALLOW")
        for op in REPLICA_OPERATIONS
    ]
    acls += [
        Acl("TOPIC", HEARTBEATS_TOPIC, "LITERAL", principal, "*", op, "ALLOW")
        for op in ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS")
    ]
    acls += [
        Acl("GROUP", prefix, "PREFIXED", principal, "*", op, "ALLOW")
        for prefix in _prefixes(flow.team, PrefixResourceType.GROUP)
        for op in ("READ", "DESCRIBE")
    ]
    acls.append(Acl("BROKER", "kafka-cluster", "LITERAL", principal, "*", "DESCRIBE", "ALLOW"))
    if flow.sync_topic_acls:
        acls.append(Acl("BROKER", "kafka-cluster", "LITERAL", principal, "*", "ALTER", "ALLOW"))
    return acls


def worker_acls(flow: ReplicationFlow) -> list[Acl]:
    """The Connect workers' user produces what the connectors' tasks return: replicas, checkpoints, heartbeats."""
    principal = f"User:{flow.connect_cluster.principal_name}"
    acls = [
        Acl("TOPIC", prefix, "PREFIXED", principal, "*", op, "ALLOW")
        for prefix in _replica_prefixes(flow)
        for op in ("WRITE", "DESCRIBE")
    ]
    acls += [
        Acl("TOPIC", HEARTBEATS_TOPIC, "LITERAL", principal, "*", op, "ALLOW") for op in ("WRITE", "DESCRIBE")
    ]
    return acls


# --- Connector configs ---------------------------------------------------------------------------------------


def _jaas(cluster: Cluster, username: str, password: str) -> str:
    module = (
        "org.apache.kafka.common.security.scram.ScramLoginModule"
        if cluster.sasl_mechanism.startswith("SCRAM")
        else "org.apache.kafka.common.security.plain.PlainLoginModule"
    )
    return f'{module} required username="{username}" password="{password}";'


def _cluster_settings(prefix: str, cluster: Cluster) -> dict[str, str]:
    settings = {
        f"{prefix}.bootstrap.servers": cluster.bootstrap_servers,
        f"{prefix}.security.protocol": cluster.security_protocol,
    }
    if cluster.security_protocol.startswith("SASL"):
        settings[f"{prefix}.sasl.mechanism"] = cluster.sasl_mechanism
    return settings


def connector_configs(flow: ReplicationFlow) -> dict[str, dict[str, str]]:
    """The three connectors' configs, without secrets (the login modules are given apart, see _secrets)."""
    interval = str(flow.checkpoint_interval_seconds)
    replication = str(min(3, default_replication_factor(flow.target_cluster)))
    common = {
        "source.cluster.alias": flow.source_alias,
        "target.cluster.alias": TARGET_ALIAS,
        **_cluster_settings("source.cluster", flow.source_cluster),
        **_cluster_settings("target.cluster", flow.target_cluster),
        "replication.policy.class": POLICY_CLASSES[ReplicationPolicy(flow.replication_policy)],
        # MM2 copies bytes: the worker's JSON converters would re-encode every record.
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": replication,
        "tasks.max": "1",
    }
    groups = flow.groups_pattern or "$^"  # a pattern nothing matches: no checkpoints
    return {
        "source": {
            **common,
            "connector.class": SOURCE_CONNECTOR,
            "topics": flow.topics_pattern,
            "replication.factor": replication,
            "sync.topic.configs.enabled": str(flow.sync_topic_configs).lower(),
            "sync.topic.acls.enabled": str(flow.sync_topic_acls).lower(),
            "refresh.topics.interval.seconds": str(REFRESH_SECONDS),
            "offset.lag.max": str(flow.offset_lag_max),
        },
        "checkpoint": {
            **common,
            "connector.class": CHECKPOINT_CONNECTOR,
            "topics": flow.topics_pattern,
            "groups": groups,
            "checkpoints.topic.replication.factor": replication,
            "emit.checkpoints.interval.seconds": interval,
            "sync.group.offsets.enabled": str(flow.sync_group_offsets).lower(),
            "sync.group.offsets.interval.seconds": interval,
            "refresh.groups.interval.seconds": str(REFRESH_SECONDS),
        },
        "heartbeat": {
            **common,
            "connector.class": HEARTBEAT_CONNECTOR,
            "heartbeats.topic.replication.factor": replication,
        },
    }


def _secrets(flow: ReplicationFlow) -> dict[str, str]:
    return {
        "source.cluster.sasl.jaas.config": _jaas(
            flow.source_cluster, flow.source_principal, decrypt_secret(flow.source_password_encrypted)
        ),
        "target.cluster.sasl.jaas.config": _jaas(
            flow.target_cluster, flow.target_principal, decrypt_secret(flow.target_password_encrypted)
        ),
    }


# --- Lifecycle -------------------------------------------------------------------------------------------------


def _change(action: str, flow: ReplicationFlow | None, team: Team, name: str, **extra: Any) -> Change:
    change = Change(
        action=action,
        resource_type="replication_flow",
        organization_id=team.organization_id,
        team_id=team.id,
        team_name=team.name,
        resource_name=name,
        extra=extra,
    )
    if flow is not None and flow.pk:
        change.on(flow)
    return change


def _require_scram(cluster: Cluster, side: str) -> None:
    if not cluster.sasl_mechanism.startswith("SCRAM"):
        raise ServiceError(
            f"The {side} cluster must listen with SASL/SCRAM: the flow logs in as a user of its own.",
            code="unsupported_cluster",
            details={"fields": {f"{side}_cluster": ["no SASL/SCRAM listener"]}},
        )


def create_flow(
    *,
    actor: Actor,
    team: Team,
    name: str,
    source_cluster: Cluster,
    target_cluster: Cluster,
    connect_cluster: ConnectCluster,
    topics_pattern: str,
    groups_pattern: str = "",
    source_alias: str = "",
    replication_policy: str = ReplicationPolicy.DEFAULT,
    sync_topic_configs: bool = True,
    sync_topic_acls: bool = False,
    sync_group_offsets: bool = True,
    checkpoint_interval_seconds: int = 60,
    offset_lag_max: int = 100,
    lag_alert_records: int = 0,
) -> ReplicationFlow:
    """Checks the request, creates the flow's users and ACLs on both clusters and its three connectors; a
    failure after the flow is recorded leaves it FAILED with the reason (Connect's validation messages
    included; delete cleans up what was made)."""
    source_alias = source_alias or name
    change = _change(
        "replication_flow.create",
        None,
        team,
        name,
        source_cluster=source_cluster.name,
        target_cluster=target_cluster.name,
        topics_pattern=topics_pattern,
        groups_pattern=groups_pattern,
        replication_policy=replication_policy,
    )
    with audited_change(actor=actor, change=change):
        require_team_role(actor, team, TeamRole.DEVELOPER)
        if sync_topic_acls:
            # Creating ACLs on the target needs ALTER on the whole cluster: an org admin's decision.
            require_org_admin(actor, team.organization)
        for field, cluster in (("source_cluster", source_cluster), ("target_cluster", target_cluster)):
            if cluster.organization_id != team.organization_id:
                raise ServiceError(
                    "No such cluster.", code="not_found", details={"fields": {field: ["not found"]}}
                )
        if connect_cluster.organization_id != team.organization_id:
            raise ServiceError(
                "No such Connect cluster.",
                code="not_found",
                details={"fields": {"connect_cluster": ["not found"]}},
            )
        if source_cluster.pk == target_cluster.pk:
            raise ServiceError(
                "A flow copies between two different clusters.",
                code="same_cluster",
                details={"fields": {"target_cluster": ["same as the source"]}},
            )
        if connect_cluster.cluster_id != target_cluster.pk:
            raise ServiceError(
                "The Connect cluster must be attached to the target cluster (MM2 produces locally).",
                code="connect_cluster_elsewhere",
                details={"fields": {"connect_cluster": ["attached to another cluster"]}},
            )
        if connect_cluster.status not in (ConnectClusterStatus.RUNNING, ConnectClusterStatus.DEGRADED):
            raise ServiceError(
                f"The Connect cluster is {connect_cluster.status}.", code="connect_cluster_not_running"
            )
        _require_scram(source_cluster, "source")
        _require_scram(target_cluster, "target")
        for value, field in ((name, "name"), (source_alias, "source_alias")):
            if not NAME.match(value):
                raise ServiceError(
                    f"A flow's {field.replace('_', ' ')} is 1-40 lowercase letters, digits and dashes.",
                    code="invalid_name",
                    details={"fields": {field: ["1-40 lowercase letters, digits and dashes"]}},
                )
        check_pattern(topics_pattern, _prefixes(team, PrefixResourceType.TOPIC), "topics")
        if groups_pattern:
            check_pattern(groups_pattern, _prefixes(team, PrefixResourceType.GROUP), "groups")
        live = ReplicationFlow.objects.exclude(state=FlowState.DELETED)
        if live.filter(team=team, name=name).exists():
            raise Conflict(f"The team has a flow named {name!r}.", code="duplicate")
        if live.filter(target_cluster=target_cluster, source_alias=source_alias).exists():
            raise Conflict(
                f"A flow into this cluster already uses the source alias {source_alias!r}.",
                code="duplicate_alias",
                details={"fields": {"source_alias": ["taken on the target cluster"]}},
            )
        source_password, target_password = tokens.token_urlsafe(32), tokens.token_urlsafe(32)
        flow = ReplicationFlow.objects.create(
            team=team,
            name=name,
            source_cluster=source_cluster,
            target_cluster=target_cluster,
            connect_cluster=connect_cluster,
            source_alias=source_alias,
            topics_pattern=topics_pattern,
            groups_pattern=groups_pattern,
            replication_policy=replication_policy,
            sync_topic_configs=sync_topic_configs,
            sync_topic_acls=sync_topic_acls,
            sync_group_offsets=sync_group_offsets,
            checkpoint_interval_seconds=checkpoint_interval_seconds,
            offset_lag_max=offset_lag_max,
            lag_alert_records=lag_alert_records,
            source_password_encrypted=encrypt_secret(source_password),
            target_password_encrypted=encrypt_secret(target_password),
        )
        suffix = tokens.token_hex(4)
        flow.source_principal = f"streamhub-mm2-{flow.pk}-{suffix}-source"
        flow.target_principal = f"streamhub-mm2-{flow.pk}-{suffix}-target"
        flow.save(update_fields=["source_principal", "target_principal"])
        change.on(flow)
        change.after = {
            "source_principal": _user(flow, "source"),
            "target_principal": _user(flow, "target"),
            "source_alias": source_alias,
        }
    # The slow part, after the flow is recorded (its users and connectors are named after its id).
    try:
        _provision(flow, source_password, target_password)
    except (KafkaGatewayError, ServiceError) as error:
        flow.state = FlowState.FAILED
        flow.state_reason = str(getattr(error, "detail", error))
        flow.save(update_fields=["state", "state_reason"])
    return flow


def _provision(flow: ReplicationFlow, source_password: str, target_password: str) -> None:
    source, target = connection_for(flow.source_cluster), connection_for(flow.target_cluster)
    for connection, cluster, user, password in (
        (source, flow.source_cluster, flow.source_principal, source_password),
        (target, flow.target_cluster, flow.target_principal, target_password),
    ):
        upsert_scram_credential(
            connection,
            user=user,
            mechanism=cluster.sasl_mechanism,
            password=password,
            salt=tokens.token_bytes(16),
            iterations=SCRAM_ITERATIONS,
        )
    create_acls(source, source_acls(flow))
    create_acls(target, target_acls(flow) + worker_acls(flow))
    names, configs, secret_values = connector_names(flow), connector_configs(flow), _secrets(flow)
    for kind, _class in CONNECTOR_KINDS:
        connect.put_system_connector(
            connect_cluster=flow.connect_cluster,
            name=names[kind],
            config=configs[kind],
            secrets=secret_values,
        )


def set_flow_state(*, actor: Actor, flow: ReplicationFlow, state: str) -> ReplicationFlow:
    """Pauses or resumes the flow's three connectors (a paused flow keeps its position: resumed, it goes on
    from where it stopped)."""
    action = "replication_flow.pause" if state == FlowState.PAUSED else "replication_flow.resume"
    with audited_change(actor=actor, change=_change(action, flow, flow.team, flow.name)):
        require_team_role(actor, flow.team, TeamRole.DEVELOPER)
        if flow.state == FlowState.FAILED:
            raise ServiceError(f"The flow failed: {flow.state_reason}", code="flow_failed")
        connector_state = ConnectorState.PAUSED if state == FlowState.PAUSED else ConnectorState.RUNNING
        for name in connector_names(flow).values():
            connect.set_system_connector_state(
                connect_cluster=flow.connect_cluster, name=name, state=connector_state
            )
        flow.state = state
        flow.save(update_fields=["state", "updated_at"])
    return flow


def set_lag_alert_records(*, actor: Actor, flow: ReplicationFlow, lag_alert_records: int) -> ReplicationFlow:
    """Changes the records a partition's replica may be behind before the flow's lag alerts fire (0: the
    rule's threshold); the next lag sampling run judges with it."""
    change = _change(
        "replication_flow.update", flow, flow.team, flow.name, lag_alert_records=lag_alert_records
    )
    with audited_change(actor=actor, change=change):
        require_team_role(actor, flow.team, TeamRole.DEVELOPER)
        change.before = {"lag_alert_records": flow.lag_alert_records}
        flow.lag_alert_records = lag_alert_records
        flow.save(update_fields=["lag_alert_records", "updated_at"])
        change.after = {"lag_alert_records": lag_alert_records}
    return flow


def _flow_topics_on_target(flow: ReplicationFlow, target: Connection) -> list[str]:
    """Replica topics of the flow present on the target, and its internal topics."""
    pattern = re.compile(flow.topics_pattern)
    internal = {checkpoints_topic(flow), offset_syncs_topic(flow), f"{flow.source_alias}.{HEARTBEATS_TOPIC}"}
    found = []
    for topic in list_topics(target):
        if topic in internal:
            found.append(topic)
        elif flow.replication_policy == ReplicationPolicy.IDENTITY:
            if pattern.fullmatch(topic):
                found.append(topic)
        elif topic.startswith(f"{flow.source_alias}.") and pattern.fullmatch(
            topic[len(flow.source_alias) + 1 :]
        ):
            found.append(topic)
    return sorted(found)


def delete_flow(*, actor: Actor, flow: ReplicationFlow, delete_replica_topics: bool = False) -> None:
    """Removes the connectors, the flow's users and ACLs on both clusters; the replica topics (and MM2's internal
    topics, which a later failover reads) stay unless `delete_replica_topics`."""
    change = _change(
        "replication_flow.delete", flow, flow.team, flow.name, delete_replica_topics=delete_replica_topics
    )
    with audited_change(actor=actor, change=change):
        require_team_role(actor, flow.team, TeamRole.DEVELOPER)
        for name in connector_names(flow).values():
            connect.delete_system_connector(connect_cluster=flow.connect_cluster, name=name)
        source, target = connection_for(flow.source_cluster), connection_for(flow.target_cluster)
        # Flows created while our broker still refused DescribeCluster without it hold DESCRIBE on the cluster
        # even without ACL sync: delete it in any case (deleting a binding that is not there is a no-op).
        delete_acls(source, {*source_acls(flow), _describe_source_cluster(_user(flow, "source"))})
        delete_acls(target, target_acls(flow) + worker_acls(flow))
        for connection, cluster, user in (
            (source, flow.source_cluster, flow.source_principal),
            (target, flow.target_cluster, flow.target_principal),
        ):
            try:
                delete_scram_credential(connection, user=user, mechanism=cluster.sasl_mechanism)
            except KafkaGatewayError as error:
                if error.error_name != "RESOURCE_NOT_FOUND":
                    raise
        deleted = []
        if delete_replica_topics:
            for topic in _flow_topics_on_target(flow, target):
                delete_topic(target, name=topic)
                deleted.append(topic)
        change.after = {"deleted_topics": deleted}
        flow.state = FlowState.DELETED
        flow.source_password_encrypted = ""
        flow.target_password_encrypted = ""
        flow.save(
            update_fields=["state", "source_password_encrypted", "target_password_encrypted", "updated_at"]
        )


# --- Status, lag, failover -------------------------------------------------------------------------------------


def flow_status(*, flow: ReplicationFlow) -> dict[str, Any]:
    """Connect's state of each of the flow's connectors and their tasks (error traces included)."""
    if flow.state in (FlowState.DELETED, FlowState.FAILED):
        return {}
    return {
        kind: connect.system_connector_state(connect_cluster=flow.connect_cluster, name=name)
        for kind, name in connector_names(flow).items()
    }


def matched_topics(flow: ReplicationFlow, source: Connection) -> dict[str, int]:
    """Source topics the flow's pattern matches now, with their partition counts."""
    pattern = re.compile(flow.topics_pattern)
    return {
        name: len(info.partitions)
        for name, info in list_topics(source).items()
        if not info.internal and pattern.fullmatch(name)
    }


def partition_lag(flow: ReplicationFlow) -> list[dict[str, Any]]:
    """Per partition: the source's and the replica's end offsets and the records between them (offsets only:
    cheap enough for every lag sampling run)."""
    source, target = connection_for(flow.source_cluster), connection_for(flow.target_cluster)
    topics = matched_topics(flow, source)
    partitions = [(topic, partition) for topic, count in sorted(topics.items()) for partition in range(count)]
    source_ends = list_partition_offsets(source, partitions)
    existing = set(list_topics(target))
    replica_partitions = [
        (replica_topic(flow, topic), partition)
        for topic, partition in partitions
        if replica_topic(flow, topic) in existing
    ]
    replica_ends = list_partition_offsets(target, replica_partitions)
    rows = []
    for topic, partition in partitions:
        source_end = source_ends[(topic, partition)]
        replica_end = replica_ends.get((replica_topic(flow, topic), partition), 0)
        rows.append(
            {
                "topic": topic,
                "partition": partition,
                "replica_topic": replica_topic(flow, topic),
                "source_end_offset": source_end,
                "replica_end_offset": replica_end,
                "lag_records": max(0, source_end - replica_end),
            }
        )
    return rows


def flow_lag(*, flow: ReplicationFlow) -> list[dict[str, Any]]:
    """`partition_lag`, with how old the oldest record the replica lacks is (ms; 0 when caught up). See the
    module's docstring for what the offsets mean."""
    rows = partition_lag(flow)
    source = connection_for(flow.source_cluster)
    now_ms = int(time.time() * 1000)
    for row in rows:
        row["lag_ms"] = (
            _oldest_unreplicated_age_ms(
                source, row["topic"], row["partition"], row["replica_end_offset"], now_ms
            )
            if row["lag_records"]
            else 0
        )
    return rows


def _oldest_unreplicated_age_ms(
    source: Connection, topic: str, partition: int, offset: int, now_ms: int
) -> int:
    """How long ago the first record the replica lacks was written (0 when it cannot be read in time)."""
    with TopicReader(source, topic, timeout_seconds=READ_TIMEOUT_SECONDS) as reader:
        for record in reader.read(
            {partition: (offset, offset + 1)}, deadline=time.monotonic() + READ_TIMEOUT_SECONDS
        ):
            return max(0, now_ms - record.timestamp_ms)
    return 0


def read_checkpoints(flow: ReplicationFlow) -> dict[tuple[str, str, int], checkpoints.Checkpoint]:
    """The newest checkpoint per (group, replica topic, partition) MM2 wrote on the target."""
    target = connection_for(flow.target_cluster)
    topic = checkpoints_topic(flow)
    if topic not in list_topics(target):
        return {}
    deadline = time.monotonic() + READ_TIMEOUT_SECONDS
    with TopicReader(target, topic, timeout_seconds=READ_TIMEOUT_SECONDS) as reader:
        bounds = reader.bounds([0])
        records = [(record.key, record.value) for record in reader.read(bounds, deadline=deadline)]
    return checkpoints.latest(records)


def fail_over_group(*, actor: Actor, flow: ReplicationFlow, group: str) -> dict[str, Any]:
    """Moves consumer group `group` to the replicas: commits, on the target, the offsets MM2 translated from
    the group's last checkpointed offsets on the source. The group's consumers then start on the target with
    the same group id. Refused while the group has members on the target (Kafka refuses the commit)."""
    change = _change("replication_flow.fail_over_group", flow, flow.team, flow.name, group=group)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, flow.team, TeamRole.DEVELOPER)
        if not flow.groups_pattern or not re.fullmatch(flow.groups_pattern, group):
            raise ServiceError(
                "The flow does not checkpoint this group (it matches no groups pattern of the flow).",
                code="group_not_replicated",
                details={"fields": {"group": ["not checkpointed by this flow"]}},
            )
        offsets = {
            (checkpoint.topic, checkpoint.partition): checkpoint.downstream_offset
            for (checkpoint_group, _topic, _partition), checkpoint in read_checkpoints(flow).items()
            if checkpoint_group == group
        }
        if not offsets:
            raise ServiceError(
                "MM2 has written no checkpoint for this group yet (it checkpoints groups with committed offsets "
                f"every {flow.checkpoint_interval_seconds} s).",
                code="no_checkpoint",
            )
        try:
            alter_group_offsets(connection_for(flow.target_cluster), group_id=group, offsets=offsets)
        except KafkaGatewayError as error:
            raise ServiceError(
                f"The target refused the offsets ({error.error_name}): stop the group's consumers on the "
                "target first.",
                code="commit_refused",
            ) from error
        committed = [
            {"topic": topic, "partition": partition, "offset": offset}
            for (topic, partition), offset in sorted(offsets.items())
        ]
        change.after = {"offsets": committed}
    return {"group": group, "offsets": committed}
