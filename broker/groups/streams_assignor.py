"""The sticky task assignor of Streams groups (KIP-1071): which member runs which task.

A task is (subtopology id, partition); a subtopology has as many tasks as its widest source topic has
partitions. Members belong to processes (a Kafka Streams instance with several stream threads is one process,
several members). The rules, as Kafka 4.2's sticky assignor keeps them:

- every task is active on exactly one member, and the members' active loads differ by at most one;
- a task stays with the member that had it (active, then a member of the process that had it on standby) as
  long as that keeps the loads balanced, so that state stores are not moved without need;
- a stateful task gets `num_standby_replicas` standby copies, each on a process other than its active one and
  other than its other copies, preferring the members that had it, then the least loaded.

Pure: no I/O, no clock; the coordinator feeds it the group's members and the topology's task counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TaskId = tuple[str, int]


@dataclass(frozen=True)
class MemberTasks:
    """A member's tasks: subtopology id -> partitions, for each kind."""

    active: frozenset[TaskId] = frozenset()
    standby: frozenset[TaskId] = frozenset()


@dataclass(frozen=True)
class AssignmentMember:
    process_id: str
    previous: MemberTasks = field(default_factory=MemberTasks)


@dataclass(frozen=True)
class StreamsTopologyTasks:
    """subtopology id -> its task count, and which subtopologies keep state (have changelog topics)."""

    task_counts: Mapping[str, int]
    stateful: frozenset[str] = frozenset()

    def tasks(self) -> list[TaskId]:
        return [
            (subtopology, partition)
            for subtopology in sorted(self.task_counts)
            for partition in range(self.task_counts[subtopology])
        ]


def assign_tasks(
    members: Mapping[str, AssignmentMember], topology: StreamsTopologyTasks, num_standby_replicas: int = 0
) -> dict[str, MemberTasks]:
    """Every member's new tasks (an empty group gets nothing)."""
    if not members:
        return {}
    tasks = topology.tasks()
    member_ids = sorted(members)
    active = _assign_active(members, member_ids, tasks)
    standby = _assign_standby(members, member_ids, tasks, topology.stateful, active, num_standby_replicas)
    return {
        member_id: MemberTasks(frozenset(active[member_id]), frozenset(standby[member_id]))
        for member_id in member_ids
    }


def _assign_active(
    members: Mapping[str, AssignmentMember], member_ids: list[str], tasks: list[TaskId]
) -> dict[str, set[TaskId]]:
    # Loads are balanced to within one: the first `extra` members (in order of who keeps most) may take one more.
    base, extra = divmod(len(tasks), len(member_ids))
    quota = dict.fromkeys(member_ids, base)
    keeps = {
        member_id: sum(1 for task in tasks if task in members[member_id].previous.active)
        for member_id in member_ids
    }
    for member_id in sorted(member_ids, key=lambda m: (-keeps[m], m))[:extra]:
        quota[member_id] += 1
    assigned: dict[str, set[TaskId]] = {member_id: set() for member_id in member_ids}
    unassigned: list[TaskId] = []
    owner_of = {task: m for m in member_ids for task in members[m].previous.active}
    for task in tasks:
        owner = owner_of.get(task)
        if owner is not None and len(assigned[owner]) < quota[owner]:
            assigned[owner].add(task)
        else:
            unassigned.append(task)
    # Then the members of a process that had the task on standby (its state is warm there), then the least loaded.
    standby_holders: dict[TaskId, list[str]] = {}
    for member_id in member_ids:
        for task in members[member_id].previous.standby:
            standby_holders.setdefault(task, []).append(member_id)
    for task in unassigned:
        candidates = [m for m in standby_holders.get(task, []) if len(assigned[m]) < quota[m]]
        if not candidates:
            candidates = [m for m in member_ids if len(assigned[m]) < quota[m]]
        chosen = min(candidates, key=lambda m: (len(assigned[m]), m))
        assigned[chosen].add(task)
    return assigned


def _assign_standby(
    members: Mapping[str, AssignmentMember],
    member_ids: list[str],
    tasks: list[TaskId],
    stateful: frozenset[str],
    active: Mapping[str, set[TaskId]],
    replicas: int,
) -> dict[str, set[TaskId]]:
    standby: dict[str, set[TaskId]] = {member_id: set() for member_id in member_ids}
    if replicas <= 0:
        return standby
    active_process = {task: members[m].process_id for m in member_ids for task in active[m]}

    def load(member_id: str) -> tuple[int, str]:
        return (len(active[member_id]) + len(standby[member_id]), member_id)

    for task in tasks:
        if task[0] not in stateful:
            continue
        used = {active_process[task]}
        for _copy in range(replicas):
            candidates = [m for m in member_ids if members[m].process_id not in used]
            if not candidates:
                break  # fewer processes than copies: Kafka leaves the rest unassigned too
            previous = [m for m in candidates if task in members[m].previous.standby]
            chosen = min(previous or candidates, key=load)
            standby[chosen].add(task)
            used.add(members[chosen].process_id)
    return standby
