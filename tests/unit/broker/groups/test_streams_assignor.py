"""The Streams-group sticky task assignor: balanced, sticky, standby copies on other processes."""

from __future__ import annotations

from collections import Counter

from broker.groups.streams_assignor import (
    AssignmentMember,
    MemberTasks,
    StreamsTopologyTasks,
    TaskId,
    assign_tasks,
)

TOPOLOGY = StreamsTopologyTasks({"0": 4, "1": 3}, stateful=frozenset({"1"}))


def _every_task_once(assignment: dict[str, MemberTasks]) -> None:
    counts = Counter(task for tasks in assignment.values() for task in tasks.active)
    assert set(counts) == set(TOPOLOGY.tasks())
    assert set(counts.values()) == {1}


def _loads(assignment: dict[str, MemberTasks]) -> list[int]:
    return sorted(len(tasks.active) for tasks in assignment.values())


def test_it_spreads_every_task_once_within_one_of_each_other() -> None:
    members = {f"m{i}": AssignmentMember(f"p{i}") for i in range(3)}
    assignment = assign_tasks(members, TOPOLOGY)
    _every_task_once(assignment)
    assert _loads(assignment) == [2, 2, 3]
    assert assign_tasks({}, TOPOLOGY) == {}


def test_a_joining_member_takes_only_what_balance_needs() -> None:
    first = assign_tasks({"a": AssignmentMember("p1"), "b": AssignmentMember("p2")}, TOPOLOGY)
    members = {m: AssignmentMember(f"p-{m}", first[m]) for m in first}
    members["c"] = AssignmentMember("p3")
    second = assign_tasks(members, TOPOLOGY)
    _every_task_once(second)
    assert _loads(second) == [2, 2, 3]
    moved = sum(len(first[m].active - second[m].active) for m in first)
    assert moved == 2, "only the tasks the new member needs move"


def test_a_leaving_members_tasks_go_where_their_standby_was() -> None:
    task: TaskId = ("1", 0)
    members = {
        "a": AssignmentMember("p1", MemberTasks(active=frozenset({task}))),
        "b": AssignmentMember("p2", MemberTasks(standby=frozenset({task}))),
        "c": AssignmentMember("p3"),
    }
    del members["a"]
    assignment = assign_tasks(members, TOPOLOGY)
    assert task in assignment["b"].active


def test_standby_copies_live_on_other_processes_and_only_for_state() -> None:
    members = {
        "a1": AssignmentMember("p1"),
        "a2": AssignmentMember("p1"),
        "b1": AssignmentMember("p2"),
        "c1": AssignmentMember("p3"),
    }
    assignment = assign_tasks(members, TOPOLOGY, num_standby_replicas=2)
    process = {m: spec.process_id for m, spec in members.items()}
    for task in TOPOLOGY.tasks():
        active_on = [m for m, tasks in assignment.items() if task in tasks.active]
        standby_on = [m for m, tasks in assignment.items() if task in tasks.standby]
        if task[0] == "0":
            assert standby_on == [], "a stateless task has no standby"
            continue
        processes = [process[m] for m in active_on + standby_on]
        assert len(processes) == 3
        assert len(set(processes)) == 3, "never two copies on one process"
    # More copies than other processes: as many as there are.
    two = {"a": AssignmentMember("p1"), "b": AssignmentMember("p2")}
    assignment = assign_tasks(two, TOPOLOGY, num_standby_replicas=3)
    assert all(len(assignment[m].standby) + len(assignment[m].active) > 0 for m in two)
    assert sum(len(t.standby) for t in assignment.values()) == TOPOLOGY.task_counts["1"]
