"""Group APIs: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, ListGroups, DescribeGroups, DeleteGroups and OffsetDelete.

Each handler translates a decoded kio request into a call on the GroupCoordinator and its
answer into the version's kio response entity; the rules live in `broker.groups.coordinator`.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple, TypeVar

from kio.schema.delete_groups.v2.response import DeletableGroupResult, DeleteGroupsResponse
from kio.schema.describe_groups.v6.response import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsResponse,
)
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v3 import response as find_single
from kio.schema.find_coordinator.v6 import response as find_batched
from kio.schema.heartbeat.v4.response import HeartbeatResponse
from kio.schema.join_group.v9 import response as join
from kio.schema.leave_group.v5 import response as leave
from kio.schema.list_groups.v5.response import ListedGroup, ListGroupsResponse
from kio.schema.offset_commit.v9 import response as commit_by_name
from kio.schema.offset_commit.v10 import response as commit_by_id
from kio.schema.offset_delete.v0.response import (
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from kio.schema.offset_fetch.v7 import response as fetch_single
from kio.schema.offset_fetch.v9 import response as fetch_groups
from kio.schema.offset_fetch.v10 import response as fetch_by_id
from kio.schema.sync_group.v5.response import SyncGroupResponse
from kio.schema.types import BrokerId

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.groups.coordinator import GROUP_AUTHORIZED_OPERATIONS, GroupCoordinator, PartitionOffset
from broker.groups.group import GroupState
from broker.metadata.features import SHARE_VERSION
from broker.protocol.responses import NOT_THROTTLED
from broker.share.state_records import is_share_coordinator_key

# Marks an offset of a topic the caller may not describe (OffsetFetch).
_DENIED_TOPIC: Any = object()
# Kafka's "authorized operations not requested" marker.
OPERATIONS_OMITTED = -(2**31)

DescribedGroupT = TypeVar("DescribedGroupT")


def undescribed_group(
    entity: Callable[..., DescribedGroupT], group_id: str, error: ErrorCode, message: str | None = None
) -> DescribedGroupT:
    """A consumer or share group a describe cannot describe (refused, unknown, not served), as Kafka answers
    it: its schema's defaults (state "", epochs 0, no members). `entity`: that API's DescribedGroup class."""
    return entity(
        error_code=error,
        error_message=message,
        group_id=group_id,
        group_state="",
        group_epoch=0,
        assignment_epoch=0,
        assignor_name="",
        members=(),
        authorized_operations=OPERATIONS_OMITTED,
    )


GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2


def _coordinator(ctx: RequestContext) -> GroupCoordinator:
    coordinator = ctx.broker.groups
    # Created when the broker joined its quorum, before it serves any request.
    assert coordinator is not None, "the group coordinator is not loaded"
    return coordinator


def _ms(value: datetime.timedelta) -> int:
    return value // datetime.timedelta(milliseconds=1)


def _client_host(ctx: RequestContext) -> str:
    # Kafka reports the peer as Java's InetAddress.toString(), which starts with a slash.
    return f"/{ctx.client_host}"


# --- FindCoordinator (10) ------------------------------------------------------------------------


def _group_allowed(ctx: RequestContext, operation: Operation, group_id: str) -> bool:
    return ctx.allowed(operation, ResourceType.GROUP, group_id)


# Kafka answers a coordinator found with the message "NONE" (the name of error 0) in v1-3, and "" in v4+'s
# per-key entries.
_FOUND_MESSAGE = "NONE"
# FindCoordinator answers one key at the top level before v4, a list of keys from v4 (KIP-699).
_BATCHED_FROM = 4


def _no_coordinator(key: str, error: ErrorCode, message: str | None = None) -> find_batched.Coordinator:
    return find_batched.Coordinator(
        key=key, node_id=BrokerId(-1), host="", port=-1, error_code=error, error_message=message
    )


def _share_coordinator_entry(ctx: RequestContext, key: str, found_message: str) -> find_batched.Coordinator:
    """KIP-932's share key type ("group:topicId:partition"): the leader of the key's `__share_group_state`
    partition, for brokers (CLUSTER_ACTION) from v6; the lookup creates the topic, as Kafka's does."""
    store = ctx.broker.share.store
    if ctx.api_version < 6 or store is None:
        return _no_coordinator(key, ErrorCode.invalid_request)
    if not ctx.allowed(Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
        return _no_coordinator(key, ErrorCode.cluster_authorization_failed)
    if not is_share_coordinator_key(key):
        # Kafka answers a key it cannot parse with an empty message.
        return _no_coordinator(key, ErrorCode.invalid_request, "")
    if not store.coordinator.ensure_topic():
        return _no_coordinator(key, ErrorCode.coordinator_not_available)
    error, node_id, host, port = store.coordinator.locate(key, ctx.listener_name)
    if error != ErrorCode.none:
        return _no_coordinator(key, ErrorCode(error))
    return find_batched.Coordinator(
        key=key,
        node_id=BrokerId(node_id),
        host=host,
        port=port,
        error_code=ErrorCode.none,
        error_message=found_message,
    )


def _coordinator_entry(
    ctx: RequestContext, key: str, key_type: int, found_message: str
) -> find_batched.Coordinator:
    if key_type == SHARE_KEY_TYPE:
        return _share_coordinator_entry(ctx, key, found_message)
    if key_type not in (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE):
        return _no_coordinator(key, ErrorCode.invalid_request, f"unknown key type {key_type}")
    if key_type == GROUP_KEY_TYPE and not _group_allowed(ctx, Operation.DESCRIBE, key):
        return _no_coordinator(key, ErrorCode.group_authorization_failed)
    if key_type == TRANSACTION_KEY_TYPE and not ctx.allowed(
        Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key
    ):
        return _no_coordinator(key, ErrorCode.transactional_id_authorization_failed)
    coordinator = ctx.broker.groups if key_type == GROUP_KEY_TYPE else ctx.broker.transactions
    locator = coordinator.locator if coordinator is not None else None
    if locator is None:
        # Not joined yet: no coordinator is known (clients retry on this code).
        return _no_coordinator(key, ErrorCode.coordinator_not_available)
    # The leader of the key's __consumer_offsets / __transaction_state partition.
    found = locator.locate(key, ctx.listener_name)
    error = ErrorCode(found.error_code)
    return find_batched.Coordinator(
        key=key,
        node_id=BrokerId(found.node_id),
        host=found.host,
        port=found.port,
        error_code=error,
        error_message=found_message if error == ErrorCode.none else None,
    )


async def find_coordinator(
    ctx: RequestContext, request: Any
) -> find_batched.FindCoordinatorResponse | find_single.FindCoordinatorResponse:
    key_type = getattr(request, "key_type", GROUP_KEY_TYPE)
    if ctx.api_version >= _BATCHED_FROM:
        return find_batched.FindCoordinatorResponse(
            throttle_time=NOT_THROTTLED,
            coordinators=tuple(
                _coordinator_entry(ctx, key, key_type, found_message="") for key in request.coordinator_keys
            ),
        )
    entry = _coordinator_entry(ctx, request.key, key_type, _FOUND_MESSAGE)
    return find_single.FindCoordinatorResponse(
        throttle_time=NOT_THROTTLED,
        error_code=entry.error_code,
        error_message=entry.error_message,
        node_id=entry.node_id,
        host=entry.host,
        port=entry.port,
    )


# --- JoinGroup (11), SyncGroup (14), Heartbeat (12), LeaveGroup (13) --------------------------------


async def join_group(ctx: RequestContext, request: Any) -> join.JoinGroupResponse:
    version = ctx.api_version
    # Before v7 the protocol name is not nullable: "" stands for none.
    nullable_protocol = version >= 7
    if not _group_allowed(ctx, Operation.READ, request.group_id):
        return join.JoinGroupResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.group_authorization_failed,
            generation_id=-1,
            protocol_type=None,
            protocol_name=None if nullable_protocol else "",
            leader="",
            member_id=request.member_id,
            members=(),
        )
    session_timeout_ms = _ms(request.session_timeout)
    result = await _coordinator(ctx).join_group(
        group_id=request.group_id,
        member_id=request.member_id,
        group_instance_id=getattr(request, "group_instance_id", None),
        protocol_type=request.protocol_type,
        protocols=[(protocol.name, protocol.metadata) for protocol in request.protocols],
        session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=_ms(request.rebalance_timeout) if version >= 1 else session_timeout_ms,
        client_id=ctx.client_id or "",
        client_host=_client_host(ctx),
        # KIP-394: from v4 a new member first gets MEMBER_ID_REQUIRED with its id.
        require_known_member_id=version >= 4,
    )
    return join.JoinGroupResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode(result.error_code),
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name if nullable_protocol else (result.protocol_name or ""),
        leader=result.leader,
        member_id=result.member_id,
        members=tuple(
            join.JoinGroupResponseMember(
                member_id=member_id, group_instance_id=instance_id, metadata=metadata
            )
            for member_id, instance_id, metadata in result.members
        ),
    )


