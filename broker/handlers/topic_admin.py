"""CreateTopics (19), DeleteTopics (20) and CreatePartitions (37)."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

from kio.schema.create_partitions.v3.response import CreatePartitionsResponse, CreatePartitionsTopicResult
from kio.schema.create_topics.v7.response import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsResponse,
)
from kio.schema.delete_topics.v6.response import DeletableTopicResult, DeleteTopicsResponse
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.auth.principal import principal_user
from broker.context import RequestContext
from broker.handlers.configs import describe_topic_config_entries
from broker.protocol.responses import NOT_THROTTLED
from broker.quotas.manager import CONTROLLER_MUTATION_RATE
from broker.topics import TopicError


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
        # The controller checks the broker ids against the registered brokers.
    return len(indexes), sizes.pop()


def _replica_lists(assignments: Any) -> list[list[int]]:
    """CreateTopics' manual assignments as replica lists in partition order."""
    ordered = sorted(assignments or (), key=lambda a: a.partition_index)
    return [list(a.broker_ids) for a in ordered]


class MutationQuota:
    """controller_mutation_rate (KIP-599): partitions created or deleted per second.

    Versions that know THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+, DeleteTopics v5+,
    CreatePartitions v3+) are refused once the client is over its quota; older ones are
    served and throttled, as Kafka does.
    """

    def __init__(self, ctx: RequestContext, strict_from: int) -> None:
        self.ctx = ctx
        self.quotas = ctx.broker.quotas
        self.strict = ctx.api_version >= strict_from
        self.user = principal_user(ctx.principal)
        self.client_id = ctx.client_id or ""
        self.throttle_s = 0.0

    def exceeded(self) -> bool:
        if not self.strict:
            return False
        throttle = self.quotas.throttle(CONTROLLER_MUTATION_RATE, self.user, self.client_id, time.monotonic())
        self.throttle_s = max(self.throttle_s, throttle)
        return throttle > 0

    def record(self, partitions: int) -> None:
        if partitions <= 0:
            return
        throttle = self.quotas.record(
            CONTROLLER_MUTATION_RATE, self.user, self.client_id, partitions, time.monotonic()
        )
        self.throttle_s = max(self.throttle_s, throttle)

    def throttle_time(self) -> timedelta:
        if not self.strict and self.throttle_s > 0 and self.ctx.session is not None:
            self.ctx.session.throttle_s = max(self.ctx.session.throttle_s, self.throttle_s)
        return timedelta(milliseconds=int(self.throttle_s * 1000))


THROTTLED_MESSAGE = "The controller mutation quota is exceeded."
METADATA_TOPIC = "__cluster_metadata"


def _past_deadline(request: Any) -> bool:
    """Kafka's controller takes a request's timeout as its deadline: 0 (or less) has passed before the
    change is looked at, so the whole request answers REQUEST_TIMED_OUT and nothing changes (validate_only
    too). Clients that mean "do not wait" (librdkafka's operation_timeout=0) hide that error."""
    return request.timeout <= timedelta(0)


def _topic_failed(name: str, error: ErrorCode, message: str | None) -> CreatableTopicResult:
    # An error answer describes no topic: no configs (Kafka's empty array).
    return CreatableTopicResult(name=name, topic_id=None, error_code=error, error_message=message, configs=())


async def handle_create_topics(ctx: RequestContext, request: Any) -> CreateTopicsResponse:
    topics_manager = ctx.broker.topics
    seen: dict[str, int] = {}
    for topic in request.topics:
        seen[topic.name] = seen.get(topic.name, 0) + 1
    results: list[CreatableTopicResult] = []
    cluster_create = ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
    mutations = MutationQuota(ctx, strict_from=6)
    if _past_deadline(request) and any(
        seen[topic.name] == 1
        and topic.name != METADATA_TOPIC
        and (cluster_create or ctx.allowed(Operation.CREATE, ResourceType.TOPIC, topic.name))
        for topic in request.topics
    ):
        return CreateTopicsResponse(
            throttle_time=NOT_THROTTLED,
            topics=tuple(_topic_failed(t.name, ErrorCode.request_timed_out, None) for t in request.topics),
        )
    for topic in request.topics:
        if seen[topic.name] > 1:
            results.append(
                _topic_failed(topic.name, ErrorCode.invalid_request, "Duplicate topic in request.")
            )
            continue
        if not cluster_create and not ctx.allowed(Operation.CREATE, ResourceType.TOPIC, topic.name):
            results.append(
                _topic_failed(topic.name, ErrorCode.topic_authorization_failed, "Authorization failed.")
            )
            continue
        if not request.validate_only and mutations.exceeded():
            results.append(_topic_failed(topic.name, ErrorCode.throttling_quota_exceeded, THROTTLED_MESSAGE))
            continue
        try:
            configs: dict[str, str] = {}
            for config in topic.configs:
                if config.value is None:
                    raise TopicError(ErrorCode.invalid_config, f"Null value for config {config.name}")
                configs[config.name] = config.value
            partitions, replication_factor = _check_assignments(ctx, topic)
            created = await topics_manager.create(
                topic.name,
                partitions,
                replication_factor,
                configs,
                validate_only=request.validate_only,
                assignments=_replica_lists(topic.assignments),
            )
        except TopicError as exc:
            results.append(_topic_failed(topic.name, ErrorCode(exc.error_code), exc.message))
            continue
        if not request.validate_only:
            mutations.record(created.partitions)
        results.append(
            CreatableTopicResult(
                name=topic.name,
                error_code=ErrorCode.none,
                error_message=None,
                # Kafka draws the id before it knows the request only validates, and answers it (v7+) either way.
                topic_id=uuid.uuid4() if request.validate_only else created.topic_id,
                num_partitions=created.partitions,
                replication_factor=created.replication_factor,
                configs=tuple(
                    CreatableTopicConfigs(
                        name=entry.name,
                        value=entry.value,
                        read_only=entry.read_only,
                        config_source=entry.config_source,
                        is_sensitive=False,
                    )
                    for entry in describe_topic_config_entries(ctx, created, include_synonyms=False)
                ),
            )
        )
    return CreateTopicsResponse(throttle_time=mutations.throttle_time(), topics=tuple(results))


