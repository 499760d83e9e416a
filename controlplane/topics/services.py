"""Every change to topics goes through these functions: they check rights, prefixes and policy, call the
cluster through the gateway, keep the desired spec in the database and audit."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Sum

from controlplane.audit.choices import Result
from controlplane.audit.services import actor_record, record_event
from controlplane.clusters import outcomes
from controlplane.clusters.choices import ACTIVE_OPERATION_STATES, OperationKind
from controlplane.clusters.connections import connection_for, default_replication_factor
from controlplane.clusters.models import Cluster, Operation
from controlplane.clusters.ownership import require_cluster_admin, require_same_organization
from controlplane.core.changes import Change, audited_change, audited_refusals
from controlplane.core.errors import Conflict, PolicyViolated, ServiceError
from controlplane.kafka import config_entries
from controlplane.kafka import topics as kafka_topics
from controlplane.kafka.configs import alter_topic_configs
from controlplane.kafka.connection import Connection
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.log_dirs import describe_partition_sizes
from controlplane.kafka.messages import produce_message
from controlplane.kafka.offsets import delete_records, list_partition_offsets
from controlplane.kafka.reassignments import OngoingReassignment, list_partition_reassignments
from controlplane.kafka.refusals import kafka_refusals
from controlplane.tenancy.access import Actor, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team, TeamPolicy
from controlplane.tenancy.policy import ConfigRule, topic_config_rules
from controlplane.tenancy.services import check_topic_request
from controlplane.topics import browsing
from controlplane.topics.choices import KNOWN_TOPIC_CONFIGS
from controlplane.topics.guardrails import check_change_rate, check_cluster_capacity
from controlplane.topics.models import Topic
from controlplane.topics.operations import snapshot_topic


def _topic_change(action: str, cluster: Cluster, team: Team | None, **fields: Any) -> Change:
    return Change(
        action=action,
        resource_type="topic",
        organization_id=cluster.organization_id,
        team_id=team.id if team is not None else None,
        team_name=team.name if team is not None else "",
        **fields,
    )


def _require_topic_role(actor: Actor, topic: Topic, minimum: str) -> None:
    if topic.team_id is None:
        require_cluster_admin(actor, topic.cluster)
    else:
        require_team_role(actor, topic.team, minimum)


def _check_config_names(configs: Mapping[str, object]) -> None:
    unknown = sorted(set(configs) - KNOWN_TOPIC_CONFIGS)
    if unknown:
        raise ServiceError(
            f"Unknown topic config: {', '.join(unknown)}.",
            code="unknown_config",
            details={"unknown": unknown},
        )


def _check_policy(
    team: Team,
    *,
    cluster: Cluster,
    name: str,
    partitions: int,
    replication_factor: int,
    configs: Mapping[str, str],
    exclude: Topic | None,
) -> None:
    """The team's policy and guardrails, the cluster's partition budget and the team's rate of changes:
    all checked here, before anything is sent to the cluster."""
    others = Topic.objects.filter(team=team, managed=True)
    if exclude is not None:
        others = others.exclude(pk=exclude.pk)
    existing = others.aggregate(total=Sum("partitions"))["total"] or 0
    violations = check_topic_request(
        team=team,
        name=name,
        partitions=partitions,
        configs=dict(configs),
        existing_partitions=existing,
        replication_factor=replication_factor,
    )
    if violations:
        raise PolicyViolated(
            violations[0].message,
            details={
                "violations": [{"code": v.code, "field": v.field, "message": v.message} for v in violations]
            },
        )
    check_cluster_capacity(
        cluster, partitions=partitions, replication_factor=replication_factor, exclude=exclude
    )
    check_change_rate(team)


def _stringified(configs: Mapping[str, object]) -> dict[str, str]:
    return {
        key: str(value).lower() if isinstance(value, bool) else str(value) for key, value in configs.items()
    }


def check_no_change_in_progress(*, cluster: Cluster, name: str) -> None:
    """One change at a time per topic: a change still being confirmed refuses the next."""
    running = Operation.objects.filter(
        cluster=cluster, resource_type="topic", resource_name=name, state__in=ACTIVE_OPERATION_STATES
    ).first()
    if running is not None:
        raise Conflict(
            f"A change to topic {name!r} is still in progress (operation {running.id}); wait for it to finish.",
            code="change_in_progress",
            details={"operation": running.id},
        )


def _begin(
    actor: Actor,
    kind: str,
    change: Change,
    cluster: Cluster,
    parameters: dict[str, Any],
    *,
    topic: Topic | None = None,
) -> Operation:
    """Records the change about to be sent, once nothing else is changing the topic: the cluster's row is
    locked for the check, so two requests never both pass it (a create racing a delete of the same name,
    or two deletes of which the second would remove a topic re-created in between)."""
    name = change.resource_name
    with audited_refusals(actor=actor, change=change), transaction.atomic():
        Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
        check_no_change_in_progress(cluster=cluster, name=name)
        if topic is None and Topic.objects.filter(cluster=cluster, name=name).exists():
            raise Conflict(f"Topic {name!r} already exists on {cluster.name}.", code="duplicate")
        if topic is not None and not Topic.objects.filter(pk=topic.pk).exists():
            raise Conflict(f"Topic {name!r} was deleted meanwhile.", code="gone")
        return outcomes.begin(
            kind=kind,
            cluster=cluster,
            change=change,
            actor=actor_record(actor),
            parameters=parameters,
            team_id=change.team_id,
        )


def check_topic_create(
    *,
    actor: Actor,
    cluster: Cluster,
    team: Team,
    name: str,
    partitions: int,
    replication_factor: int,
    configs: Mapping[str, str],
) -> None:
    """Everything `create_topic` checks before the cluster is asked (rights, policy, guardrails, duplicates);
    a plan of declared resources asks the same questions without sending anything."""
    require_team_role(actor, team, TeamRole.DEVELOPER)
    require_same_organization(cluster, team)
    if partitions < 1 or replication_factor < 1:
        raise ServiceError("A topic needs at least one partition and one replica.", code="invalid_partitions")
    _check_config_names(configs)
    _check_policy(
        team,
        cluster=cluster,
        name=name,
        partitions=partitions,
        replication_factor=replication_factor,
        configs=configs,
        exclude=None,
    )
    if Topic.objects.filter(cluster=cluster, name=name).exists():
        raise Conflict(f"Topic {name!r} already exists on {cluster.name}.", code="duplicate")


def check_topic_configs(
    *, actor: Actor, topic: Topic, configs: Mapping[str, object | None]
) -> dict[str, str]:
    """What `update_topic_configs` checks; returns the overrides the topic would then have."""
    _require_topic_role(actor, topic, TeamRole.DEVELOPER)
    _check_config_names(configs)
    to_set = _stringified({k: v for k, v in configs.items() if v is not None})
    to_delete = [k for k, v in configs.items() if v is None]
    merged = {**{k: v for k, v in topic.configs.items() if k not in to_delete}, **to_set}
    if topic.team_id is not None:
        _check_policy(
            topic.team,
            cluster=topic.cluster,
            name=topic.name,
            partitions=topic.partitions,
            replication_factor=topic.replication_factor,
            configs=merged,
            exclude=topic,
        )
    return merged


def check_add_partitions(*, actor: Actor, topic: Topic, partitions: int) -> None:
    """What `add_partitions` checks."""
    _require_topic_role(actor, topic, TeamRole.DEVELOPER)
    current = topic.observed_partitions or topic.partitions
    if partitions <= current:
        raise ServiceError(
            f"Kafka cannot reduce partitions: the topic has {current}; ask for more than that.",
            code="invalid_partitions",
            details={"current": current, "requested": partitions},
        )
    if topic.team_id is not None:
        _check_policy(
            topic.team,
            cluster=topic.cluster,
            name=topic.name,
            partitions=partitions,
            replication_factor=topic.replication_factor,
            configs=topic.configs,
            exclude=topic,
        )


def check_topic_delete(*, actor: Actor, topic: Topic) -> None:
    """What `delete_topic` checks besides the typed confirmation."""
    _require_topic_role(actor, topic, TeamRole.DEVELOPER)
    if topic.team_id is not None:
        check_change_rate(topic.team)


def create_topic(
    *,
    actor: Actor,
    cluster: Cluster,
    team: Team,
    name: str,
    partitions: int,
    replication_factor: int | None = None,
    configs: Mapping[str, object] | None = None,
    validate_only: bool = False,
) -> Operation | None:
    """Creates the topic on the cluster and records it as managed. Returns the operation: `succeeded` when
    the cluster confirmed it within the request, `running` when its outcome is still being confirmed. With
    `validate_only` the cluster only checks it (nothing is created or recorded) and None is returned.
    Without a replication factor the topic gets the cluster's default (3 on a local cluster of three
    brokers or more)."""
    wanted = _stringified(configs or {})
    if replication_factor is None:
        replication_factor = default_replication_factor(cluster)
    change = _topic_change(
        "topic.create", cluster, team, resource_name=name, extra={"validate_only": validate_only}
    )
    with audited_refusals(actor=actor, change=change):
        check_topic_create(
            actor=actor,
            cluster=cluster,
            team=team,
            name=name,
            partitions=partitions,
            replication_factor=replication_factor,
            configs=wanted,
        )
        if validate_only:
            with kafka_refusals():
                kafka_topics.create_topic(
                    connection_for(cluster),
                    name=name,
                    partitions=partitions,
                    replication_factor=replication_factor,
                    configs=wanted,
                    validate_only=True,
                )
    if validate_only:
        change.after = {"name": name, "partitions": partitions, "configs": wanted, "valid": True}
        record_event(actor=actor, change=change, result=Result.SUCCESS)
        return None
    operation = _begin(
        actor,
        OperationKind.TOPIC_CREATE,
        change,
        cluster,
        {"partitions": partitions, "replication_factor": replication_factor, "configs": wanted},
    )
    return outcomes.run(
        operation,
        lambda: kafka_topics.create_topic(
            connection_for(cluster),
            name=name,
            partitions=partitions,
            replication_factor=replication_factor,
            configs=wanted,
        ),
    )


def create_topics(
    *, actor: Actor, cluster: Cluster, team: Team, topics: Sequence[kafka_topics.NewTopicSpec]
) -> list[Operation | ServiceError]:
    """create_topic for many topics of a team, with the same checks and records each, sent in one
    CreateTopics request: each result is the topic's operation or the refusal it met (a refused topic
    leaves the others to be created)."""
    results: list[Operation | ServiceError | None] = [None] * len(topics)
    begun: list[tuple[int, Operation, kafka_topics.NewTopicSpec]] = []
    for index, topic in enumerate(topics):
        wanted = _stringified(topic.configs)
        change = _topic_change(
            "topic.create", cluster, team, resource_name=topic.name, extra={"validate_only": False}
        )
        parameters = {
            "partitions": topic.partitions,
            "replication_factor": topic.replication_factor,
            "configs": wanted,
        }
        try:
            with audited_refusals(actor=actor, change=change):
                check_topic_create(
                    actor=actor,
                    cluster=cluster,
                    team=team,
                    name=topic.name,
                    partitions=topic.partitions,
                    replication_factor=topic.replication_factor,
                    configs=wanted,
                )
            operation = _begin(actor, OperationKind.TOPIC_CREATE, change, cluster, parameters)
        except ServiceError as refusal:
            results[index] = refusal
            continue
        begun.append((index, operation, kafka_topics.NewTopicSpec(topic.name, **parameters)))
    if begun:
        sent = outcomes.run_batch(
            [operation for _, operation, _ in begun],
            lambda: kafka_topics.create_topics(connection_for(cluster), [spec for _, _, spec in begun]),
        )
        for (index, _, _), result in zip(begun, sent, strict=True):
            results[index] = result
    return [result for result in results if result is not None]


def update_topic_configs(*, actor: Actor, topic: Topic, configs: Mapping[str, object | None]) -> Operation:
    """Sets the given configs (None returns a config to the cluster default); other overrides stay."""
    change = _topic_change("topic.update_configs", topic.cluster, topic.team, before=snapshot_topic(topic))
    change.on(topic)
    with audited_refusals(actor=actor, change=change):
        merged = check_topic_configs(actor=actor, topic=topic, configs=configs)
    to_set = _stringified({k: v for k, v in configs.items() if v is not None})
    to_delete = [k for k, v in configs.items() if v is None]
    operation = _begin(
        actor,
        OperationKind.TOPIC_CONFIGS,
        change,
        topic.cluster,
        {"topic_id": topic.id, "configs": merged, "set": to_set, "delete": to_delete},
        topic=topic,
    )
    return outcomes.run(
        operation,
        lambda: alter_topic_configs(
            connection_for(topic.cluster), name=topic.name, set_configs=to_set, delete_configs=to_delete
        ),
    )


def add_partitions(*, actor: Actor, topic: Topic, partitions: int) -> Operation:
    """Grows the topic to `partitions` in total; Kafka cannot remove partitions, so fewer is refused."""
    change = _topic_change("topic.add_partitions", topic.cluster, topic.team, before=snapshot_topic(topic))
    change.on(topic)
    with audited_refusals(actor=actor, change=change):
        check_add_partitions(actor=actor, topic=topic, partitions=partitions)
    operation = _begin(
        actor,
        OperationKind.TOPIC_PARTITIONS,
        change,
        topic.cluster,
        {"topic_id": topic.id, "partitions": partitions},
        topic=topic,
    )
    return outcomes.run(
        operation,
        lambda: kafka_topics.create_partitions(
            connection_for(topic.cluster), name=topic.name, total=partitions
        ),
    )


def purge_topic(
    *, actor: Actor, topic: Topic, partition: int | None = None, before_offset: int | None = None
) -> dict[int, int]:
    """Deletes records: everything (no offset), or those before `before_offset` in one partition.
    Returns each purged partition's new start offset."""
    change = _topic_change(
        "topic.purge",
        topic.cluster,
        topic.team,
        extra={"partition": partition, "before_offset": before_offset},
    )
    change.on(topic)
    with audited_change(actor=actor, change=change):
        _require_topic_role(actor, topic, TeamRole.DEVELOPER)
        if before_offset is not None and partition is None:
            raise ServiceError("An offset needs a partition.", code="invalid_purge")
        count = topic.observed_partitions or topic.partitions
        targets = [partition] if partition is not None else list(range(count))
        if any(p < 0 or p >= count for p in targets):
            raise ServiceError(f"The topic has partitions 0 to {count - 1}.", code="unknown_partition")
        offset = -1 if before_offset is None else before_offset
        with kafka_refusals():
            starts = delete_records(connection_for(topic.cluster), {(topic.name, p): offset for p in targets})
        result = {p: starts[(topic.name, p)] for p in targets}
        change.after = {"start_offsets": {str(p): o for p, o in result.items()}}
    return result