async def sync_group(ctx: RequestContext, request: Any) -> SyncGroupResponse:
    if not _group_allowed(ctx, Operation.READ, request.group_id):
        return SyncGroupResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.group_authorization_failed,
            protocol_type=None,
            protocol_name=None,
            assignment=b"",
        )
    result = await _coordinator(ctx).sync_group(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=getattr(request, "group_instance_id", None),
        protocol_type=getattr(request, "protocol_type", None),
        protocol_name=getattr(request, "protocol_name", None),
        assignments={entry.member_id: entry.assignment for entry in request.assignments},
    )
    return SyncGroupResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode(result.error_code),
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )


async def heartbeat(ctx: RequestContext, request: Any) -> HeartbeatResponse:
    if not _group_allowed(ctx, Operation.READ, request.group_id):
        return HeartbeatResponse(throttle_time=NOT_THROTTLED, error_code=ErrorCode.group_authorization_failed)
    error = _coordinator(ctx).heartbeat(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=getattr(request, "group_instance_id", None),
    )
    return HeartbeatResponse(throttle_time=NOT_THROTTLED, error_code=ErrorCode(error))


async def leave_group(ctx: RequestContext, request: Any) -> leave.LeaveGroupResponse:
    coordinator = _coordinator(ctx)
    if not _group_allowed(ctx, Operation.READ, request.group_id):
        return leave.LeaveGroupResponse(
            throttle_time=NOT_THROTTLED, error_code=ErrorCode.group_authorization_failed, members=()
        )
    if ctx.api_version < 3:
        # One member per request, and no per-member answers (older versions have only the error).
        error, results = coordinator.leave_group(
            group_id=request.group_id, members=[(request.member_id, None)]
        )
        return leave.LeaveGroupResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode(error if error != ErrorCode.none else results[0]),
            members=(),
        )
    leaving = [(member.member_id, member.group_instance_id) for member in request.members]
    error, results = coordinator.leave_group(group_id=request.group_id, members=leaving)
    return leave.LeaveGroupResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode(error),
        members=tuple(
            leave.MemberResponse(
                member_id=member_id, group_instance_id=instance_id, error_code=ErrorCode(code)
            )
            for (member_id, instance_id), code in zip(leaving, results, strict=True)
        ),
    )


