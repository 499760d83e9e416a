"""What the active controller decides: requests and the clock in, metadata records out.

No I/O and no waiting: every method validates against the committed `MetadataImage` and
returns the records to append (or an error code). The caller proposes the records through
Raft and answers the requester once they are committed. Heartbeat times live only here, on
the active controller; a newly elected controller gives every broker a fresh session (see
`Decider._last_contact`).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from kio.schema.errors import ErrorCode

from broker.controller import records as rec
from broker.controller.api import NO_LEADER, AlterPartitionRequest, Endpoint, PartitionAssignment
from broker.controller.image import MetadataImage
from broker.controller.placement import Candidate, PlacementError, place_partitions
from broker.controller.records import MetadataRecord, SecurityRecord
from broker.log.config import LogConfig, known_topic_configs
from broker.log.errors import InvalidConfigError
from broker.metadata.features import (
    KRAFT_VERSION,
    FeatureUpdate,
    FeatureUpdateError,
    default_levels,
    plan_update,
)
from broker.metadata.topic_names import collision_key, topic_name_problem

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
    # kraft.version as the controllers' storage was formatted: 1 for a dynamic quorum (KIP-853), else 0.
    kraft_version: int = 0
    # The controllers' static min.insync.replicas: a fresh cluster records it as the cluster-wide default.
    min_insync_replicas: int = 1


ELECTION_PREFERRED = 0
ELECTION_UNCLEAN = 1


@dataclass(frozen=True, slots=True)
class PartitionResult:
    """The outcome for one partition of a request about many (ElectLeaders, reassignments)."""

    topic: str
    partition: int
    error_code: int = 0
    message: str | None = ""


@dataclass(slots=True)
class Decision:
    """Records to commit, or an error code (with a message) and no records. A request about
    many partitions also gets one result per partition (the records hold the successful ones)."""

    records: list[MetadataRecord] = field(default_factory=list)
    error_code: int = 0
    message: str = ""
    results: list[PartitionResult] = field(default_factory=list)


def refuse(code: ErrorCode, message: str = "") -> Decision:
    return Decision(error_code=code.value, message=message)


@dataclass(frozen=True, slots=True)
class TopicRequest:
    name: str
    partitions: int = -1  # -1 = the default
    replication_factor: int = -1
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False
    # Manual placement (CreateTopics' assignments): the replicas of partition 0, 1, ... in order.
    assignments: tuple[tuple[int, ...], ...] = ()


class Decider:
    def __init__(
        self,
        settings: ControllerSettings,
        now: float,
        voter_contact: Mapping[int, float] | None = None,
        raft_round_s: float = 1.0,
    ) -> None:
        """`voter_contact`: when this controller last heard from each other voter over Raft (kept up
        to date by the caller); `raft_round_s`: the time within which every live voter answers a new
        leader (the election timeout: heartbeats go out ten times in it)."""
        self.settings = settings
        self._last_heartbeat: dict[int, float] = {}
        self._active_since = now
        self._voter_contact = voter_contact if voter_contact is not None else {}
        self._raft_round_s = raft_round_s

    def _last_contact(self, broker_id: int) -> float:
        """A new active controller has heard from no broker yet. As in Kafka's KRaft, each gets a whole
        session from the moment this controller became active to find it: a live broker may have been
        waiting on the previous controller until then. Except a broker that shares its process with
        another voter (a combined node has one id for both roles): that voter's Raft messages say when
        the process was last alive, so a broker that died with the previous controller is fenced a
        session after it died, as any dead broker is, not a session after the election (nor before a
        Raft round since the election)."""
        heard = self._last_heartbeat.get(broker_id)
        if heard is not None:
            return heard
        process_alive = self._voter_contact.get(broker_id)
        if process_alive is not None:
            # Followers do not talk to each other: a live voter's earlier silence says nothing until it
            # has had a Raft round to answer this leader, so never fence before that round is over.
            earliest = self._active_since + self._raft_round_s - self.settings.session_timeout_s
            return min(self._active_since, max(process_alive, earliest))
        return self._active_since

    def touch(self, image: MetadataImage, broker_id: int, broker_epoch: int, now: float) -> None:
        """A heartbeat of the current registration arrived (before it is decided on): the broker is
        alive, however long the answer then waits for earlier writes."""
        broker = image.brokers.get(broker_id)
        if broker is not None and broker.epoch == broker_epoch:
            self._last_heartbeat[broker_id] = max(now, self._last_heartbeat.get(broker_id, now))

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
        records = [rec.RegisterBrokerRecord(broker_id, incarnation_id, tuple(endpoints), rack)]
        if not image.features:
            # A fresh cluster: its first broker finalizes the default feature levels (Kafka writes them when
            # the storage is formatted), so that a later release's defaults never change a running cluster.
            levels = {**default_levels(), KRAFT_VERSION: self.settings.kraft_version}
            records.extend(rec.FeatureLevelRecord(name, level) for name, level in sorted(levels.items()))
            # Kafka 4's controller records a cluster-level min.insync.replicas when a cluster is created with
            # eligible leader replicas (KIP-966), so every topic names it as a DYNAMIC_DEFAULT_BROKER_CONFIG
            # synonym; ours records the same, and the value stays the cluster's until someone changes it.
            records.append(
                rec.ConfigRecord("broker", "", "min.insync.replicas", str(self.settings.min_insync_replicas))
            )
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
            records = [rec.BeginControlledShutdownRecord(broker_id, broker.epoch)]
            records.extend(self._partition_changes_without(image, broker_id))
            return Decision(records)
        if want_shutdown and self.should_shut_down(image, broker_id):
            # Done moving leadership: fenced now, so a restart may register again at once.
            return Decision([rec.FenceBrokerRecord(broker_id, broker.epoch)])
        if want_fence and not broker.fenced:
            return Decision(
                [
                    rec.FenceBrokerRecord(broker_id, broker.epoch),
                    *self._partition_changes_without(image, broker_id),
                ]
            )
        # Unfence once the broker has caught up with the log up to its own registration.
        if broker.fenced and not want_fence and not want_shutdown and metadata_offset >= broker.epoch:
            return Decision(
                [
                    rec.UnfenceBrokerRecord(broker_id, broker.epoch),
                    *self._leaders_for_returning(image, broker_id),
                ]
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
                records = [rec.FenceBrokerRecord(broker.broker_id, broker.epoch)]
                return Decision(records + self._partition_changes_without(image, broker.broker_id))
        return Decision()

    # --- leadership ----------------------------------------------------------------------------

    def _unclean_allowed(self, image: MetadataImage, topic_id: uuid.UUID) -> bool:
        value = image.topics[topic_id].configs.get("unclean.leader.election.enable")
        if value is None:
            # The cluster-wide dynamic default (AlterConfigs on broker ""), else the properties file.
            value = image.broker_configs.get("", {}).get("unclean.leader.election.enable")
        if value is None:
            return self.settings.unclean_leader_election
        return value.lower() == "true"

    def _partition_changes_without(self, image: MetadataImage, broker_id: int) -> list[MetadataRecord]:
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
                records.append(self._leader_and_isr_change(image, p, leader, isr))
        return records

    def _leader_and_isr_change(
        self, image: MetadataImage, p: PartitionAssignment, leader: int, isr: Sequence[int]
    ) -> rec.PartitionChangeRecord:
        # An unclean election can put the last adding replica in the ISR: then the move ends too.
        staged = replace(p, leader=leader, isr=tuple(isr))
        completion = self._complete_reassignment(image, staged, isr, base=p)
        return completion or rec.PartitionChangeRecord(p.topic_id, p.partition, leader=leader, isr=tuple(isr))

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

    def _leaders_for_returning(self, image: MetadataImage, broker_id: int) -> list[MetadataRecord]:
        """Leaderless partitions this broker can lead once it is unfenced."""
        records = []
        for p in image.partitions():
            if p.leader != NO_LEADER or broker_id not in p.replicas:
                continue
            if broker_id in p.isr:
                records.append(rec.PartitionChangeRecord(p.topic_id, p.partition, leader=broker_id))
            elif self._unclean_allowed(image, p.topic_id) and not any(image.is_usable(b) for b in p.isr):
                records.append(self._leader_and_isr_change(image, p, broker_id, [broker_id]))
        return records

    def elect_leaders(
        self, image: MetadataImage, election_type: int, partitions: Sequence[tuple[str, int]] | None = None
    ) -> Decision:
        """ElectLeaders: PREFERRED moves leadership to the first replica when it is usable and in
        sync; UNCLEAN elects a leader for a leaderless partition, from outside the ISR if it must.
        None means every partition, and then partitions needing no election are not reported."""
        results = []
        records = []
        if partitions is None:
            wanted = [(p.topic, p.partition) for p in image.partitions()]
        else:
            wanted = list(dict.fromkeys(partitions))
        for topic, index in wanted:
            found = _find_partition(image, topic, index)
            if isinstance(found, PartitionResult):
                results.append(found)
                continue
            record, code = self._elect(image, found, election_type)
            if record is not None:
                records.append(record)
            if partitions is not None or code != ErrorCode.election_not_needed:
                results.append(PartitionResult(topic, index, code.value))
        return Decision(records, results=results)

    def _elect(
        self, image: MetadataImage, p: PartitionAssignment, election_type: int
    ) -> tuple[rec.PartitionChangeRecord | None, ErrorCode]:
        if election_type == ELECTION_PREFERRED:
            preferred = p.replicas[0] if p.replicas else NO_LEADER
            if p.leader == preferred:
                return None, ErrorCode.election_not_needed
            if preferred in p.isr and image.is_usable(preferred):
                return rec.PartitionChangeRecord(p.topic_id, p.partition, leader=preferred), ErrorCode.none
            return None, ErrorCode.preferred_leader_not_available
        if p.leader != NO_LEADER:
            return None, ErrorCode.election_not_needed
        for broker_id in p.replicas:
            if broker_id in p.isr and image.is_usable(broker_id):
                return rec.PartitionChangeRecord(p.topic_id, p.partition, leader=broker_id), ErrorCode.none
        for broker_id in p.replicas:
            if image.is_usable(broker_id):
                # Unclean: the new leader's log defines the partition from now on.
                return self._leader_and_isr_change(image, p, broker_id, [broker_id]), ErrorCode.none
        return None, ErrorCode.eligible_leaders_not_available

    def elect_preferred_leaders(
        self, image: MetadataImage, partitions: Sequence[tuple[str, int]] | None = None
    ) -> Decision:
        """Move leadership back to each partition's first replica where it is usable and in sync;
        None means every partition."""
        return self.elect_leaders(image, ELECTION_PREFERRED, partitions)

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
        # The leader adds replicas to the ISR as they catch up: the moment a reassignment may end.
        completion = self._complete_reassignment(image, p, new_isr)
        if completion is not None:
            return Decision([completion])
        return Decision([rec.PartitionChangeRecord(p.topic_id, p.partition, isr=tuple(new_isr))])

    def alter_partitions(
        self, image: MetadataImage, requests: Sequence[AlterPartitionRequest]
    ) -> tuple[list[MetadataRecord], list[Decision]]:
        """Many leaders' AlterPartitions decided in one pass (one metadata-log entry for all of
        them): the records of every accepted change, and each request's own decision. The
        requests must name distinct partitions (each is judged against the same image)."""
        records: list[MetadataRecord] = []
        decisions = []
        for request in requests:
            decision = self.alter_partition(image, request)
            records.extend(decision.records)
            decisions.append(decision)
        return records, decisions

    # --- reassignments (KIP-455) -------------------------------------------------------------

    def reassign_partitions(
        self,
        image: MetadataImage,
        reassignments: Sequence[tuple[str, int, Sequence[int] | None]],
        allow_replication_factor_change: bool = True,
    ) -> Decision:
        """AlterPartitionReassignments: each (topic, partition, target replicas or None to cancel)
        gets a result; the records start, change, cancel or at once complete the reassignments.
        Without `allow_replication_factor_change` (KIP-860) a target must keep the replica count."""
        records = []
        results = []
        counts = Counter((topic, index) for topic, index, _ in reassignments)
        for topic, index, target in reassignments:
            if counts[(topic, index)] > 1:
                results.append(
                    PartitionResult(
                        topic, index, ErrorCode.invalid_request.value, "the partition is listed twice"
                    )
                )
                continue
            found = _find_partition(image, topic, index)
            if isinstance(found, PartitionResult):
                results.append(found)
                continue
            if (
                not allow_replication_factor_change
                and target is not None
                and len(target) != len(found.original_replicas)
            ):
                message = "the request does not allow changing the replication factor"
                results.append(
                    PartitionResult(topic, index, ErrorCode.invalid_replication_factor.value, message)
                )
                continue
            record, code, message = self._reassign(image, found, target)
            if record is not None:
                records.append(record)
            results.append(PartitionResult(topic, index, code.value, message))
        return Decision(records, results=results)

    def _reassign(
        self, image: MetadataImage, p: PartitionAssignment, target: Sequence[int] | None
    ) -> tuple[rec.PartitionChangeRecord | None, ErrorCode, str | None]:
        original = p.original_replicas
        if target is None:
            if not p.is_reassigning:
                # Kafka answers this one with the error code alone (its error message is null).
                return None, ErrorCode.no_reassignment_in_progress, None
            wanted = original
        else:
            wanted = tuple(target)
            problem = _target_problem(image, wanted)
            if problem:
                return None, ErrorCode.invalid_replica_assignment, problem
        if not p.is_reassigning and wanted == p.replicas:
            return None, ErrorCode.none, ""
        # A new target replaces an ongoing reassignment: it starts again from the original replicas.
        replicas = (*wanted, *(b for b in original if b not in wanted))
        adding = tuple(b for b in wanted if b not in original)
        removing = tuple(b for b in original if b not in wanted)
        isr = tuple(b for b in p.isr if b in replicas)
        if not isr:
            # Only possible when earlier-added replicas alone were in sync: they must not be dropped.
            return None, ErrorCode.invalid_replica_assignment, "no in-sync replica would remain"
        staged = replace(p, replicas=replicas, isr=isr, adding_replicas=adding, removing_replicas=removing)
        record = self._complete_reassignment(image, staged, isr, base=p)
        if record is None:
            leader = p.leader if p.leader in isr else _first_usable_in_sync(image, replicas, isr)
            record = rec.PartitionChangeRecord(
                p.topic_id,
                p.partition,
                leader=leader,
                isr=tuple(isr),
                replicas=tuple(replicas),
                adding_replicas=tuple(adding),
                removing_replicas=tuple(removing),
            )
        return record, ErrorCode.none, ""

    def _complete_reassignment(
        self,
        image: MetadataImage,
        p: PartitionAssignment,
        isr: Sequence[int],
        base: PartitionAssignment | None = None,
    ) -> rec.PartitionChangeRecord | None:
        """The record ending `p`'s reassignment once every adding replica is in `isr`, or None.

        The target replicas become the replicas, the ISR keeps only them, and a removed leader
        hands over to the first usable in-sync target replica (a leader epoch bump).
        `base` is the committed partition the record applies to when `p` is only staged."""
        if not p.is_reassigning or any(b not in isr for b in p.adding_replicas):
            return None
        target = p.target_replicas
        new_isr = [b for b in isr if b in target]
        if not new_isr:
            return None  # wait until a target replica is in sync
        leader = p.leader
        if leader not in new_isr:
            leader = _first_usable_in_sync(image, target, new_isr)
            if leader == NO_LEADER and p.leader != NO_LEADER:
                return None  # keep the current leader until a target replica can take over
        current = base or p
        return rec.PartitionChangeRecord(
            p.topic_id,
            p.partition,
            leader=leader if leader != current.leader else None,
            isr=tuple(new_isr),
            replicas=target,
            adding_replicas=(),
            removing_replicas=(),
        )

    def list_reassignments(
        self, image: MetadataImage, partitions: Sequence[tuple[str, int]] | None = None
    ) -> list[PartitionAssignment]:
        """Partitions with a reassignment in progress (of those listed; None: all)."""
        wanted = None if partitions is None else set(partitions)
        return [
            p
            for p in image.partitions()
            if p.is_reassigning and (wanted is None or (p.topic, p.partition) in wanted)
        ]

    def unregister_broker(self, image: MetadataImage, broker_id: int) -> Decision:
        """Forget a broker for good (it was removed from the cluster): only a stopped (fenced)
        broker that no partition lists as a replica, so nothing is left pointing at it."""
        broker = image.brokers.get(broker_id)
        if broker is None:
            return refuse(ErrorCode.broker_id_not_registered, f"broker {broker_id} is not registered")
        if not broker.fenced:
            return refuse(
                ErrorCode.invalid_request,
                f"broker {broker_id} is running: stop it before unregistering it",
            )
        hosted = [f"{p.topic}-{p.partition}" for p in image.partitions() if broker_id in p.replicas]
        if hosted:
            return refuse(
                ErrorCode.invalid_request,
                f"broker {broker_id} is still a replica of {len(hosted)} partition(s), e.g. {hosted[0]}: "
                "reassign them first",
            )
        self._last_heartbeat.pop(broker_id, None)
        return Decision([rec.UnregisterBrokerRecord(broker_id)])

    # --- topics and configs ------------------------------------------------------------------

    def create_topic(self, image: MetadataImage, request: TopicRequest) -> Decision:
        problem = topic_name_problem(request.name)
        if problem:
            return refuse(ErrorCode.invalid_topic_exception, problem)
        if request.name in image.topic_ids:
            # Kafka's text (kafka-topics prints it).
            return refuse(ErrorCode.topic_already_exists, f"Topic '{request.name}' already exists.")
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
        if request.assignments:
            problem = manual_placement_problem(image, request.assignments)
            if problem:
                return refuse(ErrorCode.invalid_replica_assignment, problem)
            placements = list(request.assignments)
        else:
            try:
                placements = self._place(image, count, factor)
            except PlacementError as exc:
                return refuse(ErrorCode.invalid_replication_factor, str(exc))
        topic_id = uuid.uuid4()
        records = [rec.TopicRecord(request.name, topic_id, request.internal)]
        for index, replicas in enumerate(placements):
            records.append(new_partition(image, topic_id, index, replicas))
        records.extend(
            rec.ConfigRecord("topic", request.name, k, v) for k, v in sorted(request.configs.items())
        )
        return Decision(records)

    def _place(self, image: MetadataImage, count: int, factor: int) -> list[tuple[int, ...]]:
        candidates = [Candidate(b.broker_id, b.rack) for b in image.unfenced_brokers()]
        return place_partitions(candidates, count, factor, image.partitions())

    def delete_topic(self, image: MetadataImage, name: str) -> Decision:
        topic = image.topic_by_name(name)
        if topic is None:
            return refuse(ErrorCode.unknown_topic_or_partition, f"topic {name!r} does not exist")
        return Decision([rec.RemoveTopicRecord(topic.topic_id)])

    def create_partitions(
        self,
        image: MetadataImage,
        name: str,
        total: int,
        assignments: tuple[tuple[int, ...], ...] = (),
    ) -> Decision:
        topic = image.topic_by_name(name)
        if topic is None:
            return refuse(ErrorCode.unknown_topic_or_partition, f"topic {name!r} does not exist")
        current = len(topic.partitions)
        if total <= current:
            return refuse(ErrorCode.invalid_partitions, f"topic {name!r} already has {current} partitions")
        factor = len(topic.partitions[0].target_replicas) if topic.partitions else 1
        if assignments:
            if len(assignments) != total - current:
                return refuse(
                    ErrorCode.invalid_replica_assignment,
                    f"{total - current} new partitions but {len(assignments)} assignments",
                )
            problem = manual_placement_problem(image, assignments, factor)
            if problem:
                return refuse(ErrorCode.invalid_replica_assignment, problem)
            placements = list(assignments)
        else:
            try:
                placements = self._place(image, total - current, factor)
            except PlacementError as exc:
                return refuse(ErrorCode.invalid_replication_factor, str(exc))
        return Decision(
            [new_partition(image, topic.topic_id, current + i, r) for i, r in enumerate(placements)]
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
        if resource_type not in ("topic", "broker", "group", "client_metrics"):
            return refuse(ErrorCode.invalid_request, f"unknown resource type {resource_type!r}")
        return Decision(
            [rec.ConfigRecord(resource_type, resource_name, k, v) for k, v in sorted(changes.items())]
        )

    def update_features(
        self, image: MetadataImage, updates: Sequence[FeatureUpdate], validate_only: bool, node_id: int
    ) -> Decision:
        """UpdateFeatures: all the updates or none (INVALID_UPDATE_VERSION naming the refused feature)."""
        current = {**default_levels(), **image.features}
        try:
            proposed = plan_update(current, updates, f"Local controller {node_id}")
        except FeatureUpdateError as exc:
            return refuse(ErrorCode.invalid_update_version, str(exc))
        if validate_only:
            return Decision()
        changed = dict.fromkeys(u.feature for u in updates)
        return Decision([rec.FeatureLevelRecord(name, proposed[name]) for name in changed])

    def security_change(self, records: Sequence[MetadataRecord]) -> Decision:
        """ACL, SCRAM and quota changes, decided by the receiving broker's handlers."""
        for record in records:
            if not isinstance(record, SecurityRecord):
                return refuse(ErrorCode.invalid_request, f"not a security record: {record.TYPE!r}")
        return Decision(list(records))

    def allocate_producer_ids(self, image: MetadataImage, broker_id: int, broker_epoch: int) -> Decision:
        broker = image.brokers.get(broker_id)
        if broker is None or broker.epoch != broker_epoch:
            return refuse(ErrorCode.stale_broker_epoch)
        return Decision([rec.ProducerIdsRecord(broker_id, image.next_producer_id + PRODUCER_ID_BLOCK)])


