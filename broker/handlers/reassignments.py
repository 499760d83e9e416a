"""ElectLeaders (43), AlterPartitionReassignments (45), ListPartitionReassignments (46) and
UnregisterBroker (64).

In a cluster each request is forwarded to the active controller, which decides and commits.
A single-node broker leads every partition itself, so there is nothing to elect or move: it
answers what Kafka would for a one-broker cluster.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError

ELECTION_TYPES = (0, 1)  # PREFERRED, UNCLEAN
DENIED = {
    "error_code": ErrorCode.cluster_authorization_failed,
    "error_message": "Cluster authorization failed.",
}


def _cluster_denied(ctx: RequestContext, operation: int) -> bool:
    return not ctx.allowed(operation, ResourceType.CLUSTER, CLUSTER_NAME)


def _failure(exc: ControllerError) -> dict[str, Any]:
    """The top-level error of a request the controller refused (or no controller answered)."""
    return {"error_code": ErrorCode(exc.code), "error_message": exc.message}


def _requested_partitions(
    topics: Iterable[Any], name_field: str, partitions_field: str
) -> list[tuple[str, int]]:
    return [(getattr(t, name_field), int(p)) for t in topics for p in getattr(t, partitions_field)]


def _group_by_topic(
    results: Iterable[dict[str, Any]], topic_key: str, partitions_key: str, entry: Any
) -> list[dict[str, Any]]:
    """[{topic, partition, ...}] -> [{topic_key: name, partitions_key: [entry(result), ...]}]."""
    by_topic: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        by_topic[result["topic"]].append(entry(result))
    return [{topic_key: name, partitions_key: items} for name, items in by_topic.items()]


def _local_partition_exists(ctx: RequestContext, topic: str, partition: int) -> bool:
    record = ctx.broker.metadata.get(topic)
    return record is not None and 0 <= partition < record.partitions


# --- ElectLeaders -------------------------------------------------------------------------------


def _election_results(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return _group_by_topic(
        results,
        "topic",
        "partition_result",
        lambda r: {
            "partition_id": r["partition"],
            "error_code": r["error_code"],
            "error_message": (r["message"] or ErrorCode(r["error_code"]).name) if r["error_code"] else None,
        },
    )


async def handle_elect_leaders(ctx: RequestContext, request: Any) -> dict[str, Any]:
    requested = (
        None
        if request.topic_partitions is None
        else list(dict.fromkeys(_requested_partitions(request.topic_partitions, "topic", "partitions")))
    )

    def everyone(code: ErrorCode, message: str) -> dict[str, Any]:
        results = [
            {"topic": t, "partition": p, "error_code": code, "message": message} for t, p in requested or []
        ]
        return {
            "throttle_time": 0,
            "error_code": code,
            "replica_election_results": _election_results(results),
        }

    if _cluster_denied(ctx, Operation.ALTER):
        return everyone(ErrorCode.cluster_authorization_failed, "Cluster authorization failed.")
    # ElectLeaders v0 has no election type: it always asks for the preferred leader.
    election_type = int(getattr(request, "election_type", 0))
    if election_type not in ELECTION_TYPES:
        return everyone(ErrorCode.invalid_request, f"Unknown election type {election_type}.")
    cluster = ctx.broker.cluster
    if cluster is None:
        # The only broker leads every partition already.
        results = [
            {
                "topic": t,
                "partition": p,
                "error_code": (
                    ErrorCode.election_not_needed
                    if _local_partition_exists(ctx, t, p)
                    else ErrorCode.unknown_topic_or_partition
                ),
                "message": "",
            }
            for t, p in requested or []
        ]
    else:
        params = {
            "election_type": election_type,
            "partitions": None if requested is None else [list(tp) for tp in requested],
        }
        try:
            answer = await cluster.call("elect_leaders", params)
        except ControllerError as exc:
            return everyone(ErrorCode(exc.code), exc.message)
        results = answer["results"]
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "replica_election_results": _election_results(results),
    }


# --- AlterPartitionReassignments ----------------------------------------------------------------


async def handle_alter_partition_reassignments(ctx: RequestContext, request: Any) -> dict[str, Any]:
    allow_factor_change = bool(getattr(request, "allow_replication_factor_change", True))
    response: dict[str, Any] = {
        "throttle_time": 0,
        "allow_replication_factor_change": allow_factor_change,
        "error_code": ErrorCode.none,
        "error_message": None,
        "responses": [],
    }
    if _cluster_denied(ctx, Operation.ALTER):
        return {**response, **DENIED}
    wanted = [
        (topic.name, int(p.partition_index), None if p.replicas is None else [int(b) for b in p.replicas])
        for topic in request.topics
        for p in topic.partitions
    ]
    cluster = ctx.broker.cluster
    if cluster is None:
        results = [_reassign_single_node(ctx, t, p, target) for t, p, target in wanted]
    else:
        params = {
            "reassignments": [list(item) for item in wanted],
            "allow_replication_factor_change": allow_factor_change,
        }
        try:
            answer = await cluster.call("alter_partition_reassignments", params)
        except ControllerError as exc:
            return {**response, **_failure(exc)}
        results = answer["results"]
    response["responses"] = _group_by_topic(
        results,
        "name",
        "partitions",
        lambda r: {
            "partition_index": r["partition"],
            "error_code": r["error_code"],
            "error_message": (r["message"] or None) if r["error_code"] else None,
        },
    )
    return response


def _reassign_single_node(
    ctx: RequestContext, topic: str, partition: int, target: list[int] | None
) -> dict[str, Any]:
    """One broker: its partitions can only stay where they are."""
    code, message = ErrorCode.none, ""
    if not _local_partition_exists(ctx, topic, partition):
        code, message = ErrorCode.unknown_topic_or_partition, f"no partition {topic}-{partition}"
    elif target is None:
        # Kafka answers this one without a message.
        code, message = ErrorCode.no_reassignment_in_progress, None
    elif target != [ctx.broker.node_id]:
        code = ErrorCode.invalid_replica_assignment
        message = f"this cluster has one broker ({ctx.broker.node_id}); the target was {target}"
    return {"topic": topic, "partition": partition, "error_code": code, "message": message}


# --- ListPartitionReassignments -----------------------------------------------------------------


async def handle_list_partition_reassignments(ctx: RequestContext, request: Any) -> dict[str, Any]:
    response: dict[str, Any] = {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "topics": [],
    }
    if _cluster_denied(ctx, Operation.DESCRIBE):
        return {**response, **DENIED}
    cluster = ctx.broker.cluster
    if cluster is None:
        return response  # one broker never moves a replica
    requested = (
        None if request.topics is None else _requested_partitions(request.topics, "name", "partition_indexes")
    )
    try:
        answer = await cluster.call(
            "list_partition_reassignments",
            {"partitions": None if requested is None else [list(tp) for tp in requested]},
        )
    except ControllerError as exc:
        return {**response, **_failure(exc)}
    response["topics"] = _group_by_topic(
        answer["reassignments"],
        "name",
        "partitions",
        lambda r: {
            "partition_index": r["partition"],
            "replicas": tuple(r["replicas"]),
            "adding_replicas": tuple(r["adding_replicas"]),
            "removing_replicas": tuple(r["removing_replicas"]),
        },
    )
    return response


# --- UnregisterBroker ---------------------------------------------------------------------------


async def handle_unregister_broker(ctx: RequestContext, request: Any) -> dict[str, Any]:
    response: dict[str, Any] = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None}
    if _cluster_denied(ctx, Operation.ALTER):
        return {**response, **DENIED}
    broker_id = int(request.broker_id)
    cluster = ctx.broker.cluster
    if cluster is None:
        if broker_id == ctx.broker.node_id:
            response.update(error_code=ErrorCode.invalid_request, error_message="This broker is running.")
        else:
            response.update(
                error_code=ErrorCode.broker_id_not_registered,
                error_message=f"Broker {broker_id} is not registered.",
            )
        return response
    try:
        await cluster.call("unregister_broker", {"broker_id": broker_id})
    except ControllerError as exc:
        return {**response, **_failure(exc)}
    return response


APIS = {
    43: (0, 2, handle_elect_leaders),
    45: (0, 1, handle_alter_partition_reassignments),
    46: (0, 0, handle_list_partition_reassignments),
    64: (0, 0, handle_unregister_broker),
}
