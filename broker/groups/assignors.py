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
        order = sorted(members)
        eligible: dict[TopicPartition, list[str]] = {}
        for topic_id in sorted(partitions, key=str):
            subscribers = [m for m in order if topic_id in members[m].subscribed]
            if subscribers:
                for partition in range(partitions[topic_id]):
                    eligible[(topic_id, partition)] = subscribers
        owned: dict[str, set[TopicPartition]] = {m: set() for m in order}
        owner: dict[TopicPartition, str] = {}
        # Keep what each member already has, while it still subscribes and the partition exists.
        for member_id in order:
            for topic_id, current in members[member_id].current.items():
                for partition in sorted(current):
                    tp = (topic_id, partition)
                    if tp in eligible and member_id in eligible[tp] and tp not in owner:
                        owned[member_id].add(tp)
                        owner[tp] = member_id
        # Give every free partition to the least loaded member that may take it; among the
        # least loaded, one in a rack of the partition's replicas.
        for tp, subscribers in eligible.items():
            if tp not in owner:
                chosen = min(
                    subscribers, key=lambda m: (len(owned[m]), not _in_rack(members[m], tp, racks), m)
                )
                owned[chosen].add(tp)
                owner[tp] = chosen
        self._balance(members, owned, owner, eligible, racks)
        if racks:
            self._swap_into_racks(members, owned, owner, eligible, racks)
        return {member_id: _as_assignment(tps) for member_id, tps in owned.items()}

    @staticmethod
    def _balance(
        members: Mapping[str, AssignmentMember],
        owned: dict[str, set[TopicPartition]],
        owner: dict[TopicPartition, str],
        eligible: Mapping[TopicPartition, list[str]],
        racks: PartitionRacks,
    ) -> None:
        """Moves single partitions from the most to the least loaded members until no move
        narrows the gap (sticky: only what has to move, moves). The partitions that leave are
        first those outside the giver's rack, and go preferably to a taker in their rack."""
        moved = True
        while moved:
            moved = False
            for member_id in sorted(owned, key=lambda m: (-len(owned[m]), m)):
                giver = members[member_id]
                candidates = sorted(
                    owned[member_id], key=lambda tp: (_in_rack(giver, tp, racks), str(tp[0]), tp[1])
                )
                for tp in candidates:
                    target = min(
                        eligible[tp],
                        key=lambda m, tp=tp: (len(owned[m]), not _in_rack(members[m], tp, racks), m),
                    )
                    if len(owned[target]) + 1 < len(owned[member_id]):
                        owned[member_id].discard(tp)
                        owned[target].add(tp)
                        owner[tp] = target
                        moved = True
                        break
                if moved:
                    break

    @staticmethod
    def _swap_into_racks(
        members: Mapping[str, AssignmentMember],
        owned: dict[str, set[TopicPartition]],
        owner: dict[TopicPartition, str],
        eligible: Mapping[TopicPartition, list[str]],
        racks: PartitionRacks,
    ) -> None:
        """Swaps two partitions between two members when each lands in its new owner's rack and
        neither was in its old owner's: the counts stay, only rack locality improves."""
        misplaced = sorted(
            (tp for tp, member_id in owner.items() if not _in_rack(members[member_id], tp, racks)),
            key=lambda tp: (str(tp[0]), tp[1]),
        )
        for tp in misplaced:
            holder = owner[tp]
            if _in_rack(members[holder], tp, racks):
                continue  # already swapped into place
            for other in eligible[tp]:
                if other == holder or not _in_rack(members[other], tp, racks):
                    continue
                back = next(
                    (
                        theirs
                        for theirs in sorted(owned[other], key=lambda t: (str(t[0]), t[1]))
                        if holder in eligible[theirs]
                        and _in_rack(members[holder], theirs, racks)
                        and not _in_rack(members[other], theirs, racks)
                    ),
                    None,
                )
                if back is not None:
                    owned[holder].discard(tp)
                    owned[other].discard(back)
                    owned[other].add(tp)
                    owned[holder].add(back)
                    owner[tp], owner[back] = other, holder
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
