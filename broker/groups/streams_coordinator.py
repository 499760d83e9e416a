"""Streams groups (KIP-1071): StreamsGroupHeartbeat and StreamsGroupDescribe, a group type the group
coordinator is composed with (broker/groups/group_type.py).

A Kafka Streams application with `group.protocol=streams` lets the broker decide which member runs which task.
The group keeps the topology its first member declared; each heartbeat may change the membership, which bumps
the group epoch; the target assignment (broker/groups/streams_assignor.py) is recomputed at the new epoch; each
member then reconciles towards its target as KIP-848 members do: it first gives up the tasks it must revoke,
then gets its epoch and the tasks nobody else still holds, the rest as they are released.

Offsets are committed with the member id and epoch (OffsetCommit, TxnOffsetCommit), checked here.

Held in memory: a restart or a coordinator move starts the group again (its members rejoin; committed offsets
are kept in `__consumer_offsets` as always). Kafka also keeps the group's records there; not yet done here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.groups.clock import Timer
from broker.groups.group import JoinResult, SyncResult
from broker.groups.group_type import ClassicJoin, GroupDescription, ListedGroup, OffsetCommitter
from broker.groups.streams_assignor import (
    AssignmentMember,
    MemberTasks,
    StreamsTopologyTasks,
    TaskId,
    assign_tasks,
)
from broker.groups.streams_topology import (
    ASSIGNMENT_DELAYED,
    SHUTDOWN_APPLICATION,
    STALE_TOPOLOGY,
    StreamsTopology,
    TopologyPlan,
)

if TYPE_CHECKING:
    from broker.groups.coordinator import GroupCoordinator

log = logging.getLogger(__name__)

STREAMS_GROUP_TYPE = "streams"
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


@dataclass(frozen=True)
class StreamsGroupConfig:
    """Kafka's `group.streams.*` broker settings (their defaults)."""

    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    num_standby_replicas: int = 0
    initial_rebalance_delay_ms: int = 3000
    acceptable_recovery_lag: int = 10000
    task_offset_interval_ms: int = 60000


@dataclass
class StreamsMember:
    member_id: str
    process_id: str
    client_id: str
    client_host: str
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = 300000
    topology_epoch: int = 0
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    member_epoch: int = 0
    previous_epoch: int = -1
    # What the member was last told it runs, and what it still holds that it was told to give up.
    assigned: MemberTasks = field(default_factory=MemberTasks)
    revoking: frozenset[TaskId] = frozenset()
    session_timer: Any = None
    # Whether the last answer's tasks differ from what the member has heard: tasks are sent only then.
    assignment_changed: bool = True


@dataclass
class StreamsGroup:
    group_id: str
    topology: StreamsTopology | None = None
    plan: TopologyPlan = field(default_factory=TopologyPlan)
    members: dict[str, StreamsMember] = field(default_factory=dict)
    group_epoch: int = 0
    assignment_epoch: int = 0
    target: dict[str, MemberTasks] = field(default_factory=dict)
    # Until this time the first assignment waits for more members (group.streams.initial.rebalance.delay.ms).
    delay_until_ms: int = 0
    endpoint_epoch: int = 0
    shutdown_requested: bool = False

    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.topology is None or not self.plan.task_counts:
            return "NotReady"
        if self.assignment_epoch < self.group_epoch:
            return "Assigning"
        if any(m.member_epoch != self.assignment_epoch or m.revoking for m in self.members.values()):
            return "Reconciling"
        return "Stable"


@dataclass
class StreamsHeartbeatResult:
    error_code: int
    error_message: str | None = None
    member_id: str = ""
    member_epoch: int = 0
    statuses: list[tuple[int, str]] = field(default_factory=list)
    tasks: MemberTasks | None = None
    endpoint_epoch: int = 0
    endpoints: list[tuple[tuple[str, int], MemberTasks]] | None = None


