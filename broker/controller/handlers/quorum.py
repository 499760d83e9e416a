"""RPC handlers about the quorum: versions, DescribeQuorum, the cluster as committed, observers'
log pulls and voter changes (KIP-853)."""

from __future__ import annotations

import logging
import time
import uuid

from kio.schema.errors import ErrorCode

from broker.controller.quorum_driver import QuorumDriver, RaftObserver, kraft_version_finalized
from broker.controller.rpc import quorum as msg
from broker.controller.rpc.base import Empty, PartitionState, RpcError
from broker.controller.rpc.catalog import VERSIONS
from broker.raft.messages import Voter

log = logging.getLogger("broker.controller")

# An observer is caught up (AddRaftVoter accepts it) when it held the leader's log this recently.
CAUGHT_UP_WITHIN_S = 5.0
MAX_RAFT_OBSERVERS = 100


async def api_versions(driver: QuorumDriver, request: msg.ApiVersionsRequest) -> msg.ApiVersionsResponse:
    return msg.ApiVersionsResponse(dict(VERSIONS))


def _wall_ms(monotonic_at: float | None, monotonic_now: float) -> int | None:
    """A time.monotonic() instant as Unix epoch milliseconds (None stays None)."""
    if monotonic_at is None:
        return None
    return int((time.time() - (monotonic_now - monotonic_at)) * 1000)


async def describe_quorum(
    driver: QuorumDriver, request: msg.DescribeQuorumRequest
) -> msg.DescribeQuorumResponse:
    """The quorum as this node sees it; on the leader also each voter's and observer's progress
    (DescribeQuorum): log end offsets and wall-clock times in ms, None where not known."""
    node = driver.require_node()
    now = time.monotonic()
    directories = {v.node_id: v.directory_id for v in node.voter_set}
    raft_observers = driver.raft_observers
    return msg.DescribeQuorumResponse(
        node_id=node.node_id,
        leader_id=node.leader,
        term=node.term,
        role=node.role.value,
        commit_index=node.commit_index,
        applied_offset=driver.image.offset,
        metadata_refused_at=driver.refusal.stopped_at,
        voters=tuple(node.voters),
        kraft_version=kraft_version_finalized(driver.config),
        voter_addresses={
            str(v.node_id): address
            for v in node.voter_set
            if (address := driver.voter_address(v.node_id)) is not None
        },
        voter_directories={str(v.node_id): v.directory_id for v in node.voter_set},
        voter_progress=tuple(
            msg.ReplicaProgress(
                p.node_id,
                p.log_end,
                _wall_ms(p.last_contact, now),
                _wall_ms(p.last_caught_up, now),
                directories.get(p.node_id),
            )
            for p in node.voter_progress(now)
        ),
        observers=(
            *(
                msg.ReplicaProgress(
                    observer_id,
                    o.log_end,
                    _wall_ms(o.last_fetch, now),
                    _wall_ms(o.last_caught_up, now),
                    o.directory_id,
                )
                for observer_id, o in sorted(raft_observers.items())
                if observer_id not in node.voters and node.is_leader
            ),
            *(
                msg.ReplicaProgress(broker_id, offset, _wall_ms(fetched, now), _wall_ms(caught_up, now))
                for broker_id, (offset, fetched, caught_up) in sorted(driver.observers.items())
                if broker_id not in node.voters and broker_id not in raft_observers and node.is_leader
            ),
        ),
    )


async def describe_cluster(
    driver: QuorumDriver, request: msg.DescribeClusterRequest
) -> msg.DescribeClusterResponse:
    image = driver.image
    return msg.DescribeClusterResponse(
        offset=image.offset,
        brokers=tuple(
            msg.BrokerState(
                b.broker_id,
                b.epoch,
                b.fenced,
                b.in_controlled_shutdown,
                b.rack,
                tuple((e.name, e.host, e.port, e.security_protocol) for e in b.endpoints),
            )
            for b in image.brokers.values()
        ),
        topics={t.name: msg.TopicState(str(t.topic_id), dict(t.configs)) for t in image.topics.values()},
        partitions=tuple(PartitionState.of(p) for p in image.partitions()),
    )