def delete_topic(*, actor: Actor, topic: Topic, confirm_name: str) -> Operation:
    """Deletes the topic from the cluster, then forgets it; a topic already gone is only forgotten."""
    change = _topic_change("topic.delete", topic.cluster, topic.team, before=snapshot_topic(topic))
    change.on(topic)
    with audited_refusals(actor=actor, change=change):
        _require_topic_role(actor, topic, TeamRole.DEVELOPER)
        if confirm_name != topic.name:
            raise ServiceError("Type the topic's name to confirm its deletion.", code="confirmation_mismatch")
        check_topic_delete(actor=actor, topic=topic)
    operation = _begin(
        actor, OperationKind.TOPIC_DELETE, change, topic.cluster, {"topic_id": topic.id}, topic=topic
    )

    def send() -> None:
        try:
            kafka_topics.delete_topic(connection_for(topic.cluster), name=topic.name)
        except KafkaGatewayError as error:
            if error.error_name != "UNKNOWN_TOPIC_OR_PART":  # already gone: forgetting it is enough
                raise

    return outcomes.run(operation, send)


def adopt_topic(*, actor: Actor, topic: Topic, team: Team) -> Topic:
    """An org admin takes an unmanaged topic into a team: its observed spec becomes the desired one."""
    change = _topic_change("topic.adopt", topic.cluster, team, before=snapshot_topic(topic))
    change.on(topic)
    with audited_change(actor=actor, change=change):
        require_cluster_admin(actor, topic.cluster)
        require_same_organization(topic.cluster, team)
        if topic.managed:
            raise Conflict("The topic is already managed.", code="already_managed")
        topic.team, topic.managed = team, True
        topic.partitions = topic.observed_partitions or topic.partitions
        topic.replication_factor = topic.observed_replication_factor or topic.replication_factor
        topic.configs = dict(topic.observed_configs)
        topic.save()
        change.after = snapshot_topic(topic)
    return topic