# --- OffsetCommit (8), OffsetFetch (9), OffsetDelete (47) -------------------------------------------


def _partition_exists(ctx: RequestContext, topic: str, partition: int) -> bool:
    record = ctx.broker.metadata.get(topic)
    return record is not None and 0 <= partition < record.partitions


# OffsetCommit v10 and OffsetFetch v10 name topics by id (KIP-848's follow-up to KIP-516).
OFFSETS_BY_TOPIC_ID_FROM = 10


def _topic_name(ctx: RequestContext, topic: Any) -> str | None:
    """The name of a request's topic: by id from v10 (None when no topic has it), else as sent."""
    if ctx.api_version < OFFSETS_BY_TOPIC_ID_FROM:
        return str(topic.name)
    record = ctx.broker.metadata.get_by_id(topic.topic_id)
    return record.name if record is not None else None


async def offset_commit(
    ctx: RequestContext, request: Any
) -> commit_by_id.OffsetCommitResponse | commit_by_name.OffsetCommitResponse:
    retention = getattr(request, "retention_time", None)
    entries: list[tuple[Any, int]] = []
    valid: list[PartitionOffset] = []
    group_allowed = _group_allowed(ctx, Operation.READ, request.group_id)
    denied: dict[tuple[Any, int], ErrorCode] = {}
    by_id = ctx.api_version >= OFFSETS_BY_TOPIC_ID_FROM
    for topic in request.topics:
        name = _topic_name(ctx, topic)
        # A topic is answered as it was asked for: by its name, or by its id from v10.
        key = topic.topic_id if by_id else name
        topic_allowed = name is not None and ctx.allowed(Operation.READ, ResourceType.TOPIC, name)
        for partition in topic.partitions:
            entries.append((key, partition.partition_index))
            if not group_allowed:
                denied[(key, partition.partition_index)] = ErrorCode.group_authorization_failed
            elif name is None:
                denied[(key, partition.partition_index)] = ErrorCode.unknown_topic_id
            elif not topic_allowed:
                denied[(key, partition.partition_index)] = ErrorCode.topic_authorization_failed
            elif _partition_exists(ctx, name, partition.partition_index):
                valid.append(
                    PartitionOffset(
                        topic=name,
                        partition=partition.partition_index,
                        offset=partition.committed_offset,
                        leader_epoch=getattr(partition, "committed_leader_epoch", -1),
                        metadata=partition.committed_metadata,
                    )
                )
    if not group_allowed:
        codes: list[Any] = []
        valid = []
    else:
        codes = await _coordinator(ctx).commit_offsets(
            group_id=request.group_id,
            generation_id=request.generation_id_or_member_epoch,
            member_id=request.member_id,
            group_instance_id=getattr(request, "group_instance_id", None),
            offsets=valid,
            retention_ms=_ms(retention) if retention is not None else -1,
        )
    by_partition = {
        (_commit_key(ctx, entry.topic) if by_id else entry.topic, entry.partition): code
        for entry, code in zip(valid, codes, strict=True)
    }
    by_partition.update(denied)
    topics: dict[Any, list[tuple[int, ErrorCode]]] = {}
    # Kafka answers the topics whose id it does not know first.
    entries.sort(key=lambda entry: denied.get(entry) != ErrorCode.unknown_topic_id)
    for key, partition in entries:
        code = by_partition.get((key, partition), ErrorCode.unknown_topic_or_partition)
        topics.setdefault(key, []).append((partition, ErrorCode(code)))
    if by_id:
        return commit_by_id.OffsetCommitResponse(
            throttle_time=NOT_THROTTLED,
            topics=tuple(
                commit_by_id.OffsetCommitResponseTopic(
                    topic_id=key,
                    partitions=tuple(
                        commit_by_id.OffsetCommitResponsePartition(partition_index=index, error_code=code)
                        for index, code in partitions
                    ),
                )
                for key, partitions in topics.items()
            ),
        )
    # v2-9 name their topics: v9's answer, rebuilt for older versions by `build_response`.
    return commit_by_name.OffsetCommitResponse(
        throttle_time=NOT_THROTTLED,
        topics=tuple(
            commit_by_name.OffsetCommitResponseTopic(
                name=key,
                partitions=tuple(
                    commit_by_name.OffsetCommitResponsePartition(partition_index=index, error_code=code)
                    for index, code in partitions
                ),
            )
            for key, partitions in topics.items()
        ),
    )


