"""Controller RPCs about the quorum itself: who leads, what it holds, its voters (KIP-853), the
observers' log pulls, and which RPC versions a controller speaks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from broker.controller.rpc.base import Empty, PartitionState, Request
from broker.controller.rpc.codec import Message, omitted_when_none


@dataclass(frozen=True, slots=True)
class ApiVersionsResponse(Message):
    API = "api_versions"
    # RPC name -> (lowest, highest) version this controller answers.
    versions: dict[str, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class ApiVersionsRequest(Request[ApiVersionsResponse]):
    """Asked first on every connection (as Kafka clients send ApiVersions); a controller of d32902d
    does not know it and answers INVALID_REQUEST, which means: version 0 of everything."""

    API = "api_versions"
    RESPONSE = ApiVersionsResponse


@dataclass(frozen=True, slots=True)
class ReplicaProgress(Message):
    """A voter's or observer's log end and wall-clock times in ms (None where not known);
    `directory_id` is None for brokers."""

    API = "describe_quorum"
    node_id: int
    log_end_offset: int
    last_fetch_ms: int | None
    last_caught_up_ms: int | None
    directory_id: str | None = field(default=None, metadata=omitted_when_none())


@dataclass(frozen=True, slots=True)
class DescribeQuorumResponse(Message):
    API = "describe_quorum"
    node_id: int
    leader_id: int | None
    term: int
    role: str
    commit_index: int
    applied_offset: int
    voters: tuple[int, ...]
    kraft_version: int
    # Keyed by the voter id as a string (JSON object keys).
    voter_addresses: dict[str, tuple[str, int]]
    voter_directories: dict[str, str | None]
    voter_progress: tuple[ReplicaProgress, ...]
    observers: tuple[ReplicaProgress, ...]
    # Set when this node met a metadata record newer than its release: it applies nothing from there on
    # (left out otherwise, so version 0 keeps d32902d's shape).
    metadata_refused_at: int | None = field(default=None, metadata=omitted_when_none())


@dataclass(frozen=True, slots=True)
class DescribeQuorumRequest(Request[DescribeQuorumResponse]):
    """The quorum as the node asked sees it; on the leader also each voter's and observer's progress."""

    API = "describe_quorum"
    RESPONSE = DescribeQuorumResponse


@dataclass(frozen=True, slots=True)
class BrokerState(Message):
    API = "describe_cluster"
    broker_id: int
    epoch: int
    fenced: bool
    in_controlled_shutdown: bool
    rack: str | None
    endpoints: tuple[tuple[str, str, int, str], ...]


@dataclass(frozen=True, slots=True)
class TopicState(Message):
    API = "describe_cluster"
    topic_id: str
    configs: dict[str, str]


@dataclass(frozen=True, slots=True)
class DescribeClusterResponse(Message):
    API = "describe_cluster"
    offset: int
    brokers: tuple[BrokerState, ...]
    topics: dict[str, TopicState]
    partitions: tuple[PartitionState, ...]


@dataclass(frozen=True, slots=True)
class DescribeClusterRequest(Request[DescribeClusterResponse]):
    API = "describe_cluster"
    RESPONSE = DescribeClusterResponse


@dataclass(frozen=True, slots=True)
class RaftFetchResponse(Message):
    API = "raft_fetch"
    leader_id: int
    leader_address: tuple[str, int]
    # A Raft message in broker/raft/wire.py's JSON form (that module owns its shape).
    message: Any


@dataclass(frozen=True, slots=True)
class RaftFetchRequest(Request[RaftFetchResponse]):
    """An observer controller pulls the log: what the leader would push to a follower at `next_index`."""

    API = "raft_fetch"
    RESPONSE = RaftFetchResponse
    node_id: int
    directory_id: str | None
    host: str
    port: int
    next_index: int


@dataclass(frozen=True, slots=True)
class AddVoterRequest(Request[Empty]):
    """AddRaftVoter: the new voter's controller endpoint; it must be an observer holding the log."""

    API = "add_voter"
    RESPONSE = Empty
    voter_id: int
    directory_id: str | None
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class RemoveVoterRequest(Request[Empty]):
    """RemoveRaftVoter: `directory_id` None or the zero uuid: whichever directory it has."""

    API = "remove_voter"
    RESPONSE = Empty
    voter_id: int
    directory_id: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateVoterRequest(Request[Empty]):
    """UpdateRaftVoter: a voter's new controller endpoint."""

    API = "update_voter"
    RESPONSE = Empty
    voter_id: int
    directory_id: str | None
    host: str
    port: int
