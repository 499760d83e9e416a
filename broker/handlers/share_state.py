"""The share coordinator's RPCs (KIP-932), as Kafka 4.2 serves them: InitializeShareGroupState (83),
ReadShareGroupState (84), WriteShareGroupState (85), DeleteShareGroupState (86) and
ReadShareGroupStateSummary (87).

Sent by share-partition leaders (and the group coordinator) to the leader of a key's `__share_group_state`
partition; answered on any listener to a principal with CLUSTER_ACTION on the cluster, as Kafka does. Each
key is answered on its own: NOT_COORDINATOR where another broker leads its state partition. The state rules
are `broker.server.share_storage.ShareCoordinatorState`'s.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

from kio.schema.delete_share_group_state.v0 import response as delete
from kio.schema.errors import ErrorCode
from kio.schema.initialize_share_group_state.v0 import response as initialize
from kio.schema.read_share_group_state.v0 import response as read
from kio.schema.read_share_group_state_summary.v1 import response as summary
from kio.schema.write_share_group_state.v1 import response as write

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.handlers.share_groups import share_groups_enabled
from broker.share.persister import NOT_INITIALIZED, CoordinatorAnswer, ShareCoordinator

PartitionAnswer = Callable[[ShareCoordinator, tuple[str, uuid.UUID, int], Any], Awaitable[Any]]
Response = TypeVar(
    "Response",
    initialize.InitializeShareGroupStateResponse,
    read.ReadShareGroupStateResponse,
    write.WriteShareGroupStateResponse,
    delete.DeleteShareGroupStateResponse,
    summary.ReadShareGroupStateSummaryResponse,
)

NULL_TOPIC_ID = uuid.UUID(int=0)
# The other fields of an error answer, at their defaults.
READ_DEFAULTS: dict[str, Any] = {"state_epoch": 0, "start_offset": 0, "state_batches": ()}
SUMMARY_DEFAULTS: dict[str, Any] = {
    "state_epoch": 0,
    "leader_epoch": 0,
    "start_offset": 0,
    "delivery_complete_count": -1,
}


@dataclasses.dataclass(frozen=True, slots=True)
class _Schema(Generic[Response]):
    """One RPC's response classes: the response, its per-topic result and its per-partition result; a
    partition's error answer carries `error_defaults` (its other fields at their defaults, as Kafka's)."""

    response: type[Response]
    result: type
    partition: type
    error_defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def error(self, index: int, error: ErrorCode, message: str | None = None) -> Any:
        return self.partition(partition=index, error_code=error, error_message=message, **self.error_defaults)


def _refused(ctx: RequestContext) -> ErrorCode | None:
    if not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return ErrorCode.cluster_authorization_failed
    if not share_groups_enabled(ctx):
        return ErrorCode.unsupported_version
    return None


async def _per_partition(
    ctx: RequestContext, request: Any, schema: _Schema[Response], answer: PartitionAnswer
) -> Response:
    """Each partition's answer; a refused one is the schema's error answer."""
    store = ctx.broker.share.store
    refused = _refused(ctx)
    if refused is None and store is None:
        refused = ErrorCode.coordinator_not_available
    results = []
    for topic in request.topics:
        partitions = []
        for partition in topic.partitions:
            index = int(partition.partition)
            if refused is not None:
                partitions.append(schema.error(index, refused))
            elif topic.topic_id is None or topic.topic_id == NULL_TOPIC_ID:
                partitions.append(
                    schema.error(index, ErrorCode.invalid_request, "The topic id cannot be null.")
                )
            elif index < 0:
                message = "The partition id cannot be a negative number."
                partitions.append(schema.error(index, ErrorCode.invalid_request, message))
            else:
                assert store is not None
                key = (request.group_id, topic.topic_id, index)
                partitions.append(await answer(store.coordinator, key, partition))
        results.append(schema.result(topic_id=topic.topic_id, partitions=tuple(partitions)))
    return schema.response(results=tuple(results))


INITIALIZE = _Schema(
    initialize.InitializeShareGroupStateResponse, initialize.InitializeStateResult, initialize.PartitionResult
)
READ = _Schema(read.ReadShareGroupStateResponse, read.ReadStateResult, read.PartitionResult, READ_DEFAULTS)
WRITE = _Schema(write.WriteShareGroupStateResponse, write.WriteStateResult, write.PartitionResult)
DELETE = _Schema(delete.DeleteShareGroupStateResponse, delete.DeleteStateResult, delete.PartitionResult)
SUMMARY = _Schema(
    summary.ReadShareGroupStateSummaryResponse,
    summary.ReadStateSummaryResult,
    summary.PartitionResult,
    SUMMARY_DEFAULTS,
)


def _outcome(schema: _Schema[Any], index: int, answer: CoordinatorAnswer) -> Any:
    """The partition's answer to a change: its error, or success."""
    if answer.error == ErrorCode.none:
        return schema.error(index, ErrorCode.none)
    return schema.error(index, ErrorCode(answer.error), answer.message)