def _commit_key(ctx: RequestContext, name: str) -> Any:
    record = ctx.broker.metadata.get(name)
    return record.topic_id if record is not None else None


class _FetchedOffset(NamedTuple):
    """One partition's answer to OffsetFetch, whichever version's entity it goes out in."""

    partition: int
    offset: int
    leader_epoch: int
    metadata: str | None
    error: ErrorCode


# The topics of an OffsetFetch answer: by name, or by id from v10.
_FetchedTopics = list[tuple[Any, list[_FetchedOffset]]]


def _not_fetched(partition: int, error: ErrorCode) -> _FetchedOffset:
    return _FetchedOffset(partition, -1, -1, "", error)


def _fetch_group(
    ctx: RequestContext,
    group_id: str,
    requested: Any,
    per_partition_errors: bool,
    require_stable: bool = False,
    member: tuple[str | None, int] = (None, -1),
) -> tuple[ErrorCode, _FetchedTopics]:
    unknown_ids: list[Any] = []
    topics: list[tuple[str, tuple[int, ...]]] | None = None
    if requested is not None:
        topics = []
        for t in requested:
            name = _topic_name(ctx, t)
            if name is None:
                unknown_ids.append(t)
            else:
                topics.append((name, tuple(t.partition_indexes)))
    error, answered = _fetch_named_group(ctx, group_id, topics, per_partition_errors, require_stable, member)
    if ctx.api_version < OFFSETS_BY_TOPIC_ID_FROM:
        return error, answered
    by_id: _FetchedTopics = []
    for name, partitions in answered:
        record = ctx.broker.metadata.get(name)
        # A committed topic that no longer exists has no id to be named by.
        if record is not None:
            by_id.append((record.topic_id, partitions))
    if error == ErrorCode.none:
        by_id += [
            (t.topic_id, [_not_fetched(index, ErrorCode.unknown_topic_id) for index in t.partition_indexes])
            for t in unknown_ids
        ]
    return error, by_id


