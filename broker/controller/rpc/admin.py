"""Controller RPCs of admin writes a broker forwards: topics, partitions, configs, security records,
features, leader elections and reassignments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from broker.controller.rpc.base import Empty, PartitionResult, Request
from broker.controller.rpc.codec import Message


@dataclass(frozen=True, slots=True)
class NewTopic(Message):
    API = "create_topics"
    name: str
    partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, str] | None = None
    # Brokers create __consumer_offsets this way (hidden from Produce, is_internal in Metadata).
    internal: bool = False
    # Replicas of partition 0, of partition 1, ...; None: automatic placement.
    assignments: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True, slots=True)
class TopicResult(Message):
    API = "create_topics"
    name: str
    error_code: int
    message: str | None = None
    topic_id: str | None = None


@dataclass(frozen=True, slots=True)
class TopicResults(Message):
    API = "topic_results"
    results: tuple[TopicResult, ...]


@dataclass(frozen=True, slots=True)
class CreateTopicsRequest(Request[TopicResults]):
    API = "create_topics"
    RESPONSE = TopicResults
    topics: tuple[NewTopic, ...]
    validate_only: bool = False


@dataclass(frozen=True, slots=True)
class DeleteTopicsRequest(Request[TopicResults]):
    API = "delete_topics"
    RESPONSE = TopicResults
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CreatePartitionsRequest(Request[Empty]):
    API = "create_partitions"
    RESPONSE = Empty
    name: str
    total: int
    assignments: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True, slots=True)
class AlterConfigsRequest(Request[Empty]):
    """`changes`: config name -> new value, None to delete it."""

    API = "alter_configs"
    RESPONSE = Empty
    resource_type: str
    resource_name: str
    changes: dict[str, str | None]


@dataclass(frozen=True, slots=True)
class SecurityChangeRequest(Request[Empty]):
    """ACL / SCRAM / quota records (broker/metadata/security_registry.py's format, owned there)."""

    API = "security_change"
    RESPONSE = Empty
    records: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class FeatureLevelUpdate(Message):
    API = "update_features"
    feature: str
    level: int
    upgrade_type: int


@dataclass(frozen=True, slots=True)
class UpdateFeaturesRequest(Request[Empty]):
    API = "update_features"
    RESPONSE = Empty
    updates: tuple[FeatureLevelUpdate, ...]
    validate_only: bool = False


@dataclass(frozen=True, slots=True)
class ElectLeadersResponse(Message):
    API = "elect_leaders"
    # (topic id, partition) of every partition whose leader changed.
    changed: tuple[tuple[str, int], ...]
    results: tuple[PartitionResult, ...]


@dataclass(frozen=True, slots=True)
class ElectLeadersRequest(Request[ElectLeadersResponse]):
    """`election_type` 0 PREFERRED or 1 UNCLEAN; `partitions` None: all (then partitions needing
    no election are left out of the results)."""

    API = "elect_leaders"
    RESPONSE = ElectLeadersResponse
    election_type: int = 0
    partitions: tuple[tuple[str, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class PartitionResults(Message):
    API = "partition_results"
    results: tuple[PartitionResult, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsRequest(Request[PartitionResults]):
    """(topic, partition, target replicas or None to cancel) each."""

    API = "alter_partition_reassignments"
    RESPONSE = PartitionResults
    reassignments: tuple[tuple[str, int, tuple[int, ...] | None], ...]
    allow_replication_factor_change: bool = True


@dataclass(frozen=True, slots=True)
class OngoingReassignment(Message):
    API = "list_partition_reassignments"
    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsResponse(Message):
    API = "list_partition_reassignments"
    reassignments: tuple[OngoingReassignment, ...]


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsRequest(Request[ListPartitionReassignmentsResponse]):
    """Answered by the active controller, so a reassignment it just accepted is listed."""

    API = "list_partition_reassignments"
    RESPONSE = ListPartitionReassignmentsResponse
    partitions: tuple[tuple[str, int], ...] | None = None
