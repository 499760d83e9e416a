"""The group coordinator with consumer-protocol (KIP-848) groups beside the classic ones.

`ConsumerGroupCoordinator` extends the classic `GroupCoordinator` with ConsumerGroupHeartbeat
and ConsumerGroupDescribe. A consumer group's committed offsets live where a classic group's do:
in the classic coordinator's `groups` entry of the same id, which for a consumer group is an
Empty classic group holding only offsets (so OffsetCommit/OffsetFetch/expiry write and read
them the one way, in Kafka's format). The one commit path is the classic coordinator's; a consumer
group only brings its own check of the committing (or, OffsetFetch v9, fetching) member: its member
epoch (STALE_MEMBER_EPOCH / UNKNOWN_MEMBER_ID).

Conversions, as Kafka 4.0 does them (`group.consumer.migration.policy`): a consumer-protocol
member joining a classic group turns it into a consumer group (its offsets stay). A group with
members keeps them: they become classic members of the consumer group, served through JoinGroup,
SyncGroup and Heartbeat, their assignment computed by the server-side assignor (a Heartbeat answers
REBALANCE_IN_PROGRESS when a member's assignment must change; its JoinGroup moves it one step, its
SyncGroup hands the partitions over). When the last consumer-protocol member leaves a group of
classic members, it becomes a classic group again, which rebalances. An empty group converts
either way whatever the policy.

The group's state is written to `__consumer_offsets` as Kafka's record types 3-8
(broker/groups/consumer_records.py) and rebuilt from them when a coordinator loads the partition.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import re2
from kio.schema.errors import ErrorCode

from broker.groups import consumer_records as records
from broker.groups.assignors import ASSIGNORS, NO_RACKS, Assignment, AssignmentMember, PartitionRacks
from broker.groups.clock import Clock
from broker.groups.consumer_group import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    minus,
    reconcile,
)
from broker.groups.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_consumer_assignment,
    encode_consumer_subscription,
)
from broker.groups.coordinator import (
    DescribedMember,
    GroupCoordinator,
    GroupCoordinatorConfig,
    GroupDescription,
    JoinResult,
    ListedGroup,
    OffsetCommitter,
    OffsetsFormatError,
    is_valid_group_id,
)
from broker.groups.group import Group, GroupState, Member, SyncResult
from broker.groups.offsets_log import OffsetsLog
from broker.groups.rate_limited_log import RateLimitedLog

log = logging.getLogger(__name__)

CONSUMER_GROUP_TYPE = "consumer"
CONSUMER_PROTOCOL_TYPE = "consumer"
_REGEX_OPTIONS = re2.Options()
_REGEX_OPTIONS.log_errors = False  # a client's bad regex is answered, not logged by the library

# name -> (topic id, partition count) of every topic a subscription may name (internal ones excluded).
TopicCatalog = Callable[[], Mapping[str, tuple[uuid.UUID, int]]]
# Whether the requester may DESCRIBE a topic, by name.
TopicFilter = Callable[[str], bool]
# (topic name, partition) -> the racks of the brokers holding its replicas (empty: none known).
ReplicaRacks = Callable[[str, int], frozenset[str]]


@dataclass(frozen=True, slots=True)
class ConsumerGroupConfig:
    """Kafka's `group.consumer.*` broker settings."""

    session_timeout_ms: int = 45_000  # group.consumer.session.timeout.ms
    heartbeat_interval_ms: int = 5_000  # group.consumer.heartbeat.interval.ms
    max_size: int = 2**31 - 1  # group.consumer.max.size
    # group.consumer.regex.refresh.interval.ms: a group's regex resolutions older than this are
    # resolved again (they also are whenever a topic is created or deleted).
    regex_refresh_interval_ms: int = 600_000
    assignors: tuple[str, ...] = ("uniform", "range")  # group.consumer.assignors; the first is the default
    migration_policy: str = "bidirectional"  # group.consumer.migration.policy

    @property
    def upgrade_allowed(self) -> bool:
        return self.migration_policy in ("upgrade", "bidirectional")

    @property
    def downgrade_allowed(self) -> bool:
        return self.migration_policy in ("downgrade", "bidirectional")

    def __post_init__(self) -> None:
        unknown = [name for name in self.assignors if name not in ASSIGNORS]
        if unknown or not self.assignors:
            raise ValueError(
                f"group.consumer.assignors: unknown assignor(s) {unknown}, known: {sorted(ASSIGNORS)}"
            )


@dataclass(frozen=True, slots=True)
class HeartbeatResult:
    error_code: int
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = -1
    heartbeat_interval_ms: int = 0
    # topic id -> partitions; None when the member's assignment did not change
    assignment: Assignment | None = None


@dataclass(frozen=True, slots=True)
class ConsumerMemberDescription:
    member: ConsumerMember
    target: Assignment
    regex_topics: frozenset[str] = frozenset()  # what the group resolved the member's regex to


@dataclass(frozen=True, slots=True)
class ConsumerGroupDescription:
    error_code: int
    group_id: str
    error_message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[ConsumerMemberDescription, ...] = ()
    topic_names: Mapping[uuid.UUID, str] | None = None


def _heartbeat_error(code: int, message: str | None = None, member_id: str | None = None) -> HeartbeatResult:
    return HeartbeatResult(code, message, member_id=member_id)


def _catalog_fingerprint(names: Iterable[str]) -> int:
    return hash(frozenset(names))


def compile_subscription_regex(pattern: str) -> re2._Regexp:
    """An RE2 pattern, as Kafka's RE2/J takes it; raises re2.error for an invalid one."""
    return re2.compile(pattern, _REGEX_OPTIONS)