def _fetch_named_group(
    ctx: RequestContext,
    group_id: str,
    topics: list[tuple[str, tuple[int, ...]]] | None,
    per_partition_errors: bool,
    require_stable: bool,
    member: tuple[str | None, int],
) -> tuple[ErrorCode, _FetchedTopics]:
    if not _group_allowed(ctx, Operation.DESCRIBE, group_id):
        error = ErrorCode.group_authorization_failed
        offsets: list[Any] = []
        if not per_partition_errors:
            return error, []
    else:
        member_id, member_epoch = member
        code, offsets = _coordinator(ctx).fetch_offsets(
            group_id=group_id, topics=topics, member_id=member_id, member_epoch=member_epoch
        )
        error = ErrorCode(code)
        # Offsets of topics the caller may not describe: hidden in a full listing, refused
        # per partition when asked for by name (Kafka's OffsetFetch).
        if topics is None:
            offsets = [o for o in offsets if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, o[0])]
        elif error == ErrorCode.none:
            offsets = [
                (t, p, c) if ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, t) else (t, p, _DENIED_TOPIC)
                for t, p, c in offsets
            ]
    if error != ErrorCode.none:
        if not per_partition_errors:
            return error, []
        # OffsetFetch v1 has no group-level error: put it on every partition.
        offsets = [(t, p, None) for t, partitions in topics or [] for p in partitions]
    grouped: dict[str, list[_FetchedOffset]] = {}
    for topic, partition, committed in offsets:
        if committed is _DENIED_TOPIC:
            answer = _not_fetched(partition, ErrorCode.topic_authorization_failed)
        elif require_stable and _coordinator(ctx).has_pending_offsets(group_id, topic, partition):
            # KIP-447: a transaction holds a newer offset; the consumer retries until its marker.
            answer = _not_fetched(partition, ErrorCode.unstable_offset_commit)
        elif committed is None:
            answer = _not_fetched(partition, error)
        else:
            answer = _FetchedOffset(
                partition, committed.offset, committed.leader_epoch, committed.metadata, error
            )
        grouped.setdefault(topic, []).append(answer)
    return error, list(grouped.items())


def _fetched_partitions(schema: ModuleType, offsets: list[_FetchedOffset]) -> tuple[Any, ...]:
    """`offsets` as the partition entities of `schema`'s OffsetFetch response (v9 and v10 call them
    OffsetFetchResponsePartitions, v7 OffsetFetchResponsePartition)."""
    entity = getattr(schema, "OffsetFetchResponsePartitions", None) or schema.OffsetFetchResponsePartition
    return tuple(
        entity(
            partition_index=o.partition,
            committed_offset=o.offset,
            committed_leader_epoch=o.leader_epoch,
            metadata=o.metadata,
            error_code=o.error,
        )
        for o in offsets
    )


def _group_topics(by_id: bool, topics: _FetchedTopics) -> tuple[Any, ...]:
    if by_id:
        return tuple(
            fetch_by_id.OffsetFetchResponseTopics(
                topic_id=key, partitions=_fetched_partitions(fetch_by_id, partitions)
            )
            for key, partitions in topics
        )
    return tuple(
        fetch_groups.OffsetFetchResponseTopics(
            name=key, partitions=_fetched_partitions(fetch_groups, partitions)
        )
        for key, partitions in topics
    )


# OffsetFetch v8 asks for several groups at once (KIP-709).
_GROUPS_FROM = 8


