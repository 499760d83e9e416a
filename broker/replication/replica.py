"""One partition hosted by this broker, as the replica manager and the replica fetchers see it."""

from __future__ import annotations

from dataclasses import dataclass, field

from broker.controller.api import PartitionAssignment
from broker.log.partition_log import PartitionLog
from broker.replication.delayed_produce import PendingAcks
from broker.replication.leader_state import LeaderState


@dataclass(eq=False)
class Replica:
    """One hosted partition: its log, its current assignment and, when leading, the leader state."""

    assignment: PartitionAssignment
    log: PartitionLog
    leader: LeaderState | None = None
    acks: PendingAcks = field(default_factory=PendingAcks)
    alter_in_flight: bool = False
    # After a refused or failed AlterPartition, no new proposal before this (time.monotonic()).
    alter_retry_after: float = 0.0

    @property
    def key(self) -> tuple[str, int]:
        return self.assignment.topic, self.assignment.partition

    @property
    def is_leader(self) -> bool:
        return self.leader is not None

    @property
    def isr(self) -> tuple[int, ...]:
        return tuple(sorted(self.leader.isr)) if self.leader is not None else self.assignment.isr
