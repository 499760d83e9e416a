"""Random interleavings of JoinGroup, SyncGroup, Heartbeat, LeaveGroup, commits and time,
checked after every step against the invariants of Kafka's group state machine."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from kio.schema.errors import ErrorCode

from broker.groups.coordinator import GroupCoordinator, GroupCoordinatorConfig, PartitionOffset
from broker.groups.group import GroupState, JoinResult, SyncResult
from tests.fixtures.coordinators import lead_every_partition

from .conftest import ManualClock, MemoryOffsetsLog, settle

PROTOCOL_CHOICES = [
    (("range", b"r"),),
    (("range", b"r"), ("roundrobin", b"rr")),
    (("roundrobin", b"rr"), ("range", b"r")),
]
INSTANCES = ["pod-a", "pod-b", None, None]
CONFIG = GroupCoordinatorConfig(
    initial_rebalance_delay_ms=0,
    min_session_timeout_ms=1000,
    max_session_timeout_ms=60_000,
    offsets_retention_ms=10 * 60_000,
)


class GroupProtocolMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = ManualClock()
        self.log = MemoryOffsetsLog()
        self.coordinator = GroupCoordinator(self.log, CONFIG, self.clock)
        self.run(lead_every_partition(self.coordinator))
        self.joins: list[asyncio.Future[JoinResult]] = []
        self.syncs: list[asyncio.Future[SyncResult]] = []
        # What each client believes: member id -> (generation, instance id, protocols)
        self.clients: dict[str, tuple[int, str | None, Any]] = {}
        self.highest_generation = 0

    def run(self, work: Any) -> Any:
        async def step() -> Any:
            result = await work
            await settle()
            return result

        return self.loop.run_until_complete(step())

    def teardown(self) -> None:
        self.run(self.coordinator.stop())
        self.loop.run_until_complete(settle())
        self.loop.close()

    def collect(self) -> None:
        """Records what finished joins told their clients; any exception fails the run."""
        for future in [f for f in self.joins if f.done()]:
            self.joins.remove(future)
            result = future.result()
            if result.error_code == ErrorCode.none:
                _, instance, protocols = self.clients.get(result.member_id, (0, None, None))
                self.clients[result.member_id] = (result.generation_id, instance, protocols)
        for future in [f for f in self.syncs if f.done()]:
            self.syncs.remove(future)
            future.result()

    def pick(self, data: st.DataObject) -> str:
        # Member ids are random: pick by position (in arrival order) so replays draw the same.
        known = list(self.clients)
        return known[data.draw(st.integers(0, 7)) % len(known)]

    def start_join(self, member_id: str, instance: str | None, protocols: Any, session_ms: int) -> None:
        self.clients.setdefault(member_id, (-1, instance, protocols)) if member_id else None

        async def join() -> JoinResult:
            return await self.coordinator.join_group(
                group_id="g",
                member_id=member_id,
                group_instance_id=instance,
                protocol_type="consumer",
                protocols=protocols,
                session_timeout_ms=session_ms,
                rebalance_timeout_ms=5000,
                client_id="c",
                client_host="/h",
                require_known_member_id=True,
            )

        future = self.loop.create_task(join())
        self.joins.append(future)
        self.loop.run_until_complete(settle())
        self.collect()

    @rule(
        instance=st.sampled_from(INSTANCES),
        protocols=st.sampled_from(PROTOCOL_CHOICES),
        session_ms=st.sampled_from([2000, 8000]),
    )
    def a_new_client_joins(self, instance: str | None, protocols: Any, session_ms: int) -> None:
        if instance is None:
            first = self.run(
                self.coordinator.join_group(
                    group_id="g",
                    member_id="",
                    group_instance_id=None,
                    protocol_type="consumer",
                    protocols=protocols,
                    session_timeout_ms=session_ms,
                    rebalance_timeout_ms=5000,
                    client_id="c",
                    client_host="/h",
                    require_known_member_id=True,
                )
            )
            if first.error_code != ErrorCode.member_id_required:
                return
            self.clients[first.member_id] = (-1, None, protocols)
            self.start_join(first.member_id, None, protocols, session_ms)
        else:
            self.start_join("", instance, protocols, session_ms)

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def a_client_rejoins(self, data: st.DataObject) -> None:
        member_id = self.pick(data)
        _, instance, protocols = self.clients[member_id]
        self.start_join(member_id, instance, protocols or PROTOCOL_CHOICES[0], 8000)

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def a_client_syncs(self, data: st.DataObject) -> None:
        member_id = self.pick(data)
        generation, instance, _ = self.clients[member_id]
        group = self.coordinator.groups.get("g")
        assignments = {m: m.encode() for m in group.members} if group and group.leader_id == member_id else {}

        async def sync() -> SyncResult:
            return await self.coordinator.sync_group(
                group_id="g",
                generation_id=generation,
                member_id=member_id,
                group_instance_id=instance,
                protocol_type=None,
                protocol_name=None,
                assignments=assignments,
            )

        self.syncs.append(self.loop.create_task(sync()))
        self.loop.run_until_complete(settle())
        self.collect()

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def a_client_heartbeats(self, data: st.DataObject) -> None:
        member_id = self.pick(data)
        generation, instance, _ = self.clients[member_id]

        async def heartbeat() -> int:
            return self.coordinator.heartbeat(
                group_id="g", generation_id=generation, member_id=member_id, group_instance_id=instance
            )

        error = self.run(heartbeat())
        assert error in {
            ErrorCode.none,
            ErrorCode.rebalance_in_progress,
            ErrorCode.illegal_generation,
            ErrorCode.unknown_member_id,
            ErrorCode.fenced_instance_id,
        }

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def a_client_leaves(self, data: st.DataObject) -> None:
        member_id = self.pick(data)
        _, instance, _ = self.clients.pop(member_id)

        async def leave() -> None:
            self.coordinator.leave_group(group_id="g", members=[(member_id, instance)])

        self.run(leave())
        self.collect()

    @precondition(lambda self: self.clients)
    @rule(data=st.data(), offset=st.integers(0, 100))
    def a_client_commits(self, data: st.DataObject, offset: int) -> None:
        member_id = self.pick(data)
        generation, instance, _ = self.clients[member_id]
        codes = self.run(
            self.coordinator.commit_offsets(
                group_id="g",
                generation_id=generation,
                member_id=member_id,
                group_instance_id=instance,
                offsets=[PartitionOffset("t", 0, offset)],
            )
        )
        if codes == [ErrorCode.none]:
            assert self.coordinator.groups["g"].offsets[("t", 0)].offset == offset

    @rule(ms=st.sampled_from([100, 1500, 3000, 6000]))
    def time_passes(self, ms: int) -> None:
        self.run(self.clock.advance(ms))
        self.collect()

    @rule()
    def the_retention_check_runs_much_later(self) -> None:
        self.clock.now += 11 * 60_000  # a jump: overdue timers fire at the next time_passes
        self.run(self.coordinator.expire_offsets())
        self.collect()

    @invariant()
    def the_group_is_consistent(self) -> None:
        group = self.coordinator.groups.get("g")
        if group is None:
            event("group removed or not created")
            self.highest_generation = 0  # a deleted group starts again from generation 0, as in Kafka
            return
        event(f"group reached {group.state.value}")
        assert group.generation_id >= self.highest_generation
        self.highest_generation = group.generation_id
        if group.leader_id is not None:
            assert group.leader_id in group.members
        for instance, member_id in group.static_members.items():
            assert group.members[member_id].group_instance_id == instance
        for member in group.members.values():
            assert member.session_timer is not None
        if group.is_(GroupState.EMPTY):
            assert not group.members
            assert group.protocol_name is None or group.generation_id == 0
        if group.is_(GroupState.COMPLETING_REBALANCE) or group.is_(GroupState.STABLE):
            assert group.members
            assert group.protocol_name in group.candidate_protocols()
            assert group.leader_id is not None
            assert not any(m.is_awaiting_join for m in group.members.values())
        if group.is_(GroupState.STABLE):
            assert not any(m.is_awaiting_sync for m in group.members.values())

    @invariant()
    def a_restart_would_restore_the_same_offsets(self) -> None:
        replayed = GroupCoordinator(self.log, CONFIG, ManualClock(self.clock.now))
        self.run(lead_every_partition(replayed))
        live = self.coordinator.groups.get("g")
        restored = replayed.groups.get("g")
        live_offsets = {k: v.offset for k, v in live.offsets.items()} if live else {}
        restored_offsets = {k: v.offset for k, v in restored.offsets.items()} if restored else {}
        assert restored_offsets == live_offsets
        if live is not None and restored is not None:
            assert restored.generation_id <= live.generation_id
        self.run(replayed.stop())


GroupProtocolMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
test_the_group_state_machine_keeps_its_invariants = GroupProtocolMachine.TestCase