async def offset_fetch(
    ctx: RequestContext, request: Any
) -> fetch_by_id.OffsetFetchResponse | fetch_groups.OffsetFetchResponse | fetch_single.OffsetFetchResponse:
    if ctx.api_version >= _GROUPS_FROM:
        by_id = ctx.api_version >= OFFSETS_BY_TOPIC_ID_FROM
        # v8-9's answers are v9's, rebuilt for v8 by `build_response`.
        schema = fetch_by_id if by_id else fetch_groups
        groups = []
        for group in request.groups:
            error, topics = _fetch_group(
                ctx,
                group.group_id,
                group.topics,
                per_partition_errors=False,
                require_stable=request.require_stable,
                # v9 (KIP-848): a consumer-protocol member names itself and its epoch.
                member=(getattr(group, "member_id", None), getattr(group, "member_epoch", -1)),
            )
            groups.append(
                schema.OffsetFetchResponseGroup(
                    group_id=group.group_id,
                    topics=_group_topics(by_id, topics),
                    error_code=error,
                )
            )
        return schema.OffsetFetchResponse(throttle_time=NOT_THROTTLED, groups=tuple(groups))  # type: ignore[no-any-return]
    error, topics = _fetch_group(
        ctx,
        request.group_id,
        request.topics,
        per_partition_errors=ctx.api_version < 2,
        require_stable=getattr(request, "require_stable", False),
    )
    # v1-7: v7's answer, rebuilt for older versions by `build_response`.
    return fetch_single.OffsetFetchResponse(
        throttle_time=NOT_THROTTLED,
        topics=tuple(
            fetch_single.OffsetFetchResponseTopic(
                name=name, partitions=_fetched_partitions(fetch_single, partitions)
            )
            for name, partitions in topics
        ),
        error_code=error,
    )


def _partition_exists(ctx: RequestContext, name: str, index: int) -> bool:
    topic = ctx.broker.metadata.get(name)
    return topic is not None and 0 <= index < topic.partitions


async def offset_delete(ctx: RequestContext, request: Any) -> OffsetDeleteResponse:
    if not _group_allowed(ctx, Operation.DELETE, request.group_id):
        return OffsetDeleteResponse(
            error_code=ErrorCode.group_authorization_failed, throttle_time=NOT_THROTTLED, topics=()
        )
    requested = [(topic.name, p.partition_index) for topic in request.topics for p in topic.partitions]
    readable = {name for name, _p in requested if ctx.allowed(Operation.READ, ResourceType.TOPIC, name)}
    refused = {
        (name, p): ErrorCode.topic_authorization_failed
        if name not in readable
        else ErrorCode.unknown_topic_or_partition
        for name, p in requested
        if name not in readable or not _partition_exists(ctx, name, p)
    }
    partitions = [entry for entry in requested if entry not in refused]
    error, codes = await _coordinator(ctx).delete_offsets(group_id=request.group_id, partitions=partitions)
    if error != ErrorCode.none:
        return OffsetDeleteResponse(error_code=ErrorCode(error), throttle_time=NOT_THROTTLED, topics=())
    # Partitions of topics the caller may not read, or that do not exist, are refused one by one (as Kafka).
    deleted = dict(zip(partitions, codes, strict=True))
    codes = [
        deleted.get(entry, refused.get(entry, ErrorCode.unknown_topic_or_partition)) for entry in requested
    ]
    partitions = requested
    topics: dict[str, list[OffsetDeleteResponsePartition]] = {}
    for (topic, partition), code in zip(partitions, codes, strict=True):
        topics.setdefault(topic, []).append(
            OffsetDeleteResponsePartition(partition_index=partition, error_code=ErrorCode(code))
        )
    return OffsetDeleteResponse(
        error_code=ErrorCode.none,
        throttle_time=NOT_THROTTLED,
        topics=tuple(
            OffsetDeleteResponseTopic(name=name, partitions=tuple(entries))
            for name, entries in topics.items()
        ),
    )


# --- ListGroups (16), DescribeGroups (15), DeleteGroups (42) ----------------------------------------


