"""The classic group state machine: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and timeouts."""

from __future__ import annotations

import asyncio

from kio.schema.errors import ErrorCode

from broker.groups.coordinator import GroupCoordinator, GroupCoordinatorConfig
from broker.groups.group import GroupState, JoinResult
from tests.fixtures.coordinators import lead_every_partition, load_every_partition

from .conftest import TEST_CONFIG, ManualClock, MemoryOffsetsLog, SlowToCommitLog, settle
from .helpers import join, join_new_member, stable_group, sync


def state_of(coordinator: GroupCoordinator, group: str = "g") -> GroupState:
    return coordinator.groups[group].state


async def test_a_new_member_first_gets_member_id_required_with_a_generated_id(
    coordinator: GroupCoordinator,
) -> None:
    result = await join(coordinator)
    assert result.error_code == ErrorCode.member_id_required
    assert result.member_id.startswith("client-")
    assert state_of(coordinator) is GroupState.EMPTY


async def test_a_lone_member_leads_generation_1_and_the_group_is_stable_after_sync(
    coordinator: GroupCoordinator,
) -> None:
    result = await (await join_new_member(coordinator))
    assert result.error_code == ErrorCode.none
    assert result.generation_id == 1
    assert result.leader == result.member_id
    assert result.protocol_name == "range"
    assert result.members == ((result.member_id, None, b"range-metadata"),)
    assert state_of(coordinator) is GroupState.COMPLETING_REBALANCE
    synced = await sync(coordinator, result, assignments={result.member_id: b"assigned"})
    assert synced.error_code == ErrorCode.none
    assert synced.assignment == b"assigned"
    assert state_of(coordinator) is GroupState.STABLE


async def test_a_member_may_join_without_the_member_id_round_trip_before_v4(
    coordinator: GroupCoordinator,
) -> None:
    result = await join(coordinator, require_known_member_id=False)
    assert result.error_code == ErrorCode.none
    assert result.generation_id == 1


async def test_only_the_leader_receives_the_member_list(coordinator: GroupCoordinator) -> None:
    results = await stable_group(coordinator, 3)
    assert len({r.generation_id for r in results}) == 1
    leaders = [r for r in results if r.member_id == r.leader]
    assert len(leaders) == 1
    assert {m[0] for m in leaders[0].members} == {r.member_id for r in results}
    assert all(r.members == () for r in results if r is not leaders[0])


async def test_each_member_receives_its_own_assignment(coordinator: GroupCoordinator) -> None:
    results = await stable_group(coordinator, 2)
    for result in results:
        again = await sync(coordinator, result)
        assert again.assignment == result.member_id.encode()


async def test_followers_wait_in_sync_until_the_leader_assigns(coordinator: GroupCoordinator) -> None:
    ids = [(await join(coordinator)).member_id for _ in range(2)]
    first, second = await asyncio.gather(*(join(coordinator, member_id=m) for m in ids))
    follower = first if first.member_id != first.leader else second
    leader = second if follower is first else first
    follower_sync = sync(coordinator, follower)
    await settle()
    assert not follower_sync.done()
    await sync(coordinator, leader, assignments={follower.member_id: b"yours"})
    assert (await follower_sync).assignment == b"yours"


async def test_the_leader_hears_its_sync_answer_before_the_waiting_followers(
    coordinator: GroupCoordinator,
) -> None:
    """aiokafka's rebalance tests read the leader's assignment as soon as a follower has its own."""
    ids = [(await join(coordinator)).member_id for _ in range(3)]
    joined = await asyncio.gather(*(join(coordinator, member_id=m) for m in ids))
    leader = next(r for r in joined if r.member_id == r.leader)
    followers = [r for r in joined if r is not leader]
    answered: list[str] = []
    waiting = [sync(coordinator, f) for f in followers]
    for follower, future in zip(followers, waiting, strict=True):
        future.add_done_callback(lambda _done, member=follower.member_id: answered.append(member))
    await settle()
    leader_sync = sync(coordinator, leader, assignments={r.member_id: b"a" for r in joined})
    leader_sync.add_done_callback(lambda _done: answered.append(leader.member_id))
    await asyncio.gather(leader_sync, *waiting)
    assert answered[0] == leader.member_id
    assert sorted(answered[1:]) == sorted(f.member_id for f in followers)


