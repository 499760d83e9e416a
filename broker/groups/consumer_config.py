"""Consumer-protocol (KIP-848) groups: settings, answers, and the validation of ConsumerGroupHeartbeat."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import re2
from kio.schema.errors import ErrorCode

from broker.groups.assignors import ASSIGNORS, Assignment
from broker.groups.consumer_group import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    minus,
)
from broker.groups.group_type import is_valid_group_id

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


def heartbeat_error(code: int, message: str | None = None, member_id: str | None = None) -> HeartbeatResult:
    return HeartbeatResult(code, message, member_id=member_id)


def catalog_fingerprint(names: Iterable[str]) -> int:
    return hash(frozenset(names))


def compile_subscription_regex(pattern: str) -> re2._Regexp:
    """An RE2 pattern, as Kafka's RE2/J takes it; raises re2.error for an invalid one."""
    return re2.compile(pattern, _REGEX_OPTIONS)


def resolve_regexes(
    patterns: Iterable[str], topics: Iterable[str], may_describe: TopicFilter | None
) -> dict[str, frozenset[str]]:
    """The topics each pattern matches, of those the requester may DESCRIBE (None: all); a pattern this
    broker cannot compile (another broker took it) matches nothing."""
    names = list(topics)
    resolved: dict[str, frozenset[str]] = {}
    for pattern in patterns:
        try:
            compiled = compile_subscription_regex(pattern)
        except re2.error:
            resolved[pattern] = frozenset()
            continue
        resolved[pattern] = frozenset(
            name
            for name in names
            if compiled.fullmatch(name) and (may_describe is None or may_describe(name))
        )
    return resolved


def invalid_heartbeat(
    config: ConsumerGroupConfig,
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
        return heartbeat_error(ErrorCode.invalid_request, "MemberId can't be empty.")
    if not is_valid_group_id(group_id):
        return heartbeat_error(ErrorCode.invalid_request, "GroupId can't be empty.")
    if instance_id == "":
        return heartbeat_error(ErrorCode.invalid_request, "InstanceId can't be empty.")
    if rack_id == "":
        return heartbeat_error(ErrorCode.invalid_request, "RackId can't be empty.")
    if member_epoch == JOIN_EPOCH:
        if rebalance_timeout_ms == -1:
            return heartbeat_error(
                ErrorCode.invalid_request, "RebalanceTimeoutMs must be provided in first request."
            )
        if owned is None or owned:
            return heartbeat_error(
                ErrorCode.invalid_request, "TopicPartitions must be empty when (re-)joining."
            )
        if subscribed_topic_names is None and subscribed_topic_regex is None:
            return heartbeat_error(
                ErrorCode.invalid_request,
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
            )
    elif member_epoch == STATIC_LEAVE_EPOCH and instance_id is None:
        return heartbeat_error(ErrorCode.invalid_request, "InstanceId can't be null.")
    elif member_epoch < STATIC_LEAVE_EPOCH:
        return heartbeat_error(ErrorCode.invalid_request, "MemberEpoch is invalid.")
    if server_assignor is not None and server_assignor not in config.assignors:
        return heartbeat_error(
            ErrorCode.unsupported_assignor,
            f"ServerAssignor {server_assignor} is not supported. Supported assignors: "
            f"{', '.join(config.assignors)}.",
        )
    if subscribed_topic_regex is not None:
        try:
            compile_subscription_regex(subscribed_topic_regex)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else "invalid"
            if isinstance(reason, bytes):
                reason = reason.decode(errors="replace")
            return heartbeat_error(
                ErrorCode.invalid_regular_expression,
                f"SubscribedTopicRegex `{subscribed_topic_regex}` is not a valid regular expression: "
                f"{reason}.",
            )
    return None


def known_member(
    group: ConsumerGroup, member_id: str, member_epoch: int, owned: Assignment | None
) -> ConsumerMember | HeartbeatResult:
    member = group.members.get(member_id)
    if member is None:
        return heartbeat_error(ErrorCode.unknown_member_id, f"member {member_id} is not in the group")
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
    return heartbeat_error(
        ErrorCode.fenced_member_epoch,
        f"member epoch {member_epoch} is fenced, the current one is {member.member_epoch}",
    )


def apply_heartbeat_fields(
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
    if subscribed_topic_names is not None and tuple(subscribed_topic_names) != member.subscribed_topic_names:
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