# --- reading -------------------------------------------------------------------------------------


def _reassignments_of(connection: Connection, topic: str) -> dict[int, OngoingReassignment]:
    """The topic's partitions being reassigned; none from a cluster that cannot list reassignments (an
    older Kafka, or a single broker without a controller, may close the connection), which cannot be
    moving any. A cluster that is really unreachable fails the calls that follow."""
    try:
        ongoing = list_partition_reassignments(connection)
    except KafkaGatewayError:
        return {}
    return {move.partition: move for move in ongoing if move.topic == topic}


def describe_topic(*, topic: Topic) -> dict[str, Any]:
    """Live state from the cluster: partitions with leaders and offsets, sizes, configs with sources."""
    connection = connection_for(topic.cluster)
    with kafka_refusals():
        info = kafka_topics.list_topics(connection).get(topic.name)
        if info is None:
            return {"exists": False, "partitions": [], "configs": {}}
        keys = [(topic.name, p.partition) for p in info.partitions]
        moving = _reassignments_of(connection, topic.name)
        starts = list_partition_offsets(connection, keys, spec="earliest")
        ends = list_partition_offsets(connection, keys, spec="latest")
        sizes = describe_partition_sizes(
            connection, partitions={topic.name: [p.partition for p in info.partitions]}
        )
        configs = config_entries.describe_topic_configs(connection, topic.name)
        broker_defaults = config_entries.describe_broker_defaults(connection, configs)
    # Lists answer from the stored numbers; what was just read replaces them, so a list shown after a purge
    # or a burst of writes agrees with the topic's page instead of waiting for the next reconcile.
    Topic.objects.filter(pk=topic.pk).update(
        size_bytes=sum(sizes.get((topic.name, p.partition), 0) for p in info.partitions),
        message_count=sum(ends[key] - starts[key] for key in keys),
    )
    return {
        "exists": True,
        "partitions": [
            {
                "partition": p.partition,
                "leader": p.leader,
                "replicas": p.replicas,
                "isr": p.isr,
                "offline_replicas": p.offline_replicas,
                "under_replicated": p.under_replicated,
                "offline": p.offline,
                "adding_replicas": moving[p.partition].adding if p.partition in moving else [],
                "removing_replicas": moving[p.partition].removing if p.partition in moving else [],
                "start_offset": starts[(topic.name, p.partition)],
                "end_offset": ends[(topic.name, p.partition)],
                "size_bytes": sizes.get((topic.name, p.partition), 0),
            }
            for p in info.partitions
        ],
        "configs": config_entries.config_entries(configs, _config_rules(topic, configs), broker_defaults),
    }


