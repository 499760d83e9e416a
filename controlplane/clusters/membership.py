"""Brokers joining and leaving a replicated local cluster, and partition reassignments.

Like services.py, every change checks rights, writes, audits and (for broker changes) enqueues an operation
that workflows.py carries out.
"""

from __future__ import annotations

from dataclasses import dataclass

from controlplane.clusters.choices import (
    MAX_LOCAL_BROKERS,
    OperationKind,
    Provider,
)
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Broker, Cluster, Operation
from controlplane.clusters.outcomes import confirmed_change
from controlplane.clusters.placement import (
    PartitionKey,
    PartitionProgress,
    PlacementRefused,
    check_target,
    plan_drain,
    plan_move_onto,
    reassignment_progress,
)
from controlplane.clusters.services import (
    PROBE_TIMEOUT_SECONDS,
    cluster_change,
    cluster_topology,
    new_operation,
    probe_cluster,
    require_running_and_idle,
    snapshot_cluster,
)
from controlplane.core.changes import audited_change
from controlplane.core.errors import Conflict, ServiceError
from controlplane.kafka.log_dirs import describe_replica_sizes
from controlplane.kafka.reassignments import alter_partition_reassignments, list_partition_reassignments
from controlplane.kafka.refusals import kafka_refusals
from controlplane.kafka.topics import PartitionInfo, list_topics
from controlplane.tenancy.access import Actor, require_org_admin


def _require_replicated_local(cluster: Cluster) -> None:
    if cluster.provider != Provider.LOCAL:
        raise ServiceError("Brokers of a registered cluster are managed where it runs.", code="not_local")
    if not cluster_topology(cluster).replicated:
        raise Conflict(
            f"Cluster {cluster.name} is a single broker without a controller quorum; brokers join "
            "clusters created with two or more.",
            code="single_node",
        )
    require_running_and_idle(cluster)


def request_broker_addition(*, actor: Actor, cluster: Cluster) -> Operation:
    """Adds one broker-only node to a replicated local cluster (an operation: ports, config, start, wait
    until the cluster lists it). It holds no replicas until partitions are reassigned onto it."""
    change = cluster_change("cluster.add_broker", cluster.organization, before=snapshot_cluster(cluster))
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        _require_replicated_local(cluster)
        if cluster.brokers.count() >= MAX_LOCAL_BROKERS:
            raise Conflict(
                f"Local clusters have at most {MAX_LOCAL_BROKERS} brokers.", code="too_many_brokers"
            )
        node_id = _next_node_id(cluster)
        operation = new_operation(cluster, OperationKind.ADD_BROKER, actor, parameters={"node_id": node_id})
        change.after = {**snapshot_cluster(cluster), "node_id": node_id}
    return operation


def _next_node_id(cluster: Cluster) -> int:
    """Node ids are not reused while the cluster lives: a removed broker's id may linger in old metadata
    (replica lists of deleted topics, the controller's memory of its registration, the voter sets)."""
    used = set(cluster.brokers.values_list("node_id", flat=True))
    for parameters in cluster.operations.filter(
        kind__in=[OperationKind.ADD_BROKER, OperationKind.REPLACE_CONTROLLER]
    ).values_list("parameters", flat=True):
        used |= {int(parameters.get("node_id", 0)), int(parameters.get("new_node_id", 0))}
    return max(used, default=0) + 1


def _locked_node(actor: Actor, cluster: Cluster, node_id: int) -> tuple[Cluster, Broker]:
    """For an org admin's change of one node: the cluster locked for the change, and its broker `node_id`."""
    require_org_admin(actor, cluster.organization)
    cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
    _require_replicated_local(cluster)
    broker = cluster.brokers.filter(node_id=node_id).first()
    if broker is None:
        raise ServiceError(f"Cluster {cluster.name} has no broker {node_id}.", code="unknown_broker")
    return cluster, broker


