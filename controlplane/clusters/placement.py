"""Where replicas go when brokers come and go, and how far a move has got. Pure functions over plain
values (no Django, no cluster): the services fetch the state, these decide."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from controlplane.kafka.reassignments import OngoingReassignment
from controlplane.kafka.topics import PartitionInfo

PartitionKey = tuple[str, int]


class PlacementRefused(ValueError):
    """The move cannot keep every partition's replication factor on distinct brokers."""


def replica_load(partitions: Mapping[PartitionKey, PartitionInfo]) -> Counter[int]:
    """How many replicas each broker holds."""
    return Counter(replica for info in partitions.values() for replica in info.replicas)


def plan_drain(
    partitions: Mapping[PartitionKey, PartitionInfo], node_id: int, brokers: Iterable[int]
) -> dict[PartitionKey, list[int]]:
    """New replica lists that keep each partition's replication factor without `node_id`: its replica
    goes, in the same position (so a preferred leader is replaced by a new preferred leader), to the
    least loaded broker that does not hold the partition yet."""
    remaining = sorted(set(brokers) - {node_id})
    load = replica_load(partitions)
    targets: dict[PartitionKey, list[int]] = {}
    for key, info in sorted(partitions.items()):
        if node_id not in info.replicas:
            continue
        candidates = [broker for broker in remaining if broker not in info.replicas]
        if not candidates:
            raise PlacementRefused(
                f"{key[0]}-{key[1]} has {len(info.replicas)} replicas and only {len(remaining)} brokers "
                f"would remain: add a broker first or lower the topic's replication factor."
            )
        chosen = min(candidates, key=lambda broker: (load[broker], broker))
        load[chosen] += 1
        load[node_id] -= 1
        targets[key] = [chosen if replica == node_id else replica for replica in info.replicas]
    return targets


def plan_move_onto(
    partitions: Mapping[PartitionKey, PartitionInfo], node_id: int
) -> dict[PartitionKey, list[int]]:
    """Moves one replica of each partition that `node_id` does not hold onto it, keeping the replication
    factor: the replica that leaves is the one on the most loaded broker, a follower before the leader."""
    load = replica_load(partitions)
    targets: dict[PartitionKey, list[int]] = {}
    for key, info in sorted(partitions.items()):
        if node_id in info.replicas or not info.replicas:
            continue
        leaving = max(info.replicas, key=lambda broker: (broker != info.leader, load[broker], broker))
        load[leaving] -= 1
        load[node_id] += 1
        targets[key] = [node_id if replica == leaving else replica for replica in info.replicas]
    return targets


def check_target(
    info: PartitionInfo | None, key: PartitionKey, replicas: list[int], brokers: set[int]
) -> None:
    """Refuses a target replica list naming unknown brokers, repeating one, or for a missing partition."""
    if info is None:
        raise PlacementRefused(f"{key[0]} has no partition {key[1]}.")
    if not replicas:
        raise PlacementRefused("A partition needs at least one replica.")
    if len(set(replicas)) != len(replicas):
        raise PlacementRefused(f"{key[0]}-{key[1]}: each broker holds a partition at most once.")
    unknown = sorted(set(replicas) - brokers)
    if unknown:
        raise PlacementRefused(f"{key[0]}-{key[1]}: no broker {', '.join(map(str, unknown))} in the cluster.")


@dataclass(frozen=True)
class ReplicaProgress:
    node_id: int
    bytes: int


@dataclass(frozen=True)
class PartitionProgress:
    topic: str
    partition: int
    replicas: list[int]
    target: list[int]
    adding: list[int]
    removing: list[int]
    leader: int
    leader_bytes: int
    adding_bytes: list[ReplicaProgress]
    percent: float


def _percent(done: int, total: int) -> float:
    if total <= 0:
        return 100.0
    return round(min(100.0, 100.0 * done / total), 1)


def reassignment_progress(
    ongoing: Iterable[OngoingReassignment],
    leaders: Mapping[PartitionKey, int],
    sizes: Mapping[tuple[str, int, int], int],
) -> tuple[list[PartitionProgress], float]:
    """Each moving partition's copy progress — the adding replicas' bytes against the leader's — and the
    overall percentage over every adding replica (100 when nothing moves)."""
    rows = []
    done_total = wanted_total = 0
    for move in ongoing:
        key = (move.topic, move.partition)
        leader = leaders.get(key, -1)
        leader_bytes = sizes.get((move.topic, move.partition, leader), 0)
        copies = [
            ReplicaProgress(node_id=node, bytes=sizes.get((move.topic, move.partition, node), 0))
            for node in move.adding
        ]
        done = sum(min(copy.bytes, leader_bytes) for copy in copies)
        wanted = leader_bytes * len(copies)
        done_total += done
        wanted_total += wanted
        rows.append(
            PartitionProgress(
                topic=move.topic,
                partition=move.partition,
                replicas=move.replicas,
                target=move.target,
                adding=move.adding,
                removing=move.removing,
                leader=leader,
                leader_bytes=leader_bytes,
                adding_bytes=copies,
                percent=_percent(done, wanted),
            )
        )
    return rows, _percent(done_total, wanted_total)