async def raft_fetch(driver: QuorumDriver, request: msg.RaftFetchRequest) -> msg.RaftFetchResponse:
    """An observer controller pulls the log: what the leader would push to a follower at
    `next_index`. Its progress is what AddRaftVoter's catch-up check and DescribeQuorum read."""
    node = driver.require_dynamic_leader()
    if request.next_index < 1:
        raise RpcError(ErrorCode.invalid_request, "next_index starts at 1")
    now = time.monotonic()
    log_end = min(request.next_index - 1, node.last_index)
    observers = driver.raft_observers
    known = observers.get(request.node_id)
    caught_up = now if log_end >= node.commit_index else (known.last_caught_up if known else None)
    observers[request.node_id] = RaftObserver(
        request.directory_id or None, (request.host, request.port), log_end, now, caught_up
    )
    if len(observers) > MAX_RAFT_OBSERVERS:
        del observers[min(observers, key=lambda i: observers[i].last_fetch)]
    address = driver.voter_address(node.node_id)
    assert address is not None
    return msg.RaftFetchResponse(node.node_id, address, driver.observer_message(request.next_index))


def _directory(directory: str | None) -> str | None:
    """A directory id as the voter set holds it (None or the zero uuid: none given)."""
    if directory is None:
        return None
    try:
        parsed = uuid.UUID(directory)
    except ValueError:
        raise RpcError(ErrorCode.invalid_request, f"directory id {directory!r} is not a uuid") from None
    return None if parsed.int == 0 else str(parsed)


async def add_voter(driver: QuorumDriver, request: msg.AddVoterRequest) -> Empty:
    """AddRaftVoter: the node must be an observer that holds the leader's log (KIP-853), else
    REQUEST_TIMED_OUT."""
    node = driver.require_dynamic_leader()
    voter_id = request.voter_id
    directory = _directory(request.directory_id)
    if directory is None:
        raise RpcError(ErrorCode.invalid_request, "a dynamic quorum's voter needs its directory id")
    if any(v.node_id == voter_id for v in node.voter_set):
        raise RpcError(ErrorCode.duplicate_voter, f"node {voter_id} is already a voter")
    if node.membership_change_pending:
        raise RpcError(ErrorCode.request_timed_out, "another voter change is not committed yet")
    observer = driver.raft_observers.get(voter_id)
    now = time.monotonic()
    if observer is None or observer.directory_id != directory:
        raise RpcError(
            ErrorCode.request_timed_out,
            f"node {voter_id} with directory {directory} is not fetching from the leader as an observer",
        )
    if observer.last_caught_up is None or now - observer.last_caught_up > CAUGHT_UP_WITHIN_S:
        raise RpcError(ErrorCode.request_timed_out, f"node {voter_id} has not caught up with the log")
    await driver.propose_voters([*node.voter_set, Voter(voter_id, directory, request.host, request.port)])
    log.info("node %d (directory %s, %s:%d) is a voter now", voter_id, directory, request.host, request.port)
    return Empty()


async def remove_voter(driver: QuorumDriver, request: msg.RemoveVoterRequest) -> Empty:
    node = driver.require_dynamic_leader()
    voter_id = request.voter_id
    directory = _directory(request.directory_id)
    kept = [v for v in node.voter_set if not (v.node_id == voter_id and directory in (None, v.directory_id))]
    if len(kept) == len(node.voter_set):
        raise RpcError(ErrorCode.voter_not_found, f"node {voter_id} (directory {directory}) is not a voter")
    if not kept:
        raise RpcError(ErrorCode.invalid_request, "the last voter cannot be removed")
    await driver.propose_voters(kept)
    log.info("node %d is no longer a voter", voter_id)
    return Empty()


async def update_voter(driver: QuorumDriver, request: msg.UpdateVoterRequest) -> Empty:
    node = driver.require_dynamic_leader()
    voter_id = request.voter_id
    directory = _directory(request.directory_id)
    current = [v for v in node.voter_set if v.node_id == voter_id and v.directory_id == directory]
    if not current:
        raise RpcError(ErrorCode.voter_not_found, f"node {voter_id} (directory {directory}) is not a voter")
    updated = Voter(voter_id, directory, request.host, request.port)
    if updated != current[0]:
        await driver.propose_voters([updated if v.node_id == voter_id else v for v in node.voter_set])
    return Empty()
