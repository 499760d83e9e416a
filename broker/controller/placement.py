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
    leaders: Counter[int] = Counter()
    replicas: Counter[int] = Counter()
    for assignment in existing:
        if assignment.replicas:
            leaders[assignment.replicas[0]] += 1
        replicas.update(assignment.replicas)
    placements = []
    for _ in range(count):
        leader = min(ordered, key=lambda b: (leaders[b.broker_id], replicas[b.broker_id], b.broker_id))
        chosen = [leader]
        while len(chosen) < replication_factor:
            used_racks = Counter(b.rack for b in chosen)
            # Rotate the tie-break by the leader's position so followers spread too.
            start = ordered.index(leader)
            rotated = ordered[start + 1 :] + ordered[: start + 1]
            remaining = [b for b in rotated if b not in chosen]
            follower = min(
                remaining,
                key=lambda b: (
                    used_racks[b.rack] if b.rack is not None else 0,
                    replicas[b.broker_id],
                    rotated.index(b),
                ),
            )
            chosen.append(follower)
        leaders[leader.broker_id] += 1
        replicas.update(b.broker_id for b in chosen)
        placements.append(tuple(b.broker_id for b in chosen))
    return placements
