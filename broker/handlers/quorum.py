"""DescribeQuorum (55, v0-2): the metadata quorum's state, as `kafka-metadata-quorum.sh describe` asks.

A Kafka 4 broker forwards DescribeQuorum to the active controller; ours does the same over its controller link (`ControllerLink.describe_quorum`) and answers with the leader's view:
leader, epoch (the Raft term), high watermark (the commit index), every voter's log end offset and
last fetch / last caught-up times (the leader's last acknowledgement from it, and the last one that
covered the leader's whole log; -1 where the leader has not heard from it in this term), and as
observers the brokers fetching the metadata log that are not voters. Offsets count Raft entries, so
they are comparable with each other, not with Kafka's record offsets. In a dynamic quorum (KIP-853)
voters and the observing controllers carry their directory ids and `nodes` lists every voter's
controller endpoint; a static quorum's voters have none: the zero uuid, as Kafka answers.

AddRaftVoter (80) and RemoveRaftVoter (81), v0 as in Kafka 4.0, need ALTER on the cluster and are
forwarded to the active controller, as a Kafka 4 broker forwards them. The controller answers
UNSUPPORTED_VERSION for a static quorum (kraft.version 0), DUPLICATE_VOTER, VOTER_NOT_FOUND,
REQUEST_TIMED_OUT while another change is uncommitted or the new voter is not a caught-up observer.
UpdateRaftVoter (82) is controller-to-controller in Kafka (not served by brokers): ours travel on the
controller listener (`update_voter`).

A single node is the one voter of its own quorum: it answers as a Kafka 4 combined node does.
"""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

from kio.schema.add_raft_voter.v1.response import AddRaftVoterResponse
from kio.schema.describe_quorum.v2.response import (
    DescribeQuorumResponse,
    Listener,
    Node,
    PartitionData,
    ReplicaState,
    TopicData,
)
from kio.schema.errors import ErrorCode
from kio.schema.remove_raft_voter.v0.response import RemoveRaftVoterResponse

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError
from broker.controller.rpc.quorum import AddVoterRequest, RemoveVoterRequest, ReplicaProgress
from broker.protocol.responses import NOT_THROTTLED

METADATA_TOPIC = "__cluster_metadata"
# A static quorum's voters have no directory id (KIP-853); Kafka sends the zero uuid.
NO_DIRECTORY = uuid.UUID(int=0)
# How long the controller may take to answer (kafka-metadata-quorum.sh waits longer; a dead quorum
# must not hold the request for Kafka's 30 s admin timeout).
QUORUM_TIMEOUT_S = 5.0


def _response(
    error: ErrorCode, message: str | None, topics: tuple[TopicData, ...], nodes: tuple[Node, ...]
) -> DescribeQuorumResponse:
    # Kafka's DescribeQuorum says "" (not null) when there is no error, at the top and per partition.
    return DescribeQuorumResponse(
        error_code=error, error_message="" if message is None else message, topics=topics, nodes=nodes
    )


def _partition_error(request: Any, error: ErrorCode, message: str) -> DescribeQuorumResponse:
    """Every requested partition answered with `error` (Kafka's getPartitionLevelErrorResponse)."""
    topics = tuple(
        TopicData(
            topic_name=topic.topic_name,
            partitions=tuple(
                PartitionData(
                    partition_index=partition.partition_index,
                    error_code=error,
                    error_message=message,
                    # Kafka's partition-level errors keep the schema's defaults (0) in these fields.
                    leader_id=0,
                    leader_epoch=0,
                    high_watermark=0,
                    current_voters=(),
                    observers=(),
                )
                for partition in topic.partitions
            ),
        )
        for topic in request.topics
    )
    return _response(ErrorCode.none, None, topics, ())


def _replica(progress: ReplicaProgress) -> ReplicaState:
    fetched, caught_up = progress.last_fetch_ms, progress.last_caught_up_ms
    return ReplicaState(
        replica_id=progress.node_id,
        replica_directory_id=uuid.UUID(progress.directory_id) if progress.directory_id else NO_DIRECTORY,
        log_end_offset=progress.log_end_offset,
        last_fetch_timestamp=-1 if fetched is None else fetched,
        last_caught_up_timestamp=-1 if caught_up is None else caught_up,
    )


def _asks_for_the_metadata_partition(request: Any) -> bool:
    """Kafka serves only [__cluster_metadata-0] here; anything else is UNKNOWN_TOPIC_OR_PARTITION."""
    topics = list(request.topics)
    return (
        len(topics) == 1
        and topics[0].topic_name == METADATA_TOPIC
        and [int(p.partition_index) for p in topics[0].partitions] == [0]
    )


