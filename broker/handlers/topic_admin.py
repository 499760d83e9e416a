"""CreateTopics (19), DeleteTopics (20) and CreatePartitions (37)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.handlers.configs import describe_topic_config_entries
from broker.server.context import RequestContext
from broker.server.topics import TopicError


def _check_assignments(ctx: RequestContext, topic: Any) -> tuple[int, int]:
    """Manual replica assignments replace num_partitions/replication_factor (which must be -1)."""
    assignments = topic.assignments
    if not assignments:
        return topic.num_partitions, topic.replication_factor
    if topic.num_partitions != -1 or topic.replication_factor != -1:
        raise TopicError(
            ErrorCode.invalid_request,
            "Both numPartitions or replicationFactor and replicasAssignments were set.",
        )
    indexes = sorted(a.partition_index for a in assignments)
    if indexes != list(range(len(indexes))):
        raise TopicError(
            ErrorCode.invalid_replica_assignment, "Partitions must be numbered 0..n-1 without gaps."
        )
    sizes = {len(a.broker_ids) for a in assignments}
    if len(sizes) != 1 or 0 in sizes:
        raise TopicError(
            ErrorCode.invalid_replica_assignment, "All partitions must have the same replica count."
        )
    for assignment in assignments:
        if len(set(assignment.broker_ids)) != len(assignment.broker_ids):
            raise TopicError(
                ErrorCode.invalid_replica_assignment, "Duplicate brokers in a replica assignment."
            )
        unknown = [b for b in assignment.broker_ids if b != ctx.broker.node_id]
        if unknown:
            raise TopicError(ErrorCode.invalid_replica_assignment, f"Unknown broker ids {unknown}.")
    return len(indexes), sizes.pop()


async def handle_create_topics(ctx: RequestContext, request: Any) -> dict[str, Any]:
    topics_manager = ctx.broker.topics
    seen: dict[str, int] = {}
    for topic in request.topics:
        seen[topic.name] = seen.get(topic.name, 0) + 1
    results = []
    cluster_create = ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
    for topic in request.topics:
        result: dict[str, Any] = {"name": topic.name, "topic_id": None, "error_message": None}
        if seen[topic.name] > 1:
            result["error_code"] = ErrorCode.invalid_request
            result["error_message"] = "Duplicate topic in request."
            results.append(result)
            continue
        if not cluster_create and not ctx.allowed(Operation.CREATE, ResourceType.TOPIC, topic.name):
            result["error_code"] = ErrorCode.topic_authorization_failed
            result["error_message"] = "Authorization failed."
            results.append(result)
            continue
        try:
            configs: dict[str, str] = {}
            for config in topic.configs:
                if config.value is None:
                    raise TopicError(ErrorCode.invalid_config, f"Null value for config {config.name}")
                configs[config.name] = config.value
            partitions, replication_factor = _check_assignments(ctx, topic)
            created = topics_manager.create_topic(
                topic.name,
                partitions,
                replication_factor,
                configs,
                validate_only=request.validate_only,
            )
        except TopicError as exc:
            result.update(error_code=exc.error_code, error_message=exc.message)
            results.append(result)
            continue
        result.update(
            error_code=ErrorCode.none,
            topic_id=None if request.validate_only else created.topic_id,
            num_partitions=created.partitions,
            replication_factor=created.replication_factor,
            configs=[
                {
                    "name": entry["name"],
                    "value": entry["value"],
                    "read_only": entry["read_only"],
                    "config_source": entry["config_source"],
                    "is_sensitive": False,
                }
                for entry in describe_topic_config_entries(ctx, created, include_synonyms=False)
            ],
        )
        results.append(result)
    return {"throttle_time": 0, "topics": results}


async def handle_delete_topics(ctx: RequestContext, request: Any) -> dict[str, Any]:
    state = ctx.broker
    responses = []
    # v0-5 send names as a string array; v6 sends (name | topic_id) entries.
    names = getattr(request, "topic_names", None)
    entries = (
        [(name, None) for name in names]
        if names is not None
        else [(t.name, t.topic_id) for t in request.topics]
    )
    for name, topic_id in entries:
        if name is None and topic_id is not None:
            topic = state.metadata.get_by_id(topic_id)
            if topic is None:
                responses.append(
                    {"name": None, "topic_id": topic_id, "error_code": ErrorCode.unknown_topic_id}
                )
                continue
            name = topic.name
            if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
                # Do not confirm that a topic id exists to someone who may not see it.
                responses.append(
                    {"name": None, "topic_id": topic_id, "error_code": ErrorCode.topic_authorization_failed}
                )
                continue
        if not ctx.allowed(Operation.DELETE, ResourceType.TOPIC, name):
            responses.append(
                {"name": name, "topic_id": topic_id, "error_code": ErrorCode.topic_authorization_failed}
            )
            continue
        try:
            deleted = state.topics.delete_topic(name)
        except TopicError as exc:
            responses.append(
                {
                    "name": name,
                    "topic_id": topic_id,
                    "error_code": exc.error_code,
                    "error_message": exc.message,
                }
            )
            continue
        responses.append({"name": name, "topic_id": deleted.topic_id, "error_code": ErrorCode.none})
    return {"throttle_time": 0, "responses": responses}


async def handle_create_partitions(ctx: RequestContext, request: Any) -> dict[str, Any]:
    results = []
    for topic in request.topics:
        if not ctx.allowed(Operation.ALTER, ResourceType.TOPIC, topic.name):
            results.append(
                {
                    "name": topic.name,
                    "error_code": ErrorCode.topic_authorization_failed,
                    "error_message": None,
                }
            )
            continue
        try:
            current = ctx.broker.metadata.get(topic.name)
            if topic.assignments is not None and current is not None:
                added = topic.count - current.partitions
                if len(topic.assignments) != added:
                    raise TopicError(
                        ErrorCode.invalid_replica_assignment,
                        f"Increasing the number of partitions by {added} but {len(topic.assignments)} "
                        "assignments provided.",
                    )
                for assignment in topic.assignments:
                    if list(assignment.broker_ids) != [ctx.broker.node_id]:
                        raise TopicError(
                            ErrorCode.invalid_replica_assignment,
                            f"Unknown broker ids in {list(assignment.broker_ids)}.",
                        )
            ctx.broker.topics.add_partitions(topic.name, topic.count, validate_only=request.validate_only)
        except TopicError as exc:
            results.append({"name": topic.name, "error_code": exc.error_code, "error_message": exc.message})
            continue
        results.append({"name": topic.name, "error_code": ErrorCode.none, "error_message": None})
    return {"throttle_time": 0, "results": results}


APIS = {
    19: (2, 7, handle_create_topics),
    20: (1, 6, handle_delete_topics),
    37: (0, 3, handle_create_partitions),
}
