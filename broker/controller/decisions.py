"""What the active controller decides: requests and the clock in, metadata records out.

No I/O and no waiting: every method validates against the committed `MetadataImage` and
returns the records to append (or an error code). The caller proposes the records through
Raft and answers the requester once they are committed. Heartbeat times live only here, on
the active controller; a newly elected controller gives every broker a fresh session.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode

from broker.controller import records as rec
from broker.controller.api import NO_LEADER, AlterPartitionRequest, Endpoint, PartitionAssignment
from broker.controller.image import MetadataImage
from broker.controller.placement import Candidate, PlacementError, place_partitions
from broker.controller.records import SECURITY_RECORD_TYPES, Record
from broker.log.config import LogConfig
from broker.log.errors import InvalidConfigError
from broker.metadata.topic_names import collision_key, topic_name_problem
from broker.server.topics import known_topic_configs

PRODUCER_ID_BLOCK = 1000


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    session_timeout_s: float = 9.0
    default_partitions: int = 1
    default_replication_factor: int = 1
    unclean_leader_election: bool = False
    auto_leader_rebalance: bool = True
    leader_imbalance_check_interval_s: float = 300.0
    leader_imbalance_percentage: int = 10


@dataclass(slots=True)
class Decision:
    """Records to commit, or an error code (with a message) and no records."""

    records: list[Record] = field(default_factory=list)
    error_code: int = 0
    message: str = ""


def refuse(code: ErrorCode, message: str = "") -> Decision:
    return Decision(error_code=code.value, message=message)


@dataclass(frozen=True, slots=True)
class TopicRequest:
    name: str
    partitions: int = -1  # -1 = the default
    replication_factor: int = -1
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False


class Decider:
    def __init__(self, settings: ControllerSettings, now: float) -> None:
        self.settings = settings
        self._last_heartbeat: dict[int, float] = {}
        self._active_since = now

    def _last_contact(self, broker_id: int) -> float:
        return self._last_heartbeat.get(broker_id, self._active_since)

    # --- brokers -----------------------------------------------------------------------------

    def register_broker(
        self,
        image: MetadataImage,
        broker_id: int,
        incarnation_id: uuid.UUID,
        endpoints: Sequence[Endpoint],
        rack: str | None,
        now: float,
    ) -> Decision:
        existing = image.brokers.get(broker_id)
        if existing is not None and existing.incarnation_id == incarnation_id:
            return Decision()  # a retried registration: already done
        if existing is not None and not existing.fenced and not self._session_expired(broker_id, now):
            return refuse(
                ErrorCode.duplicate_broker_registration,
                f"broker {broker_id} is registered by another live process",
            )
        self._last_heartbeat[broker_id] = now
        records = [rec.register_broker(broker_id, incarnation_id, endpoints, rack)]
        # The new registration starts fenced: leadership moves off the broker's previous life.
        records.extend(self._partition_changes_without(image, broker_id))
        return Decision(records)

    def heartbeat(
        self,
        image: MetadataImage,
        broker_id: int,
        broker_epoch: int,
        metadata_offset: int,
        want_fence: bool,
        want_shutdown: bool,
        now: float,
    ) -> Decision:
        broker = image.brokers.get(broker_id)
        if broker is None:
            return refuse(ErrorCode.broker_id_not_registered)
        if broker.epoch != broker_epoch:
            return refuse(ErrorCode.stale_broker_epoch)
        self._last_heartbeat[broker_id] = now
        if want_shutdown and not broker.in_controlled_shutdown and not broker.fenced:
            records = [rec.begin_controlled_shutdown(broker_id, broker.epoch)]
            records.extend(self._partition_changes_without(image, broker_id))
            return Decision(records)
        if want_shutdown and self.should_shut_down(image, broker_id):
            # Done moving leadership: fenced now, so a restart may register again at once.
            return Decision([rec.fence_broker(broker_id, broker.epoch)])
        if want_fence and not broker.fenced:
            return Decision(
                [
                    rec.fence_broker(broker_id, broker.epoch),
                    *self._partition_changes_without(image, broker_id),
                ]
            )
        # Unfence once the broker has caught up with the log up to its own registration.
        if broker.fenced and not want_fence and not want_shutdown and metadata_offset >= broker.epoch:
            return Decision(
                [rec.unfence_broker(broker_id, broker.epoch), *self._leaders_for_returning(image, broker_id)]
            )
        return Decision()

    def should_shut_down(self, image: MetadataImage, broker_id: int) -> bool:
        """A broker in controlled shutdown may stop once it leads nothing."""
        broker = image.brokers.get(broker_id)
        if broker is None or not broker.in_controlled_shutdown:
            return False
        return not any(p.leader == broker_id for p in image.partitions())

    def _session_expired(self, broker_id: int, now: float) -> bool:
        return now - self._last_contact(broker_id) > self.settings.session_timeout_s

    def fence_expired_broker(self, image: MetadataImage, now: float) -> Decision:
        """Fence one broker whose session ran out, moving its leaderships away.

        One at a time: the next broker's leader elections must see this one's outcome.
        """
        for broker in image.brokers.values():
            if not broker.fenced and self._session_expired(broker.broker_id, now):
                records = [rec.fence_broker(broker.broker_id, broker.epoch)]
                return Decision(records + self._partition_changes_without(image, broker.broker_id))
        return Decision()

    # --- leadership ----------------------------------------------------------------------------

    def _unclean_allowed(self, image: MetadataImage, topic_id: uuid.UUID) -> bool:
        value = image.topics[topic_id].configs.get("unclean.leader.election.enable")
        if value is None:
            return self.settings.unclean_leader_election
        return value.lower() == "true"

    def _partition_changes_without(self, image: MetadataImage, broker_id: int) -> list[Record]:
        """Take `broker_id` out of every ISR and leadership (it is fenced or leaving).

        The last ISR member stays in the ISR even when unusable: it may be the only replica with
        every committed record, and without unclean election it must be the next leader.
        """
        records = []
        for p in image.partitions():
            if broker_id not in p.replicas:
                continue
            isr = [b for b in p.isr if b != broker_id] or list(p.isr)
            leader = p.leader
            if leader in (broker_id, NO_LEADER):
                leader = self._choose_leader(image, p, isr, excluded=broker_id)
                if leader != NO_LEADER and leader not in isr:
                    isr = [leader]  # an unclean election: the new leader's log defines the partition
            if leader != p.leader or tuple(isr) != p.isr:
                records.append(rec.partition_change(p.topic_id, p.partition, leader=leader, isr=isr))
        return records

    def _choose_leader(
        self, image: MetadataImage, p: PartitionAssignment, isr: Sequence[int], excluded: int = NO_LEADER
    ) -> int:
        # Replica order puts the preferred leader first.
        for broker_id in p.replicas:
            if broker_id in isr and broker_id != excluded and image.is_usable(broker_id):
                return broker_id
        if self._unclean_allowed(image, p.topic_id):
            for broker_id in p.replicas:
                if broker_id != excluded and image.is_usable(broker_id):
                    return broker_id
        return NO_LEADER

    def _leaders_for_returning(self, image: MetadataImage, broker_id: int) -> list[Record]:
        """Leaderless partitions this broker can lead once it is unfenced."""
        records = []
        for p in image.partitions():
            if p.leader != NO_LEADER or broker_id not in p.replicas:
                continue
            if broker_id in p.isr:
                records.append(rec.partition_change(p.topic_id, p.partition, leader=broker_id))
            elif self._unclean_allowed(image, p.topic_id) and not any(image.is_usable(b) for b in p.isr):
                records.append(
                    rec.partition_change(p.topic_id, p.partition, leader=broker_id, isr=[broker_id])
                )
        return records

    def elect_preferred_leaders(
        self, image: MetadataImage, partitions: Sequence[tuple[str, int]] | None = None
    ) -> Decision:
        """Move leadership back to each partition's first replica where it is usable and in sync
        (ElectLeaders with the PREFERRED type); None means every partition."""
        wanted = None if partitions is None else set(partitions)
        records = []
        for p in image.partitions():
            if wanted is not None and (p.topic, p.partition) not in wanted:
                continue
            preferred = p.replicas[0] if p.replicas else NO_LEADER
            if p.leader != preferred and preferred in p.isr and image.is_usable(preferred):
                records.append(rec.partition_change(p.topic_id, p.partition, leader=preferred))
        return Decision(records)

    def rebalance_leaders(self, image: MetadataImage, imbalance_percentage: int) -> Decision:
        """Kafka's automatic rebalancing: for each broker that is the preferred leader of more
        partitions than it leads by over `imbalance_percentage`, elect it back where possible."""
        preferred: dict[int, list[PartitionAssignment]] = {}
        for p in image.partitions():
            if p.replicas:
                preferred.setdefault(p.replicas[0], []).append(p)
        chosen = []
        for broker_id, partitions in preferred.items():
            not_leading = [p for p in partitions if p.leader != broker_id]
            if len(not_leading) * 100 > imbalance_percentage * len(partitions):
                chosen.extend((p.topic, p.partition) for p in not_leading)
        return self.elect_preferred_leaders(image, chosen) if chosen else Decision()

    def alter_partition(self, image: MetadataImage, request: AlterPartitionRequest) -> Decision:
        broker = image.brokers.get(request.broker_id)
        if broker is None or broker.epoch != request.broker_epoch:
            return refuse(ErrorCode.stale_broker_epoch)
        topic = image.topics.get(request.topic_id)
        if topic is None:
            return refuse(ErrorCode.unknown_topic_id)
        p = topic.partitions.get(request.partition)
        if p is None:
            return refuse(ErrorCode.unknown_topic_or_partition)
        if p.leader != request.broker_id:
            return refuse(ErrorCode.not_leader_or_follower)
        if request.leader_epoch < p.leader_epoch:
            return refuse(ErrorCode.fenced_leader_epoch)
        if request.leader_epoch > p.leader_epoch:
            return refuse(ErrorCode.not_leader_or_follower)
        if request.partition_epoch != p.partition_epoch:
            return refuse(ErrorCode.invalid_update_version)
        new_isr = tuple(request.new_isr)
        if request.broker_id not in new_isr or any(b not in p.replicas for b in new_isr):
            return refuse(ErrorCode.invalid_request, "the ISR must hold the leader and only replicas")
        if any(b not in p.isr and not image.is_usable(b) for b in new_isr):
            return refuse(
                ErrorCode.ineligible_replica, "a fenced or shutting-down broker cannot join the ISR"
            )
        if new_isr == p.isr:
            return Decision()
        return Decision([rec.partition_change(p.topic_id, p.partition, isr=new_isr)])

    # --- topics and configs ------------------------------------------------------------------

    def create_topic(self, image: MetadataImage, request: TopicRequest) -> Decision:
        problem = topic_name_problem(request.name)
        if problem:
            return refuse(ErrorCode.invalid_topic_exception, problem)
        if request.name in image.topic_ids:
            return refuse(ErrorCode.topic_already_exists, f"topic {request.name!r} already exists")
        key = collision_key(request.name)
        if any(collision_key(name) == key for name in image.topic_ids):
            return refuse(
                ErrorCode.invalid_topic_exception, f"topic {request.name!r} collides with an existing topic"
            )
        problem = topic_config_problem(request.configs)
        if problem:
            return refuse(ErrorCode.invalid_config, problem)
        count = self.settings.default_partitions if request.partitions == -1 else request.partitions
        factor = (
            self.settings.default_replication_factor
            if request.replication_factor == -1
            else request.replication_factor
        )
        if count < 1:
            return refuse(ErrorCode.invalid_partitions, "the number of partitions must be at least 1")
        try:
            placements = self._place(image, count, factor)
        except PlacementError as exc:
            return refuse(ErrorCode.invalid_replication_factor, str(exc))
        topic_id = uuid.uuid4()
        records = [rec.topic(request.name, topic_id, request.internal)]
        for index, replicas in enumerate(placements):
            records.append(rec.partition(topic_id, index, replicas, replicas, replicas[0]))
        records.extend(rec.config("topic", request.name, k, v) for k, v in sorted(request.configs.items()))
        return Decision(records)

    def _place(self, image: MetadataImage, count: int, factor: int) -> list[tuple[int, ...]]:
        candidates = [Candidate(b.broker_id, b.rack) for b in image.unfenced_brokers()]
        return place_partitions(candidates, count, factor, image.partitions())

    def delete_topic(self, image: MetadataImage, name: str) -> Decision:
        topic = image.topic_by_name(name)
        if topic is None:
            return refuse(ErrorCode.unknown_topic_or_partition, f"topic {name!r} does not exist")
        return Decision([rec.remove_topic(topic.topic_id)])

    def create_partitions(self, image: MetadataImage, name: str, total: int) -> Decision:
        topic = image.topic_by_name(name)
        if topic is None:
            return refuse(ErrorCode.unknown_topic_or_partition, f"topic {name!r} does not exist")
        current = len(topic.partitions)
        if total <= current:
            return refuse(ErrorCode.invalid_partitions, f"topic {name!r} already has {current} partitions")
        factor = len(topic.partitions[0].replicas) if topic.partitions else 1
        try:
            placements = self._place(image, total - current, factor)
        except PlacementError as exc:
            return refuse(ErrorCode.invalid_replication_factor, str(exc))
        return Decision(
            [rec.partition(topic.topic_id, current + i, r, r, r[0]) for i, r in enumerate(placements)]
        )

    def alter_configs(
        self, image: MetadataImage, resource_type: str, resource_name: str, changes: dict[str, str | None]
    ) -> Decision:
        if resource_type == "topic":
            topic = image.topic_by_name(resource_name)
            if topic is None:
                return refuse(ErrorCode.unknown_topic_or_partition, f"topic {resource_name!r} does not exist")
            merged = {**topic.configs, **changes}
            problem = topic_config_problem({k: v for k, v in merged.items() if v is not None})
            if problem:
                return refuse(ErrorCode.invalid_config, problem)
        if resource_type not in ("topic", "broker"):
            return refuse(ErrorCode.invalid_request, f"unknown resource type {resource_type!r}")
        return Decision([rec.config(resource_type, resource_name, k, v) for k, v in sorted(changes.items())])

    def security_change(self, records: Sequence[Record]) -> Decision:
        """ACL, SCRAM and quota changes, decided by the receiving broker's handlers."""
        for record in records:
            if record.get("type") not in SECURITY_RECORD_TYPES:
                return refuse(ErrorCode.invalid_request, f"not a security record: {record.get('type')!r}")
        return Decision(list(records))

    def allocate_producer_ids(self, image: MetadataImage, broker_id: int, broker_epoch: int) -> Decision:
        broker = image.brokers.get(broker_id)
        if broker is None or broker.epoch != broker_epoch:
            return refuse(ErrorCode.stale_broker_epoch)
        return Decision([rec.producer_ids(broker_id, image.next_producer_id + PRODUCER_ID_BLOCK)])


def topic_config_problem(configs: dict[str, str]) -> str | None:
    """Why these topic config overrides are invalid (unknown name, bad value), or None."""
    known = known_topic_configs()
    for name in configs:
        if name not in known:
            return f"Unknown topic config name: {name}"
    try:
        LogConfig.from_properties(configs)
    except (InvalidConfigError, ValueError) as exc:
        return str(exc)
    return None
