"""ElectLeaders (43), AlterPartitionReassignments (45), ListPartitionReassignments (46) and
UnregisterBroker (64).

Each request is forwarded to the active controller (a single node's: its own), which decides and commits.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kio.schema.alter_partition_reassignments.v1 import response as alter
from kio.schema.elect_leaders.v2 import response as elect
from kio.schema.errors import ErrorCode
from kio.schema.list_partition_reassignments.v0 import response as listing
from kio.schema.unregister_broker.v0.response import UnregisterBrokerResponse

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError
from broker.controller.rpc.admin import (
    AlterPartitionReassignmentsRequest,
    ElectLeadersRequest,
    ListPartitionReassignmentsRequest,
    OngoingReassignment,
)
from broker.controller.rpc.base import PartitionResult
from broker.controller.rpc.brokers import UnregisterBrokerRequest
from broker.protocol.responses import NOT_THROTTLED

ELECTION_TYPES = (0, 1)  # PREFERRED, UNCLEAN
DENIED_MESSAGE = "Cluster authorization failed."

Outcome = TypeVar("Outcome", PartitionResult, OngoingReassignment)
Entry = TypeVar("Entry")


def _cluster_denied(ctx: RequestContext, operation: int) -> bool:
    return not ctx.allowed(operation, ResourceType.CLUSTER, CLUSTER_NAME)


def _requested_partitions(
    topics: Iterable[Any], name_field: str, partitions_field: str
) -> list[tuple[str, int]]:
    return [(getattr(t, name_field), int(p)) for t in topics for p in getattr(t, partitions_field)]


def _group_by_topic(
    results: Iterable[Outcome], entry: Callable[[Outcome], Entry]
) -> dict[str, tuple[Entry, ...]]:
    """Per-partition outcomes -> {topic: (entry(outcome), ...)}, in the order the topics first appear."""
    by_topic: dict[str, list[Entry]] = defaultdict(list)
    for result in results:
        by_topic[result.topic].append(entry(result))
    return {name: tuple(items) for name, items in by_topic.items()}


# --- ElectLeaders -------------------------------------------------------------------------------


def _election_results(results: Iterable[PartitionResult]) -> tuple[elect.ReplicaElectionResult, ...]:
    def entry(result: PartitionResult) -> elect.PartitionResult:
        error = ErrorCode(result.error_code)
        return elect.PartitionResult(
            partition_id=result.partition,
            error_code=error,
            error_message=(result.message or error.name) if error else None,
        )

    return tuple(
        elect.ReplicaElectionResult(topic=topic, partition_result=partitions)
        for topic, partitions in _group_by_topic(results, entry).items()
    )


async def handle_elect_leaders(ctx: RequestContext, request: Any) -> elect.ElectLeadersResponse:
    requested = (
        None
        if request.topic_partitions is None
        else list(dict.fromkeys(_requested_partitions(request.topic_partitions, "topic", "partitions")))
    )

    def everyone(code: ErrorCode, message: str) -> elect.ElectLeadersResponse:
        results = [PartitionResult(t, p, code, message) for t, p in requested or []]
        return elect.ElectLeadersResponse(
            throttle_time=NOT_THROTTLED, error_code=code, replica_election_results=_election_results(results)
        )

    if _cluster_denied(ctx, Operation.ALTER):
        return everyone(ErrorCode.cluster_authorization_failed, DENIED_MESSAGE)
    # ElectLeaders v0 has no election type: it always asks for the preferred leader.
    election_type = int(getattr(request, "election_type", 0))
    if election_type not in ELECTION_TYPES:
        return everyone(ErrorCode.invalid_request, f"Unknown election type {election_type}.")
    election = ElectLeadersRequest(election_type, None if requested is None else tuple(requested))
    try:
        answer = await ctx.broker.cluster.call(election)
    except ControllerError as exc:
        return everyone(ErrorCode(exc.code), exc.message)
    return elect.ElectLeadersResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode.none,
        replica_election_results=_election_results(answer.results),
    )


# --- AlterPartitionReassignments ----------------------------------------------------------------


async def handle_alter_partition_reassignments(
    ctx: RequestContext, request: Any
) -> alter.AlterPartitionReassignmentsResponse:
    allow_factor_change = bool(getattr(request, "allow_replication_factor_change", True))

    def answer(
        error: ErrorCode, message: str | None, responses: tuple[alter.ReassignableTopicResponse, ...] = ()
    ) -> alter.AlterPartitionReassignmentsResponse:
        return alter.AlterPartitionReassignmentsResponse(
            throttle_time=NOT_THROTTLED,
            allow_replication_factor_change=allow_factor_change,
            error_code=error,
            error_message=message,
            responses=responses,
        )

    if _cluster_denied(ctx, Operation.ALTER):
        return answer(ErrorCode.cluster_authorization_failed, DENIED_MESSAGE)
    wanted = [
        (topic.name, int(p.partition_index), None if p.replicas is None else [int(b) for b in p.replicas])
        for topic in request.topics
        for p in topic.partitions
    ]
    reassignments = AlterPartitionReassignmentsRequest(
        tuple((t, p, None if target is None else tuple(target)) for t, p, target in wanted),
        allow_factor_change,
    )
    try:
        outcome = await ctx.broker.cluster.call(reassignments)
    except ControllerError as exc:
        return answer(ErrorCode(exc.code), exc.message)

    def entry(result: PartitionResult) -> alter.ReassignablePartitionResponse:
        return alter.ReassignablePartitionResponse(
            partition_index=result.partition,
            error_code=ErrorCode(result.error_code),
            error_message=(result.message or None) if result.error_code else None,
        )

    return answer(
        ErrorCode.none,
        None,
        tuple(
            alter.ReassignableTopicResponse(name=name, partitions=partitions)
            for name, partitions in _group_by_topic(outcome.results, entry).items()
        ),
    )


# --- ListPartitionReassignments -----------------------------------------------------------------


async def handle_list_partition_reassignments(
    ctx: RequestContext, request: Any
) -> listing.ListPartitionReassignmentsResponse:
    def answer(
        error: ErrorCode, message: str | None, topics: tuple[listing.OngoingTopicReassignment, ...] = ()
    ) -> listing.ListPartitionReassignmentsResponse:
        return listing.ListPartitionReassignmentsResponse(
            throttle_time=NOT_THROTTLED, error_code=error, error_message=message, topics=topics
        )

    if _cluster_denied(ctx, Operation.DESCRIBE):
        return answer(ErrorCode.cluster_authorization_failed, DENIED_MESSAGE)
    requested = (
        None if request.topics is None else _requested_partitions(request.topics, "name", "partition_indexes")
    )
    try:
        outcome = await ctx.broker.cluster.call(
            ListPartitionReassignmentsRequest(None if requested is None else tuple(requested))
        )
    except ControllerError as exc:
        return answer(ErrorCode(exc.code), exc.message)

    def entry(ongoing: OngoingReassignment) -> listing.OngoingPartitionReassignment:
        return listing.OngoingPartitionReassignment(
            partition_index=ongoing.partition,
            replicas=tuple(ongoing.replicas),
            adding_replicas=tuple(ongoing.adding_replicas),
            removing_replicas=tuple(ongoing.removing_replicas),
        )

    return answer(
        ErrorCode.none,
        None,
        tuple(
            listing.OngoingTopicReassignment(name=name, partitions=partitions)
            for name, partitions in _group_by_topic(outcome.reassignments, entry).items()
        ),
    )


# --- UnregisterBroker ---------------------------------------------------------------------------


async def handle_unregister_broker(ctx: RequestContext, request: Any) -> UnregisterBrokerResponse:
    def answer(error: ErrorCode, message: str | None) -> UnregisterBrokerResponse:
        return UnregisterBrokerResponse(throttle_time=NOT_THROTTLED, error_code=error, error_message=message)

    if _cluster_denied(ctx, Operation.ALTER):
        return answer(ErrorCode.cluster_authorization_failed, DENIED_MESSAGE)
    try:
        await ctx.broker.cluster.call(UnregisterBrokerRequest(int(request.broker_id)))
    except ControllerError as exc:
        return answer(ErrorCode(exc.code), exc.message)
    return answer(ErrorCode.none, None)