def request_controller_replacement(*, actor: Actor, cluster: Cluster, node_id: int) -> Operation:
    """Replaces the controller node `node_id` of a local cluster with a dynamic quorum (KIP-853): a new
    broker+controller node joins as an observer, becomes a voter (AddRaftVoter), the old node's replicas
    move off it, it leaves the quorum (RemoveRaftVoter) and is stopped and removed."""
    change = cluster_change(
        "cluster.replace_controller",
        cluster.organization,
        before=snapshot_cluster(cluster),
        extra={"node_id": node_id},
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        cluster, broker = _locked_node(actor, cluster, node_id)
        if not broker.is_controller:
            raise Conflict(f"Broker {node_id} is not a controller voter.", code="not_a_controller")
        if not cluster.dynamic_quorum:
            raise Conflict(
                f"Cluster {cluster.name} has a static controller quorum (controller.quorum.voters): its "
                "membership is fixed. Clusters provisioned since dynamic quorums (KIP-853) can replace controllers.",
                code="static_quorum",
            )
        if cluster.brokers.count() >= MAX_LOCAL_BROKERS:
            raise Conflict(
                f"Local clusters have at most {MAX_LOCAL_BROKERS} brokers; the replacement runs beside the old node.",
                code="too_many_brokers",
            )
        new_node_id = _next_node_id(cluster)
        operation = new_operation(
            cluster,
            OperationKind.REPLACE_CONTROLLER,
            actor,
            parameters={"node_id": node_id, "new_node_id": new_node_id},
        )
        change.after = {"node_id": node_id, "new_node_id": new_node_id}
    return operation


def _live_partitions(cluster: Cluster) -> dict[PartitionKey, PartitionInfo]:
    with kafka_refusals():
        topics = list_topics(connection_for(cluster), timeout_seconds=PROBE_TIMEOUT_SECONDS)
    return {(topic.name, info.partition): info for topic in topics.values() for info in topic.partitions}


def plan_broker_drain(cluster: Cluster, node_id: int) -> dict[PartitionKey, list[int]]:
    """Where the replicas of `node_id` go when it leaves; Conflict when the others cannot hold them."""
    brokers = set(cluster.brokers.values_list("node_id", flat=True))
    try:
        return plan_drain(_live_partitions(cluster), node_id, brokers)
    except PlacementRefused as refused:
        raise Conflict(str(refused), code="not_enough_brokers") from refused


def request_broker_removal(*, actor: Actor, cluster: Cluster, node_id: int) -> Operation:
    """Removes a broker-only node: its replicas move to the other brokers (keeping each partition's
    replication factor), then it is stopped, unregistered and its directory dropped. Controller voters
    leave by being replaced (request_controller_replacement), and a broker whose replicas would have
    nowhere to go cannot leave."""
    change = cluster_change(
        "cluster.remove_broker",
        cluster.organization,
        before=snapshot_cluster(cluster),
        extra={"node_id": node_id},
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        cluster, broker = _locked_node(actor, cluster, node_id)
        if broker.is_controller:
            how = (
                "replace its controller first (POST .../brokers/{node_id}/replace-controller)"
                if cluster.dynamic_quorum
                else "the controller quorum's membership is fixed"
            )
            raise Conflict(f"Broker {node_id} is a controller voter; {how}.", code="controller_voter")
        moves = plan_broker_drain(cluster, node_id)
        operation = new_operation(
            cluster, OperationKind.REMOVE_BROKER, actor, parameters={"node_id": node_id}
        )
        change.after = {"node_id": node_id, "partitions_to_move": len(moves)}
    return operation


def reassign_partitions(
    *,
    actor: Actor,
    cluster: Cluster,
    topic: str,
    partitions: list[int] | None = None,
    replicas: list[int] | None = None,
    onto_broker: int | None = None,
) -> dict[PartitionKey, list[int]]:
    """Starts moving partitions of `topic` (all, or the given ones): to the given `replicas`, or one replica
    of each onto `onto_broker` (keeping the replication factor). Returns the targets requested; the
    cluster copies the data in the background (describe_reassignments shows how far it got)."""
    change = cluster_change(
        "cluster.reassign_partitions",
        cluster.organization,
        extra={"topic": topic, "partitions": partitions, "replicas": replicas, "onto_broker": onto_broker},
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        if (replicas is None) == (onto_broker is None):
            raise ServiceError(
                "Give either the target replicas or a broker to move onto.", code="invalid_target"
            )
        live = _live_partitions(cluster)
        chosen = {key: info for key, info in live.items() if key[0] == topic}
        if not chosen:
            raise ServiceError(f"Cluster {cluster.name} has no topic {topic!r}.", code="unknown_topic")
        if partitions is not None:
            missing = sorted(set(partitions) - {key[1] for key in chosen})
            if missing:
                raise ServiceError(
                    f"{topic} has no partition {', '.join(map(str, missing))}.", code="unknown_partition"
                )
            chosen = {key: info for key, info in chosen.items() if key[1] in partitions}
        with kafka_refusals():
            brokers = {node.node_id for node in probe_cluster(connection_for(cluster)).brokers}
        try:
            if replicas is not None:
                targets = {key: list(replicas) for key in chosen}
                for key in targets:
                    check_target(chosen[key], key, replicas, brokers)
            else:
                check_target(next(iter(chosen.values())), next(iter(chosen)), [onto_broker or 0], brokers)
                targets = plan_move_onto(chosen, int(onto_broker or 0))
        except PlacementRefused as refused:
            raise ServiceError(str(refused), code="invalid_target") from refused
        with confirmed_change(lambda: _reassigning_or_moved(cluster, targets)):
            alter_partition_reassignments(connection_for(cluster), targets)
        change.after = {f"{key[0]}-{key[1]}": target for key, target in targets.items()}
    return targets


def _reassigning_or_moved(cluster: Cluster, targets: dict[tuple[str, int], list[int]]) -> bool:
    """A reassignment read back after no answer: every partition is moving, or already on its target."""
    connection = connection_for(cluster)
    moving = {(move.topic, move.partition) for move in list_partition_reassignments(connection)}
    live = {
        (name, info.partition): info.replicas
        for name, topic in list_topics(connection).items()
        for info in topic.partitions
    }
    return all(
        key in moving or sorted(live.get(key, [])) == sorted(target) for key, target in targets.items()
    )


@dataclass(frozen=True)
class ReassignmentsView:
    partitions: list[PartitionProgress]
    percent: float


def describe_reassignments(*, cluster: Cluster) -> ReassignmentsView:
    """The cluster's ongoing reassignments with each adding replica's bytes against its leader's."""
    connection = connection_for(cluster)
    with kafka_refusals():
        ongoing = list_partition_reassignments(connection, timeout_seconds=PROBE_TIMEOUT_SECONDS)
        if not ongoing:
            return ReassignmentsView(partitions=[], percent=100.0)
        live = _live_partitions(cluster)
        wanted: dict[str, list[int]] = {}
        for move in ongoing:
            wanted.setdefault(move.topic, []).append(move.partition)
        sizes = describe_replica_sizes(connection, partitions=wanted, timeout_seconds=PROBE_TIMEOUT_SECONDS)
    leaders = {key: info.leader for key, info in live.items()}
    rows, percent = reassignment_progress(ongoing, leaders, sizes)
    return ReassignmentsView(partitions=rows, percent=percent)