def _config_rules(topic: Topic, configs: Mapping[str, object]) -> dict[str, ConfigRule]:
    """What the owning team's policy lets it set; an unmanaged topic has no team policy."""
    if topic.team_id is None:
        return {}
    policy = TeamPolicy.objects.filter(team=topic.team).first()
    return topic_config_rules(policy, topic.team.organization.guardrails, configs)


def browse_messages(*, actor: Actor, topic: Topic, **query: Any) -> dict[str, Any]:
    """Records of the topic for team members (viewers too): see `browsing.browse`."""
    _require_topic_role(actor, topic, TeamRole.VIEWER)
    return browsing.browse(actor=actor, topic=topic, **query)


def _payload(text: str | None, encoding: str) -> bytes | None:
    if text is None:
        return None
    if encoding == "base64":
        try:
            decoded = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as error:
            raise ServiceError("The payload is not valid base64.", code="invalid_payload") from error
        # Only the canonical encoding: `YR==` decodes to `a` by dropping set padding bits, which hides a
        # payload that was damaged or was not base64 at all.
        if base64.b64encode(decoded).decode() != text:
            raise ServiceError(
                "The payload is not valid base64 (not the standard, padded encoding of any bytes).",
                code="invalid_payload",
            )
        return decoded
    return text.encode()


def produce_test_message(
    *,
    actor: Actor,
    topic: Topic,
    key: str | None,
    value: str | None,
    headers: Mapping[str, str] | None = None,
    encoding: str = "utf-8",
    partition: int | None = None,
) -> dict[str, Any]:
    change = _topic_change(
        "topic.produce_test_message", topic.cluster, topic.team, extra={"partition": partition}
    )
    change.on(topic)
    with audited_change(actor=actor, change=change):
        _require_topic_role(actor, topic, TeamRole.DEVELOPER)
        with kafka_refusals():
            produced = produce_message(
                connection_for(topic.cluster),
                topic=topic.name,
                key=_payload(key, encoding),
                value=_payload(value, encoding),
                headers=[(name, item.encode()) for name, item in (headers or {}).items()],
                partition=partition,
            )
        change.after = {"partition": produced.partition, "offset": produced.offset}
    return {"partition": produced.partition, "offset": produced.offset}
