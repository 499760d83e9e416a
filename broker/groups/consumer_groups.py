"""Consumer-protocol (KIP-848) groups: the `ConsumerGroups` component of the group coordinator.

It serves ConsumerGroupHeartbeat and ConsumerGroupDescribe, and answers the coordinator's hooks
(broker/groups/group_type.py). A consumer group's committed offsets live where a classic group's do: in
the classic entry of the same id, which for a consumer group is an Empty classic group holding only
offsets (so OffsetCommit/OffsetFetch/expiry write and read them the one way, in Kafka's format). A
consumer group only brings its own check of the committing (or, OffsetFetch v9, fetching) member: its
member epoch (STALE_MEMBER_EPOCH / UNKNOWN_MEMBER_ID).

Conversions between the classic and the consumer protocol, and the classic members of a consumer group,
are `ClassicMembers`' (broker/groups/consumer_migration.py). The group's state is written to
`__consumer_offsets` as Kafka's record types 3-8 (broker/groups/consumer_store.py) and rebuilt from
them when the coordinator loads the partition.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kio.schema.errors import ErrorCode

from broker.groups import consumer_records as records
from broker.groups.assignors import ASSIGNORS, NO_RACKS, Assignment, AssignmentMember, PartitionRacks
from broker.groups.clock import Timer
from broker.groups.consumer_config import (
    CONSUMER_GROUP_TYPE,
    CONSUMER_PROTOCOL_TYPE,
    ConsumerGroupConfig,
    ConsumerGroupDescription,
    ConsumerMemberDescription,
    HeartbeatResult,
    ReplicaRacks,
    TopicCatalog,
    TopicFilter,
    apply_heartbeat_fields,
    catalog_fingerprint,
    heartbeat_error,
    invalid_heartbeat,
    known_member,
    resolve_regexes,
)
from broker.groups.consumer_group import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    GroupSnapshot,
    MemberState,
    reconcile,
    restore,
    snapshot,
)
from broker.groups.consumer_migration import ClassicMembers
from broker.groups.consumer_store import desired_records, groups_from_records
from broker.groups.group import Group, GroupState, JoinResult, SyncResult
from broker.groups.group_type import ClassicJoin, GroupDescription, ListedGroup, OffsetCommitter
from broker.groups.offsets_format import OffsetsFormatError
from broker.groups.rate_limited_log import RateLimitedLog

if TYPE_CHECKING:
    from broker.groups.coordinator import GroupCoordinator

log = logging.getLogger(__name__)


class ConsumerGroups:
    """The consumer-protocol groups of a group coordinator (it adds itself to the coordinator's group types)."""

    type_name = CONSUMER_GROUP_TYPE

    def __init__(
        self,
        coordinator: GroupCoordinator,
        config: ConsumerGroupConfig | None = None,
        *,
        topic_catalog: TopicCatalog | None = None,
        replica_racks: ReplicaRacks | None = None,
    ) -> None:
        self._coordinator = coordinator
        self._classic = coordinator.classic
        self.config = config or ConsumerGroupConfig()
        self.topic_catalog: TopicCatalog = topic_catalog or dict
        self.replica_racks: ReplicaRacks = replica_racks or (lambda _topic, _partition: frozenset())
        self.groups: dict[str, ConsumerGroup] = {}
        self.migration = ClassicMembers(self, coordinator)
        # Requests refused as invalid are logged with the rule that fired, a few lines a minute.
        self.refusals = RateLimitedLog(logging.getLogger(__name__))
        # Consumer group records read while replaying a partition: key bytes -> value (None: tombstone).
        self._replayed: dict[int, dict[bytes, bytes | None]] = {}
        coordinator.add_group_type(self)

    # --- ConsumerGroupHeartbeat --------------------------------------------------------------

    async def heartbeat(
        self,
        *,
        group_id: str,
        member_id: str,
        member_epoch: int,
        instance_id: str | None,
        rack_id: str | None,
        rebalance_timeout_ms: int,
        subscribed_topic_names: Sequence[str] | None,
        subscribed_topic_regex: str | None,
        server_assignor: str | None,
        owned: Assignment | None,
        client_id: str,
        client_host: str,
        may_describe: TopicFilter | None = None,
        api_version: int = 1,
    ) -> HeartbeatResult:
        """`may_describe`: whether the requester may DESCRIBE a topic (None: ACLs are off); the
        topics a regex subscription resolves to are only those it may."""
        error = self._coordinator.availability_error(group_id)
        if error is not None:
            return heartbeat_error(error)
        invalid = invalid_heartbeat(
            self.config, group_id, member_id, member_epoch, instance_id, rack_id, rebalance_timeout_ms,
            subscribed_topic_names, subscribed_topic_regex, server_assignor, owned, api_version,
        )  # fmt: skip
        if invalid is not None:
            if invalid.error_code == ErrorCode.invalid_request:
                self.refusals.warning(
                    "group %s: ConsumerGroupHeartbeat v%d of member %r (epoch %d, client %r at %s) refused "
                    "with INVALID_REQUEST: %s",
                    group_id, api_version, member_id, member_epoch, client_id, client_host,
                    invalid.error_message,
                )  # fmt: skip
            return invalid
        if member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return await self._leave(group_id, member_id, member_epoch, instance_id)
        group = self.groups.get(group_id)
        if group is None:
            if member_epoch != JOIN_EPOCH:
                return heartbeat_error(ErrorCode.unknown_member_id, f"unknown group {group_id}")
            classic = self._classic.groups.get(group_id)
            if classic is not None and not _classic_group_is_empty(classic):
                refusal = self.migration.upgrade_refusal(classic)
                if refusal is not None:
                    return heartbeat_error(ErrorCode.group_id_not_found, refusal)
                group = self.groups[group_id] = self.migration.upgrade(classic)
                # The classic group stays as the empty holder of the offsets: written first, so
                # that a coordinator failing in between finds no classic members to serve twice.
                append_error = await self._classic.store(classic)
                if append_error is not None:
                    return heartbeat_error(append_error)
            else:
                group = self.groups[group_id] = ConsumerGroup(group_id)
                log.info("group %s: created as a consumer-protocol group", group_id)
        joined = member_epoch == JOIN_EPOCH
        epoch_before = group.group_epoch
        saved = snapshot(group)
        if joined:
            member_or_error = self.join(group, member_id, instance_id)
        else:
            member_or_error = known_member(group, member_id, member_epoch, owned)
        if isinstance(member_or_error, HeartbeatResult):
            return member_or_error
        member = member_or_error
        assigned_before = member.assigned
        apply_heartbeat_fields(
            group, member, instance_id, rack_id, rebalance_timeout_ms, subscribed_topic_names,
            subscribed_topic_regex, server_assignor, client_id, client_host,
        )  # fmt: skip
        self._maybe_refresh_regexes(group, may_describe)
        self.refresh_subscribed_topics(group)
        # One heartbeat's changes (a join, its subscription, the topics it brings) are one epoch.
        group.group_epoch = min(group.group_epoch, epoch_before + 1)
        self.maybe_compute_target(group)
        if reconcile(group, member, owned):
            self.on_member_state_changed(group, member)
        self.schedule_session_timeout(group, member)
        append_error = await self.store(group)
        if append_error is not None:
            # Unless the group was written again meanwhile: that state builds on this one's, which stays (and
            # its records are sent again by the next write).
            if group.writes == saved.writes + 1:
                self._undo(group, saved)
            return heartbeat_error(append_error, member_id=member.member_id)
        send_assignment = (
            joined or member.assigned != assigned_before or (owned is not None and owned != member.assigned)
        )
        return HeartbeatResult(
            ErrorCode.none,
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.config.heartbeat_interval_ms,
            assignment=member.assigned if send_assignment else None,
        )

    def _undo(self, group: ConsumerGroup, saved: GroupSnapshot) -> None:
        """A heartbeat whose records were not written leaves the group as the log has it."""
        states = {member_id: member.state for member_id, member in group.members.items()}
        for member in restore(group, saved):
            self.cancel_member_timers(member)
        for member_id, member in group.members.items():
            if states.get(member_id) is not member.state:
                self.on_member_state_changed(group, member)
            if member.session_timer is None:  # a member this heartbeat replaced is back, with a new session
                self.schedule_session_timeout(group, member)
        log.info(
            "group %s: a heartbeat's records were not written; back to group epoch %d",
            group.group_id, group.group_epoch,
        )  # fmt: skip

    def join(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> ConsumerMember | HeartbeatResult:
        member_id = member_id or str(uuid.uuid4())  # v0 clients let the coordinator choose
        if instance_id is not None and instance_id in group.static_members:
            previous_id = group.static_members[instance_id]
            previous = group.members[previous_id]
            if previous_id != member_id and previous.member_epoch != STATIC_LEAVE_EPOCH:
                return heartbeat_error(
                    ErrorCode.unreleased_instance_id,
                    f"static member {instance_id} is still in use by member {previous_id}",
                    member_id=member_id,
                )
            # KIP-848 static membership: the returning instance takes over its partitions and epoch.
            self.cancel_member_timers(previous)
            group.remove_member(previous_id)
            target = group.target.pop(previous_id, {})
            previous.member_id = member_id
            previous.member_epoch = (
                previous.previous_member_epoch if previous.member_epoch < 0 else previous.member_epoch
            )
            group.add_member(previous)
            group.target[member_id] = target
            return previous
        existing = group.members.get(member_id)
        if existing is not None and existing.classic is None:
            # Kafka 4.2: epoch 0 from a known member is not fenced; the member carries on with its
            # epoch and target and is sent its whole assignment (it rejoined with nothing owned).
            log.info(
                "group %s: member %s rejoins with epoch 0 and keeps its place", group.group_id, member_id
            )
            return existing
        if existing is not None:
            self.remove_member(group, existing)
        if len(group.members) >= self.config.max_size:
            return heartbeat_error(
                ErrorCode.group_max_size_reached,
                f"the consumer group has reached its maximum capacity of {self.config.max_size} members",
                member_id=member_id,
            )
        member = ConsumerMember(member_id=member_id, instance_id=instance_id)
        group.add_member(member)
        group.group_epoch += 1
        return member

    def _maybe_refresh_regexes(self, group: ConsumerGroup, may_describe: TopicFilter | None) -> None:
        """Kafka's `maybeUpdateRegularExpressions`: the group's regexes are resolved again, in the
        background (the heartbeat that asks is answered without waiting), when one is new, when a
        topic was created or deleted since they were, or when they are older than
        `group.consumer.regex.refresh.interval.ms`; the result bumps the group epoch if it changed
        what they match, so every member gets its new target on its next heartbeat. Kafka waits
        10 s between two refreshes of a group; here a group is refreshed at most once per heartbeat
        interval (a new regex at once), so created topics are assigned within a heartbeat or two."""
        subscribed = group.subscribed_regexes()
        for pattern in group.resolved_regexes.keys() - subscribed:
            del group.resolved_regexes[pattern]  # nobody subscribes to it any more
        if not subscribed or group.regex_refresh_pending:
            return
        now = self._coordinator.clock.now_ms()
        resolved_at = group.regexes_resolved_at_ms
        unresolved = bool(subscribed - group.resolved_regexes.keys())
        if not unresolved:
            if resolved_at is not None and now < resolved_at + self.config.heartbeat_interval_ms:
                return
            expired = resolved_at is None or now >= resolved_at + self.config.regex_refresh_interval_ms
            if not expired and group.regexes_catalog == catalog_fingerprint(self.topic_catalog()):
                return
        group.regex_refresh_pending = True
        self._coordinator.spawn(self._refresh_regexes(group, may_describe))

    async def _refresh_regexes(self, group: ConsumerGroup, may_describe: TopicFilter | None) -> None:
        """Resolves every regex of the group against the topics the asking member may DESCRIBE
        (Kafka 4.0: a regex never reveals a topic its member could not describe)."""
        try:
            await asyncio.sleep(0)  # after the heartbeat that asked: it is answered with what was resolved
            if self.groups.get(group.group_id) is not group:
                return  # deleted, unloaded or replaced meanwhile
            catalog = self.topic_catalog()
            resolved = resolve_regexes(group.subscribed_regexes(), catalog, may_describe)
        finally:
            group.regex_refresh_pending = False
        group.regexes_resolved_at_ms = self._coordinator.clock.now_ms()
        group.regexes_catalog = catalog_fingerprint(catalog)
        changed = [
            p for p, topics in resolved.items() if topics != group.resolved_regexes.get(p, frozenset())
        ]
        group.resolved_regexes.update(resolved)
        epoch_before = group.group_epoch
        if changed:
            group.group_epoch += 1
            log.info(
                "group %s: regular expressions %s now match %s; group epoch %d",
                group.group_id, changed, sorted(set().union(*(resolved[p] for p in changed))), group.group_epoch,
            )  # fmt: skip
        self.refresh_subscribed_topics(group)
        group.group_epoch = min(group.group_epoch, epoch_before + 1)
        if group.group_epoch != epoch_before:
            await self.store(group)

    @staticmethod
    def subscribed_topic_ids(
        group: ConsumerGroup, member: ConsumerMember, catalog: Mapping[str, tuple[uuid.UUID, int]]
    ) -> frozenset[uuid.UUID]:
        names = set(member.subscribed_topic_names) | group.regex_topics(member)
        return frozenset(catalog[name][0] for name in names if name in catalog)

    def refresh_subscribed_topics(self, group: ConsumerGroup) -> None:
        """Bumps the group epoch when a subscribed topic appeared, vanished or grew."""
        catalog = self.topic_catalog()
        subscribed: dict[uuid.UUID, tuple[str, int]] = {}
        for member in group.members.values():
            for name in set(member.subscribed_topic_names) | group.regex_topics(member):
                if name in catalog:
                    topic_id, partitions = catalog[name]
                    subscribed[topic_id] = (name, partitions)
        if subscribed != group.subscribed_topics:
            group.subscribed_topics = subscribed
            group.group_epoch += 1

    def maybe_compute_target(self, group: ConsumerGroup) -> None:
        if group.assignment_epoch >= group.group_epoch:
            return
        catalog = self.topic_catalog()
        assignor_name = self.preferred_assignor(group)
        members = {
            member_id: AssignmentMember(
                subscribed=self.subscribed_topic_ids(group, member, catalog),
                current=group.target.get(member_id, {}),
                rack=member.rack_id or None,
            )
            for member_id, member in group.members.items()
        }
        partitions = {topic_id: count for topic_id, (_, count) in group.subscribed_topics.items()}
        group.target = ASSIGNORS[assignor_name].assign(members, partitions, self._partition_racks(group))
        group.assignor_name = assignor_name
        group.assignment_epoch = group.group_epoch
        log.debug(
            "group %s: target assignment at epoch %d by %s", group.group_id, group.group_epoch, assignor_name
        )

    def preferred_assignor(self, group: ConsumerGroup) -> str:
        """The server assignor most of the members ask for, else the first of `group.consumer.assignors`: what
        Kafka assigns with and what it describes (also for a group whose members have all left, or that a new
        coordinator loaded from the log)."""
        chosen = Counter(m.server_assignor for m in group.members.values() if m.server_assignor)
        return chosen.most_common(1)[0][0] if chosen else self.config.assignors[0]

    def _partition_racks(self, group: ConsumerGroup) -> PartitionRacks:
        """Where the subscribed partitions' replicas are, when a member said its rack (else the
        assignors need not know)."""
        if not any(member.rack_id for member in group.members.values()):
            return NO_RACKS
        racks: dict[tuple[uuid.UUID, int], frozenset[str]] = {}
        for topic_id, (name, count) in group.subscribed_topics.items():
            for partition in range(count):
                replica_racks = self.replica_racks(name, partition)
                if replica_racks:
                    racks[(topic_id, partition)] = replica_racks
        return racks

    def on_member_state_changed(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """Arms the revocation deadline (the member's rebalance timeout) while it owes partitions."""
        _cancel(member.revocation_timer)
        member.revocation_timer = None
        if member.state is MemberState.UNREVOKED_PARTITIONS and member.rebalance_timeout_ms > 0:
            member.revocation_timer = self._coordinator.call_later(
                group.group_id,
                member.rebalance_timeout_ms,
                lambda: self._on_revocation_timeout(group, member),
            )

    def _on_revocation_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if (
            group.members.get(member.member_id) is not member
            or member.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            return
        log.info(
            "group %s: member %s did not revoke its partitions in time; fenced",
            group.group_id,
            member.member_id,
        )
        self.remove_member(group, member)
        self._coordinator.spawn(self.migration.store_after_removal(group))

    def schedule_session_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        _cancel(member.session_timer)
        timeout = (
            member.classic.session_timeout_ms
            if member.classic is not None
            else self.config.session_timeout_ms
        )
        member.session_timer = self._coordinator.call_later(
            group.group_id, timeout, lambda: self._on_session_expired(group, member)
        )

    def _on_session_expired(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if group.members.get(member.member_id) is not member:
            return
        log.info("group %s: member %s session expired", group.group_id, member.member_id)
        self.remove_member(group, member)
        self._coordinator.spawn(self.migration.store_after_removal(group))

    def remove_member(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        self.cancel_member_timers(member)
        group.remove_member(member.member_id)
        group.group_epoch += 1
        # As Kafka deletes a resolved regex with its last member: one subscribed again is new and
        # resolved again (so the named topics of that subscription come first).
        for pattern in group.resolved_regexes.keys() - group.subscribed_regexes():
            del group.resolved_regexes[pattern]

    def cancel_member_timers(self, member: ConsumerMember) -> None:
        _cancel(member.session_timer)
        _cancel(member.revocation_timer)
        member.session_timer = member.revocation_timer = None

    async def _leave(
        self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None
    ) -> HeartbeatResult:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if group is None or member is None:
            return heartbeat_error(ErrorCode.unknown_member_id, f"member {member_id} is not in the group")
        if member_epoch == STATIC_LEAVE_EPOCH:
            # The instance keeps its partitions until it returns or its session expires.
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = STATIC_LEAVE_EPOCH
            self.schedule_session_timeout(group, member)
            append_error = await self.store(group)
        else:
            self.remove_member(group, member)
            append_error = await self.migration.store_after_removal(group)
        if append_error is not None:
            return heartbeat_error(append_error, member_id=member_id)
        return HeartbeatResult(ErrorCode.none, member_id=member_id, member_epoch=member_epoch)

    # --- ConsumerGroupDescribe ---------------------------------------------------------------

    def describe(self, group_id: str) -> ConsumerGroupDescription:
        error = self._coordinator.availability_error(group_id)
        if error is not None:
            return ConsumerGroupDescription(error, group_id)
        group = self.groups.get(group_id)
        if group is None:
            classic = (
                group_id in self._classic.groups and self._classic.groups[group_id].protocol_type is not None
            )
            message = (
                f"Group {group_id} is not a consumer group." if classic else f"Group {group_id} not found."
            )
            return ConsumerGroupDescription(ErrorCode.group_id_not_found, group_id, message)
        return ConsumerGroupDescription(
            ErrorCode.none,
            group_id,
            state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=self.preferred_assignor(group),
            members=tuple(
                ConsumerMemberDescription(
                    member, group.target.get(member.member_id, {}), group.regex_topics(member)
                )
                for member in group.members.values()
            ),
            topic_names=self.topic_names(group),
        )

    def topic_names(self, group: ConsumerGroup) -> dict[uuid.UUID, str]:
        names = {topic_id: name for topic_id, (name, _) in group.subscribed_topics.items()}
        names.update({topic_id: name for name, (topic_id, _) in self.topic_catalog().items()})
        return names

    # --- the coordinator's hooks (GroupType) -------------------------------------------------

    def holds(self, group_id: str) -> bool:
        return group_id in self.groups

    def committing_member_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        """A consumer group's check (Kafka's ConsumerGroup.validateOffsetCommit), for OffsetCommit
        and TxnOffsetCommit alike: without an epoch only an empty group's offsets may be committed
        (admin tools); a member commits with exactly its current epoch."""
        group = self.groups[group_id]
        if committer.generation_id < 0 and not group.members:
            return None
        return self._member_epoch_error(group, committer.member_id, committer.generation_id)

    def fetching_member_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int | None:
        """OffsetFetch v9 (Kafka's ConsumerGroup.validateOffsetFetch): a caller that names no member
        (admin tools, older versions) reads freely; a member must be in the group at its epoch."""
        if member_id is None and member_epoch < 0:
            return None
        return self._member_epoch_error(self.groups[group_id], member_id, member_epoch)

    @staticmethod
    def _member_epoch_error(group: ConsumerGroup, member_id: str | None, member_epoch: int) -> int | None:
        member = group.members.get(member_id) if member_id is not None else None
        if member is None:
            return ErrorCode.unknown_member_id
        if member_epoch != member.member_epoch:
            # A classic member knows its epoch as a generation (Kafka answers it ILLEGAL_GENERATION).
            return (
                ErrorCode.illegal_generation if member.classic is not None else ErrorCode.stale_member_epoch
            )
        return None

    def listed(self) -> list[ListedGroup]:
        return [
            ListedGroup(group_id, CONSUMER_PROTOCOL_TYPE, group.state.value, CONSUMER_GROUP_TYPE)
            for group_id, group in self.groups.items()
            if self._coordinator.owns_partition(self._coordinator.partition_for(group_id))
        ]

    async def classic_join(self, join: ClassicJoin) -> JoinResult | None:
        return await self.migration.join(join)

    def classic_sync(
        self, group_id: str, generation_id: int, member_id: str, protocol_name: str | None
    ) -> SyncResult | None:
        return self.migration.sync(group_id, generation_id, member_id, protocol_name)

    def classic_heartbeat(self, group_id: str, generation_id: int, member_id: str) -> int | None:
        return self.migration.heartbeat(group_id, generation_id, member_id)

    def classic_leave(self, group_id: str, members: Sequence[tuple[str, str | None]]) -> list[int] | None:
        return self.migration.leave(group_id, members)

    def describe_classic(self, group_id: str) -> GroupDescription | None:
        return self.migration.describe(group_id)

    def protected_topics(self, group_id: str) -> set[str] | None:
        """A consumer group with members keeps the offsets of the topics it subscribes to."""
        group = self.groups[group_id]
        return {name for name, _ in group.subscribed_topics.values()} if group.members else None

    def keeps_offsets(self, group_id: str) -> bool:
        """A live consumer group keeps its offsets."""
        return bool(self.groups[group_id].members)

    async def delete(self, group_id: str) -> int | None:
        group = self.groups[group_id]
        if group.members:
            return ErrorCode.non_empty_group
        error = await self.drop(group)
        if error is None:
            self._coordinator.offsets_holder(group_id)  # the classic entry goes too, offsets or not
        return error

    def replay(self, partition: int, key: bytes, value: bytes | None) -> bool:
        if records.decode_key(key) is None:
            return False
        self._replayed.setdefault(partition, {})[key] = value
        return True

    def partition_loaded(self, partition: int, serving: bool) -> None:
        replayed = self._replayed.pop(partition, {})
        if not serving:
            return
        for group in groups_from_records(replayed):
            if self._coordinator.partition_for(group.group_id) != partition:
                continue
            self.groups[group.group_id] = group
            for member in group.members.values():
                self.schedule_session_timeout(group, member)

    def drop_partition(self, partition: int) -> None:
        self._replayed.pop(partition, None)
        for group_id in [g for g in self.groups if self._coordinator.partition_for(g) == partition]:
            for member in self.groups.pop(group_id).members.values():
                self.cancel_member_timers(member)

    def release(self) -> None:
        for group in self.groups.values():
            for member in group.members.values():
                self.cancel_member_timers(member)

    # --- persistence ---------------------------------------------------------------------------

    async def store(self, group: ConsumerGroup, *, delete: bool = False) -> int | None:
        """Writes the records that changed since the last write (tombstones for what is gone)."""
        try:
            desired = {} if delete else desired_records(group)
        except OffsetsFormatError:
            # A client or instance id too long for Kafka's int16-length key strings.
            log.warning("group %s: state does not fit Kafka's record format", group.group_id)
            return ErrorCode.unknown_server_error
        changes: list[tuple[bytes, bytes | None]] = [(k, None) for k in group.written if k not in desired]
        # Member tombstones first, the group's own records last (Kafka's order for deletions).
        changes.sort(key=lambda change: -len(change[0]))
        changes += [(k, v) for k, v in desired.items() if group.written.get(k) != v]
        if not changes:
            return None
        previous, group.written = group.written, dict(desired)
        group.writes += 1
        error = await self._coordinator.append(self._coordinator.partition_for(group.group_id), changes)
        if error is not None:
            _forget_unwritten(group, previous, changes)
        return error

    async def drop(self, group: ConsumerGroup) -> int | None:
        error = await self.store(group, delete=True)
        if error is None and self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]
            log.info("group %s: consumer group removed (empty)", group.group_id)
        return error


def _forget_unwritten(
    group: ConsumerGroup, previous: Mapping[bytes, bytes], changes: Sequence[tuple[bytes, bytes | None]]
) -> None:
    """The records of a failed append are not in the log: the group's next write sends them again (a write
    made meanwhile computed its changes as if they were, so it did not carry them)."""
    for key, value in changes:
        if group.written.get(key) != value:
            continue  # a later write replaced it
        if key in previous:
            group.written[key] = previous[key]
        else:
            group.written.pop(key, None)


def _classic_group_is_empty(group: Group) -> bool:
    return group.is_(GroupState.EMPTY) and not group.members and not group.pending_members


def _cancel(timer: Timer | None) -> None:
    if timer is not None:
        timer.cancel()