async def list_groups(ctx: RequestContext, request: Any) -> ListGroupsResponse:
    # Kafka: DESCRIBE on the cluster lists every group, otherwise those the caller may describe.
    see_all = ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
    states = getattr(request, "states_filter", ())
    types = getattr(request, "types_filter", ())
    coordinator = _coordinator(ctx)
    error, listed = coordinator.list_groups(states_filter=states, types_filter=types)
    groups = [
        ListedGroup(
            group_id=group.group_id,
            protocol_type=group.protocol_type,
            group_state=group.state,
            group_type=group.group_type,
        )
        for group in listed
    ]
    if error == ErrorCode.none and ctx.broker.feature_level(SHARE_VERSION) >= 1:
        # Share groups (KIP-932) are listed with type and protocol type "share", as Kafka 4.2 lists them.
        wanted_states = {state.lower() for state in states}
        wanted_types = {kind.lower() for kind in types}
        groups += [
            ListedGroup(group_id=group_id, protocol_type="share", group_state=group.state, group_type="share")
            for group_id, group in sorted(ctx.broker.share.groups.groups.items())
            if coordinator.owns_partition(coordinator.partition_for(group_id))
            and (not wanted_states or group.state.lower() in wanted_states)
            and (not wanted_types or "share" in wanted_types)
        ]
    return ListGroupsResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode(error),
        groups=tuple(
            group for group in groups if see_all or _group_allowed(ctx, Operation.DESCRIBE, group.group_id)
        ),
    )


async def describe_groups(ctx: RequestContext, request: Any) -> DescribeGroupsResponse:
    coordinator = _coordinator(ctx)
    include_operations = getattr(request, "include_authorized_operations", False)
    described = []
    for group_id in request.groups:
        if not _group_allowed(ctx, Operation.DESCRIBE, group_id):
            described.append(
                DescribedGroup(
                    error_code=ErrorCode.group_authorization_failed,
                    group_id=group_id,
                    group_state="",
                    protocol_type="",
                    protocol_data="",
                    members=(),
                    authorized_operations=OPERATIONS_OMITTED,
                )
            )
            continue
        description = coordinator.describe_group(group_id)
        error, message = ErrorCode(description.error_code), None
        if ctx.api_version >= 6 and error == ErrorCode.none and description.state == GroupState.DEAD.value:
            # v6 (KIP-1043): an unknown group is an error rather than a group in state Dead.
            error, message = ErrorCode.group_id_not_found, f"Group {group_id} not found."
        described.append(
            DescribedGroup(
                error_code=error,
                error_message=message,
                group_id=description.group_id,
                group_state=description.state,
                protocol_type=description.protocol_type,
                protocol_data=description.protocol_data,
                members=tuple(
                    DescribedGroupMember(
                        member_id=member.member_id,
                        group_instance_id=member.group_instance_id,
                        client_id=member.client_id,
                        client_host=member.client_host,
                        member_metadata=member.metadata,
                        member_assignment=member.assignment,
                    )
                    for member in description.members
                ),
                # Kafka reports no operations on a group it did not find (v6's GROUP_ID_NOT_FOUND).
                authorized_operations=ctx.authorized_operations(
                    ResourceType.GROUP, group_id, GROUP_AUTHORIZED_OPERATIONS
                )
                if include_operations and error == ErrorCode.none
                else OPERATIONS_OMITTED,
            )
        )
    return DescribeGroupsResponse(throttle_time=NOT_THROTTLED, groups=tuple(described))


async def delete_groups(ctx: RequestContext, request: Any) -> DeleteGroupsResponse:
    allowed = [g for g in request.groups_names if _group_allowed(ctx, Operation.DELETE, g)]
    # Share groups are deleted by DeleteGroups too, as in Kafka 4.2 (refused with NON_EMPTY_GROUP while they
    # have members); they live beside the other groups, not in the group coordinator.
    share = ctx.broker.share.groups
    results = {g: share.delete(g) for g in allowed if g in share.groups}
    others = [g for g in allowed if g not in results]
    if others:
        results.update(await _coordinator(ctx).delete_groups(others))
    return DeleteGroupsResponse(
        throttle_time=NOT_THROTTLED,
        results=tuple(
            DeletableGroupResult(
                group_id=group_id,
                error_code=ErrorCode(results.get(group_id, ErrorCode.group_authorization_failed)),
            )
            for group_id in dict.fromkeys(request.groups_names)
        ),
    )
