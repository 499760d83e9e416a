"""PartitionManager: the one door from handlers and coordinators to partitions (Kafka's ReplicaManager
as its request path sees it).

It answers who leads a partition, hands out `Partition`s this broker leads (fenced by leader epoch),
describes partitions and brokers for Metadata, and reports log directory usage. Leadership, ISR and
high watermarks come from `broker.replication.manager.ReplicaManager`, fed the controller's metadata image
(a single node's comes from its own one-voter quorum).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kio.schema.errors import ErrorCode

from broker.controller.api import BrokerRegistration, Endpoint, PartitionAssignment
from broker.log.log_manager import LogManager
from broker.log.producer_state import ProducerEntry
from broker.replication.manager import ReplicaManager
from broker.replication.partition import Partition
from broker.wire.records.errors import StorageError


@dataclass(frozen=True, slots=True)
class PartitionState:
    """A partition as Metadata describes it."""

    index: int
    error: ErrorCode
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]


class PartitionManager:
    def __init__(self, replication: ReplicaManager, logs: LogManager) -> None:
        self.replication = replication
        self._logs = logs

    # ---- leadership ----------------------------------------------------------------------------

    def leader(self, topic: str, index: int, requested_epoch: int = -1) -> tuple[Partition | None, ErrorCode]:
        """The partition if this broker leads it, else the error a client gets (unknown, not leader,
        fenced or unknown leader epoch)."""
        return self.replication.leader_partition(topic, index, requested_epoch)

    def hosted_producers(self, topic: str, index: int) -> tuple[list[ProducerEntry] | None, ErrorCode]:
        """The producers this broker's replica of the partition remembers, leader or follower (a follower
        replays the leader's batches, so it knows them too, and Kafka's DescribeProducers answers from any
        replica: `kafka-transactions find-hanging --broker-id` asks each broker about every replica it holds);
        else the error `leader()` gives."""
        partition = self.replication.hosted(topic, index)
        if partition is None:
            return None, self.leader(topic, index)[1]
        return partition.producers(), ErrorCode.none

    def is_leader(self, topic: str, index: int) -> bool:
        return self.replication.leader_partition(topic, index)[0] is not None

    def leader_for(self, topic: str, index: int) -> int:
        """The leader's broker id, -1 when the partition has none (or is unknown)."""
        assignment = self.replication.assignment(topic, index)
        return assignment.leader if assignment is not None else -1

    def current_leader(self, topic: str, index: int) -> tuple[int, int]:
        """(leader id, leader epoch) as the metadata image has them; (-1, -1) when unknown."""
        assignment = self.replication.assignment(topic, index)
        if assignment is None or not assignment.has_leader:
            return -1, -1
        return assignment.leader, assignment.leader_epoch

    def leader_endpoint(self, topic: str, index: int, listener_name: str) -> Endpoint | None:
        assignment = self.replication.assignment(topic, index)
        if assignment is None or not assignment.has_leader:
            return None
        return self.replication.endpoint(assignment.leader, listener_name)

    def knows(self, topic: str, index: int) -> bool:
        """Whether the metadata image lists the partition at all."""
        return self.replication.assignment(topic, index) is not None

    def assignments_of(self, topic: str) -> list[PartitionAssignment]:
        """The image's assignments of `topic`'s partitions (for metadata listeners joining late)."""
        return [a for a in self.replication.assignments.values() if a.topic == topic]

    def describe(self, topic: str, count: int, start: int = 0) -> list[PartitionState]:
        """Partitions start..count-1 of `topic` for Metadata and DescribeTopicPartitions (leaderless
        ones with LEADER_NOT_AVAILABLE)."""
        replication = self.replication
        states = []
        for index in range(max(start, 0), count):
            assignment = replication.assignment(topic, index)
            if assignment is None:
                states.append(PartitionState(index, ErrorCode.leader_not_available, -1, -1, (), (), ()))
                continue
            offline = tuple(replication.offline_replicas(assignment))
            leaderless = assignment.leader < 0 or assignment.leader in offline
            states.append(
                PartitionState(
                    index,
                    # Kafka's answer for a partition without a live leader: clients retry later.
                    ErrorCode.leader_not_available if leaderless else ErrorCode.none,
                    assignment.leader,
                    assignment.leader_epoch,
                    assignment.replicas,
                    replication.isr_of(topic, index),
                    offline,
                )
            )
        return states

    # ---- brokers and change tracking -----------------------------------------------------------

    def replica_racks(self, topic: str, index: int) -> frozenset[str]:
        """The racks (`broker.rack`) of the brokers holding the partition's replicas."""
        assignment = self.replication.assignment(topic, index)
        if assignment is None:
            return frozenset()
        brokers = self.replication.brokers
        return frozenset(
            rack
            for replica in assignment.replicas
            if replica in brokers and (rack := brokers[replica].rack) is not None
        )

    def live_brokers(self) -> Iterable[BrokerRegistration]:
        """Unfenced brokers, by id."""
        return self.replication.live_brokers()

    def endpoint(self, broker_id: int, listener_name: str) -> Endpoint | None:
        return self.replication.endpoint(broker_id, listener_name)

    @property
    def version(self) -> int:
        """Bumps on every change Metadata shows (leaders, ISRs, brokers)."""
        return self.replication.version

    @property
    def brokers_version(self) -> int:
        return self.replication.brokers_version

    def topic_version(self, topic: str) -> int:
        return self.replication.topic_versions.get(topic, 0)

    def add_partition_listener(self, listener: Callable[[tuple[str, int]], None]) -> None:
        """Called with (topic, partition) whenever its assignment or leadership here changes."""
        self.replication.partition_listeners.append(listener)

    # ---- followers -----------------------------------------------------------------------------

    def note_follower_fetch(self, follower: int) -> None:
        """A Fetch from follower broker `follower` arrived (whichever partitions it names)."""
        self.replication.note_follower_fetch(follower)

    # ---- storage -------------------------------------------------------------------------------

    def log_dir_usage(self) -> list[tuple[Path, list[tuple[str, int, int]]]]:
        """Per log directory: (topic, partition, bytes) of every hosted partition."""
        return self._logs.dir_usage()

    def future_log_usage(self) -> list[tuple[Path, str, int, int, int]]:
        """(target log dir, topic, partition, bytes, offset lag) of every replica moving between dirs."""
        return self._logs.future_usage()

    def offline_log_dirs(self) -> list[Path]:
        """Log directories that failed; their replicas are not served."""
        return list(self._logs.offline_dirs)

    def move_replica(self, topic: str, partition: int, log_dir: str) -> ErrorCode:
        """AlterReplicaLogDirs for one partition: start moving its log into `log_dir` of this broker."""
        try:
            self._logs.move_replica(topic, partition, log_dir)
        except StorageError as error:
            return ErrorCode(error.error_code)
        return ErrorCode.none
