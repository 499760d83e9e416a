"""Server-side assignors of the consumer group protocol (KIP-848): `uniform` and `range`.

An assignor maps every member to the partitions it should own, given what each member
subscribes to and how many partitions each subscribed topic has. It is a pure function; the
coordinator moves members towards its answer (the target assignment) one heartbeat at a time.

Both are sticky where it costs nothing: `uniform` keeps a member's current target partitions
as long as the balance allows it, so a member joining or leaving moves as few partitions as
possible (members keep consuming the partitions that do not move).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Protocol

TopicPartition = tuple[uuid.UUID, int]
Assignment = dict[uuid.UUID, frozenset[int]]


@dataclass(frozen=True, slots=True)
class AssignmentMember:
    """What the assignor knows of a member: its subscribed topic ids and its current target."""

    subscribed: frozenset[uuid.UUID]
    current: Mapping[uuid.UUID, Set[int]]


class Assignor(Protocol):
    name: str

    def assign(
        self, members: Mapping[str, AssignmentMember], partitions: Mapping[uuid.UUID, int]
    ) -> dict[str, Assignment]:
        """`partitions`: topic id -> partition count of every subscribed topic that exists."""
        ...


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
        self, members: Mapping[str, AssignmentMember], partitions: Mapping[uuid.UUID, int]
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
        # Give every free partition to the least loaded member that may take it.
        for tp, subscribers in eligible.items():
            if tp not in owner:
                chosen = min(subscribers, key=lambda m: (len(owned[m]), m))
                owned[chosen].add(tp)
                owner[tp] = chosen
        self._balance(owned, owner, eligible)
        return {member_id: _as_assignment(tps) for member_id, tps in owned.items()}

    @staticmethod
    def _balance(
        owned: dict[str, set[TopicPartition]],
        owner: dict[TopicPartition, str],
        eligible: Mapping[TopicPartition, list[str]],
    ) -> None:
        """Moves single partitions from the most to the least loaded members until no move
        narrows the gap (sticky: only what has to move, moves)."""
        moved = True
        while moved:
            moved = False
            for member_id in sorted(owned, key=lambda m: (-len(owned[m]), m)):
                for tp in sorted(owned[member_id], key=lambda tp: (str(tp[0]), tp[1])):
                    target = min(eligible[tp], key=lambda m: (len(owned[m]), m))
                    if len(owned[target]) + 1 < len(owned[member_id]):
                        owned[member_id].discard(tp)
                        owned[target].add(tp)
                        owner[tp] = target
                        moved = True
                        break
                if moved:
                    break


class RangeAssignor:
    """Per topic, the subscribers sorted by member id each get one contiguous range of
    partitions, the first ones one more when the count does not divide (`range`): members that
    subscribe to the same topics get the same partition numbers of each (co-partitioning)."""

    name = "range"

    def assign(
        self, members: Mapping[str, AssignmentMember], partitions: Mapping[uuid.UUID, int]
    ) -> dict[str, Assignment]:
        owned: dict[str, set[TopicPartition]] = {m: set() for m in members}
        for topic_id, count in partitions.items():
            subscribers = sorted(m for m in members if topic_id in members[m].subscribed)
            if not subscribers:
                continue
            base, extra = divmod(count, len(subscribers))
            start = 0
            for index, member_id in enumerate(subscribers):
                size = base + (1 if index < extra else 0)
                owned[member_id].update((topic_id, p) for p in range(start, start + size))
                start += size
        return {member_id: _as_assignment(tps) for member_id, tps in owned.items()}


ASSIGNORS: dict[str, Assignor] = {
    assignor.name: assignor for assignor in (UniformAssignor(), RangeAssignor())
}
