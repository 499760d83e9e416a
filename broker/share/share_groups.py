"""Share group membership (KIP-932): ShareGroupHeartbeat's rules and ShareGroupDescribe's view.

Members join with epoch 0 and a client-generated member id, heartbeat with their current epoch and leave with
-1. Any change of membership, subscriptions or the subscribed topics' partition counts bumps the group epoch
and recomputes the assignment at once: share groups have no revocation step (several members may read one
partition), so a member moves to the group epoch on its next heartbeat. The assignment follows Kafka's
simple assignor: every partition goes to at least one member, each member gets an even share, and with more
members than partitions the partitions are shared.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode

# topic name -> (topic id, partition count) of every topic.
TopicCatalog = Callable[[], Mapping[str, tuple[uuid.UUID, int]]]
Assignment = dict[uuid.UUID, frozenset[int]]

SIMPLE_ASSIGNOR = "simple"
STATE_EMPTY = "Empty"
STATE_STABLE = "Stable"
LEAVE_EPOCH = -1


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


def simple_assignment(
    members: Sequence[ShareMember], catalog: Mapping[str, tuple[uuid.UUID, int]]
) -> dict[str, Assignment]:
    """member id -> assignment: per topic, partitions dealt round-robin over its subscribers in member-id
    order; with more subscribers than partitions, each subscriber gets one partition and partitions repeat."""
    assignments: dict[str, Assignment] = {member.member_id: {} for member in members}
    topics = sorted({name for member in members for name in member.subscribed_topic_names})
    for name in topics:
        if name not in catalog:
            continue
        topic_id, count = catalog[name]
        subscribers = sorted(m.member_id for m in members if name in m.subscribed_topic_names)
        if count == 0 or not subscribers:
            continue
        owned: dict[str, set[int]] = {member_id: set() for member_id in subscribers}
        for slot in range(max(count, len(subscribers))):
            owned[subscribers[slot % len(subscribers)]].add(slot % count)
        for member_id, partitions in owned.items():
            if partitions:
                assignments[member_id][topic_id] = frozenset(partitions)
    return assignments


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
        if changed or self._partitions_changed(group):
            self._reassign(group)
        member.member_epoch = group.group_epoch
        changed_since_heard = member.heard != member.assigned
        member.heard = dict(member.assigned)
        return HeartbeatAnswer(
            ErrorCode.none,
            member_id=member_id,
            member_epoch=member.member_epoch,
            assignment=dict(member.assigned) if changed_since_heard else None,
        )

    def _subscribed_partitions(self, group: ShareGroup) -> tuple[tuple[str, uuid.UUID | None, int], ...]:
        catalog = self.topic_catalog()
        names = sorted({name for m in group.members.values() for name in m.subscribed_topic_names})
        return tuple((name, *catalog[name]) if name in catalog else (name, None, 0) for name in names)

    def _partitions_changed(self, group: ShareGroup) -> bool:
        return self._subscribed_partitions(group) != group.subscribed_partitions

    def _reassign(self, group: ShareGroup) -> None:
        group.group_epoch += 1
        group.subscribed_partitions = self._subscribed_partitions(group)
        targets = simple_assignment(list(group.members.values()), self.topic_catalog())
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
