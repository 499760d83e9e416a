"""Where new partitions' replicas go: spread over racks first, then over the least loaded brokers.

Greedy and deterministic: each partition's leader is the usable broker leading the fewest
partitions so far; each further replica prefers a rack the partition does not use yet,
then the broker holding the fewest replicas. Existing partitions count as load, so a new
topic fills the brokers an earlier topic used least.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from broker.controller.api import PartitionAssignment


class PlacementError(ValueError):
    """Not enough usable brokers for the replication factor."""


@dataclass(frozen=True, slots=True)
class Candidate:
    broker_id: int
    rack: str | None


def place_partitions(
    brokers: Sequence[Candidate],
    count: int,
    replication_factor: int,
    existing: Iterable[PartitionAssignment] = (),
) -> list[tuple[int, ...]]:
    """Replica lists (leader first) for `count` new partitions."""
    if replication_factor < 1:
        raise PlacementError("replication factor must be at least 1")
    if replication_factor > len(brokers):
        raise PlacementError(
            f"replication factor {replication_factor} is larger than the {len(brokers)} available brokers"
        )
    ordered = sorted(brokers, key=lambda b: b.broker_id)
    ids = [b.broker_id for b in ordered]
    racks = [b.rack for b in ordered]
    leaders: Counter[int] = Counter()
    replicas: Counter[int] = Counter()
    for assignment in existing:
        if assignment.replicas:
            leaders[assignment.replicas[0]] += 1
        replicas.update(assignment.replicas)
    # By position in `ordered` from here on: a 10,000-partition topic is placed on the controller's
    # event loop, so the loop below is kept to list lookups.
    leader_load = [leaders[i] for i in ids]
    replica_load = [replicas[i] for i in ids]
    positions = range(len(ordered))
    # The other brokers after each leader, wrapping around: ties between followers go to the first
    # of them, which spreads followers as the leaders rotate.
    rotations = [[*positions[start + 1 :], *positions[:start]] for start in positions]
    placements = []
    for _ in range(count):
        leader = min(positions, key=lambda i: (leader_load[i], replica_load[i]))
        chosen = [leader]
        used_racks: Counter[str] = Counter()
        if racks[leader] is not None:
            used_racks[racks[leader]] += 1
        while len(chosen) < replication_factor:
            # A rack the partition does not use yet first, then the broker holding the fewest replicas.
            follower = min(
                (i for i in rotations[leader] if i not in chosen),
                key=lambda i: (used_racks[racks[i]] if racks[i] is not None else 0, replica_load[i]),
            )
            chosen.append(follower)
            if racks[follower] is not None:
                used_racks[racks[follower]] += 1
        leader_load[leader] += 1
        for position in chosen:
            replica_load[position] += 1
        placements.append(tuple(ids[i] for i in chosen))
    return placements
