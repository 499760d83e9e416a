"""In-memory state of one consumer-protocol (KIP-848) group, and how a member reconciles.

Three epochs move the group, as in Kafka: the group epoch rises whenever what the assignment
depends on changes (members, subscriptions, subscribed topics' partitions); the assignment epoch
is the group epoch the target assignment was computed at; each member's epoch rises when the
member reaches (a step towards) the target. A member is given a partition only once no other
member owns it or still has to revoke it, and gives up partitions (revocation) before it
receives new ones, so no partition is ever consumed by two members.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping, Set
from dataclasses import dataclass, field, fields

from broker.groups.assignors import Assignment
from broker.groups.clock import Timer
from broker.groups.consumer_records import ClassicMemberMetadata


class MemberState(enum.IntEnum):
    """Kafka's MemberState, with the values it stores in CurrentMemberAssignment records."""

    STABLE = 1
    UNREVOKED_PARTITIONS = 2  # waits for the member to acknowledge revoking partitions
    UNRELEASED_PARTITIONS = 3  # waits for other members to release partitions it is owed


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"


# The member epochs a heartbeat carries to join or to leave.
JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


def total(assignment: Mapping[uuid.UUID, Set[int]]) -> int:
    return sum(len(partitions) for partitions in assignment.values())


def minus(left: Mapping[uuid.UUID, Set[int]], right: Mapping[uuid.UUID, Set[int]]) -> Assignment:
    result = {t: frozenset(ps - right.get(t, frozenset())) for t, ps in left.items()}
    return {t: ps for t, ps in result.items() if ps}


def intersect(left: Mapping[uuid.UUID, Set[int]], right: Mapping[uuid.UUID, Set[int]]) -> Assignment:
    result = {t: frozenset(ps & right.get(t, frozenset())) for t, ps in left.items()}
    return {t: ps for t, ps in result.items() if ps}


def union(left: Mapping[uuid.UUID, Set[int]], right: Mapping[uuid.UUID, Set[int]]) -> Assignment:
    result = {t: frozenset(ps) for t, ps in left.items()}
    for t, ps in right.items():
        result[t] = result.get(t, frozenset()) | ps
    return {t: ps for t, ps in result.items() if ps}


@dataclass(eq=False, slots=True)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = -1
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    # A classic-protocol member (JoinGroup/SyncGroup/Heartbeat) of a consumer group: what it
    # joined with; None for a consumer-protocol member.
    classic: ClassicMemberMetadata | None = None
    session_timer: Timer | None = None
    revocation_timer: Timer | None = None

    def owns_or_revokes(self) -> Assignment:
        return union(self.assigned, self.pending_revocation)


@dataclass(eq=False, slots=True)
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)
    # topic id -> (name, partition count) of the subscribed topics the target was computed from
    subscribed_topics: dict[uuid.UUID, tuple[str, int]] = field(default_factory=dict)
    # The records last written for this group: key bytes -> value bytes (to write only changes).
    written: dict[bytes, bytes] = field(default_factory=dict)
    # Regular expressions are resolved for the whole group, as Kafka does, not per member: pattern ->
    # the topic names it matched and the member whose heartbeat asked could DESCRIBE. A pattern
    # not here yet is unresolved (its members get nothing from it until it is).
    resolved_regexes: dict[str, frozenset[str]] = field(default_factory=dict)
    # When the resolutions were last refreshed (None: never, e.g. after a reload) and a fingerprint
    # of the topic names they saw (a topic created or deleted since calls for a refresh).
    regexes_resolved_at_ms: int | None = None
    regexes_catalog: int | None = None
    regex_refresh_pending: bool = False
    # How many times records of this group were handed to the log (to tell whether a failed write was the last).
    writes: int = 0

    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.assignment_epoch < self.group_epoch:
            return ConsumerGroupState.ASSIGNING
        for member in self.members.values():
            if member.member_epoch != self.assignment_epoch or member.state is not MemberState.STABLE:
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def subscribed_regexes(self) -> set[str]:
        return {m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex}

    def regex_topics(self, member: ConsumerMember) -> frozenset[str]:
        """The topics the member's regex resolved to for the group (none while unresolved)."""
        if not member.subscribed_topic_regex:
            return frozenset()
        return self.resolved_regexes.get(member.subscribed_topic_regex, frozenset())

    def add_member(self, member: ConsumerMember) -> None:
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self.target.pop(member_id, None)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        return member

    def owners(self, excluding: str) -> dict[tuple[uuid.UUID, int], str]:
        """Who holds each partition (owned or still to be revoked), other members only."""
        held: dict[tuple[uuid.UUID, int], str] = {}
        for member in self.members.values():
            if member.member_id == excluding:
                continue
            for topic_id, partitions in member.owns_or_revokes().items():
                for partition in partitions:
                    held[(topic_id, partition)] = member.member_id
        return held