async def test_the_group_is_stable_only_once_the_leader_has_its_answer(coordinator: GroupCoordinator) -> None:
    """A follower's SyncGroup arriving once the group is Stable is answered at once: it must not
    overtake the leader's answer (a Stable group with an unanswered leader let it do so)."""
    ids = [(await join(coordinator)).member_id for _ in range(2)]
    joined = await asyncio.gather(*(join(coordinator, member_id=m) for m in ids))
    leader = next(r for r in joined if r.member_id == r.leader)
    leader_sync = sync(coordinator, leader, assignments={r.member_id: b"a" for r in joined})
    while state_of(coordinator) != GroupState.STABLE:
        await asyncio.sleep(0)
    assert leader_sync.done()


async def test_followers_get_their_assignment_when_the_leader_disconnects_mid_sync(
    coordinator: GroupCoordinator,
) -> None:
    ids = [(await join(coordinator)).member_id for _ in range(2)]
    first, second = await asyncio.gather(*(join(coordinator, member_id=m) for m in ids))
    follower = first if first.member_id != first.leader else second
    leader = second if follower is first else first
    follower_sync = sync(coordinator, follower)
    await settle()
    leader_sync = sync(coordinator, leader, assignments={follower.member_id: b"yours"})
    await asyncio.sleep(0)  # the leader's SyncGroup is writing the group when its connection goes
    leader_sync.cancel()
    assert (await follower_sync).assignment == b"yours"


async def test_the_protocol_is_chosen_by_a_vote_of_the_members(coordinator: GroupCoordinator) -> None:
    prefs = [
        (("range", b"a"), ("roundrobin", b"b")),
        (("roundrobin", b"c"), ("range", b"d")),
        (("roundrobin", b"e"), ("range", b"f"), ("sticky", b"g")),
    ]
    ids = [(await join(coordinator, protocols=p)).member_id for p in prefs]
    results = await asyncio.gather(
        *(join(coordinator, member_id=m, protocols=p) for m, p in zip(ids, prefs, strict=True))
    )
    assert {r.protocol_name for r in results} == {"roundrobin"}
    leader = next(r for r in results if r.leader == r.member_id)
    assert sorted(m[2] for m in leader.members) == [b"b", b"c", b"e"]


async def test_a_member_with_no_protocol_in_common_is_rejected(coordinator: GroupCoordinator) -> None:
    await stable_group(coordinator, 1)
    result = await join(coordinator, protocols=(("cooperative-sticky", b""),))
    assert result.error_code == ErrorCode.inconsistent_group_protocol
    other_type = await join(coordinator, protocol_type="connect")
    assert other_type.error_code == ErrorCode.inconsistent_group_protocol


async def test_a_first_member_without_protocols_is_rejected(coordinator: GroupCoordinator) -> None:
    assert (await join(coordinator, protocols=())).error_code == ErrorCode.inconsistent_group_protocol


async def test_session_timeouts_outside_the_broker_limits_are_rejected(coordinator: GroupCoordinator) -> None:
    assert (await join(coordinator, session_ms=999)).error_code == ErrorCode.invalid_session_timeout
    assert (await join(coordinator, session_ms=60_001)).error_code == ErrorCode.invalid_session_timeout


async def test_an_empty_group_id_is_invalid(coordinator: GroupCoordinator) -> None:
    assert (await join(coordinator, group="")).error_code == ErrorCode.invalid_group_id


async def test_joining_a_missing_group_with_a_member_id_is_unknown_member(
    coordinator: GroupCoordinator,
) -> None:
    assert (await join(coordinator, member_id="ghost")).error_code == ErrorCode.unknown_member_id


