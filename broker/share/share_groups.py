"""Share group membership (KIP-932): ShareGroupHeartbeat's rules and ShareGroupDescribe's view.

Members join with epoch 0 and a client-generated member id, heartbeat with their current epoch and leave with
-1. Any change of membership, subscriptions or the subscribed topics' partition counts bumps the group epoch
and recomputes the assignment at once: share groups have no revocation step (several members may read one
partition), so a member moves to the group epoch on its next heartbeat. The assignment follows Kafka's
simple assignor: every partition goes to at least one member, each member gets an even share, and with more
members than partitions the partitions are shared.

Only initialized share-partitions are assigned, as in Kafka 4.2: a heartbeat that finds a subscribed partition
whose share state the group has not yet initialized at its share coordinator hands it to the caller to
initialize (`HeartbeatAnswer.initialize`), and the partition is assigned on the first heartbeat after that
completed. So a member joining a group on a new topic first hears an empty assignment, and its partitions a
heartbeat interval later, exactly as from Kafka; librdkafka's share consumer depends on that: closed right
after its first heartbeat, it waits forever for a partition it heard of in that answer (0170, 0176).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode

# topic name -> (topic id, partition count) of every topic.
TopicCatalog = Callable[[], Mapping[str, tuple[uuid.UUID, int]]]
Assignment = dict[uuid.UUID, frozenset[int]]
# topic id -> partitions of it
TopicPartitions = dict[uuid.UUID, frozenset[int]]

SIMPLE_ASSIGNOR = "simple"
STATE_EMPTY = "Empty"
STATE_STABLE = "Stable"
LEAVE_EPOCH = -1
# How long a handed-out initialization may stay unconfirmed before a heartbeat hands it out again (Kafka's
# internal group.share.initialize.retry.interval.ms); a failed one is reported and handed out at once.
INITIALIZE_RETRY_MS = 30_000


@dataclass(slots=True)
class ShareMember:
    member_id: str
    member_epoch: int
    client_id: str
    client_host: str
    rack_id: str | None
    subscribed_topic_names: tuple[str, ...]
    assigned: Assignment = field(default_factory=dict)
    # What the member last heard in a heartbeat answer: another member joining or leaving changes `assigned`
    # between this member's heartbeats, and its next answer must carry the change.
    heard: Assignment | None = None
    last_seen_ms: int = 0


@dataclass(slots=True)
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    # (topic name, topic id, partition count) of the subscribed topics when the assignment was computed: a
    # topic created, grown or re-created under the same name changes it.
    subscribed_partitions: tuple[tuple[str, uuid.UUID | None, int], ...] = ()
    # The share-partitions whose state the group has initialized at their share coordinator: the only ones
    # assigned (Kafka's ShareGroupStatePartitionMetadata "initialized topics").
    initialized: TopicPartitions = field(default_factory=dict)
    # Handed out for initialization and not yet confirmed: topic id -> (partitions, when handed out in ms). Older
    # than the retry interval, they are handed out again (Kafka's "initializing topics").
    initializing: dict[uuid.UUID, tuple[frozenset[int], int]] = field(default_factory=dict)

    @property
    def state(self) -> str:
        return STATE_STABLE if self.members else STATE_EMPTY


@dataclass(frozen=True, slots=True)
class HeartbeatAnswer:
    error_code: ErrorCode
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    # None: unchanged since the member last heard it.
    assignment: Assignment | None = None
    # Subscribed share-partitions to initialize at their share coordinators, under this state epoch (the group
    # epoch); the caller reports the outcome with `initialized` / `initialization_failed`.
    initialize: TopicPartitions = field(default_factory=dict)
    state_epoch: int = 0


def simple_assignment(
    members: Sequence[ShareMember],
    catalog: Mapping[str, tuple[uuid.UUID, int]],
    assignable: Mapping[uuid.UUID, frozenset[int]],
) -> dict[str, Assignment]:
    """member id -> assignment: per topic, its assignable partitions dealt round-robin over its subscribers in
    member-id order; with more subscribers than partitions, each subscriber gets one partition and partitions
    repeat."""
    assignments: dict[str, Assignment] = {member.member_id: {} for member in members}
    topics = sorted({name for member in members for name in member.subscribed_topic_names})
    for name in topics:
        if name not in catalog:
            continue
        topic_id, count = catalog[name]
        partitions = sorted(p for p in assignable.get(topic_id, ()) if p < count)
        subscribers = sorted(m.member_id for m in members if name in m.subscribed_topic_names)
        if not partitions or not subscribers:
            continue
        owned: dict[str, set[int]] = {member_id: set() for member_id in subscribers}
        for slot in range(max(len(partitions), len(subscribers))):
            owned[subscribers[slot % len(subscribers)]].add(partitions[slot % len(partitions)])
        for member_id, partitions in owned.items():
            if partitions:
                assignments[member_id][topic_id] = frozenset(partitions)
    return assignments


def _no_longer_initializing(group: ShareGroup, topic_partitions: Mapping[uuid.UUID, frozenset[int]]) -> None:
    for topic_id, partitions in topic_partitions.items():
        pending, since_ms = group.initializing.get(topic_id, (frozenset(), 0))
        if rest := pending - partitions:
            group.initializing[topic_id] = (rest, since_ms)
        else:
            group.initializing.pop(topic_id, None)


class ShareGroupCoordinator:
    """The share groups whose coordinator this broker is (the `__consumer_offsets` partition's leader)."""

    def __init__(self, topic_catalog: TopicCatalog) -> None:
        self.topic_catalog = topic_catalog
        self.groups: dict[str, ShareGroup] = {}
        # Called with (group id, member id) when a member expires: its acquired records go back.
        self.member_left: list[Callable[[str, str], None]] = []

    def heartbeat(
        self,
        *,
        group_id: str,
        member_id: str,
        member_epoch: int,
        rack_id: str | None,
        subscribed_topic_names: Sequence[str] | None,
        client_id: str,
        client_host: str,
        now_ms: int,
        session_timeout_ms: int,
    ) -> HeartbeatAnswer:
        if not group_id:
            return HeartbeatAnswer(ErrorCode.invalid_request, "GroupId can't be empty.")
        if not member_id:
            return HeartbeatAnswer(ErrorCode.invalid_request, "MemberId can't be empty.")
        if member_epoch < LEAVE_EPOCH:
            return HeartbeatAnswer(
                ErrorCode.invalid_request, f"MemberEpoch is {member_epoch}, but must be >= -1."
            )
        if member_epoch == 0 and not subscribed_topic_names:
            return HeartbeatAnswer(
                ErrorCode.invalid_request, "SubscribedTopicNames must be set in first request."
            )
        group = self.groups.get(group_id)
        if group is not None:
            self.expire_members(group, now_ms, session_timeout_ms)
        if member_epoch == LEAVE_EPOCH:
            if group is not None and member_id in group.members:
                self._remove(group, member_id)
            return HeartbeatAnswer(ErrorCode.none, member_id=member_id, member_epoch=LEAVE_EPOCH)
        group = self.get_or_create(group_id)
        member = group.members.get(member_id)
        changed = False
        if member_epoch == 0:
            if member is None:
                member = group.members[member_id] = ShareMember(
                    member_id, 0, client_id, client_host, rack_id, tuple(subscribed_topic_names or ())
                )
                changed = True
        elif member is None:
            return HeartbeatAnswer(
                ErrorCode.unknown_member_id, f"Member {member_id} is not a member of group {group_id}."
            )
        elif member_epoch not in (member.member_epoch, group.group_epoch):
            return HeartbeatAnswer(
                ErrorCode.fenced_member_epoch,
                f"The share group member has a smaller member epoch ({member_epoch}) than the one known by the "
                f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and "
                "rejoin.",
            )
        member.last_seen_ms = now_ms
        if member_epoch == 0:
            member.heard = None
        if rack_id is not None:
            member.rack_id = rack_id
        if (
            subscribed_topic_names is not None
            and tuple(subscribed_topic_names) != member.subscribed_topic_names
        ):
            member.subscribed_topic_names = tuple(subscribed_topic_names)
            changed = True
        if changed or self._partitions_changed(group) or self._initialized_assignment_pending(group):
            self._reassign(group)
        member.member_epoch = group.group_epoch
        changed_since_heard = member.heard != member.assigned
        member.heard = dict(member.assigned)
        return HeartbeatAnswer(
            ErrorCode.none,
            member_id=member_id,
            member_epoch=member.member_epoch,
            assignment=dict(member.assigned) if changed_since_heard else None,
            initialize=self._hand_out_initialization(group, now_ms),
            state_epoch=group.group_epoch,
        )

    def _subscribed_topics(self, group: ShareGroup) -> dict[uuid.UUID, int]:
        """topic id -> partition count of every existing topic a member subscribes to."""
        catalog = self.topic_catalog()
        names = {name for m in group.members.values() for name in m.subscribed_topic_names}
        return {catalog[name][0]: catalog[name][1] for name in names if name in catalog}

    def _assignable(self, group: ShareGroup) -> TopicPartitions:
        """The subscribed share-partitions the group has initialized."""
        subscribed = self._subscribed_topics(group)
        return {
            topic_id: frozenset(p for p in partitions if p < subscribed[topic_id])
            for topic_id, partitions in group.initialized.items()
            if topic_id in subscribed
        }

    def _initialized_assignment_pending(self, group: ShareGroup) -> bool:
        """Some initialized, subscribed share-partition is not assigned yet (Kafka's
        `initializedAssignmentPending`): its initialization completed since the assignment was computed."""
        assigned: dict[uuid.UUID, set[int]] = {}
        for member in group.members.values():
            for topic_id, partitions in member.assigned.items():
                assigned.setdefault(topic_id, set()).update(partitions)
        return any(
            partitions and assigned.get(topic_id) != partitions
            for topic_id, partitions in self._assignable(group).items()
        )

    def _hand_out_initialization(self, group: ShareGroup, now_ms: int) -> TopicPartitions:
        """The subscribed share-partitions neither initialized nor handed out within the retry interval, now
        marked as handed out."""
        handed_out: TopicPartitions = {}
        for topic_id, count in self._subscribed_topics(group).items():
            initialized = group.initialized.get(topic_id, frozenset())
            if len(initialized) >= count:  # partitions only grow: all of them
                continue
            known = set(initialized)
            pending, since_ms = group.initializing.get(topic_id, (frozenset(), now_ms))
            if now_ms - since_ms < INITIALIZE_RETRY_MS:
                known |= pending
            missing = frozenset(range(count)) - known
            if missing:
                handed_out[topic_id] = missing
                group.initializing[topic_id] = (pending | missing, now_ms)
        return handed_out

    def initialized(self, group_id: str, topic_partitions: Mapping[uuid.UUID, frozenset[int]]) -> None:
        """These share-partitions' state is initialized: the group's next heartbeat assigns them."""
        group = self.groups.get(group_id)
        if group is None:
            return
        for topic_id, partitions in topic_partitions.items():
            group.initialized[topic_id] = group.initialized.get(topic_id, frozenset()) | partitions
        _no_longer_initializing(group, topic_partitions)

    def initialization_failed(
        self, group_id: str, topic_partitions: Mapping[uuid.UUID, frozenset[int]]
    ) -> None:
        """These share-partitions are no longer being initialized: a later heartbeat hands them out again
        unless they were initialized."""
        group = self.groups.get(group_id)
        if group is not None:
            _no_longer_initializing(group, topic_partitions)

    def uninitialized(self, group_id: str, topic_id: uuid.UUID) -> None:
        """The group's share state of this topic was deleted (DeleteShareGroupOffsets): its partitions are
        initialized again before they are next assigned."""
        group = self.groups.get(group_id)
        if group is not None:
            group.initialized.pop(topic_id, None)
            group.initializing.pop(topic_id, None)

    def _subscribed_partitions(self, group: ShareGroup) -> tuple[tuple[str, uuid.UUID | None, int], ...]:
        catalog = self.topic_catalog()
        names = sorted({name for m in group.members.values() for name in m.subscribed_topic_names})
        return tuple((name, *catalog[name]) if name in catalog else (name, None, 0) for name in names)

    def _partitions_changed(self, group: ShareGroup) -> bool:
        return self._subscribed_partitions(group) != group.subscribed_partitions

    def _reassign(self, group: ShareGroup) -> None:
        group.group_epoch += 1
        group.subscribed_partitions = self._subscribed_partitions(group)
        targets = simple_assignment(
            list(group.members.values()), self.topic_catalog(), self._assignable(group)
        )
        for member_id, assignment in targets.items():
            group.members[member_id].assigned = assignment
        group.assignment_epoch = group.group_epoch

    def _remove(self, group: ShareGroup, member_id: str, *, expired: bool = False) -> None:
        del group.members[member_id]
        self._reassign(group)
        if expired:
            # A member that left on its own closes its share sessions (acknowledging what it still holds);
            # one that expired will not: what it held is offered again now rather than when its locks end.
            for listener in self.member_left:
                listener(group.group_id, member_id)

    def expire_members(self, group: ShareGroup, now_ms: int, session_timeout_ms: int) -> None:
        """Members not heard from within the session timeout leave (Kafka's session timer)."""
        for member_id in [
            m.member_id for m in group.members.values() if now_ms - m.last_seen_ms > session_timeout_ms
        ]:
            self._remove(group, member_id, expired=True)

    def get_or_create(self, group_id: str) -> ShareGroup:
        """The group, created empty if it does not exist: AlterShareGroupOffsets on an unknown group creates
        it, as Kafka's coordinator does (later offset deletes and describes then find it)."""
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = ShareGroup(group_id)
        return group

    def is_member(self, group_id: str, member_id: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and member_id in group.members

    def delete(self, group_id: str) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.group_id_not_found
        if group.members:
            return ErrorCode.non_empty_group
        del self.groups[group_id]
        return ErrorCode.none
