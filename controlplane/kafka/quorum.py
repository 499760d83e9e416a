"""The controller quorum (KIP-853): DescribeQuorum v2, AddRaftVoter and RemoveRaftVoter, sent to a broker,
which forwards them to the active controller (librdkafka has none of them)."""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass

from kio.schema.add_raft_voter.v0.request import AddRaftVoterRequest
from kio.schema.add_raft_voter.v0.request import Listener as VoterListener
from kio.schema.describe_quorum.v2.request import DescribeQuorumRequest, PartitionData, TopicData
from kio.schema.remove_raft_voter.v0.request import RemoveRaftVoterRequest
from kio.static.primitive import i32, i32Timedelta, u16

from controlplane.kafka.connection import (
    DEFAULT_TIMEOUT_SECONDS,
    Connection,
    protocol_connection,
    raise_for_code,
)

METADATA_TOPIC = "__cluster_metadata"
CONTROLLER_LISTENER = "CONTROLLER"


@dataclass(frozen=True)
class QuorumReplica:
    node_id: int
    # None in a static quorum (Kafka sends the zero uuid there).
    directory_id: uuid.UUID | None
    log_end_offset: int


@dataclass(frozen=True)
class QuorumView:
    leader_id: int
    epoch: int
    high_watermark: int
    voters: tuple[QuorumReplica, ...]
    observers: tuple[QuorumReplica, ...]

    def voter(self, node_id: int) -> QuorumReplica | None:
        return next((v for v in self.voters if v.node_id == node_id), None)

    def observer(self, node_id: int) -> QuorumReplica | None:
        return next((o for o in self.observers if o.node_id == node_id), None)


def _replica(replica: object) -> QuorumReplica:
    directory = getattr(replica, "replica_directory_id", None)
    return QuorumReplica(
        node_id=int(replica.replica_id),  # type: ignore[attr-defined]
        directory_id=None if directory is None or directory.int == 0 else directory,
        log_end_offset=int(replica.log_end_offset),  # type: ignore[attr-defined]
    )


def describe_quorum(
    connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> QuorumView:
    request = DescribeQuorumRequest(
        topics=(TopicData(topic_name=METADATA_TOPIC, partitions=(PartitionData(partition_index=i32(0)),)),)
    )
    with protocol_connection(connection, timeout_seconds) as wire:
        response = wire.request(request)
    raise_for_code(int(response.error_code), response.error_message, "DescribeQuorum")
    (topic,) = response.topics
    (partition,) = topic.partitions
    raise_for_code(int(partition.error_code), partition.error_message, "DescribeQuorum")
    return QuorumView(
        leader_id=int(partition.leader_id),
        epoch=int(partition.leader_epoch),
        high_watermark=int(partition.high_watermark),
        voters=tuple(_replica(v) for v in partition.current_voters),
        observers=tuple(_replica(o) for o in partition.observers),
    )


def add_raft_voter(
    connection: Connection,
    *,
    node_id: int,
    directory_id: uuid.UUID,
    host: str,
    port: int,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """AddRaftVoter: the observer `node_id` (formatted with `directory_id`) becomes a voter."""
    request = AddRaftVoterRequest(
        cluster_id=None,
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=timeout_seconds)),
        voter_id=i32(node_id),
        voter_directory_id=directory_id,
        listeners=(VoterListener(name=CONTROLLER_LISTENER, host=host, port=u16(port)),),
    )
    with protocol_connection(connection, timeout_seconds + 5) as wire:
        response = wire.request(request)
    raise_for_code(int(response.error_code), response.error_message, "AddRaftVoter")


def remove_raft_voter(
    connection: Connection,
    *,
    node_id: int,
    directory_id: uuid.UUID | None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """RemoveRaftVoter: `node_id` (with that directory id) stops voting; a leader steps down."""
    request = RemoveRaftVoterRequest(cluster_id=None, voter_id=i32(node_id), voter_directory_id=directory_id)
    with protocol_connection(connection, timeout_seconds + 5) as wire:
        response = wire.request(request)
    raise_for_code(int(response.error_code), response.error_message, "RemoveRaftVoter")