async def test_a_full_group_refuses_new_members(clock: ManualClock) -> None:
    coordinator = GroupCoordinator(
        MemoryOffsetsLog(),
        GroupCoordinatorConfig(initial_rebalance_delay_ms=0, min_session_timeout_ms=1000, max_group_size=2),
        clock,
    )
    await lead_every_partition(coordinator)
    await stable_group(coordinator, 2)
    assert (await join(coordinator)).error_code == ErrorCode.group_max_size_reached


async def test_heartbeats_keep_a_stable_member_alive(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    (result,) = await stable_group(coordinator, 1)
    for _ in range(5):
        await clock.advance(6_000)
        beat = coordinator.heartbeat(
            group_id="g",
            generation_id=result.generation_id,
            member_id=result.member_id,
            group_instance_id=None,
        )
        assert beat == ErrorCode.none
    assert state_of(coordinator) is GroupState.STABLE


async def test_heartbeat_errors_name_the_problem(coordinator: GroupCoordinator) -> None:
    (result,) = await stable_group(coordinator, 1)

    def beat(generation: int, member: str, group: str = "g") -> int:
        return coordinator.heartbeat(
            group_id=group, generation_id=generation, member_id=member, group_instance_id=None
        )

    assert beat(result.generation_id + 1, result.member_id) == ErrorCode.illegal_generation
    assert beat(result.generation_id, "stranger") == ErrorCode.unknown_member_id
    assert beat(result.generation_id, result.member_id, group="other") == ErrorCode.unknown_member_id


async def test_a_new_member_puts_the_group_in_rebalance_and_heartbeats_say_so(
    coordinator: GroupCoordinator,
) -> None:
    (first,) = await stable_group(coordinator, 1)
    newcomer = await join_new_member(coordinator)
    assert state_of(coordinator) is GroupState.PREPARING_REBALANCE
    beat = coordinator.heartbeat(
        group_id="g", generation_id=first.generation_id, member_id=first.member_id, group_instance_id=None
    )
    assert beat == ErrorCode.rebalance_in_progress
    old_sync = await sync(coordinator, first)
    assert old_sync.error_code == ErrorCode.rebalance_in_progress
    rejoined = await join(coordinator, member_id=first.member_id)
    assert rejoined.generation_id == first.generation_id + 1
    assert (await newcomer).generation_id == first.generation_id + 1


async def test_a_member_whose_session_expires_is_removed_and_the_rest_rebalance(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    survivor, silent = await stable_group(coordinator, 2)
    for _ in range(3):
        await clock.advance(5_000)
        coordinator.heartbeat(
            group_id="g",
            generation_id=survivor.generation_id,
            member_id=survivor.member_id,
            group_instance_id=None,
        )
    group = coordinator.groups["g"]
    assert silent.member_id not in group.members
    assert state_of(coordinator) is GroupState.PREPARING_REBALANCE
    rejoined = await join(coordinator, member_id=survivor.member_id)
    assert rejoined.generation_id == survivor.generation_id + 1
    assert rejoined.leader == survivor.member_id
    assert [m[0] for m in rejoined.members] == [survivor.member_id]


async def test_a_member_that_does_not_rejoin_in_the_rebalance_timeout_is_dropped(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    rejoining, lagging = await stable_group(coordinator, 2)
    pending = join(coordinator, member_id=rejoining.member_id)
    await settle()
    assert not pending.done()  # waits for the other member to rejoin
    await clock.advance(30_000)
    result = await pending
    assert result.error_code == ErrorCode.none
    assert [m[0] for m in result.members] == [rejoining.member_id]
    assert lagging.member_id not in coordinator.groups["g"].members


async def test_a_leader_that_never_syncs_is_dropped_after_the_rebalance_timeout(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    # The leader keeps heartbeating (session 10 s) but never sends SyncGroup (rebalance 5 s).
    ids = [(await join(coordinator, rebalance_ms=5000)).member_id for _ in range(2)]
    results = await asyncio.gather(*(join(coordinator, member_id=m, rebalance_ms=5000) for m in ids))
    follower = next(r for r in results if r.member_id != r.leader)
    waiting = sync(coordinator, follower)
    await clock.advance(5_000)
    assert (await waiting).error_code == ErrorCode.rebalance_in_progress
    assert list(coordinator.groups["g"].members) == [follower.member_id]
    assert state_of(coordinator) is GroupState.PREPARING_REBALANCE


async def test_the_last_member_leaving_empties_the_group_with_a_new_generation(
    coordinator: GroupCoordinator,
) -> None:
    (result,) = await stable_group(coordinator, 1)
    error, members = coordinator.leave_group(group_id="g", members=[(result.member_id, None)])
    assert (error, members) == (ErrorCode.none, [ErrorCode.none])
    group = coordinator.groups["g"]
    assert group.state is GroupState.EMPTY
    assert group.generation_id == result.generation_id + 1
    assert group.protocol_name is None


async def test_leave_group_reports_each_member(coordinator: GroupCoordinator) -> None:
    a, b = await stable_group(coordinator, 2)
    error, members = coordinator.leave_group(group_id="g", members=[(a.member_id, None), ("nobody", None)])
    assert error == ErrorCode.none
    assert members == [ErrorCode.none, ErrorCode.unknown_member_id]
    assert state_of(coordinator) is GroupState.PREPARING_REBALANCE
    assert list(coordinator.groups["g"].members) == [b.member_id]
    missing_group = coordinator.leave_group(group_id="nope", members=[("x", None)])
    assert missing_group == (ErrorCode.none, [ErrorCode.unknown_member_id])


async def test_a_pending_member_id_that_never_comes_back_is_forgotten(
    coordinator: GroupCoordinator, clock: ManualClock
) -> None:
    (stable,) = await stable_group(coordinator, 1)
    abandoned = await join(coordinator)
    assert abandoned.error_code == ErrorCode.member_id_required
    rejoin = join(coordinator, member_id=stable.member_id)
    await settle()
    assert not rejoin.done()  # the pending id holds the rebalance
    await clock.advance(10_000)
    result = await rejoin
    assert result.error_code == ErrorCode.none
    assert coordinator.groups["g"].pending_members == {}
    late = await join(coordinator, member_id=abandoned.member_id)
    assert late.error_code == ErrorCode.unknown_member_id


async def test_the_initial_rebalance_delay_gathers_members_that_arrive_together(clock: ManualClock) -> None:
    coordinator = GroupCoordinator(
        MemoryOffsetsLog(),
        GroupCoordinatorConfig(initial_rebalance_delay_ms=3000, min_session_timeout_ms=1000),
        clock,
    )
    await lead_every_partition(coordinator)
    first = join(coordinator, require_known_member_id=False)
    await clock.advance(2000)
    second = join(coordinator, require_known_member_id=False)
    await clock.advance(3000)
    assert not first.done()  # at 3 s the newcomer has extended the delay by another 3 s
    await clock.advance(1000)
    a, b = await first, await second
    assert a.generation_id == b.generation_id == 1
    assert {a.error_code, b.error_code} == {ErrorCode.none}


async def test_a_coordinator_that_leads_nothing_is_loading_or_stopped_says_so() -> None:
    offsets_log = SlowToCommitLog()
    offsets_log.followers_caught_up.clear()
    coordinator = GroupCoordinator(offsets_log, TEST_CONFIG, ManualClock())
    assert (await join(coordinator)).error_code == ErrorCode.not_coordinator
    loads = load_every_partition(coordinator)
    assert (await join(coordinator)).error_code == ErrorCode.coordinator_load_in_progress
    offsets_log.followers_caught_up.set()
    await asyncio.gather(*loads)
    assert (await join(coordinator)).error_code == ErrorCode.member_id_required
    await coordinator.stop()
    assert (await join(coordinator)).error_code == ErrorCode.not_coordinator


async def test_stopping_answers_members_parked_in_join(coordinator: GroupCoordinator) -> None:
    a, _ = await stable_group(coordinator, 2)
    parked = join(coordinator, member_id=a.member_id)
    await settle()
    await coordinator.stop()
    assert (await parked).error_code == ErrorCode.not_coordinator


# --- static membership (KIP-345) -------------------------------------------------------------------


async def test_a_static_member_joins_without_the_member_id_round_trip(coordinator: GroupCoordinator) -> None:
    result = await join(coordinator, instance="pod-1")
    assert result.error_code == ErrorCode.none
    assert coordinator.groups["g"].static_members == {"pod-1": result.member_id}


async def test_a_restarted_static_follower_takes_over_without_a_rebalance(
    coordinator: GroupCoordinator,
) -> None:
    leader = await join(coordinator, instance="pod-1")
    await sync(coordinator, leader, assignments={leader.member_id: b"p0"})
    follower = await join_follower(coordinator, leader, "pod-2")
    generation = follower.generation_id

    restarted = await join(coordinator, instance="pod-2")
    assert restarted.error_code == ErrorCode.none
    assert restarted.generation_id == generation
    assert restarted.member_id != follower.member_id
    assert state_of(coordinator) is GroupState.STABLE
    assert (await sync(coordinator, restarted, instance="pod-2")).assignment == b"p1"
    # The old incarnation is fenced everywhere.
    beat = coordinator.heartbeat(
        group_id="g", generation_id=generation, member_id=follower.member_id, group_instance_id="pod-2"
    )
    assert beat == ErrorCode.fenced_instance_id
    stale_join = await join(coordinator, member_id=follower.member_id, instance="pod-2")
    assert stale_join.error_code == ErrorCode.fenced_instance_id


async def join_follower(coordinator: GroupCoordinator, leader: JoinResult, instance: str) -> JoinResult:
    """Adds a static follower to a one-member group and completes the rebalance."""
    follower_future = join(coordinator, instance=instance)
    await settle()
    leader_again = await join(coordinator, member_id=leader.member_id, instance="pod-1")
    follower = await follower_future
    leader_sync = sync(
        coordinator,
        leader_again,
        instance="pod-1",
        assignments={leader.member_id: b"p0", follower.member_id: b"p1"},
    )
    assert (await sync(coordinator, follower, instance=instance)).assignment == b"p1"
    await leader_sync
    return follower


async def test_leave_group_by_group_instance_id_removes_the_static_member(
    coordinator: GroupCoordinator,
) -> None:
    result = await join(coordinator, instance="pod-1")
    await sync(coordinator, result)
    error, members = coordinator.leave_group(group_id="g", members=[("", "pod-1"), ("", "pod-9")])
    assert members == [ErrorCode.none, ErrorCode.unknown_member_id]
    assert error == ErrorCode.none
    assert coordinator.groups["g"].static_members == {}


async def test_leave_group_with_a_stale_member_id_for_an_instance_is_fenced(
    coordinator: GroupCoordinator,
) -> None:
    result = await join(coordinator, instance="pod-1")
    await sync(coordinator, result)
    _, members = coordinator.leave_group(group_id="g", members=[("old-id", "pod-1")])
    assert members == [ErrorCode.fenced_instance_id]


async def test_a_leader_cancelled_mid_sync_still_completes_the_generation(
    coordinator: GroupCoordinator,
) -> None:
    leader = await (await join_new_member(coordinator))
    request = sync(coordinator, leader, assignments={leader.member_id: b"mine"})
    await asyncio.sleep(0)  # the request is now writing the group metadata
    request.cancel()
    await settle()
    assert state_of(coordinator) is GroupState.STABLE
    assert coordinator.groups["g"].members[leader.member_id].assignment == b"mine"


async def test_a_restarted_static_leader_keeps_the_generation_and_is_named_by_its_old_id(
    coordinator: GroupCoordinator,
) -> None:
    leader = await join(coordinator, instance="pod-1")
    await sync(coordinator, leader, instance="pod-1", assignments={leader.member_id: b"everything"})
    restarted = await join(coordinator, instance="pod-1")
    assert (restarted.generation_id, restarted.leader, restarted.members) == (
        leader.generation_id,
        leader.member_id,
        (),
    )
    assert coordinator.groups["g"].leader_id == restarted.member_id
    assert (await sync(coordinator, restarted, instance="pod-1")).assignment == b"everything"