async def handle_delete_topics(ctx: RequestContext, request: Any) -> DeleteTopicsResponse:
    state = ctx.broker
    responses: list[DeletableTopicResult] = []
    mutations = MutationQuota(ctx, strict_from=5)
    # v0-5 send names as a string array; v6 sends (name | topic_id) entries.
    names = getattr(request, "topic_names", None)
    entries = (
        [(name, None) for name in names]
        if names is not None
        else [(t.name, t.topic_id) for t in request.topics]
    )
    if _past_deadline(request) and _asks_the_controller(entries):
        return DeleteTopicsResponse(
            throttle_time=NOT_THROTTLED,
            responses=tuple(
                DeletableTopicResult(name=name, topic_id=topic_id, error_code=ErrorCode.request_timed_out)
                for name, topic_id in entries
            ),
        )
    for name, topic_id in entries:
        if name is None and topic_id is not None:
            topic = state.metadata.get_by_id(topic_id)
            if topic is None:
                responses.append(
                    DeletableTopicResult(
                        name=None,
                        topic_id=topic_id,
                        error_code=ErrorCode.unknown_topic_id,
                        error_message="This server does not host this topic ID.",
                    )
                )
                continue
            name = topic.name
            if not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, name):
                # Do not confirm that a topic id exists to someone who may not see it.
                responses.append(
                    DeletableTopicResult(
                        name=None, topic_id=topic_id, error_code=ErrorCode.topic_authorization_failed
                    )
                )
                continue
        if not ctx.allowed(Operation.DELETE, ResourceType.TOPIC, name):
            responses.append(
                DeletableTopicResult(
                    name=name, topic_id=topic_id, error_code=ErrorCode.topic_authorization_failed
                )
            )
            continue
        if mutations.exceeded():
            responses.append(
                DeletableTopicResult(
                    name=name,
                    topic_id=topic_id,
                    error_code=ErrorCode.throttling_quota_exceeded,
                    error_message=THROTTLED_MESSAGE,
                )
            )
            continue
        try:
            deleted = await state.topics.delete(name)
        except TopicError as exc:
            responses.append(
                DeletableTopicResult(
                    name=name,
                    topic_id=topic_id,
                    error_code=ErrorCode(exc.error_code),
                    error_message=exc.message,
                )
            )
            continue
        mutations.record(deleted.partitions)
        responses.append(
            DeletableTopicResult(name=name, topic_id=deleted.topic_id, error_code=ErrorCode.none)
        )
    return DeleteTopicsResponse(throttle_time=mutations.throttle_time(), responses=tuple(responses))


def _asks_the_controller(entries: list[tuple[Any, Any]]) -> bool:
    """Kafka's DeleteTopics looks up every valid, non-duplicate name or id at the controller (where the
    deadline applies) before anything else."""
    named = [(name, topic_id) for name, topic_id in entries if (name is None) != (topic_id is None)]
    return any(named.count(entry) == 1 for entry in named)


async def handle_create_partitions(ctx: RequestContext, request: Any) -> CreatePartitionsResponse:
    results: list[CreatePartitionsTopicResult] = []
    mutations = MutationQuota(ctx, strict_from=3)
    names = [topic.name for topic in request.topics]
    if _past_deadline(request) and any(
        names.count(topic.name) == 1 and ctx.allowed(Operation.ALTER, ResourceType.TOPIC, topic.name)
        for topic in request.topics
    ):
        return CreatePartitionsResponse(
            throttle_time=NOT_THROTTLED,
            results=tuple(
                CreatePartitionsTopicResult(
                    name=name, error_code=ErrorCode.request_timed_out, error_message=None
                )
                for name in names
            ),
        )
    for topic in request.topics:
        if not ctx.allowed(Operation.ALTER, ResourceType.TOPIC, topic.name):
            results.append(
                CreatePartitionsTopicResult(
                    name=topic.name, error_code=ErrorCode.topic_authorization_failed, error_message=None
                )
            )
            continue
        if not request.validate_only and mutations.exceeded():
            results.append(
                CreatePartitionsTopicResult(
                    name=topic.name,
                    error_code=ErrorCode.throttling_quota_exceeded,
                    error_message=THROTTLED_MESSAGE,
                )
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
            before = current.partitions if current is not None else 0
            await ctx.broker.topics.grow(
                topic.name,
                topic.count,
                validate_only=request.validate_only,
                assignments=[list(a.broker_ids) for a in topic.assignments or ()],
            )
        except TopicError as exc:
            # Kafka answers an unknown topic here without a message.
            unknown = exc.error_code == ErrorCode.unknown_topic_or_partition
            results.append(
                CreatePartitionsTopicResult(
                    name=topic.name,
                    error_code=ErrorCode(exc.error_code),
                    error_message=None if unknown else exc.message,
                )
            )
            continue
        if not request.validate_only:
            mutations.record(topic.count - before)
        results.append(
            CreatePartitionsTopicResult(name=topic.name, error_code=ErrorCode.none, error_message=None)
        )
    return CreatePartitionsResponse(throttle_time=mutations.throttle_time(), results=tuple(results))