class StreamsGroups:
    """The Streams groups of a group coordinator, beside its classic and consumer groups (it adds itself to
    the coordinator's group types)."""

    type_name = STREAMS_GROUP_TYPE

    def __init__(self, coordinator: GroupCoordinator, config: StreamsGroupConfig | None = None) -> None:
        self._coordinator = coordinator
        self.config = config or StreamsGroupConfig()
        self.groups: dict[str, StreamsGroup] = {}
        coordinator.add_group_type(self)

    def holds(self, group_id: str) -> bool:
        return group_id in self.groups

    # --- StreamsGroupHeartbeat ----------------------------------------------------------------

    def conflict(self, group_id: str) -> bool:
        """A consumer group, or a classic group with members, has that id (Kafka: GROUP_ID_NOT_FOUND for another
        type). An empty classic group only holds the offsets a streams group committed."""
        classic = self._coordinator.groups.get(group_id)
        other = self._coordinator.group_type_of(group_id)
        return (other is not None and other is not self) or (classic is not None and bool(classic.members))

    def heartbeat(
        self,
        *,
        group_id: str,
        member_id: str,
        member_epoch: int,
        topology: StreamsTopology | None,
        plan_for: Any,
        fields: dict[str, Any],
        owned_active: frozenset[TaskId] | None,
        owned_standby: frozenset[TaskId] | None,
    ) -> StreamsHeartbeatResult:
        """One heartbeat; `plan_for(topology)` gives the topology's plan against the topics as they are now."""
        unavailable = self._coordinator.availability_error(group_id)
        if unavailable is not None:
            return StreamsHeartbeatResult(unavailable)
        if self.conflict(group_id):
            return StreamsHeartbeatResult(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a streams group."
            )
        now = self._coordinator.clock.now_ms()
        group = self.groups.get(group_id)
        if member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            if group is not None and member_id in group.members:
                self._remove_member(group, group.members[member_id])
            return StreamsHeartbeatResult(ErrorCode.none, member_id=member_id, member_epoch=member_epoch)
        if group is None:
            if member_epoch != 0:
                return StreamsHeartbeatResult(
                    ErrorCode.group_id_not_found, f"Streams group {group_id} not found."
                )
            group = self.groups[group_id] = StreamsGroup(group_id)
            group.delay_until_ms = now + self.config.initial_rebalance_delay_ms
        member = group.members.get(member_id)
        if member_epoch == 0:
            if topology is None:
                return StreamsHeartbeatResult(ErrorCode.invalid_request, "Topology must be set when joining.")
            if member is None:
                member = StreamsMember(
                    member_id,
                    fields.get("process_id") or member_id,
                    fields["client_id"],
                    fields["client_host"],
                )
                group.members[member_id] = member
                group.group_epoch += 1
            if group.topology is None or (topology.epoch > group.topology.epoch):
                group.topology = topology
                group.group_epoch += 1
        elif member is None:
            return StreamsHeartbeatResult(
                ErrorCode.unknown_member_id, f"Member {member_id} is not in group {group_id}."
            )
        elif member_epoch not in (member.member_epoch, member.previous_epoch):
            return StreamsHeartbeatResult(
                ErrorCode.fenced_member_epoch, f"The member epoch {member_epoch} is not the current one."
            )
        if self._apply_fields(member, fields):
            group.endpoint_epoch += 1
        if fields.get("shutdown_application"):
            group.shutdown_requested = True
        self._schedule_session_timeout(group, member)

        assert group.topology is not None
        plan = plan_for(group.topology)
        if plan.task_counts != group.plan.task_counts:
            group.group_epoch += 1
        group.plan = plan
        statuses = list(plan.statuses)
        if group.shutdown_requested:
            statuses.append(
                (SHUTDOWN_APPLICATION, "A client requested the shutdown of the whole application.")
            )
        if group.topology.epoch != (topology.epoch if topology is not None else member.topology_epoch):
            statuses.append(
                (
                    STALE_TOPOLOGY,
                    "The topology epoch supplied is inconsistent with the topology for this streams group.",
                )
            )
        if topology is not None:
            member.topology_epoch = topology.epoch
        if now < group.delay_until_ms and group.assignment_epoch == 0:
            statuses.append(
                (ASSIGNMENT_DELAYED, "Assignment delayed due to the configured initial rebalance delay.")
            )
            # A member in the group with nothing to run yet: it heartbeats at the group's epoch meanwhile.
            if member.member_epoch == 0:
                member.member_epoch = group.group_epoch
        elif group.assignment_epoch < group.group_epoch:
            self._compute_target(group)
        self._released(group, member, owned_active, owned_standby)
        tasks = self._reconcile(group, member)
        endpoints = None
        if fields.get("endpoint_information_epoch", -1) != group.endpoint_epoch:
            endpoints = [
                (m.user_endpoint, m.assigned) for m in group.members.values() if m.user_endpoint is not None
            ]
        return StreamsHeartbeatResult(
            ErrorCode.none,
            member_id=member_id,
            member_epoch=member.member_epoch,
            statuses=statuses,
            tasks=tasks,
            endpoint_epoch=group.endpoint_epoch,
            endpoints=endpoints,
        )

    @staticmethod
    def _apply_fields(member: StreamsMember, fields: dict[str, Any]) -> bool:
        """The heartbeat's non-null fields onto the member; whether its endpoint changed."""
        for name in ("instance_id", "rack_id", "client_id", "client_host"):
            if fields.get(name) is not None:
                setattr(member, name, fields[name])
        if fields.get("process_id") is not None:
            member.process_id = fields["process_id"]
        if fields.get("rebalance_timeout_ms", -1) >= 0:
            member.rebalance_timeout_ms = fields["rebalance_timeout_ms"]
        if fields.get("client_tags") is not None:
            member.client_tags = dict(fields["client_tags"])
        endpoint = fields.get("user_endpoint")
        if endpoint is not None and endpoint != member.user_endpoint:
            member.user_endpoint = endpoint
            return True
        return False

    def _compute_target(self, group: StreamsGroup) -> None:
        if not group.plan.task_counts:
            group.target = {m: MemberTasks() for m in group.members}
        else:
            group.target = assign_tasks(
                {m: AssignmentMember(spec.process_id, spec.assigned) for m, spec in group.members.items()},
                StreamsTopologyTasks(group.plan.task_counts, group.plan.stateful),
                self.config.num_standby_replicas,
            )
        group.assignment_epoch = group.group_epoch

    @staticmethod
    def _released(
        group: StreamsGroup,
        member: StreamsMember,
        owned_active: frozenset[TaskId] | None,
        owned_standby: frozenset[TaskId] | None,
    ) -> None:
        """What the member reports it holds ends a revocation of the tasks it no longer has."""
        if owned_active is None and owned_standby is None:
            return
        held = (owned_active or frozenset()) | (owned_standby or frozenset())
        member.revoking = member.revoking & held

    def _reconcile(self, group: StreamsGroup, member: StreamsMember) -> MemberTasks | None:
        """The member's next tasks towards its target; None when unchanged since its last heartbeat."""
        target = group.target.get(member.member_id)
        if target is None or group.assignment_epoch == 0:
            return self._answer_tasks(member)
        current = member.assigned
        keep_active = current.active & target.active
        keep_standby = current.standby & target.standby
        to_revoke = (current.active - target.active) | (current.standby - target.standby)
        if to_revoke:
            # First give up what moves away (the member keeps its epoch until it has).
            member.revoking |= to_revoke
            self._set_assigned(member, MemberTasks(keep_active, keep_standby))
            return self._answer_tasks(member)
        if member.revoking:
            return self._answer_tasks(member)
        # Then the tasks nobody else still holds.
        held_elsewhere = {
            task
            for other in group.members.values()
            if other is not member
            for task in other.assigned.active | other.revoking
        }
        active = keep_active | (target.active - held_elsewhere)
        standby = keep_standby | (target.standby - held_elsewhere - active)
        if member.member_epoch != group.assignment_epoch:
            member.previous_epoch, member.member_epoch = member.member_epoch, group.assignment_epoch
        self._set_assigned(member, MemberTasks(active, standby))
        return self._answer_tasks(member)

    @staticmethod
    def _set_assigned(member: StreamsMember, tasks: MemberTasks) -> None:
        if tasks != member.assigned:
            member.assigned = tasks
            member.assignment_changed = True

    @staticmethod
    def _answer_tasks(member: StreamsMember) -> MemberTasks | None:
        if not member.assignment_changed:
            return None
        member.assignment_changed = False
        return member.assigned

    def _schedule_session_timeout(self, group: StreamsGroup, member: StreamsMember) -> None:
        _cancel(member.session_timer)
        member.session_timer = self._coordinator.call_later(
            group.group_id, self.config.session_timeout_ms, lambda: self._on_session_expired(group, member)
        )

    def _on_session_expired(self, group: StreamsGroup, member: StreamsMember) -> None:
        if group.members.get(member.member_id) is not member:
            return
        log.info("streams group %s: member %s session expired", group.group_id, member.member_id)
        self._remove_member(group, member)

    def _remove_member(self, group: StreamsGroup, member: StreamsMember) -> None:
        _cancel(member.session_timer)
        del group.members[member.member_id]
        group.group_epoch += 1
        group.target.pop(member.member_id, None)
        if member.user_endpoint is not None:
            group.endpoint_epoch += 1
        if not group.members:
            # An empty group forgets its topology (the next first member declares it again).
            group.topology = None
            group.shutdown_requested = False

    # --- what the coordinator asks of a group type -------------------------------------------------

    def committing_member_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        group = self.groups[group_id]
        if committer.generation_id < 0 and not group.members:
            return None
        return self._member_error(group, committer.member_id, committer.generation_id)

    def fetching_member_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int | None:
        if member_id is None and member_epoch < 0:
            return None  # admin tools read any group's offsets
        return self._member_error(self.groups[group_id], member_id, member_epoch)

    @staticmethod
    def _member_error(group: StreamsGroup, member_id: str | None, member_epoch: int) -> int | None:
        member = group.members.get(member_id) if member_id is not None else None
        if member is None:
            return ErrorCode.unknown_member_id
        if member_epoch != member.member_epoch:
            return ErrorCode.stale_member_epoch
        return None

    def listed(self) -> list[ListedGroup]:
        coordinator = self._coordinator
        return [
            ListedGroup(group_id, STREAMS_GROUP_TYPE, group.state, STREAMS_GROUP_TYPE)
            for group_id, group in self.groups.items()
            if coordinator.owns_partition(coordinator.partition_for(group_id))
        ]

    # A Streams group has no classic members: the classic requests naming its id are classic groups' to answer
    # (its offsets are held by an empty classic entry), and it keeps no records of its own (held in memory).

    async def classic_join(self, join: ClassicJoin) -> JoinResult | None:
        return None

    def classic_sync(
        self, group_id: str, generation_id: int, member_id: str, protocol_name: str | None
    ) -> SyncResult | None:
        return None

    def classic_heartbeat(self, group_id: str, generation_id: int, member_id: str) -> int | None:
        return None

    def classic_leave(self, group_id: str, members: Sequence[tuple[str, str | None]]) -> list[int] | None:
        return None

    def describe_classic(self, group_id: str) -> GroupDescription | None:
        return None

    def protected_topics(self, group_id: str) -> set[str] | None:
        return None

    def keeps_offsets(self, group_id: str) -> bool:
        return False

    async def delete(self, group_id: str) -> int | None:
        return None

    def replay(self, partition: int, key: bytes, value: bytes | None) -> bool:
        return False

    def partition_loaded(self, partition: int, serving: bool) -> None:
        return None

    def describe(self, group_id: str) -> tuple[int | None, StreamsGroup | None]:
        """(NOT_COORDINATOR or a loading error, or None; the group if this coordinator has it)."""
        unavailable = self._coordinator.availability_error(group_id)
        if unavailable is not None:
            return unavailable, None
        return None, self.groups.get(group_id)

    def release(self) -> None:
        for group in self.groups.values():
            for member in group.members.values():
                _cancel(member.session_timer)

    def drop_partition(self, partition: int) -> None:
        """A `__consumer_offsets` partition moved away: its streams groups go with it (their members rejoin at
        the new coordinator)."""
        for group_id in [g for g in self.groups if self._coordinator.partition_for(g) == partition]:
            for member in self.groups.pop(group_id).members.values():
                _cancel(member.session_timer)


def _cancel(timer: Timer | None) -> None:
    if timer is not None:
        timer.cancel()