async def handle_describe_quorum(ctx: RequestContext, request: Any) -> DescribeQuorumResponse:
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return _response(
            ErrorCode.cluster_authorization_failed, "DESCRIBE on the cluster is required", (), ()
        )
    if not _asks_for_the_metadata_partition(request):
        return _partition_error(
            request, ErrorCode.unknown_topic_or_partition, "This server does not host this topic-partition."
        )
    try:
        quorum = await ctx.broker.cluster.describe_quorum(timeout_s=QUORUM_TIMEOUT_S)
    except ControllerError as exc:
        return _partition_error(request, ErrorCode(exc.code), exc.message)
    if quorum.role != "leader" or quorum.leader_id is None:
        # Leadership moved between routing and answering: the client asks again.
        return _partition_error(
            request, ErrorCode.not_leader_or_follower, f"controller {quorum.node_id} no longer leads"
        )
    partition = _quorum_partition(
        quorum.leader_id,
        quorum.term,
        quorum.commit_index,
        tuple(_replica(p) for p in quorum.voter_progress),
        tuple(_replica(p) for p in quorum.observers),
    )
    listener = min(ctx.broker.config.controller_listener_names, default="CONTROLLER")
    nodes = tuple(
        Node(node_id=int(node_id), listeners=(Listener(name=listener, host=host, port=int(port)),))
        for node_id, (host, port) in sorted(quorum.voter_addresses.items(), key=lambda item: int(item[0]))
    )
    return _response(
        ErrorCode.none, None, (TopicData(topic_name=METADATA_TOPIC, partitions=(partition,)),), nodes
    )


def _quorum_partition(
    leader: int,
    epoch: int,
    high_watermark: int,
    voters: tuple[ReplicaState, ...],
    observers: tuple[ReplicaState, ...],
) -> PartitionData:
    return PartitionData(
        partition_index=0,
        error_code=ErrorCode.none,
        error_message="",
        leader_id=leader,
        leader_epoch=epoch,
        high_watermark=high_watermark,
        current_voters=voters,
        observers=observers,
    )


# The longest a voter change is waited for here (the request's own timeout when shorter).
VOTER_CHANGE_TIMEOUT_S = 30.0


# AddRaftVoter and RemoveRaftVoter answer the same fields.
VoterChangeAnswer = TypeVar("VoterChangeAnswer", AddRaftVoterResponse, RemoveRaftVoterResponse)


async def _forward_voter_change(
    ctx: RequestContext,
    change: AddVoterRequest | RemoveVoterRequest,
    timeout_s: float,
    response: type[VoterChangeAnswer],
) -> VoterChangeAnswer:
    link = ctx.broker.cluster
    before = await _voter_directories(link)
    try:
        await link.call(change, timeout_s=timeout_s)
    except ControllerError as exc:
        if not _already_done(change, exc.code, before):
            return response(
                throttle_time=NOT_THROTTLED, error_code=ErrorCode(exc.code), error_message=exc.message
            )
    return response(throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, error_message=None)


def _alter_refused(response: type[VoterChangeAnswer]) -> VoterChangeAnswer:
    return response(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode.cluster_authorization_failed,
        error_message="ALTER on the cluster is required",
    )


async def _voter_directories(link: Any) -> dict[int, str | None] | None:
    """{voter id: directory id} as the active controller sees it now, or None if it does not answer."""
    try:
        quorum = await link.describe_quorum(timeout_s=QUORUM_TIMEOUT_S)
    except ControllerError:
        return None
    if quorum.role != "leader":
        return None
    return {int(node_id): directory for node_id, directory in quorum.voter_directories.items()}


def _already_done(
    change: AddVoterRequest | RemoveVoterRequest, code: int, before: dict[int, str | None] | None
) -> bool:
    """Whether a refusal only says that this very change was made: the controller client sends a change
    again when the controller moves while it waits for the answer, and a leader that removes itself always
    moves. Then the new controller answers VOTER_NOT_FOUND (a removal) or DUPLICATE_VOTER (an addition) for
    the change the old one made. A voter that was in the set before the request (absent, for an addition)
    tells that apart from a request that was wrong to begin with."""
    if before is None:
        return False
    voter, directory = change.voter_id, change.directory_id
    if isinstance(change, RemoveVoterRequest):
        return code == ErrorCode.voter_not_found and voter in before and directory in (None, before[voter])
    return code == ErrorCode.duplicate_voter and voter not in before


def _directory(value: uuid.UUID | None) -> str | None:
    return None if value is None or value.int == 0 else str(value)


def _controller_listener(request: Any) -> tuple[str, int] | None:
    for listener in request.listeners:
        return str(listener.host), int(listener.port)
    return None


async def handle_add_raft_voter(ctx: RequestContext, request: Any) -> AddRaftVoterResponse:
    if not ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return _alter_refused(AddRaftVoterResponse)
    endpoint = _controller_listener(request)
    if endpoint is None:
        return AddRaftVoterResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.invalid_request,
            error_message="the new voter's listeners are required",
        )
    timeout_s = min(VOTER_CHANGE_TIMEOUT_S, max(1.0, request.timeout.total_seconds()))
    change = AddVoterRequest(int(request.voter_id), _directory(request.voter_directory_id), *endpoint)
    return await _forward_voter_change(ctx, change, timeout_s, AddRaftVoterResponse)


async def handle_remove_raft_voter(ctx: RequestContext, request: Any) -> RemoveRaftVoterResponse:
    if not ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return _alter_refused(RemoveRaftVoterResponse)
    change = RemoveVoterRequest(int(request.voter_id), _directory(request.voter_directory_id))
    return await _forward_voter_change(ctx, change, VOTER_CHANGE_TIMEOUT_S, RemoveRaftVoterResponse)
