"""A Streams group's topology (KIP-1071): what the application declared, and what it takes to run it.

The first member of a group sends the topology: its subtopologies, each with the topics it reads (source and
repartition topics), writes through (repartition sinks) and keeps its state in (changelog topics), and which of
them must have the same partition count (copartition groups). The broker creates the internal topics (the
repartition and changelog topics) and derives how many tasks each subtopology has: one per partition of its
widest input. `plan_topology` does the arithmetic; it is pure, the coordinator brings the topic catalog.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# StreamsGroupHeartbeatResponse status codes (Kafka 4.2's StreamsGroupHeartbeatResponse.Status).
STALE_TOPOLOGY = 0
MISSING_SOURCE_TOPICS = 1
INCORRECTLY_PARTITIONED_TOPICS = 2
MISSING_INTERNAL_TOPICS = 3
SHUTDOWN_APPLICATION = 4
ASSIGNMENT_DELAYED = 5


@dataclass(frozen=True)
class InternalTopic:
    name: str
    partitions: int  # 0: derived from the subtopology
    replication_factor: int  # 0 or -1: the broker's default
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[InternalTopic, ...] = ()
    state_changelog_topics: tuple[InternalTopic, ...] = ()
    copartition_groups: tuple[tuple[str, ...], ...] = ()

    @property
    def stateful(self) -> bool:
        return bool(self.state_changelog_topics)


@dataclass(frozen=True)
class StreamsTopology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]


@dataclass(frozen=True)
class TopologyPlan:
    """What the topology needs now: tasks per subtopology (empty until it can run), internal topics to create
    (name, partitions, replication factor, configs), and statuses to tell the members (code, detail)."""

    task_counts: dict[str, int] = field(default_factory=dict)
    stateful: frozenset[str] = frozenset()
    topics_to_create: list[InternalTopic] = field(default_factory=list)
    statuses: list[tuple[int, str]] = field(default_factory=list)


def _internal(entry: Any) -> InternalTopic:
    return InternalTopic(
        entry.name,
        int(entry.partitions),
        int(entry.replication_factor),
        tuple((kv.key, kv.value) for kv in entry.topic_configs),
    )


def topology_from_request(topology: Any) -> StreamsTopology:
    """The kio StreamsGroupHeartbeat topology as our own immutable value."""
    subtopologies = []
    for sub in topology.subtopologies:
        sources = tuple(sub.source_topics)
        repartition_sources = tuple(_internal(entry) for entry in sub.repartition_source_topics)
        groups = []
        for group in sub.copartition_groups:
            names = [sources[i] for i in group.source_topics]
            names += [repartition_sources[i].name for i in group.repartition_source_topics]
            groups.append(tuple(names))
        subtopologies.append(
            Subtopology(
                subtopology_id=sub.subtopology_id,
                source_topics=sources,
                repartition_sink_topics=tuple(sub.repartition_sink_topics),
                repartition_source_topics=repartition_sources,
                state_changelog_topics=tuple(_internal(entry) for entry in sub.state_changelog_topics),
                copartition_groups=tuple(groups),
            )
        )
    return StreamsTopology(int(topology.epoch), tuple(subtopologies))


def topology_is_valid(topology: StreamsTopology) -> str | None:
    """Why Kafka refuses a topology as INVALID_REQUEST, or None."""
    if not topology.subtopologies:
        return "Topology must not be empty."
    ids = [sub.subtopology_id for sub in topology.subtopologies]
    if len(set(ids)) != len(ids):
        return "Subtopology ids must be unique."
    for sub in topology.subtopologies:
        if not sub.source_topics and not sub.repartition_source_topics:
            return f"Subtopology {sub.subtopology_id} has no source topics."
    return None


def plan_topology(topology: StreamsTopology, partitions_of: Callable[[str], int | None]) -> TopologyPlan:
    """Task counts and the internal topics to create, given the partition count of each existing topic (None:
    no such topic)."""
    missing_sources = sorted(
        {name for sub in topology.subtopologies for name in sub.source_topics if partitions_of(name) is None}
    )
    if missing_sources:
        return TopologyPlan(
            statuses=[(MISSING_SOURCE_TOPICS, f"Source topics {', '.join(missing_sources)} are missing.")]
        )
    # Repartition topics take the task count of the subtopology writing them (fixed point: a chain of
    # repartitions resolves upstream first); unknown until every input of the writer is known.
    repartition: dict[str, int] = {}
    for sub in topology.subtopologies:
        for topic in sub.repartition_source_topics:
            if topic.partitions > 0:
                repartition[topic.name] = topic.partitions
    task_counts: dict[str, int] = {}
    for _round in range(len(topology.subtopologies) + 1):
        for sub in topology.subtopologies:
            widths = [partitions_of(name) or 0 for name in sub.source_topics]
            widths += [repartition.get(topic.name, 0) for topic in sub.repartition_source_topics]
            if all(widths) and widths:
                task_counts[sub.subtopology_id] = max(widths)
                for sink in sub.repartition_sink_topics:
                    repartition.setdefault(sink, task_counts[sub.subtopology_id])
        for sub in topology.subtopologies:
            for group in sub.copartition_groups:
                known = [partitions_of(name) or repartition.get(name, 0) for name in group]
                if any(known):
                    for name in group:
                        if name not in sub.source_topics:
                            repartition.setdefault(name, max(known))
    problems = []
    for sub in topology.subtopologies:
        for group in sub.copartition_groups:
            widths = {partitions_of(name) or repartition.get(name, 0) for name in group}
            if len(widths) > 1:
                problems.append(
                    f"Following topics do not have the same number of partitions: [{', '.join(group)}]"
                )
    if problems:
        return TopologyPlan(statuses=[(INCORRECTLY_PARTITIONED_TOPICS, "; ".join(problems))])
    internal: list[InternalTopic] = []
    for sub in topology.subtopologies:
        for topic in sub.repartition_source_topics:
            internal.append(
                InternalTopic(
                    topic.name, repartition.get(topic.name, 0), topic.replication_factor, topic.configs
                )
            )
        for topic in sub.state_changelog_topics:
            internal.append(
                InternalTopic(
                    topic.name,
                    task_counts.get(sub.subtopology_id, 0),
                    topic.replication_factor,
                    topic.configs,
                )
            )
    to_create = [topic for topic in internal if partitions_of(topic.name) is None and topic.partitions > 0]
    plan = TopologyPlan(
        task_counts=task_counts if len(task_counts) == len(topology.subtopologies) else {},
        stateful=frozenset(sub.subtopology_id for sub in topology.subtopologies if sub.stateful),
        topics_to_create=to_create,
    )
    missing = sorted(topic.name for topic in internal if partitions_of(topic.name) is None)
    if missing:
        plan.statuses.append((MISSING_INTERNAL_TOPICS, f"Internal topics are missing: {', '.join(missing)}"))
        plan.task_counts.clear()
    return plan


def tasks_from_wire(entries: Any) -> frozenset[tuple[str, int]] | None:
    if entries is None:
        return None
    return frozenset((entry.subtopology_id, int(p)) for entry in entries for p in entry.partitions)