def _find_partition(image: MetadataImage, topic: str, index: int) -> PartitionAssignment | PartitionResult:
    found = image.topic_by_name(topic)
    if found is None or index not in found.partitions:
        return PartitionResult(
            topic, index, ErrorCode.unknown_topic_or_partition.value, f"no partition {topic}-{index}"
        )
    return found.partitions[index]


def _first_usable_in_sync(image: MetadataImage, replicas: Sequence[int], isr: Sequence[int]) -> int:
    """A clean leader for a reassigned partition: never one outside the ISR it gets."""
    return next((b for b in replicas if b in isr and image.is_usable(b)), NO_LEADER)


def _target_problem(image: MetadataImage, target: Sequence[int]) -> str | None:
    """Why a reassignment target is invalid (INVALID_REPLICA_ASSIGNMENT), or None."""
    if not target:
        return "the target replica list is empty"
    if len(set(target)) != len(target):
        return f"the target replicas {list(target)} contain a broker twice"
    unknown = sorted(b for b in target if b not in image.brokers)
    if unknown:
        return f"the target replicas include unregistered brokers {unknown}"
    return None


def manual_placement_problem(
    image: MetadataImage, assignments: Sequence[Sequence[int]], factor: int | None = None
) -> str | None:
    """Why explicit replica lists cannot be used (Kafka's INVALID_REPLICA_ASSIGNMENT), or None."""
    sizes = {len(replicas) for replicas in assignments}
    if 0 in sizes or len(sizes) != 1:
        return "every partition needs the same, non-zero number of replicas"
    if factor is not None and sizes != {factor}:
        return f"the topic's replication factor is {factor}"
    for replicas in assignments:
        if len(set(replicas)) != len(replicas):
            return f"duplicate brokers in {list(replicas)}"
        unknown = sorted(b for b in replicas if b not in image.brokers)
        if unknown:
            return f"unknown broker ids {unknown}"
        if not any(image.is_usable(b) for b in replicas):
            return f"no live broker among {list(replicas)}"
    return None


def new_partition(
    image: MetadataImage, topic_id: uuid.UUID, index: int, replicas: Sequence[int]
) -> rec.PartitionRecord:
    """A new partition led by its first live replica; its ISR is its live replicas."""
    live = tuple(b for b in replicas if image.is_usable(b)) or tuple(replicas)
    return rec.PartitionRecord(topic_id, index, tuple(replicas), live, live[0])


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