async def initialize_share_group_state(
    ctx: RequestContext, request: Any
) -> initialize.InitializeShareGroupStateResponse:
    async def answer(coordinator: ShareCoordinator, key: Any, partition: Any) -> initialize.PartitionResult:
        found = await coordinator.initialize(
            key, state_epoch=int(partition.state_epoch), start_offset=int(partition.start_offset)
        )
        return _outcome(INITIALIZE, key[2], found)  # type: ignore[no-any-return]

    return await _per_partition(ctx, request, INITIALIZE, answer)


async def read_share_group_state(ctx: RequestContext, request: Any) -> read.ReadShareGroupStateResponse:
    async def answer(coordinator: ShareCoordinator, key: Any, partition: Any) -> read.PartitionResult:
        found = coordinator.read(key, int(partition.leader_epoch))
        snapshot = found.snapshot
        if found.error != ErrorCode.none or snapshot is None:
            # Kafka's error answer: state epoch and start offset 0, no batches.
            return READ.error(key[2], ErrorCode(found.error), found.message)  # type: ignore[no-any-return]
        return read.PartitionResult(
            partition=key[2],
            error_code=ErrorCode.none,
            error_message=None,
            state_epoch=snapshot.state_epoch,
            start_offset=snapshot.start_offset,
            state_batches=tuple(
                read.StateBatch(
                    first_offset=first, last_offset=last, delivery_state=state, delivery_count=count
                )
                for first, last, state, count in snapshot.state_batches
            ),
        )

    return await _per_partition(ctx, request, READ, answer)


async def write_share_group_state(ctx: RequestContext, request: Any) -> write.WriteShareGroupStateResponse:
    async def answer(coordinator: ShareCoordinator, key: Any, partition: Any) -> write.PartitionResult:
        found = await coordinator.write(
            key,
            state_epoch=int(partition.state_epoch),
            leader_epoch=int(partition.leader_epoch),
            start_offset=int(partition.start_offset),
            batches=[
                (int(b.first_offset), int(b.last_offset), int(b.delivery_state), int(b.delivery_count))
                for b in partition.state_batches
            ],
        )
        return _outcome(WRITE, key[2], found)  # type: ignore[no-any-return]

    return await _per_partition(ctx, request, WRITE, answer)


async def delete_share_group_state(ctx: RequestContext, request: Any) -> delete.DeleteShareGroupStateResponse:
    async def answer(coordinator: ShareCoordinator, key: Any, _partition: Any) -> delete.PartitionResult:
        found = await coordinator.delete(key)
        return _outcome(DELETE, key[2], found)  # type: ignore[no-any-return]

    return await _per_partition(ctx, request, DELETE, answer)


async def read_share_group_state_summary(
    ctx: RequestContext, request: Any
) -> summary.ReadShareGroupStateSummaryResponse:
    async def answer(coordinator: ShareCoordinator, key: Any, _partition: Any) -> summary.PartitionResult:
        found = coordinator.summary(key)
        snapshot = found.snapshot
        if found.error != ErrorCode.none:
            return SUMMARY.error(key[2], ErrorCode(found.error), found.message)  # type: ignore[no-any-return]
        return summary.PartitionResult(
            partition=key[2],
            error_code=ErrorCode.none,
            error_message=None,
            state_epoch=0 if snapshot is None else snapshot.state_epoch,
            leader_epoch=0 if snapshot is None else snapshot.leader_epoch,
            start_offset=NOT_INITIALIZED if snapshot is None else snapshot.start_offset,
            # Kafka answers the count its share-partition leader last wrote (WriteShareGroupState v1); ours write
            # none (-1), and this coordinator keeps no count of its own.
            delivery_complete_count=-1,
        )

    return await _per_partition(ctx, request, SUMMARY, answer)