class ConsumerGroupCoordinator(GroupCoordinator):
    """Serves classic and consumer-protocol groups of the `__consumer_offsets` partitions it owns."""

    def __init__(
        self,
        log: OffsetsLog,
        config: GroupCoordinatorConfig | None = None,
        clock: Clock | None = None,
        *,
        owns_every_partition: bool = True,
        consumer_config: ConsumerGroupConfig | None = None,
        topic_catalog: TopicCatalog | None = None,
        replica_racks: ReplicaRacks | None = None,
    ) -> None:
        super().__init__(log, config, clock, owns_every_partition=owns_every_partition)
        self.consumer_config = consumer_config or ConsumerGroupConfig()
        self.topic_catalog: TopicCatalog = topic_catalog or dict
        self.replica_racks: ReplicaRacks = replica_racks or (lambda _topic, _partition: frozenset())
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        # Requests refused as invalid are logged with the rule that fired, a few lines a minute.
        self.refusals = RateLimitedLog(logging.getLogger(__name__))
        # Consumer group records read while replaying partitions: key bytes -> value (None: tombstone).
        self._replayed: dict[bytes, bytes | None] = {}

    # --- ConsumerGroupHeartbeat --------------------------------------------------------------

    async def consumer_heartbeat(
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
        error = self._availability_error(group_id)
        if error is not None:
            return _heartbeat_error(error)
        invalid = self._invalid_heartbeat(
            group_id, member_id, member_epoch, instance_id, rack_id, rebalance_timeout_ms,
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
        group = self.consumer_groups.get(group_id)
        if group is None:
            if member_epoch != JOIN_EPOCH:
                return _heartbeat_error(ErrorCode.unknown_member_id, f"unknown group {group_id}")
            classic = self.groups.get(group_id)
            if classic is not None and not self._classic_group_is_empty(classic):
                refusal = self._upgrade_refusal(classic)
                if refusal is not None:
                    return _heartbeat_error(ErrorCode.group_id_not_found, refusal)
                group = self.consumer_groups[group_id] = self._upgrade(classic)
                # The classic group stays as the empty holder of the offsets: written first, so
                # that a coordinator failing in between finds no classic members to serve twice.
                append_error = await self._store_group(classic)
                if append_error is not None:
                    return _heartbeat_error(append_error)
            else:
                group = self.consumer_groups[group_id] = ConsumerGroup(group_id)
                log.info("group %s: created as a consumer-protocol group", group_id)
        joined = member_epoch == JOIN_EPOCH
        epoch_before = group.group_epoch
        if joined:
            member_or_error = self._join(group, member_id, instance_id)
        else:
            member_or_error = self._known_member(group, member_id, member_epoch, owned)
        if isinstance(member_or_error, HeartbeatResult):
            return member_or_error
        member = member_or_error
        assigned_before = member.assigned
        self._apply_heartbeat_fields(
            group, member, instance_id, rack_id, rebalance_timeout_ms, subscribed_topic_names,
            subscribed_topic_regex, server_assignor, client_id, client_host,
        )  # fmt: skip
        self._maybe_refresh_regexes(group, may_describe)
        self._refresh_subscribed_topics(group)
        # One heartbeat's changes (a join, its subscription, the topics it brings) are one epoch.
        group.group_epoch = min(group.group_epoch, epoch_before + 1)
        self._maybe_compute_target(group)
        if reconcile(group, member, owned):
            self._on_member_state_changed(group, member)
        self._schedule_session_timeout(group, member)  # type: ignore[arg-type]
        append_error = await self._store_consumer_group(group)
        if append_error is not None:
            return _heartbeat_error(append_error, member_id=member.member_id)
        send_assignment = (
            joined or member.assigned != assigned_before or (owned is not None and owned != member.assigned)
        )
        return HeartbeatResult(
            ErrorCode.none,
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.consumer_config.heartbeat_interval_ms,
            assignment=member.assigned if send_assignment else None,
        )

    def _invalid_heartbeat(
        self,
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
        api_version: int,
    ) -> HeartbeatResult | None:
        """Kafka 4.2's request validation (GroupCoordinatorService), in its order and words:
        INVALID_REQUEST naming the rule, and the specific codes."""
        # From v1 the client chooses its member id (KIP-1082): only v0 joins without one.
        if (api_version >= 1 or member_epoch > 0 or member_epoch == LEAVE_EPOCH) and not member_id:
            return _heartbeat_error(ErrorCode.invalid_request, "MemberId can't be empty.")
        if not is_valid_group_id(group_id):
            return _heartbeat_error(ErrorCode.invalid_request, "GroupId can't be empty.")
        if instance_id == "":
            return _heartbeat_error(ErrorCode.invalid_request, "InstanceId can't be empty.")
        if rack_id == "":
            return _heartbeat_error(ErrorCode.invalid_request, "RackId can't be empty.")
        if member_epoch == JOIN_EPOCH:
            if rebalance_timeout_ms == -1:
                return _heartbeat_error(
                    ErrorCode.invalid_request, "RebalanceTimeoutMs must be provided in first request."
                )
            if owned is None or owned:
                return _heartbeat_error(
                    ErrorCode.invalid_request, "TopicPartitions must be empty when (re-)joining."
                )
            if subscribed_topic_names is None and subscribed_topic_regex is None:
                return _heartbeat_error(
                    ErrorCode.invalid_request,
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
                )
        elif member_epoch == STATIC_LEAVE_EPOCH and instance_id is None:
            return _heartbeat_error(ErrorCode.invalid_request, "InstanceId can't be null.")
        elif member_epoch < STATIC_LEAVE_EPOCH:
            return _heartbeat_error(ErrorCode.invalid_request, "MemberEpoch is invalid.")
        if server_assignor is not None and server_assignor not in self.consumer_config.assignors:
            return _heartbeat_error(
                ErrorCode.unsupported_assignor,
                f"ServerAssignor {server_assignor} is not supported. Supported assignors: "
                f"{', '.join(self.consumer_config.assignors)}.",
            )
        if subscribed_topic_regex is not None:
            try:
                compile_subscription_regex(subscribed_topic_regex)
            except re2.error as exc:
                reason = exc.args[0] if exc.args else "invalid"
                if isinstance(reason, bytes):
                    reason = reason.decode(errors="replace")
                return _heartbeat_error(
                    ErrorCode.invalid_regular_expression,
                    f"SubscribedTopicRegex `{subscribed_topic_regex}` is not a valid regular expression: "
                    f"{reason}.",
                )
        return None

    @staticmethod
    def _classic_group_is_empty(group: Group) -> bool:
        return group.is_(GroupState.EMPTY) and not group.members and not group.pending_members

    def _join(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> ConsumerMember | HeartbeatResult:
        member_id = member_id or str(uuid.uuid4())  # v0 clients let the coordinator choose
        if instance_id is not None and instance_id in group.static_members:
            previous_id = group.static_members[instance_id]
            previous = group.members[previous_id]
            if previous_id != member_id and previous.member_epoch != STATIC_LEAVE_EPOCH:
                return _heartbeat_error(
                    ErrorCode.unreleased_instance_id,
                    f"static member {instance_id} is still in use by member {previous_id}",
                    member_id=member_id,
                )
            # KIP-848 static membership: the returning instance takes over its partitions and epoch.
            self._cancel_member_timers(previous)
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
            self._remove_consumer_member(group, existing)
        if len(group.members) >= self.consumer_config.max_size:
            return _heartbeat_error(
                ErrorCode.group_max_size_reached,
                f"the consumer group has reached its maximum capacity of {self.consumer_config.max_size} members",
                member_id=member_id,
            )
        member = ConsumerMember(member_id=member_id, instance_id=instance_id)
        group.add_member(member)
        group.group_epoch += 1
        return member

    @staticmethod
    def _known_member(
        group: ConsumerGroup, member_id: str, member_epoch: int, owned: Assignment | None
    ) -> ConsumerMember | HeartbeatResult:
        member = group.members.get(member_id)
        if member is None:
            return _heartbeat_error(ErrorCode.unknown_member_id, f"member {member_id} is not in the group")
        if member_epoch == member.member_epoch:
            return member
        # The member missed our last answer: it may retry with its previous epoch while it owns
        # nothing it should not (Kafka's rule), any other epoch is fenced.
        if (
            member_epoch == member.previous_member_epoch
            and owned is not None
            and not minus(owned, member.assigned)
        ):
            return member
        return _heartbeat_error(
            ErrorCode.fenced_member_epoch,
            f"member epoch {member_epoch} is fenced, the current one is {member.member_epoch}",
        )

    @staticmethod
    def _apply_heartbeat_fields(
        group: ConsumerGroup,
        member: ConsumerMember,
        instance_id: str | None,
        rack_id: str | None,
        rebalance_timeout_ms: int,
        subscribed_topic_names: Sequence[str] | None,
        subscribed_topic_regex: str | None,
        server_assignor: str | None,
        client_id: str,
        client_host: str,
    ) -> None:
        """Applies the fields the heartbeat carries (null: unchanged); a new subscription or
        assignor bumps the group epoch."""
        member.client_id = client_id
        member.client_host = client_host
        if instance_id is not None:
            member.instance_id = instance_id
        if rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = rebalance_timeout_ms
        # A new rack can change a rack-aware assignment: a new epoch, as Kafka does for any change.
        changed = rack_id is not None and rack_id != member.rack_id
        if rack_id is not None:
            member.rack_id = rack_id
        if (
            subscribed_topic_names is not None
            and tuple(subscribed_topic_names) != member.subscribed_topic_names
        ):
            member.subscribed_topic_names = tuple(subscribed_topic_names)
            changed = True
        if subscribed_topic_regex is not None:
            # An empty regex clears it (the member switched back to topic names).
            regex = subscribed_topic_regex or None
            if regex != member.subscribed_topic_regex:
                member.subscribed_topic_regex = regex
                changed = True
        if server_assignor is not None and server_assignor != member.server_assignor:
            member.server_assignor = server_assignor
            changed = True
        if changed:
            group.group_epoch += 1

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
        now = self.clock.now_ms()
        resolved_at = group.regexes_resolved_at_ms
        unresolved = bool(subscribed - group.resolved_regexes.keys())
        if not unresolved:
            if resolved_at is not None and now < resolved_at + self.consumer_config.heartbeat_interval_ms:
                return
            expired = (
                resolved_at is None or now >= resolved_at + self.consumer_config.regex_refresh_interval_ms
            )
            if not expired and group.regexes_catalog == _catalog_fingerprint(self.topic_catalog()):
                return
        group.regex_refresh_pending = True
        self._spawn(self._refresh_regexes(group, may_describe))

    async def _refresh_regexes(self, group: ConsumerGroup, may_describe: TopicFilter | None) -> None:
        """Resolves every regex of the group against the topics the asking member may DESCRIBE
        (Kafka 4.0: a regex never reveals a topic its member could not describe)."""
        try:
            await asyncio.sleep(0)  # after the heartbeat that asked: it is answered with what was resolved
            if self.consumer_groups.get(group.group_id) is not group:
                return  # deleted, unloaded or replaced meanwhile
            catalog = self.topic_catalog()
            patterns = group.subscribed_regexes()
            resolved: dict[str, frozenset[str]] = {}
            for pattern in patterns:
                try:
                    compiled = compile_subscription_regex(pattern)
                except re2.error:
                    compiled = None  # written by another broker that took it: matches nothing here
                resolved[pattern] = frozenset(
                    name
                    for name in catalog
                    if compiled is not None
                    and compiled.fullmatch(name)
                    and (may_describe is None or may_describe(name))
                )
        finally:
            group.regex_refresh_pending = False
        group.regexes_resolved_at_ms = self.clock.now_ms()
        group.regexes_catalog = _catalog_fingerprint(catalog)
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
        self._refresh_subscribed_topics(group)
        group.group_epoch = min(group.group_epoch, epoch_before + 1)
        if group.group_epoch != epoch_before:
            await self._store_consumer_group(group)

    @staticmethod
    def _subscribed_topic_ids(
        group: ConsumerGroup, member: ConsumerMember, catalog: Mapping[str, tuple[uuid.UUID, int]]
    ) -> frozenset[uuid.UUID]:
        names = set(member.subscribed_topic_names) | group.regex_topics(member)
        return frozenset(catalog[name][0] for name in names if name in catalog)

    def _refresh_subscribed_topics(self, group: ConsumerGroup) -> None:
        """Bumps the group epoch when a subscribed topic appeared, vanished or grew."""
        catalog = self.topic_catalog()
        names = {topic_id: name for name, (topic_id, _) in catalog.items()}
        subscribed: dict[uuid.UUID, tuple[str, int]] = {}
        for member in group.members.values():
            for topic_id in self._subscribed_topic_ids(group, member, catalog):
                subscribed[topic_id] = (names[topic_id], catalog[names[topic_id]][1])
        if subscribed != group.subscribed_topics:
            group.subscribed_topics = subscribed
            group.group_epoch += 1

    def _maybe_compute_target(self, group: ConsumerGroup) -> None:
        if group.assignment_epoch >= group.group_epoch:
            return
        catalog = self.topic_catalog()
        chosen = Counter(m.server_assignor for m in group.members.values() if m.server_assignor)
        assignor_name = chosen.most_common(1)[0][0] if chosen else self.consumer_config.assignors[0]
        members = {
            member_id: AssignmentMember(
                subscribed=self._subscribed_topic_ids(group, member, catalog),
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

    def _on_member_state_changed(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """Arms the revocation deadline (the member's rebalance timeout) while it owes partitions."""
        self._cancel(member.revocation_timer)
        member.revocation_timer = None
        if member.state is MemberState.UNREVOKED_PARTITIONS and member.rebalance_timeout_ms > 0:
            member.revocation_timer = self.clock.call_later(
                member.rebalance_timeout_ms, lambda: self._on_revocation_timeout(group, member)
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
        self._remove_consumer_member(group, member)
        self._spawn(self._store_after_removal(group))

    def _schedule_session_timeout(self, group, member) -> None:  # type: ignore[no-untyped-def, override]
        if not isinstance(member, ConsumerMember):
            super()._schedule_session_timeout(group, member)
            return
        self._cancel(member.session_timer)
        timeout = (
            member.classic.session_timeout_ms
            if member.classic is not None
            else self.consumer_config.session_timeout_ms
        )
        member.session_timer = self.clock.call_later(
            timeout, lambda: self._on_consumer_session_expired(group, member)
        )

    def _on_consumer_session_expired(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if group.members.get(member.member_id) is not member:
            return
        log.info("group %s: member %s session expired", group.group_id, member.member_id)
        self._remove_consumer_member(group, member)
        self._spawn(self._store_after_removal(group))

    def _remove_consumer_member(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        self._cancel_member_timers(member)
        group.remove_member(member.member_id)
        group.group_epoch += 1
        # As Kafka deletes a resolved regex with its last member: one subscribed again is new and
        # resolved again (so the named topics of that subscription come first).
        for pattern in group.resolved_regexes.keys() - group.subscribed_regexes():
            del group.resolved_regexes[pattern]

    def _cancel_member_timers(self, member: ConsumerMember) -> None:
        self._cancel(member.session_timer)
        self._cancel(member.revocation_timer)
        member.session_timer = member.revocation_timer = None

    async def _leave(
        self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None
    ) -> HeartbeatResult:
        group = self.consumer_groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if group is None or member is None:
            return _heartbeat_error(ErrorCode.unknown_member_id, f"member {member_id} is not in the group")
        if member_epoch == STATIC_LEAVE_EPOCH:
            # The instance keeps its partitions until it returns or its session expires.
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = STATIC_LEAVE_EPOCH
            self._schedule_session_timeout(group, member)  # type: ignore[arg-type]
            append_error = await self._store_consumer_group(group)
        else:
            self._remove_consumer_member(group, member)
            append_error = await self._store_after_removal(group)
        if append_error is not None:
            return _heartbeat_error(append_error, member_id=member_id)
        return HeartbeatResult(ErrorCode.none, member_id=member_id, member_epoch=member_epoch)

    # --- ConsumerGroupDescribe ---------------------------------------------------------------

    def describe_consumer_group(self, group_id: str) -> ConsumerGroupDescription:
        error = self._availability_error(group_id)
        if error is not None:
            return ConsumerGroupDescription(error, group_id)
        group = self.consumer_groups.get(group_id)
        if group is None:
            classic = group_id in self.groups and self.groups[group_id].protocol_type is not None
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
            assignor_name=group.assignor_name,
            members=tuple(
                ConsumerMemberDescription(
                    member, group.target.get(member.member_id, {}), group.regex_topics(member)
                )
                for member in group.members.values()
            ),
            topic_names=self._topic_names(group),
        )

    def _topic_names(self, group: ConsumerGroup) -> dict[uuid.UUID, str]:
        names = {topic_id: name for topic_id, (name, _) in group.subscribed_topics.items()}
        names.update({topic_id: name for name, (topic_id, _) in self.topic_catalog().items()})
        return names

    # --- online migration: classic members in consumer groups -------------------------------

    def _upgrade_refusal(self, classic: Group) -> str | None:
        """Why a classic group with members may not become a consumer group (Kafka's checks)."""
        if not self.consumer_config.upgrade_allowed:
            return (
                f"Cannot upgrade classic group {classic.group_id} to consumer group: "
                f"group.consumer.migration.policy is {self.consumer_config.migration_policy}."
            )
        if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return (
                f"Cannot upgrade classic group {classic.group_id} to consumer group: its protocol type is "
                f"{classic.protocol_type!r}, not {CONSUMER_PROTOCOL_TYPE!r}."
            )
        if len(classic.members) >= self.consumer_config.max_size:
            return (
                f"Cannot upgrade classic group {classic.group_id} to consumer group: it has "
                f"{len(classic.members)} members, group.consumer.max.size is {self.consumer_config.max_size}."
            )
        return None

    def _upgrade(self, classic: Group) -> ConsumerGroup:
        """The consumer group a live classic group becomes: its members keep their generation (as
        member epoch), subscription and partitions; the classic group is emptied (it keeps the offsets)."""
        ids = {name: topic_id for name, (topic_id, _) in self.topic_catalog().items()}
        group = ConsumerGroup(classic.group_id)
        claimed: set[tuple[uuid.UUID, int]] = set()
        for member in classic.members.values():
            subscription = decode_subscription(member.metadata_for(classic.protocol_name or ""))
            assigned = {
                topic_id: partitions - {p for t, p in claimed if t == topic_id}
                for topic_id, partitions in _by_topic_id(
                    decode_assignment(member.assignment) or {}, ids
                ).items()
            }
            assigned = {topic_id: ps for topic_id, ps in assigned.items() if ps}
            claimed.update((topic_id, p) for topic_id, ps in assigned.items() for p in ps)
            converted = ConsumerMember(
                member_id=member.member_id,
                instance_id=member.group_instance_id,
                rack_id=subscription.rack_id if subscription is not None else None,
                client_id=member.client_id,
                client_host=member.client_host,
                subscribed_topic_names=tuple(sorted(set(subscription.topics)))
                if subscription is not None
                else (),
                rebalance_timeout_ms=member.rebalance_timeout_ms,
                member_epoch=classic.generation_id,
                previous_member_epoch=classic.generation_id,
                assigned=assigned,
                classic=records.ClassicMemberMetadata(member.session_timeout_ms, member.protocols),
            )
            group.add_member(converted)
            group.target[member.member_id] = assigned
        self._refresh_subscribed_topics(group)
        group.group_epoch = group.assignment_epoch = classic.generation_id
        self._empty_classic_group(classic)
        for converted in group.members.values():
            self._schedule_session_timeout(group, converted)  # type: ignore[arg-type]
        log.info(
            "group %s: classic group with %d members upgraded to a consumer group",
            group.group_id,
            len(group.members),
        )
        return group

    def _empty_classic_group(self, classic: Group) -> None:
        """Answers the classic group's waiting requests (they rejoin) and leaves it empty."""
        for timer in (classic.rebalance_timer, classic.sync_timer, *classic.pending_members.values()):
            self._cancel(timer)
        for member in classic.members.values():
            self._cancel(member.session_timer)
            self._answer_join(member, JoinResult(ErrorCode.rebalance_in_progress, member_id=member.member_id))
            self._answer_sync(member, SyncResult(ErrorCode.rebalance_in_progress))
        classic.members.clear()
        classic.static_members.clear()
        classic.pending_members.clear()
        classic.rebalance_timer = classic.sync_timer = None
        classic.leader_id = classic.protocol_name = None
        classic.in_initial_delay = False
        classic.transition_to(GroupState.EMPTY, self.clock.now_ms())

    async def _classic_join(
        self, group: ConsumerGroup, member_id: str, join: Mapping[str, Any]
    ) -> JoinResult:
        """JoinGroup (`join`: its other fields, as `join_group` takes them) of a classic member of a
        consumer group: its subscription updates the group, and it moves one step towards its
        target (what it must revoke, or its new partitions); answered at once, with its member
        epoch as generation and no leader (the server assigns). A new member gets its id at once."""
        group_instance_id: str | None = join["group_instance_id"]
        protocols: Sequence[tuple[str, bytes]] = join["protocols"]
        session_timeout_ms: int = join["session_timeout_ms"]
        rebalance_timeout_ms: int = join["rebalance_timeout_ms"]
        client_id: str = join["client_id"]
        client_host: str = join["client_host"]
        if not self.config.min_session_timeout_ms <= session_timeout_ms <= self.config.max_session_timeout_ms:
            return JoinResult(ErrorCode.invalid_session_timeout, member_id=member_id)
        names = {name for name, _ in protocols}
        others = (
            m.classic for m in group.members.values() if m.classic is not None and m.member_id != member_id
        )
        if not protocols or any(not names & {n for n, _ in other.supported_protocols} for other in others):
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        protocol_name, metadata = protocols[0]
        subscription = decode_subscription(metadata)
        if subscription is None:
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        epoch_before = group.group_epoch
        if member_id:
            member = group.members.get(member_id)
            if member is None:
                return JoinResult(ErrorCode.unknown_member_id, member_id=member_id)
            if member.classic is None:
                return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        else:
            previous = group.members.get(group.static_members.get(group_instance_id or "", ""))
            if previous is not None and previous.classic is not None:
                # A classic static member that restarted replaces its old self (Kafka's classic rule),
                # taking over its partitions and epoch.
                previous.previous_member_epoch = previous.member_epoch
                previous.member_epoch = STATIC_LEAVE_EPOCH
            joined = self._join(group, f"{client_id}-{uuid.uuid4()}", group_instance_id)
            if isinstance(joined, HeartbeatResult):
                return JoinResult(joined.error_code, member_id=joined.member_id or "")
            member = joined
        member.classic = records.ClassicMemberMetadata(session_timeout_ms, tuple(protocols))
        self._apply_heartbeat_fields(
            group, member, group_instance_id, subscription.rack_id,
            rebalance_timeout_ms if rebalance_timeout_ms >= 0 else session_timeout_ms,
            tuple(sorted(set(subscription.topics))), None, None, client_id, client_host,
        )  # fmt: skip
        self._refresh_subscribed_topics(group)
        group.group_epoch = min(group.group_epoch, epoch_before + 1)
        self._maybe_compute_target(group)
        ids = {name: topic_id for name, (topic_id, _) in self.topic_catalog().items()}
        # Eager members revoke everything before they join (they report nothing owned);
        # cooperative ones say what they still own.
        owned = _by_topic_id(dict(subscription.owned or ()), ids)
        if reconcile(group, member, owned):
            reconcile(group, member, owned)  # a revocation already done moves on at once
        self._on_member_state_changed(group, member)
        self._schedule_session_timeout(group, member)  # type: ignore[arg-type]
        append_error = await self._store_consumer_group(group)
        if append_error is not None:
            return JoinResult(append_error, member_id=member.member_id)
        return JoinResult(
            ErrorCode.none,
            generation_id=member.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=protocol_name,
            leader="",
            member_id=member.member_id,
        )

    def _classic_member(
        self, group_id: str, member_id: str, generation_id: int
    ) -> tuple[ConsumerGroup, ConsumerMember] | int | None:
        """The consumer group and the classic member a SyncGroup/Heartbeat names; an error code;
        or None when the group is not a consumer group with members (the classic path serves it)."""
        group = self.consumer_groups.get(group_id)
        if group is None or not group.members or self._availability_error(group_id) is not None:
            return None
        member = group.members.get(member_id)
        if member is None or member.classic is None:
            return ErrorCode.unknown_member_id
        if generation_id != member.member_epoch:
            return ErrorCode.illegal_generation
        return group, member

    async def sync_group(  # type: ignore[override]
        self, *, group_id: str, generation_id: int, member_id: str, **kwargs: Any
    ) -> SyncResult:
        found = self._classic_member(group_id, member_id, generation_id)
        if found is None:
            return await super().sync_group(
                group_id=group_id, generation_id=generation_id, member_id=member_id, **kwargs
            )
        if isinstance(found, int):
            return SyncResult(found)
        group, member = found
        assert member.classic is not None
        self._schedule_session_timeout(group, member)  # type: ignore[arg-type]
        names = self._topic_names(group)
        assignment = encode_consumer_assignment(
            {names[t]: sorted(ps) for t, ps in member.assigned.items() if t in names}
        )
        protocol_name = kwargs.get("protocol_name") or member.classic.supported_protocols[0][0]
        return SyncResult(ErrorCode.none, assignment, CONSUMER_PROTOCOL_TYPE, protocol_name)

    def heartbeat(  # type: ignore[override]
        self, *, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> int:
        found = self._classic_member(group_id, member_id, generation_id)
        if found is None:
            return super().heartbeat(
                group_id=group_id,
                generation_id=generation_id,
                member_id=member_id,
                group_instance_id=group_instance_id,
            )
        if isinstance(found, int):
            return found
        group, member = found
        self._schedule_session_timeout(group, member)  # type: ignore[arg-type]
        epochs_before = (group.group_epoch, group.assignment_epoch)
        self._refresh_subscribed_topics(group)
        self._maybe_compute_target(group)
        if (group.group_epoch, group.assignment_epoch) != epochs_before:
            self._spawn(self._store_consumer_group(group))
        return ErrorCode.rebalance_in_progress if self._must_rejoin(group, member) else ErrorCode.none

    @staticmethod
    def _must_rejoin(group: ConsumerGroup, member: ConsumerMember) -> bool:
        """Whether the classic member's JoinGroup would move it: it owes partitions, or would get a
        new epoch or partitions (tried on a copy; the member itself moves only when it rejoins)."""
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            return True
        return reconcile(group, dataclasses.replace(member), member.assigned)

    def leave_group(  # type: ignore[override]
        self, *, group_id: str, members: Sequence[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        group = self.consumer_groups.get(group_id)
        if group is None or not group.members or self._availability_error(group_id) is not None:
            return super().leave_group(group_id=group_id, members=members)
        results: list[int] = []
        for member_id, instance_id in members:
            if not member_id and instance_id is not None:
                member_id = group.static_members.get(instance_id, "")
            member = group.members.get(member_id)
            if member is None or member.classic is None:
                # A consumer-protocol member leaves with a heartbeat, not LeaveGroup (Kafka's rule).
                results.append(ErrorCode.unknown_member_id)
            elif instance_id is not None and member.instance_id != instance_id:
                results.append(ErrorCode.fenced_instance_id)
            else:
                self._remove_consumer_member(group, member)
                results.append(ErrorCode.none)
        if ErrorCode.none in results:
            self._spawn(self._store_after_removal(group))
        return ErrorCode.none, results

    async def _store_after_removal(self, group: ConsumerGroup) -> int | None:
        """Writes a group a member left; one left with classic members only becomes classic again."""
        classic = self._downgrade(group)
        if classic is None:
            return await self._store_consumer_group(group)
        error = await self._store_consumer_group(group, delete=True)
        return error if error is not None else await self._store_group(classic)

    def _downgrade(self, group: ConsumerGroup) -> Group | None:
        """The classic group a consumer group of classic members only becomes (Kafka's online
        downgrade): same members, their current partitions, generation = their epoch; it rebalances."""
        members = list(group.members.values())
        if (
            not members
            or any(m.classic is None for m in members)
            or not self.consumer_config.downgrade_allowed
        ):
            return None
        if len(members) > self.config.max_group_size:
            return None
        common = set.intersection(*({n for n, _ in m.classic.supported_protocols} for m in members))  # type: ignore[union-attr]
        first = members[0].classic
        assert first is not None
        chosen = next((name for name, _ in first.supported_protocols if name in common), None)
        if chosen is None:
            return None
        names = self._topic_names(group)
        classic = self._offsets_holder(group.group_id)
        self._empty_classic_group(classic)
        # The epoch the members reconciled to (the leave already bumped the group epoch): their
        # heartbeats carry it as generation and are answered REBALANCE_IN_PROGRESS, not fenced.
        classic.generation_id = group.assignment_epoch
        classic.protocol_type = CONSUMER_PROTOCOL_TYPE
        classic.protocol_name = chosen
        for m in members:
            assert m.classic is not None
            self._cancel_member_timers(m)
            classic.members[m.member_id] = Member(
                member_id=m.member_id,
                group_instance_id=m.instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                session_timeout_ms=m.classic.session_timeout_ms,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                protocol_type=CONSUMER_PROTOCOL_TYPE,
                protocols=m.classic.supported_protocols,
                assignment=encode_consumer_assignment(
                    {names[t]: sorted(ps) for t, ps in m.assigned.items() if t in names}
                ),
            )
            if m.instance_id is not None:
                classic.static_members[m.instance_id] = m.member_id
        classic.leader_id = members[0].member_id
        classic.transition_to(GroupState.STABLE, self.clock.now_ms())
        del self.consumer_groups[group.group_id]
        for member in classic.members.values():
            self._schedule_session_timeout(classic, member)
        self._prepare_rebalance(classic)
        log.info(
            "group %s: the last consumer-protocol member left; downgraded to a classic group of %d members",
            group.group_id,
            len(members),
        )
        return classic

    # --- the classic APIs over consumer groups -------------------------------------------------

    async def join_group(self, *, group_id: str, member_id: str, **kwargs: Any) -> JoinResult:  # type: ignore[override]
        group = self.consumer_groups.get(group_id)
        if group is not None and self._availability_error(group_id) is None:
            if group.members:
                if kwargs["protocol_type"] != CONSUMER_PROTOCOL_TYPE:
                    return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
                return await self._classic_join(group, member_id, kwargs)
            # An empty consumer group becomes a classic group again (its offsets stay).
            error = await self._drop_consumer_group(group)
            if error is not None:
                return JoinResult(error, member_id=member_id)
        return await super().join_group(group_id=group_id, member_id=member_id, **kwargs)  # type: ignore[arg-type]

    def _committing_member_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        """A consumer group's check (Kafka's ConsumerGroup.validateOffsetCommit), for OffsetCommit
        and TxnOffsetCommit alike: without an epoch only an empty group's offsets may be committed
        (admin tools); a member commits with exactly its current epoch."""
        group = self.consumer_groups.get(group_id)
        if group is None:
            return super()._committing_member_error(group_id, committer)
        if committer.generation_id < 0 and not group.members:
            return None
        return self._member_epoch_error(group, committer.member_id, committer.generation_id)

    def _fetching_member_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int | None:
        """OffsetFetch v9 (Kafka's ConsumerGroup.validateOffsetFetch): a caller that names no member
        (admin tools, older versions) reads freely; a member must be in the group at its epoch."""
        group = self.consumer_groups.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return super()._fetching_member_error(group_id, member_id, member_epoch)
        return self._member_epoch_error(group, member_id, member_epoch)

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

    async def delete_offsets(
        self, *, group_id: str, partitions: Sequence[tuple[str, int]]
    ) -> tuple[int, list[int]]:
        group = self.consumer_groups.get(group_id)
        if group is None or not group.members or self._availability_error(group_id) is not None:
            return await super().delete_offsets(group_id=group_id, partitions=partitions)
        subscribed = {name for name, _ in group.subscribed_topics.values()}
        free = [tp for tp in partitions if tp[0] not in subscribed]
        error, codes = await super().delete_offsets(group_id=group_id, partitions=free)
        if error != ErrorCode.none:
            return error, []
        done = dict(zip(free, codes, strict=True))
        return ErrorCode.none, [done.get(tp, ErrorCode.group_subscribed_to_topic) for tp in partitions]

    async def delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        results: dict[str, int] = {}
        classic_ids = []
        for group_id in group_ids:
            group = self.consumer_groups.get(group_id)
            if group is None or self._availability_error(group_id) is not None:
                classic_ids.append(group_id)
            elif group.members:
                results[group_id] = ErrorCode.non_empty_group
            else:
                error = await self._drop_consumer_group(group)
                if error is not None:
                    results[group_id] = error
                else:
                    self._offsets_holder(group_id)
                    classic_ids.append(group_id)
        results.update(await super().delete_groups(classic_ids))
        return results

    def list_groups(
        self, *, states_filter: Sequence[str] = (), types_filter: Sequence[str] = ()
    ) -> tuple[int, list[ListedGroup]]:
        error, listed = super().list_groups()
        if error != ErrorCode.none:
            return error, []
        by_id = {group.group_id: group for group in listed}
        for group_id, group in self.consumer_groups.items():
            if self.owns_partition(self.partition_for(group_id)):
                by_id[group_id] = ListedGroup(
                    group_id, CONSUMER_PROTOCOL_TYPE, group.state.value, CONSUMER_GROUP_TYPE
                )
        states = {s.lower() for s in states_filter}
        types = {t.lower() for t in types_filter}
        return ErrorCode.none, sorted(
            (
                group
                for group in by_id.values()
                if (not states or group.state.lower() in states) and (not types or group.group_type in types)
            ),
            key=lambda g: g.group_id,
        )

    def describe_group(self, group_id: str) -> GroupDescription:
        """DescribeGroups of a consumer group, in the classic layout: members carry their
        subscription and assignment in the ConsumerProtocol formats, so classic tools see them."""
        group = self.consumer_groups.get(group_id)
        if group is None or self._availability_error(group_id) is not None:
            return super().describe_group(group_id)
        names = self._topic_names(group)
        members = tuple(
            DescribedMember(
                member_id=member.member_id,
                group_instance_id=member.instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                metadata=encode_consumer_subscription(
                    sorted(
                        {
                            names[t]
                            for t in self._subscribed_topic_ids(group, member, self.topic_catalog())
                            if t in names
                        }
                    )
                ),
                assignment=encode_consumer_assignment(
                    {names.get(t, str(t)): sorted(ps) for t, ps in member.assigned.items()}
                ),
            )
            for member in group.members.values()
        )
        return GroupDescription(
            ErrorCode.none, group_id, group.state.value, CONSUMER_PROTOCOL_TYPE, group.assignor_name, members
        )

    def _expired_offsets(self, group: Group, now: int, retention: int) -> list[tuple[str, int]]:  # type: ignore[override]
        consumer = self.consumer_groups.get(group.group_id)
        if consumer is not None and consumer.members:
            return []  # a live consumer group keeps its offsets
        return GroupCoordinator._expired_offsets(group, now, retention)

    # --- loading and unloading ----------------------------------------------------------------

    def _replay_record(self, key_bytes, value_bytes, metadata, offsets) -> None:  # type: ignore[no-untyped-def, override]
        if records.decode_key(key_bytes) is not None:
            self._replayed[key_bytes] = value_bytes
        else:
            GroupCoordinator._replay_record(key_bytes, value_bytes, metadata, offsets)

    async def _replay_partition(self, partition, owned) -> None:  # type: ignore[no-untyped-def, override]
        await super()._replay_partition(partition, owned)
        mine = {k: v for k, v in self._replayed.items() if self._partition_of_key(k) == partition}
        for key in mine:
            del self._replayed[key]
        if not owned.loaded or self.partitions.get(partition) is not owned:
            return
        for group in self._groups_from_records(mine):
            self.consumer_groups[group.group_id] = group
            for member in group.members.values():
                self._schedule_session_timeout(group, member)  # type: ignore[arg-type]

    def _partition_of_key(self, key_bytes: bytes) -> int:
        key = records.decode_key(key_bytes)
        return self.partition_for(key.group_id) if key is not None else -1

    def _groups_from_records(self, replayed: Mapping[bytes, bytes | None]) -> list[ConsumerGroup]:
        groups: dict[str, ConsumerGroup] = {}
        by_group: dict[str, list[tuple[records.ConsumerRecordKey, bytes, bytes]]] = {}
        for key_bytes, value in replayed.items():
            key = records.decode_key(key_bytes)
            if key is not None and value is not None:
                by_group.setdefault(key.group_id, []).append((key, key_bytes, value))
        for group_id, entries in by_group.items():
            try:
                group = self._group_from_records(group_id, entries)
            except OffsetsFormatError:
                log.warning(
                    "group %s: unreadable consumer group records in __consumer_offsets; skipped", group_id
                )
                continue
            if group is not None:
                groups[group_id] = group
        return list(groups.values())

    @staticmethod
    def _group_from_records(
        group_id: str, entries: list[tuple[records.ConsumerRecordKey, bytes, bytes]]
    ) -> ConsumerGroup | None:
        group = ConsumerGroup(group_id)
        found = False
        members: dict[str, ConsumerMember] = {}

        def member(member_id: str) -> ConsumerMember:
            return members.setdefault(member_id, ConsumerMember(member_id=member_id))

        for key, key_bytes, value in entries:
            group.written[key_bytes] = value
            if key.record_type == records.GROUP_METADATA:
                group.group_epoch = records.decode_epoch(value)
                found = True
            elif key.record_type == records.TARGET_ASSIGNMENT_METADATA:
                group.assignment_epoch = records.decode_epoch(value)
            elif key.record_type == records.PARTITION_METADATA:
                _, topics = records.decode_partition_metadata(value)
                group.subscribed_topics = {t.topic_id: (t.name, t.partitions) for t in topics}
            elif key.record_type == records.MEMBER_METADATA and key.member_id is not None:
                stored = records.decode_member_metadata(value)
                m = member(key.member_id)
                m.instance_id, m.rack_id = stored.instance_id, stored.rack_id
                m.client_id, m.client_host = stored.client_id, stored.client_host
                m.subscribed_topic_names = stored.subscribed_topic_names
                m.subscribed_topic_regex = stored.subscribed_topic_regex
                m.rebalance_timeout_ms = stored.rebalance_timeout_ms
                m.server_assignor = stored.server_assignor
                m.classic = stored.classic
            elif key.record_type == records.TARGET_ASSIGNMENT_MEMBER and key.member_id is not None:
                group.target[key.member_id] = _assignment(records.decode_target_member(value))
            elif key.record_type == records.CURRENT_MEMBER_ASSIGNMENT and key.member_id is not None:
                current = records.decode_current_assignment(value)
                m = member(key.member_id)
                m.member_epoch, m.previous_member_epoch = current.member_epoch, current.previous_member_epoch
                m.state = (
                    MemberState(current.state)
                    if current.state in MemberState._value2member_map_
                    else MemberState.STABLE
                )
                m.assigned = _assignment(current.assigned)
                m.pending_revocation = _assignment(current.pending_revocation)
        if not found:
            return None
        subscribed_names = {name for name, _ in group.subscribed_topics.values()}
        for m in members.values():
            group.add_member(m)
        for regex in group.subscribed_regexes():
            # What the regex resolved to when the group was written (authorized then); the next
            # heartbeat resolves it again (never resolved here), with its member's ACLs.
            try:
                pattern = compile_subscription_regex(regex)
            except re2.error:
                pattern = None  # written by another broker that took it: matches nothing here
            group.resolved_regexes[regex] = frozenset(
                name for name in subscribed_names if pattern is not None and pattern.fullmatch(name)
            )
        group.target = {member_id: t for member_id, t in group.target.items() if member_id in group.members}
        votes = Counter(m.server_assignor for m in group.members.values() if m.server_assignor)
        group.assignor_name = votes.most_common(1)[0][0] if votes else ""
        return group

    def unload_partition(self, partition: int) -> None:
        for group_id in [g for g in self.consumer_groups if self.partition_for(g) == partition]:
            for member in self.consumer_groups.pop(group_id).members.values():
                self._cancel_member_timers(member)
        super().unload_partition(partition)

    async def stop(self) -> None:
        for group in self.consumer_groups.values():
            for member in group.members.values():
                self._cancel_member_timers(member)
        await super().stop()

    # --- persistence ---------------------------------------------------------------------------

    def _desired_records(self, group: ConsumerGroup) -> dict[bytes, bytes]:
        gid = group.group_id

        def key(record_type: int, member_id: str | None = None) -> bytes:
            return records.encode_key(records.ConsumerRecordKey(record_type, gid, member_id))

        desired: dict[bytes, bytes] = {}
        for member in group.members.values():
            desired[key(records.MEMBER_METADATA, member.member_id)] = records.encode_member_metadata(
                records.MemberMetadataValue(
                    instance_id=member.instance_id,
                    rack_id=member.rack_id,
                    client_id=member.client_id,
                    client_host=member.client_host,
                    subscribed_topic_names=member.subscribed_topic_names,
                    subscribed_topic_regex=member.subscribed_topic_regex,
                    rebalance_timeout_ms=member.rebalance_timeout_ms,
                    server_assignor=member.server_assignor,
                    classic=member.classic,
                )
            )
            desired[key(records.TARGET_ASSIGNMENT_MEMBER, member.member_id)] = records.encode_target_member(
                _topic_partitions(group.target.get(member.member_id, {}))
            )
            desired[key(records.CURRENT_MEMBER_ASSIGNMENT, member.member_id)] = (
                records.encode_current_assignment(
                    records.CurrentAssignmentValue(
                        member_epoch=member.member_epoch,
                        previous_member_epoch=member.previous_member_epoch,
                        state=int(member.state),
                        assigned=_topic_partitions(member.assigned),
                        pending_revocation=_topic_partitions(member.pending_revocation),
                    )
                )
            )
        desired[key(records.PARTITION_METADATA)] = records.encode_partition_metadata(
            group.group_epoch,
            tuple(
                records.TopicMetadata(topic_id, name, count)
                for topic_id, (name, count) in sorted(group.subscribed_topics.items(), key=lambda e: e[1][0])
            ),
        )
        desired[key(records.TARGET_ASSIGNMENT_METADATA)] = records.encode_epoch(group.assignment_epoch)
        desired[key(records.GROUP_METADATA)] = records.encode_epoch(group.group_epoch)
        return desired

    async def _store_consumer_group(self, group: ConsumerGroup, *, delete: bool = False) -> int | None:
        """Writes the records that changed since the last write (tombstones for what is gone)."""
        try:
            desired = {} if delete else self._desired_records(group)
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
        group.written = dict(desired)
        return await self._append(self.partition_for(group.group_id), changes)

    async def _drop_consumer_group(self, group: ConsumerGroup) -> int | None:
        error = await self._store_consumer_group(group, delete=True)
        if error is None and self.consumer_groups.get(group.group_id) is group:
            del self.consumer_groups[group.group_id]
            log.info("group %s: consumer group removed (empty)", group.group_id)
        return error


def _assignment(value: records.TopicPartitions) -> Assignment:
    return {topic_id: frozenset(partitions) for topic_id, partitions in value if partitions}


def _topic_partitions(assignment: Assignment) -> records.TopicPartitions:
    return tuple(
        (topic_id, tuple(sorted(ps))) for topic_id, ps in sorted(assignment.items(), key=lambda e: str(e[0]))
    )


def _by_topic_id(partitions_by_name: Mapping[str, Sequence[int]], ids: Mapping[str, uuid.UUID]) -> Assignment:
    """A classic protocol's partitions by topic name as an assignment by topic id (unknown topics dropped)."""
    return {ids[name]: frozenset(ps) for name, ps in partitions_by_name.items() if name in ids and ps}
