"""Server-side assignors of the consumer group protocol (KIP-848): `uniform` and `range`.

An assignor maps every member to the partitions it should own, given what each member
subscribes to and how many partitions each subscribed topic has. It is a pure function; the
coordinator moves members towards its answer (the target assignment) one heartbeat at a time.

Both are sticky where it costs nothing: `uniform` keeps a member's current target partitions
as long as the balance allows it, so a member joining or leaving moves as few partitions as
possible (members keep consuming the partitions that do not move).

Both are rack-aware (as Kafka's assignors are with KIP-881's racks): when members say their rack
(`rack_id`, librdkafka's `client.rack`) and the partitions' replicas are on brokers with a
`broker.rack`, a member is preferably given partitions with a replica in its own rack, so that
it can fetch from that replica (KIP-392) -- but never at the cost of balance: the counts the
assignor would reach without racks are kept.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Protocol

TopicPartition = tuple[uuid.UUID, int]
Assignment = dict[uuid.UUID, frozenset[int]]


# (topic id, partition) -> the racks of the brokers holding its replicas (absent: not known).
PartitionRacks = Mapping[TopicPartition, frozenset[str]]
NO_RACKS: PartitionRacks = {}


@dataclass(frozen=True, slots=True)
class AssignmentMember:
    """What the assignor knows of a member: its subscribed topic ids, its current target and
    its rack (None: it did not say)."""

    subscribed: frozenset[uuid.UUID]
    current: Mapping[uuid.UUID, Set[int]]
    rack: str | None = None


class Assignor(Protocol):
    name: str

    def assign(
        self,
        members: Mapping[str, AssignmentMember],
        partitions: Mapping[uuid.UUID, int],
        racks: PartitionRacks = NO_RACKS,
    ) -> dict[str, Assignment]:
        """`partitions`: topic id -> partition count of every subscribed topic that exists;
        `racks`: where each partition's replicas are, for rack-aware placement."""
        ...


def _in_rack(member: AssignmentMember, tp: TopicPartition, racks: PartitionRacks) -> bool:
    return member.rack is not None and member.rack in racks.get(tp, ())


def _as_assignment(owned: Set[TopicPartition]) -> Assignment:
    by_topic: dict[uuid.UUID, set[int]] = {}
    for topic_id, partition in owned:
        by_topic.setdefault(topic_id, set()).add(partition)
    return {topic_id: frozenset(ps) for topic_id, ps in by_topic.items()}


class UniformAssignor:
    """Spreads the partitions so that members' counts differ by at most one where subscriptions
    allow it, keeping partitions where they already are (Kafka's default, `uniform`)."""

    name = "uniform"

    def assign(
        self,
        members: Mapping[str, AssignmentMember],
        partitions: Mapping[uuid.UUID, int],
        racks: PartitionRacks = NO_RACKS,
    ) -> dict[str, Assignment]:
        placement = _UniformPlacement(members, partitions, racks)
        placement.keep_current()
        placement.place_free()
        placement.balance()
        if racks:
            placement.swap_into_racks()
        return {member_id: _as_assignment(tps) for member_id, tps in placement.owned.items()}


