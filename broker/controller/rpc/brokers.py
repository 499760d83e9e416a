"""Controller RPCs of a broker's life: registration, heartbeats, the metadata log, ISR changes,
producer id blocks."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from broker.controller.api import AlterPartitionRequest as AlterPartitionProposal
from broker.controller.api import AlterPartitionResult
from broker.controller.rpc.base import Empty, PartitionState, Request
from broker.controller.rpc.codec import Message, omitted_when_none, until


@dataclass(frozen=True, slots=True)
class RegisterBrokerResponse(Message):
    API = "register_broker"
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class RegisterBrokerRequest(Request[RegisterBrokerResponse]):
    API = "register_broker"
    RESPONSE = RegisterBrokerResponse
    broker_id: int
    incarnation_id: str
    # (listener name, host, port, security protocol) each.
    endpoints: tuple[tuple[str, str, int, str], ...]
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatResponse(Message):
    API = "broker_heartbeat"
    is_fenced: bool
    in_controlled_shutdown: bool
    should_shutdown: bool


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatRequest(Request[BrokerHeartbeatResponse]):
    API = "broker_heartbeat"
    RESPONSE = BrokerHeartbeatResponse
    broker_id: int
    broker_epoch: int
    metadata_offset: int
    want_fence: bool = False
    want_shutdown: bool = False


@dataclass(frozen=True, slots=True)
class FetchMetadataResponse(Message):
    """`entries`: (log index, records) — in version 1 always the stored entry bytes in base64; in
    version 0 the decoded records unless the request asked for "base64"."""

    API = "fetch_metadata"
    applied_offset: int
    entries: tuple[tuple[int, Any], ...] = ()
    # The image as of the snapshot (base64), when the entries asked for were compacted away.
    snapshot: str | None = field(default=None, metadata=omitted_when_none())


@dataclass(frozen=True, slots=True)
class FetchMetadataRequest(Request[FetchMetadataResponse]):
    """Committed entries after `after_offset`, waiting up to `max_wait_ms` for something new.

    Version 1 dropped `entry_encoding`: every broker asked for the stored bytes (decoding a
    10,000-partition entry to JSON again cost the active controller 40 ms per broker)."""

    API = "fetch_metadata"
    MAX_VERSION = 1
    RESPONSE = FetchMetadataResponse
    after_offset: int
    # The fetching broker (DescribeQuorum lists it as an observer); None for a tool.
    broker_id: int | None = None
    max_wait_ms: int = 0
    # Version 0 only: "base64" for the stored bytes, else (d32902d's default) the decoded records.
    entry_encoding: str | None = field(default=None, metadata=until(0))


@dataclass(frozen=True, slots=True)
class AlterPartitionItem(Message):
    """A partition leader's proposed ISR (broker/controller/api.py's AlterPartitionRequest)."""

    API = "alter_partition"
    broker_id: int
    broker_epoch: int
    topic_id: str
    partition: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[int, ...]

    @classmethod
    def of(cls, proposal: AlterPartitionProposal) -> AlterPartitionItem:
        return cls(
            proposal.broker_id,
            proposal.broker_epoch,
            str(proposal.topic_id),
            proposal.partition,
            proposal.leader_epoch,
            proposal.partition_epoch,
            proposal.new_isr,
        )

    def proposal(self) -> AlterPartitionProposal:
        return AlterPartitionProposal(
            broker_id=self.broker_id,
            broker_epoch=self.broker_epoch,
            topic_id=uuid.UUID(self.topic_id),
            partition=self.partition,
            leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
            new_isr=self.new_isr,
        )


@dataclass(frozen=True, slots=True)
class AlterPartitionOutcome(Message):
    API = "alter_partitions"
    error_code: int
    message: str | None = field(default=None, metadata=omitted_when_none())
    assignment: PartitionState | None = field(default=None, metadata=omitted_when_none())

    def result(self) -> AlterPartitionResult:
        if self.error_code or self.assignment is None:
            return AlterPartitionResult(self.error_code or 0)
        return AlterPartitionResult(0, self.assignment.assignment())


@dataclass(frozen=True, slots=True)
class AlterPartitionsResponse(Message):
    API = "alter_partitions"
    results: tuple[AlterPartitionOutcome, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionsRequest(Request[AlterPartitionsResponse]):
    """Many partitions' AlterPartition (one leader's, as Kafka's AlterPartition carries all of a
    broker's): one result each, in order."""

    API = "alter_partitions"
    RESPONSE = AlterPartitionsResponse
    requests: tuple[AlterPartitionItem, ...]


@dataclass(frozen=True, slots=True)
class AllocateProducerIdsResponse(Message):
    API = "allocate_producer_ids"
    first_producer_id: int
    count: int


@dataclass(frozen=True, slots=True)
class AllocateProducerIdsRequest(Request[AllocateProducerIdsResponse]):
    API = "allocate_producer_ids"
    RESPONSE = AllocateProducerIdsResponse
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRequest(Request[Empty]):
    API = "unregister_broker"
    RESPONSE = Empty
    broker_id: int
