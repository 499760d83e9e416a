"""The share coordinator's RPCs (KIP-932), as Kafka 4.2 serves them: InitializeShareGroupState (83),
ReadShareGroupState (84), WriteShareGroupState (85), DeleteShareGroupState (86) and
ReadShareGroupStateSummary (87).

Sent by share-partition leaders (and the group coordinator) to the leader of a key's `__share_group_state`
partition; answered on any listener to a principal with CLUSTER_ACTION on the cluster, as Kafka does. Each
key is answered on its own: NOT_COORDINATOR where another broker leads its state partition. The state rules
are `broker.server.share_storage.ShareCoordinatorState`'s.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.handlers.share_groups import share_groups_enabled
from broker.share.persister import NOT_INITIALIZED, CoordinatorAnswer, ShareCoordinator

Handler = Callable[[RequestContext, Any], Awaitable[dict | None]]
PartitionAnswer = Callable[[ShareCoordinator, tuple[str, uuid.UUID, int], Any], Awaitable[dict[str, Any]]]

NULL_TOPIC_ID = uuid.UUID(int=0)
# The other fields of an error answer, at their defaults.
READ_DEFAULTS: dict[str, Any] = {"state_epoch": 0, "start_offset": 0, "state_batches": []}
SUMMARY_DEFAULTS: dict[str, Any] = {
    "state_epoch": 0,
    "leader_epoch": 0,
    "start_offset": 0,
    "delivery_complete_count": -1,
}


def _error_body(index: int, error: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {"partition": index, "error_code": error, "error_message": message}


def _refused(ctx: RequestContext) -> ErrorCode | None:
    if not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return ErrorCode.cluster_authorization_failed
    if not share_groups_enabled(ctx):
        return ErrorCode.unsupported_version
    return None


async def _per_partition(
    ctx: RequestContext, request: Any, answer: PartitionAnswer, error_fields: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Each partition's answer; a refused one carries `error_fields` (the answer's other fields at their
    defaults, as Kafka's error answers)."""
    extra = error_fields or {}
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
                partitions.append({**_error_body(index, refused), **extra})
            elif topic.topic_id is None or topic.topic_id == NULL_TOPIC_ID:
                message = "The topic id cannot be null."
                partitions.append({**_error_body(index, ErrorCode.invalid_request, message), **extra})
            elif index < 0:
                message = "The partition id cannot be a negative number."
                partitions.append({**_error_body(index, ErrorCode.invalid_request, message), **extra})
            else:
                assert store is not None
                key = (request.group_id, topic.topic_id, index)
                partitions.append(await answer(store.coordinator, key, partition))
        results.append({"topic_id": topic.topic_id, "partitions": partitions})
    return {"results": results}


def _failed(index: int, answer: CoordinatorAnswer) -> dict[str, Any] | None:
    if answer.error == ErrorCode.none:
        return None
    return _error_body(index, answer.error, answer.message)


async def initialize_share_group_state(ctx: RequestContext, request: Any) -> dict[str, Any]:
    async def answer(coordinator: ShareCoordinator, key: Any, partition: Any) -> dict[str, Any]:
        found = await coordinator.initialize(
            key, state_epoch=int(partition.state_epoch), start_offset=int(partition.start_offset)
        )
        return _failed(key[2], found) or _error_body(key[2], ErrorCode.none)

    return await _per_partition(ctx, request, answer)


async def read_share_group_state(ctx: RequestContext, request: Any) -> dict[str, Any]:
    async def answer(coordinator: ShareCoordinator, key: Any, partition: Any) -> dict[str, Any]:
        found = coordinator.read(key, int(partition.leader_epoch))
        snapshot = found.snapshot
        if found.error != ErrorCode.none or snapshot is None:
            # Kafka's error answer: state epoch and start offset 0, no batches.
            return {**_error_body(key[2], found.error, found.message), **READ_DEFAULTS}
        return {
            **_error_body(key[2], ErrorCode.none),
            "state_epoch": snapshot.state_epoch,
            "start_offset": snapshot.start_offset,
            "state_batches": [
                {"first_offset": first, "last_offset": last, "delivery_state": state, "delivery_count": count}
                for first, last, state, count in snapshot.state_batches
            ],
        }

    return await _per_partition(ctx, request, answer, READ_DEFAULTS)


async def write_share_group_state(ctx: RequestContext, request: Any) -> dict[str, Any]:
    async def answer(coordinator: ShareCoordinator, key: Any, partition: Any) -> dict[str, Any]:
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
        return _failed(key[2], found) or _error_body(key[2], ErrorCode.none)

    return await _per_partition(ctx, request, answer)


async def delete_share_group_state(ctx: RequestContext, request: Any) -> dict[str, Any]:
    async def answer(coordinator: ShareCoordinator, key: Any, _partition: Any) -> dict[str, Any]:
        found = await coordinator.delete(key)
        return _failed(key[2], found) or _error_body(key[2], ErrorCode.none)

    return await _per_partition(ctx, request, answer)


async def read_share_group_state_summary(ctx: RequestContext, request: Any) -> dict[str, Any]:
    async def answer(coordinator: ShareCoordinator, key: Any, _partition: Any) -> dict[str, Any]:
        found = coordinator.summary(key)
        snapshot = found.snapshot
        if found.error != ErrorCode.none:
            return {**_error_body(key[2], found.error, found.message), **SUMMARY_DEFAULTS}
        return {
            **_error_body(key[2], ErrorCode.none),
            "state_epoch": 0 if snapshot is None else snapshot.state_epoch,
            "leader_epoch": 0 if snapshot is None else snapshot.leader_epoch,
            "start_offset": NOT_INITIALIZED if snapshot is None else snapshot.start_offset,
            # Kafka answers the count its share-partition leader last wrote (WriteShareGroupState v1); ours write
            # none (-1), and this coordinator keeps no count of its own.
            "delivery_complete_count": -1,
        }

    return await _per_partition(ctx, request, answer, SUMMARY_DEFAULTS)


APIS: dict[int, tuple[int, int, Handler]] = {
    83: (0, 0, initialize_share_group_state),
    84: (0, 0, read_share_group_state),
    85: (0, 1, write_share_group_state),
    86: (0, 0, delete_share_group_state),
    87: (0, 1, read_share_group_state_summary),
}
