"""The interface between the controller quorum and the brokers' data path.

Brokers learn partition leadership from the metadata log through a `MetadataListener`; a
partition leader asks the active controller to change its ISR with an `AlterPartitionRequest`
sent through an `AlterPartitionsSender`. Nothing here does I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from broker.metadata.security_records import SecurityRecord

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class PartitionAssignment:
    """One partition as the committed metadata log describes it.

    `leader_epoch` changes whenever the leader changes; `partition_epoch` changes on every
    change to the partition (leader, ISR, replicas) and is the version AlterPartition checks.
    During a reassignment (KIP-455) `replicas` holds the target replicas first, then the ones
    being removed; `adding_replicas` are still catching up, `removing_replicas` leave when it ends.
    """

    topic: str
    partition: int
    topic_id: uuid.UUID
    leader: int
    leader_epoch: int
    partition_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    def is_replica(self, broker_id: int) -> bool:
        return broker_id in self.replicas

    @property
    def is_reassigning(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    @property
    def original_replicas(self) -> tuple[int, ...]:
        """The replicas before the ongoing reassignment (what cancelling it returns to)."""
        return tuple(b for b in self.replicas if b not in self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """The replicas once the ongoing reassignment completes."""
        return tuple(b for b in self.replicas if b not in self.removing_replicas)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A listener a broker advertises (`advertised.listeners` entry plus its security protocol)."""

    name: str
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """A broker as the controller knows it. `epoch` is the log offset of its registration record:
    a restarted broker gets a new, larger epoch, so requests from its previous life are refused."""

    broker_id: int
    incarnation_id: uuid.UUID
    epoch: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest:
    """A partition leader proposes a new ISR, stating the versions it based the proposal on."""

    broker_id: int
    broker_epoch: int
    topic_id: uuid.UUID
    partition: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionResult:
    """`error_code` is a Kafka error code: 0 NONE, 74 FENCED_LEADER_EPOCH, 95 INVALID_UPDATE_VERSION,
    107 INELIGIBLE_REPLICA, 77 STALE_BROKER_EPOCH, 100 UNKNOWN_TOPIC_ID, 3 UNKNOWN_TOPIC_OR_PARTITION,
    41 NOT_CONTROLLER. On success `assignment` is the committed partition state (the leader must
    adopt its `partition_epoch` for its next request)."""

    error_code: int
    assignment: PartitionAssignment | None = None


class AlterPartitionsSender(Protocol):
    """How a broker's partition leaders reach the active controller: one AlterPartitions request for many
    partitions, a result for each, in order (implemented by the controller client)."""

    async def alter_partitions(
        self, requests: Sequence[AlterPartitionRequest]
    ) -> list[AlterPartitionResult]: ...


@dataclass(frozen=True, slots=True)
class TopicConfigChange:
    topic: str
    topic_id: uuid.UUID
    configs: Mapping[str, str] = field(default_factory=dict)


class MetadataListener(Protocol):
    """What a broker implements to follow the committed metadata log.

    Calls come in log order, after the records are committed, on the broker's event loop.
    `on_image_loaded` comes first (and again whenever a snapshot replaces the broker's view);
    the other calls describe each change after that.
    """

    def on_image_loaded(
        self, partitions: Sequence[PartitionAssignment], brokers: Sequence[BrokerRegistration]
    ) -> None:
        """Every partition and broker of the committed metadata (replacing what the listener knew).
        The topic configs and the whole security state follow at once as `on_topic_configs_changed`
        and `on_security_records` calls; a listener keeping security state replaces it with those."""
        ...

    def on_partition_changed(
        self, previous: PartitionAssignment | None, current: PartitionAssignment
    ) -> None: ...

    def on_partition_removed(self, previous: PartitionAssignment) -> None: ...

    def on_topic_configs_changed(self, change: TopicConfigChange) -> None: ...

    def on_broker_changed(self, broker: BrokerRegistration) -> None: ...

    def on_broker_configs_changed(self, resource_name: str, configs: Mapping[str, str]) -> None:
        """Dynamic broker configs of broker `resource_name` ("" = the cluster-wide default): all of
        them after the change."""
        ...

    def on_security_records(self, records: Sequence[SecurityRecord]) -> None:
        """ACL / SCRAM / quota / delegation token records (`broker.metadata.security_records`)."""
        ...