class _UniformPlacement:
    """One run of the uniform assignor: who may own each partition, and who owns it so far."""

    def __init__(
        self,
        members: Mapping[str, AssignmentMember],
        partitions: Mapping[uuid.UUID, int],
        racks: PartitionRacks,
    ) -> None:
        self.members = members
        self.racks = racks
        self.order = sorted(members)
        self.eligible: dict[TopicPartition, list[str]] = {}
        for topic_id in sorted(partitions, key=str):
            subscribers = [m for m in self.order if topic_id in members[m].subscribed]
            if subscribers:
                for partition in range(partitions[topic_id]):
                    self.eligible[(topic_id, partition)] = subscribers
        self.owned: dict[str, set[TopicPartition]] = {m: set() for m in self.order}
        self.owner: dict[TopicPartition, str] = {}

    def in_rack(self, member_id: str, tp: TopicPartition) -> bool:
        return _in_rack(self.members[member_id], tp, self.racks)

    def least_loaded(self, tp: TopicPartition) -> str:
        """The least loaded member that may take `tp`; among those, one in a rack of its replicas."""
        return min(self.eligible[tp], key=lambda m: (len(self.owned[m]), not self.in_rack(m, tp), m))

    def give(self, tp: TopicPartition, member_id: str) -> None:
        previous = self.owner.get(tp)
        if previous is not None:
            self.owned[previous].discard(tp)
        self.owned[member_id].add(tp)
        self.owner[tp] = member_id

    def keep_current(self) -> None:
        """Each member keeps what it has, while it still subscribes and the partition exists."""
        for member_id in self.order:
            for topic_id, current in self.members[member_id].current.items():
                for partition in sorted(current):
                    tp = (topic_id, partition)
                    if tp in self.eligible and member_id in self.eligible[tp] and tp not in self.owner:
                        self.give(tp, member_id)

    def place_free(self) -> None:
        for tp in self.eligible:
            if tp not in self.owner:
                self.give(tp, self.least_loaded(tp))

    def balance(self) -> None:
        """Moves single partitions from the most to the least loaded members until no move
        narrows the gap (sticky: only what has to move, moves). The partitions that leave are
        first those outside the giver's rack, then, as in Kafka, the giver's last ones (a member
        of six partitions joined by another keeps 0-2 and hands over 3-5; librdkafka's 0113
        `x_incremental_rebalances` expects exactly that), and go preferably to a taker in their rack."""
        moved = True
        while moved:
            moved = False
            for member_id in sorted(self.owned, key=lambda m: (-len(self.owned[m]), m)):
                last_first = sorted(self.owned[member_id], key=lambda tp: (str(tp[0]), tp[1]), reverse=True)
                candidates = sorted(last_first, key=lambda tp: self.in_rack(member_id, tp))
                for tp in candidates:
                    target = self.least_loaded(tp)
                    if len(self.owned[target]) + 1 < len(self.owned[member_id]):
                        self.give(tp, target)
                        moved = True
                        break
                if moved:
                    break

    def swap_into_racks(self) -> None:
        """Swaps two partitions between two members when each lands in its new owner's rack and
        neither was in its old owner's: the counts stay, only rack locality improves."""
        misplaced = sorted(
            (tp for tp, member_id in self.owner.items() if not self.in_rack(member_id, tp)),
            key=lambda tp: (str(tp[0]), tp[1]),
        )
        for tp in misplaced:
            holder = self.owner[tp]
            if self.in_rack(holder, tp):
                continue  # already swapped into place
            for other in self.eligible[tp]:
                if other == holder or not self.in_rack(other, tp):
                    continue
                back = next(
                    (
                        theirs
                        for theirs in sorted(self.owned[other], key=lambda t: (str(t[0]), t[1]))
                        if holder in self.eligible[theirs]
                        and self.in_rack(holder, theirs)
                        and not self.in_rack(other, theirs)
                    ),
                    None,
                )
                if back is not None:
                    self.give(tp, other)
                    self.give(back, holder)
                    break


class RangeAssignor:
    """Per topic, the subscribers sorted by member id each get one contiguous range of
    partitions, the first ones one more when the count does not divide (`range`): members that
    subscribe to the same topics get the same partition numbers of each (co-partitioning)."""

    name = "range"

    def assign(
        self,
        members: Mapping[str, AssignmentMember],
        partitions: Mapping[uuid.UUID, int],
        racks: PartitionRacks = NO_RACKS,
    ) -> dict[str, Assignment]:
        owned: dict[str, set[TopicPartition]] = {m: set() for m in members}
        for topic_id, count in partitions.items():
            subscribers = sorted(m for m in members if topic_id in members[m].subscribed)
            if not subscribers:
                continue
            base, extra = divmod(count, len(subscribers))
            quotas = {m: base + (1 if index < extra else 0) for index, m in enumerate(subscribers)}
            free = list(range(count))
            if racks:
                # First each member's share among the partitions in its rack, in partition order
                # (the counts stay those of plain ranges)...
                for member_id in subscribers:
                    local = [p for p in free if _in_rack(members[member_id], (topic_id, p), racks)]
                    taken = set(local[: quotas[member_id]])
                    owned[member_id].update((topic_id, p) for p in taken)
                    quotas[member_id] -= len(taken)
                    free = [p for p in free if p not in taken]
            # ...then the rest in ranges: without racks, each member one contiguous range.
            start = 0
            for member_id in subscribers:
                owned[member_id].update((topic_id, p) for p in free[start : start + quotas[member_id]])
                start += quotas[member_id]
        return {member_id: _as_assignment(tps) for member_id, tps in owned.items()}


ASSIGNORS: dict[str, Assignor] = {
    assignor.name: assignor for assignor in (UniformAssignor(), RangeAssignor())
}