# A member's fields a heartbeat may change (its timers are not state: they are re-armed, not undone).
_MEMBER_STATE = tuple(f.name for f in fields(ConsumerMember) if not f.name.endswith("_timer"))


@dataclass(frozen=True, slots=True)
class GroupSnapshot:
    """What a heartbeat may change in a group, to undo it when its records could not be written: Kafka's
    coordinator reverts its state to the last written offset then, so the member's retry finds the group as
    the log has it (and gets the new epoch and assignment then, instead of being fenced by an epoch nobody
    wrote)."""

    writes: int
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: dict[str, tuple[ConsumerMember, tuple[object, ...]]]
    static_members: dict[str, str]
    target: dict[str, Assignment]
    subscribed_topics: dict[uuid.UUID, tuple[str, int]]
    resolved_regexes: dict[str, frozenset[str]]
    written: dict[bytes, bytes]


def snapshot(group: ConsumerGroup) -> GroupSnapshot:
    return GroupSnapshot(
        writes=group.writes,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.assignor_name,
        members={
            member_id: (member, tuple(getattr(member, name) for name in _MEMBER_STATE))
            for member_id, member in group.members.items()
        },
        static_members=dict(group.static_members),
        target=dict(group.target),
        subscribed_topics=dict(group.subscribed_topics),
        resolved_regexes=dict(group.resolved_regexes),
        written=group.written,
    )


def restore(group: ConsumerGroup, saved: GroupSnapshot) -> list[ConsumerMember]:
    """Puts the group back as it was at `saved` (its member objects kept, so their timers still find them);
    returns the members that were not in it then."""
    gone = [member for member_id, member in group.members.items() if member_id not in saved.members]
    group.group_epoch, group.assignment_epoch = saved.group_epoch, saved.assignment_epoch
    group.assignor_name = saved.assignor_name
    group.members = {}
    for member_id, (member, state) in saved.members.items():
        for name, value in zip(_MEMBER_STATE, state, strict=True):
            setattr(member, name, value)
        group.members[member_id] = member
    group.static_members = dict(saved.static_members)
    group.target = dict(saved.target)
    group.subscribed_topics = dict(saved.subscribed_topics)
    group.resolved_regexes = dict(saved.resolved_regexes)
    group.written = saved.written
    return gone


def reconcile(group: ConsumerGroup, member: ConsumerMember, owned: Assignment | None) -> bool:
    """Moves the member one step towards its target; returns whether anything changed.

    `owned` is what the member reported owning in this heartbeat (None: not reported). A
    member that must revoke keeps its epoch until it reports the revocation done; only then
    does it reach the assignment epoch and receive partitions, and only those nobody else holds.
    """
    before = (member.member_epoch, member.state, member.assigned, member.pending_revocation)
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owned is None or intersect(owned, member.pending_revocation):
            return False  # the member has not revoked yet
        member.pending_revocation = {}
        member.state = MemberState.STABLE
    target = group.target.get(member.member_id, {})
    if member.member_epoch == group.assignment_epoch and member.state is MemberState.STABLE:
        return before != (member.member_epoch, member.state, member.assigned, member.pending_revocation)
    to_revoke = minus(member.assigned, target)
    if to_revoke:
        member.assigned = intersect(member.assigned, target)
        member.pending_revocation = to_revoke
        member.state = MemberState.UNREVOKED_PARTITIONS
        return True
    held = group.owners(excluding=member.member_id)
    wanted = minus(target, member.assigned)
    free = {
        topic_id: frozenset(p for p in partitions if (topic_id, p) not in held)
        for topic_id, partitions in wanted.items()
    }
    member.assigned = union(member.assigned, free)
    if member.member_epoch != group.assignment_epoch:
        member.previous_member_epoch = member.member_epoch
        member.member_epoch = group.assignment_epoch
    member.state = (
        MemberState.UNRELEASED_PARTITIONS if total(minus(target, member.assigned)) else MemberState.STABLE
    )
    return before != (member.member_epoch, member.state, member.assigned, member.pending_revocation)
