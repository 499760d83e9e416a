"""The consumer group protocol (KIP-848) in the coordinator: epochs, assignors, reconciliation,
static members, regex subscriptions, timeouts, offsets, persistence and conversion."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from broker.groups import consumer_records as records
from broker.groups.assignors import AssignmentMember, RangeAssignor, UniformAssignor
from broker.groups.consumer_config import ConsumerGroupConfig, HeartbeatResult
from broker.groups.consumer_groups import ConsumerGroups
from broker.groups.consumer_protocol import (
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_consumer_assignment,
    encode_consumer_subscription,
)
from broker.groups.coordinator import GroupCoordinator, PartitionOffset
from tests.fixtures.coordinators import lead_every_partition
from tests.unit.broker.groups.conftest import TEST_CONFIG, ManualClock, MemoryOffsetsLog, settle
from tests.unit.broker.groups.helpers import join, stable_group, sync

ORDERS, PAYMENTS, AUDIT = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
TOPICS = {"orders": (ORDERS, 6), "payments": (PAYMENTS, 2), "audit.eu": (AUDIT, 1)}
CONFIG = ConsumerGroupConfig(session_timeout_ms=10_000, heartbeat_interval_ms=1000)


def make_coordinator(
    offsets_log: MemoryOffsetsLog,
    clock: ManualClock,
    topics: dict | None = None,
    config: ConsumerGroupConfig = CONFIG,
) -> GroupCoordinator:
    """A group coordinator composed with consumer groups, as the broker builds it."""
    catalog = TOPICS if topics is None else topics
    coordinator = GroupCoordinator(offsets_log, TEST_CONFIG, clock)
    ConsumerGroups(coordinator, config, topic_catalog=lambda: catalog)
    return coordinator


def consumer(coordinator: GroupCoordinator) -> ConsumerGroups:
    found = coordinator.group_type(ConsumerGroups)
    assert found is not None
    return found


@pytest.fixture
def groups(offsets_log: MemoryOffsetsLog, clock: ManualClock) -> GroupCoordinator:
    coordinator = make_coordinator(offsets_log, clock)
    asyncio.run(lead_every_partition(coordinator))  # replays the (empty) log
    return coordinator


async def beat(
    coordinator: GroupCoordinator, member: str, epoch: int, owned: Any = None, **fields: Any
) -> HeartbeatResult:
    defaults: dict[str, Any] = {
        "group_id": "g",
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout_ms": 30_000 if epoch == 0 else -1,
        "subscribed_topic_names": ["orders"] if epoch == 0 else None,
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "client_id": "client",
        "client_host": "/127.0.0.1",
    }
    if owned is None and epoch == 0:
        owned = {}  # a (re)join says it owns nothing (Kafka refuses a null list)
    return await consumer(coordinator).heartbeat(
        member_id=member, member_epoch=epoch, owned=owned, **{**defaults, **fields}
    )


def count(assignment: Any) -> int:
    return sum(len(ps) for ps in (assignment or {}).values())


# --- assignors ------------------------------------------------------------------------------------


def test_uniform_balances_and_keeps_partitions_where_they_are() -> None:
    everyone = frozenset({ORDERS})
    first = UniformAssignor().assign({"a": AssignmentMember(everyone, {})}, {ORDERS: 6})
    assert first["a"] == {ORDERS: frozenset(range(6))}
    second = UniformAssignor().assign(
        {"a": AssignmentMember(everyone, first["a"]), "b": AssignmentMember(everyone, {})}, {ORDERS: 6}
    )
    assert count(second["a"]) == count(second["b"]) == 3
    assert second["a"][ORDERS] < first["a"][ORDERS]  # a only gave up partitions, it got none new


def test_uniform_hands_over_a_members_last_partitions_as_kafka_does() -> None:
    # librdkafka 0113 x_incremental_rebalances: 6 partitions, a second then a third member joins.
    assignor = UniformAssignor()
    first = assignor.assign({"c0": AssignmentMember(frozenset({ORDERS}), {})}, {ORDERS: 6})
    second = assignor.assign(
        {
            "c0": AssignmentMember(frozenset({ORDERS}), first["c0"]),
            "c1": AssignmentMember(frozenset({ORDERS}), {}),
        },
        {ORDERS: 6},
    )
    assert second == {"c0": {ORDERS: frozenset({0, 1, 2})}, "c1": {ORDERS: frozenset({3, 4, 5})}}
    third = assignor.assign(
        {
            "c0": AssignmentMember(frozenset({ORDERS}), second["c0"]),
            "c1": AssignmentMember(frozenset({ORDERS}), second["c1"]),
            "c2": AssignmentMember(frozenset({ORDERS}), {}),
        },
        {ORDERS: 6},
    )
    assert third == {
        "c0": {ORDERS: frozenset({0, 1})},
        "c1": {ORDERS: frozenset({3, 4})},
        "c2": {ORDERS: frozenset({2, 5})},
    }


def test_uniform_respects_subscriptions() -> None:
    members = {
        "a": AssignmentMember(frozenset({ORDERS, PAYMENTS}), {}),
        "b": AssignmentMember(frozenset({PAYMENTS}), {}),
    }
    result = UniformAssignor().assign(members, {ORDERS: 6, PAYMENTS: 2})
    assert result["b"] == {PAYMENTS: frozenset({0, 1})}
    assert result["a"] == {ORDERS: frozenset(range(6))}


def test_range_gives_contiguous_ranges_per_topic() -> None:
    both = frozenset({ORDERS, PAYMENTS})
    result = RangeAssignor().assign(
        {"b": AssignmentMember(both, {}), "a": AssignmentMember(both, {})}, {ORDERS: 5}
    )
    assert result["a"] == {ORDERS: frozenset({0, 1, 2})}
    assert result["b"] == {ORDERS: frozenset({3, 4})}


# --- the heartbeat --------------------------------------------------------------------------------


# Six partitions of ORDERS, two on a broker in each rack.
SIX_RACKED = {(ORDERS, p): frozenset({"rack-" + "abc"[p % 3]}) for p in range(6)}


def racks_of(assignment: Any) -> list[str]:
    return sorted(next(iter(SIX_RACKED[(ORDERS, p)])) for p in assignment.get(ORDERS, ()))


def test_uniform_gives_members_the_partitions_in_their_rack_as_they_join() -> None:
    everyone = frozenset({ORDERS})
    uniform = UniformAssignor()
    target: dict[str, Any] = {}
    for name, rack in (("a", "rack-a"), ("b", "rack-b"), ("c", "rack-c")):
        members = {m: AssignmentMember(everyone, target.get(m, {}), rack=f"rack-{m}") for m in target}
        members[name] = AssignmentMember(everyone, {}, rack=rack)
        target = uniform.assign(members, {ORDERS: 6}, SIX_RACKED)
    assert {m: racks_of(t) for m, t in target.items()} == {
        "a": ["rack-a", "rack-a"],
        "b": ["rack-b", "rack-b"],
        "c": ["rack-c", "rack-c"],
    }


def test_uniform_swaps_sticky_partitions_into_their_racks_without_unbalancing() -> None:
    everyone = frozenset({ORDERS})
    # Racks of partitions 0-3: a, b, c, a. a holds 1 (rack b) and 2; b holds 0 and 3 (rack a).
    members = {
        "a": AssignmentMember(everyone, {ORDERS: frozenset({1, 2})}, rack="rack-a"),
        "b": AssignmentMember(everyone, {ORDERS: frozenset({0, 3})}, rack="rack-b"),
    }
    target = UniformAssignor().assign(members, {ORDERS: 4}, SIX_RACKED)
    # 1 and 0 trade places (both land in their rack); 2 (rack c) and 3 stay: no swap helps both.
    assert target == {"a": {ORDERS: frozenset({0, 2})}, "b": {ORDERS: frozenset({1, 3})}}
    # Without racks the current targets are kept as they are.
    assert UniformAssignor().assign(members, {ORDERS: 4}) == {
        "a": {ORDERS: frozenset({1, 2})},
        "b": {ORDERS: frozenset({0, 3})},
    }


def test_racks_never_unbalance_an_assignment() -> None:
    everyone = frozenset({ORDERS})
    # Every member in rack-a: only two partitions are local, the counts must still be even.
    members = {m: AssignmentMember(everyone, {}, rack="rack-a") for m in ("a", "b", "c")}
    for assignor in (UniformAssignor(), RangeAssignor()):
        target = assignor.assign(members, {ORDERS: 6}, SIX_RACKED)
        assert sorted(count(t) for t in target.values()) == [2, 2, 2], assignor.name
        assert set().union(*(t[ORDERS] for t in target.values())) == set(range(6))


def test_range_prefers_partitions_in_the_members_rack() -> None:
    everyone = frozenset({ORDERS})
    members = {m: AssignmentMember(everyone, {}, rack=f"rack-{m}") for m in ("a", "b", "c")}
    target = RangeAssignor().assign(members, {ORDERS: 6}, SIX_RACKED)
    assert target == {
        "a": {ORDERS: frozenset({0, 3})},
        "b": {ORDERS: frozenset({1, 4})},
        "c": {ORDERS: frozenset({2, 5})},
    }
    # Without racks: contiguous ranges, as before.
    plain = RangeAssignor().assign(members, {ORDERS: 6})
    assert plain["a"] == {ORDERS: frozenset({0, 1})}


async def test_a_member_joins_and_gets_every_partition(groups) -> None:
    answer = await beat(groups, "m1", 0)
    assert answer.error_code == ErrorCode.none
    assert answer.member_epoch == 1
    assert answer.heartbeat_interval_ms == 1000
    assert answer.assignment == {ORDERS: frozenset(range(6))}
    described = consumer(groups).describe("g")
    assert (described.state, described.group_epoch, described.assignment_epoch) == ("Stable", 1, 1)
    assert described.assignor_name == "uniform"


async def test_partitions_move_only_after_the_previous_owner_revoked_them(groups) -> None:
    first = await beat(groups, "m1", 0)
    owned_by_first = first.assignment
    second = await beat(groups, "m2", 0)
    # m2 is owed three partitions that m1 still owns: it gets none of them yet.
    assert second.member_epoch == 2
    assert count(second.assignment) == 0
    assert consumer(groups).describe("g").state == "Reconciling"
    # m1 learns to revoke three; it keeps epoch 1 until it reports the revocation done.
    revoke = await beat(groups, "m1", 1, owned=owned_by_first)
    assert revoke.member_epoch == 1
    assert count(revoke.assignment) == 3
    still = await beat(groups, "m2", 2, owned={})
    assert count(still.assignment) == 0
    done = await beat(groups, "m1", 1, owned=revoke.assignment)
    assert done.member_epoch == 2
    granted = await beat(groups, "m2", 2, owned={})
    assert count(granted.assignment) == 3
    assert not set(granted.assignment[ORDERS]) & set(revoke.assignment[ORDERS])
    assert (await beat(groups, "m2", 2, owned=granted.assignment)).assignment is None  # nothing new
    assert consumer(groups).describe("g").state == "Stable"


async def test_epochs_are_fenced(groups) -> None:
    joined = await beat(groups, "m1", 0)
    assert (await beat(groups, "m1", 7, owned=joined.assignment)).error_code == ErrorCode.fenced_member_epoch
    assert (await beat(groups, "ghost", 1)).error_code == ErrorCode.unknown_member_id
    # A member that missed our answer may retry with its previous epoch while it owns nothing new.
    await beat(groups, "m2", 0)
    revoke = await beat(groups, "m1", 1, owned=joined.assignment)
    await beat(groups, "m1", 1, owned=revoke.assignment)
    retried = await beat(groups, "m1", 1, owned=revoke.assignment)
    assert retried.error_code == ErrorCode.none
    assert retried.member_epoch == 2


async def test_invalid_requests_are_refused_with_the_field_named(groups) -> None:
    bad = await beat(groups, "m1", 0, rebalance_timeout_ms=-1)
    assert bad.error_code == ErrorCode.invalid_request
    assert "RebalanceTimeoutMs" in (bad.error_message or "")
    unknown = await beat(groups, "m1", 0, server_assignor="sticky")
    assert unknown.error_code == ErrorCode.unsupported_assignor
    regex = await beat(groups, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="(a)\\1")
    assert regex.error_code == ErrorCode.invalid_regular_expression
    assert (regex.error_message or "").startswith(
        "SubscribedTopicRegex `(a)\\1` is not a valid regular expression"
    )
    assert consumer(groups).describe("g").error_code == ErrorCode.group_id_not_found


# What Apache Kafka 4.2 answered to each (checked against the apache_kafka fixture).
KAFKA_REFUSALS = [
    ({"member": ""}, "MemberId can't be empty."),
    ({"owned": None}, "TopicPartitions must be empty when (re-)joining."),
    (
        {"subscribed_topic_names": None},
        "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
    ),
    ({"instance_id": ""}, "InstanceId can't be empty."),
    ({"rack_id": ""}, "RackId can't be empty."),
    ({"group_id": ""}, "GroupId can't be empty."),
    ({"epoch": -3}, "MemberEpoch is invalid."),
    ({"epoch": -2}, "InstanceId can't be null."),
]


@pytest.mark.parametrize(("change", "message"), KAFKA_REFUSALS)
async def test_heartbeats_are_validated_as_kafka_does_and_every_refusal_is_logged_with_its_rule(
    groups, caplog, change, message
) -> None:
    fields = dict(change)
    member, epoch = fields.pop("member", "m1"), fields.pop("epoch", 0)
    owned = fields.pop("owned", {}) if epoch == 0 else None
    if owned is None and epoch == 0:
        fields["owned"] = None
        answer = await consumer(groups).heartbeat(
            member_id=member, member_epoch=epoch, group_id="g", instance_id=None, rack_id=None,
            rebalance_timeout_ms=30_000, subscribed_topic_names=["orders"], subscribed_topic_regex=None,
            server_assignor=None, client_id="client", client_host="/127.0.0.1", owned=None,
        )  # fmt: skip
    else:
        answer = await beat(groups, member, epoch, owned=owned, **fields)
    assert (answer.error_code, answer.error_message) == (ErrorCode.invalid_request, message)
    refusals = [r.getMessage() for r in caplog.records if "INVALID_REQUEST" in r.getMessage()]
    assert len(refusals) == 1
    assert message in refusals[0]
    assert "'client'" in refusals[0]


async def test_invalid_request_logging_is_rate_limited(groups, caplog) -> None:
    for _ in range(50):
        await beat(groups, "m1", 0, rack_id="")
    refusals = [r for r in caplog.records if "INVALID_REQUEST" in r.getMessage()]
    assert len(refusals) == consumer(groups).refusals.lines_per_interval
    assert consumer(groups).refusals.suppressed == 50 - consumer(groups).refusals.lines_per_interval


async def test_a_member_rejoining_with_epoch_zero_keeps_its_place(groups) -> None:
    first = await beat(groups, "m1", 0)
    await beat(groups, "m2", 0)
    revoke = await beat(groups, "m1", 1, owned=first.assignment)
    done = await beat(groups, "m1", 1, owned=revoke.assignment)
    assert done.member_epoch == 2
    epoch_before = consumer(groups).describe("g").group_epoch
    # Kafka 4.2 does not fence epoch 0 from a known member: it keeps its epoch and partitions,
    # all sent back to it, and nobody else is disturbed.
    again = await beat(groups, "m1", 0)
    assert (again.error_code, again.member_epoch) == (ErrorCode.none, 2)
    assert again.assignment == revoke.assignment
    assert consumer(groups).describe("g").group_epoch == epoch_before


async def test_a_regex_subscription_follows_matching_topics(offsets_log, clock) -> None:
    topics = dict(TOPICS)
    coordinator = make_coordinator(offsets_log, clock, topics)
    await lead_every_partition(coordinator)
    joined = await beat(
        coordinator, "m1", 0, subscribed_topic_names=None, subscribed_topic_regex="audit\\..*"
    )
    # As in Kafka, the group resolves a new regex in the background: the next heartbeat gets it.
    assert joined.assignment == {}
    await settle()
    resolved = await beat(coordinator, "m1", 1, owned={})
    assert resolved.assignment == {AUDIT: frozenset({0})}
    new_topic = uuid.uuid4()
    topics["audit.us"] = (new_topic, 2)  # a topic created later that matches
    await clock.advance(CONFIG.heartbeat_interval_ms)
    epoch = resolved.member_epoch
    await beat(coordinator, "m1", epoch, owned=resolved.assignment)  # sees the new topic, resolves again
    await settle()
    grown = await beat(coordinator, "m1", epoch, owned=resolved.assignment)
    assert grown.member_epoch == epoch + 1
    assert grown.assignment == {AUDIT: frozenset({0}), new_topic: frozenset({0, 1})}


async def test_members_subscribed_to_a_regex_before_its_topics_exist_share_them_once_created(
    offsets_log, clock
) -> None:
    topics = dict(TOPICS)
    coordinator = make_coordinator(offsets_log, clock, topics)
    await lead_every_partition(coordinator)
    regex = {"subscribed_topic_names": None, "subscribed_topic_regex": "events-.*"}
    m1 = await beat(coordinator, "m1", 0, **regex)
    m2 = await beat(coordinator, "m2", 0, **regex)
    epochs = {"m1": m1.member_epoch, "m2": m2.member_epoch}
    owned: dict[str, Any] = {"m1": {}, "m2": {}}
    topics["events-a"], topics["events-b"] = (uuid.uuid4(), 2), (uuid.uuid4(), 2)
    # Each member heartbeats once per interval; within two rounds both own two of the four partitions.
    for _ in range(2):
        await clock.advance(CONFIG.heartbeat_interval_ms)
        for member in ("m1", "m2"):
            answer = await beat(coordinator, member, epochs[member], owned=owned[member])
            assert answer.error_code == ErrorCode.none
            epochs[member] = answer.member_epoch
            if answer.assignment is not None:
                owned[member] = answer.assignment
    assert (count(owned["m1"]), count(owned["m2"])) == (2, 2)
    assert consumer(coordinator).describe("g").state == "Stable"


async def test_the_named_topics_of_a_subscription_are_assigned_before_its_regex_is_resolved(
    groups,
) -> None:
    joined = await beat(
        groups, "m1", 0, subscribed_topic_names=["payments"], subscribed_topic_regex="orders|audit\\..*"
    )
    assert joined.assignment == {PAYMENTS: frozenset({0, 1})}
    await settle()
    nxt = await beat(groups, "m1", joined.member_epoch, owned=joined.assignment)
    assert nxt.member_epoch == joined.member_epoch + 1
    assert nxt.assignment == {
        PAYMENTS: frozenset({0, 1}),
        ORDERS: frozenset(range(6)),
        AUDIT: frozenset({0}),
    }


async def test_a_regex_resolves_to_the_topics_its_member_may_describe_and_survives_a_reload(
    offsets_log, clock
) -> None:
    topics = dict(TOPICS)
    topics["audit.secret"] = (uuid.uuid4(), 4)
    coordinator = make_coordinator(offsets_log, clock, topics)
    await lead_every_partition(coordinator)

    def may_describe(name: str) -> bool:
        return name != "audit.secret"

    regex = {
        "subscribed_topic_names": None,
        "subscribed_topic_regex": "audit\\..*",
        "may_describe": may_describe,
    }
    joined = await beat(coordinator, "m1", 0, **regex)
    await settle()
    resolved = await beat(coordinator, "m1", joined.member_epoch, owned={}, may_describe=may_describe)
    assert resolved.assignment == {AUDIT: frozenset({0})}
    described = consumer(coordinator).describe("g")
    assert described.members[0].regex_topics == frozenset({"audit.eu"})
    await coordinator.drain()
    await coordinator.stop()
    # A new coordinator (failover) rebuilds the resolution from the group's written topics: the
    # secret topic does not appear when the member's next heartbeat resolves it again.
    second = make_coordinator(offsets_log, clock, topics)
    await lead_every_partition(second)
    assert consumer(second).describe("g").members[0].regex_topics == frozenset({"audit.eu"})
    epoch = resolved.member_epoch
    for _ in range(2):
        again = await beat(second, "m1", epoch, owned=resolved.assignment, may_describe=may_describe)
        assert again.error_code == ErrorCode.none
        await settle()
    assert consumer(second).describe("g").members[0].target == {AUDIT: frozenset({0})}
    await second.stop()


async def test_the_client_chosen_range_assignor_is_used(groups) -> None:
    joined = await beat(groups, "m1", 0, server_assignor="range")
    assert joined.error_code == ErrorCode.none
    assert consumer(groups).describe("g").assignor_name == "range"


async def test_a_group_without_members_describes_the_default_assignor_as_kafka_does(
    offsets_log, clock
) -> None:
    # kafka-consumer-groups --describe --state showed "-" for an empty group a new coordinator had loaded.
    coordinator = make_coordinator(offsets_log, clock)
    await lead_every_partition(coordinator)
    joined = await beat(coordinator, "m1", 0, server_assignor="range")
    assert joined.member_epoch == 1
    assert consumer(coordinator).describe("g").assignor_name == "range"
    left = await beat(coordinator, "m1", -1)
    assert left.error_code == ErrorCode.none
    assert consumer(coordinator).describe("g").assignor_name == "uniform"
    await beat(coordinator, "m2", 0)
    await coordinator.drain()
    await coordinator.stop()
    reloaded = make_coordinator(offsets_log, clock)
    await lead_every_partition(reloaded)
    assert consumer(reloaded).describe("g").assignor_name == "uniform"
    await reloaded.stop()


async def test_a_member_whose_session_expires_is_removed(groups, clock) -> None:
    await beat(groups, "m1", 0)
    second = await beat(groups, "m2", 0)
    await clock.advance(CONFIG.session_timeout_ms + 1)
    assert consumer(groups).describe("g").members == ()
    assert second.error_code == ErrorCode.none


async def test_a_member_that_does_not_revoke_in_time_is_fenced(groups, clock) -> None:
    first = await beat(groups, "m1", 0, rebalance_timeout_ms=2000)
    await beat(groups, "m2", 0)
    await beat(groups, "m1", 1, owned=first.assignment)  # told to revoke
    for _ in range(3):  # m2 keeps heartbeating, m1 never acknowledges
        await clock.advance(800)
        await beat(groups, "m2", 2, owned={})
    members = {m.member.member_id for m in consumer(groups).describe("g").members}
    assert members == {"m2"}
    assert count((await beat(groups, "m2", 3, owned={})).assignment) == 6


async def test_a_static_member_returns_to_its_partitions(groups) -> None:
    first = await beat(groups, "m1", 0, instance_id="pod-a")
    assert (await beat(groups, "m1", -2, instance_id="pod-a")).member_epoch == -2
    taken = await beat(groups, "m9", 0, instance_id="pod-a")
    assert taken.error_code == ErrorCode.none
    assert taken.assignment == first.assignment
    assert taken.member_epoch == first.member_epoch
    # While an instance id is in use, another member cannot take it.
    assert (await beat(groups, "m5", 0, instance_id="pod-a")).error_code == ErrorCode.unreleased_instance_id


async def test_a_member_leaves_and_the_group_empties(groups) -> None:
    await beat(groups, "m1", 0)
    left = await beat(groups, "m1", -1)
    assert left.member_epoch == -1
    assert consumer(groups).describe("g").state == "Empty"


# --- offsets, listing, conversion -----------------------------------------------------------------


async def test_offset_commits_are_checked_against_the_member_epoch(groups) -> None:
    joined = await beat(groups, "m1", 0)
    offsets = [PartitionOffset("orders", 0, 42)]
    stale = await groups.commit_offsets(
        group_id="g", generation_id=0, member_id="m1", group_instance_id=None, offsets=offsets
    )
    assert stale == [ErrorCode.stale_member_epoch]
    unknown = await groups.commit_offsets(
        group_id="g", generation_id=-1, member_id="", group_instance_id=None, offsets=offsets
    )
    assert unknown == [ErrorCode.unknown_member_id]
    ok = await groups.commit_offsets(
        group_id="g",
        generation_id=joined.member_epoch,
        member_id="m1",
        group_instance_id=None,
        offsets=offsets,
    )
    assert ok == [ErrorCode.none]
    _, fetched = groups.fetch_offsets(group_id="g", topics=[("orders", [0])])
    assert fetched[0][2].offset == 42


async def test_offset_fetch_v9_checks_the_member_and_its_epoch(groups) -> None:
    joined = await beat(groups, "m1", 0)
    await groups.commit_offsets(
        group_id="g",
        generation_id=joined.member_epoch,
        member_id="m1",
        group_instance_id=None,
        offsets=[PartitionOffset("orders", 0, 7)],
    )
    topics = [("orders", [0])]
    error, fetched = groups.fetch_offsets(
        group_id="g", topics=topics, member_id="m1", member_epoch=joined.member_epoch
    )
    assert (error, fetched[0][2].offset) == (ErrorCode.none, 7)
    stale = groups.fetch_offsets(group_id="g", topics=topics, member_id="m1", member_epoch=0)
    assert stale == (ErrorCode.stale_member_epoch, [])
    unknown = groups.fetch_offsets(group_id="g", topics=topics, member_id="nobody", member_epoch=1)
    assert unknown == (ErrorCode.unknown_member_id, [])
    # Without a member (admin tools, OffsetFetch before v9) the offsets are read freely.
    error, fetched = groups.fetch_offsets(group_id="g", topics=topics)
    assert (error, fetched[0][2].offset) == (ErrorCode.none, 7)
    # A classic group does not check who reads (Kafka's rule).
    await stable_group(groups, 1, group="classic-g")
    error, _ = groups.fetch_offsets(group_id="classic-g", topics=topics, member_id="x", member_epoch=3)
    assert error == ErrorCode.none


async def test_transactional_commits_of_a_consumer_group_are_checked_against_the_member_epoch(groups) -> None:
    joined = await beat(groups, "m1", 0)
    offsets = [PartitionOffset("orders", 0, 11)]

    async def txn_commit(member_id: str, epoch: int) -> list[int]:
        return await groups.commit_transactional_offsets(
            group_id="g",
            producer_id=1,
            producer_epoch=0,
            generation_id=epoch,
            member_id=member_id,
            group_instance_id=None,
            offsets=offsets,
        )

    assert await txn_commit("m1", joined.member_epoch + 1) == [ErrorCode.stale_member_epoch]
    assert await txn_commit("m2", joined.member_epoch) == [ErrorCode.unknown_member_id]
    assert await txn_commit("m1", joined.member_epoch) == [ErrorCode.none]
    assert groups.has_pending_offsets("g", "orders", 0)


async def test_list_and_describe_groups_show_both_kinds(groups) -> None:
    await beat(groups, "m1", 0)
    await stable_group(groups, 1, group="classic-g")
    _, listed = groups.list_groups()
    assert {(g.group_id, g.group_type, g.state) for g in listed} == {
        ("g", "consumer", "Stable"),
        ("classic-g", "classic", "Stable"),
    }
    _, consumers_only = groups.list_groups(types_filter=["consumer"])
    assert [g.group_id for g in consumers_only] == ["g"]
    described = groups.describe_group("g")
    assert (described.protocol_type, described.state, len(described.members)) == ("consumer", "Stable", 1)
    # The member's assignment in the ConsumerProtocolAssignment format classic tools decode.
    assert b"orders" in described.members[0].assignment


async def test_an_empty_classic_group_becomes_a_consumer_group_and_back(groups) -> None:
    committed = await groups.commit_offsets(
        group_id="g",
        generation_id=-1,
        member_id="",
        group_instance_id=None,
        offsets=[PartitionOffset("orders", 1, 5)],
    )
    assert committed == [ErrorCode.none]
    joined = await beat(groups, "m1", 0)
    assert joined.error_code == ErrorCode.none
    classic_refused = await join(groups, require_known_member_id=False)
    assert classic_refused.error_code == ErrorCode.inconsistent_group_protocol
    await beat(groups, "m1", -1)
    results = await stable_group(groups, 1, group="g")
    assert results[0].error_code == ErrorCode.none
    assert consumer(groups).describe("g").error_code == ErrorCode.group_id_not_found
    _, fetched = groups.fetch_offsets(group_id="g", topics=[("orders", [1])])
    assert fetched[0][2].offset == 5  # the offsets survived both conversions


async def classic_group_on_orders(coordinator: Any) -> list[Any]:
    """Two classic members subscribed to orders, each assigned three partitions by its leader."""
    subscription = encode_consumer_subscription(["orders"])
    first = [await join(coordinator, protocols=(("range", subscription),)) for _ in range(2)]
    futures = [join(coordinator, member_id=r.member_id, protocols=(("range", subscription),)) for r in first]
    results = [await future for future in futures]
    leader = next(r for r in results if r.member_id == r.leader)
    ids = sorted(r.member_id for r in results)
    assignments = {
        ids[0]: encode_consumer_assignment({"orders": [0, 1, 2]}),
        ids[1]: encode_consumer_assignment({"orders": [3, 4, 5]}),
    }
    for r in results:
        assert (await sync(coordinator, r, assignments=assignments if r is leader else None)).error_code == 0
    return sorted(results, key=lambda r: r.member_id)


async def test_a_classic_group_with_members_is_not_taken_over_when_the_policy_forbids_it(
    offsets_log, clock
) -> None:
    coordinator = make_coordinator(
        offsets_log, clock, config=ConsumerGroupConfig(migration_policy="downgrade")
    )
    await lead_every_partition(coordinator)
    await classic_group_on_orders(coordinator)
    refused = await beat(coordinator, "m1", 0)
    assert refused.error_code == ErrorCode.group_id_not_found
    assert "migration.policy" in (refused.error_message or "")


async def test_a_live_classic_group_upgrades_and_downgrades_with_its_members(
    groups, offsets_log, clock
) -> None:
    classic = await classic_group_on_orders(groups)
    generation = classic[0].generation_id
    joined = await beat(groups, "m1", 0)
    assert joined.error_code == ErrorCode.none
    described = consumer(groups).describe("g")
    assert described.group_epoch == generation + 1
    members = {m.member.member_id: m for m in described.members}
    # The classic members kept their partitions and epoch; none is given to m1 before it is released.
    assert members[classic[0].member_id].member.assigned == {ORDERS: frozenset({0, 1, 2})}
    assert members[classic[0].member_id].member.member_epoch == generation
    assert count(joined.assignment) == 0
    # Each classic member is told to rejoin; its JoinGroup (eager: it revoked everything) gets it
    # to the new epoch, its SyncGroup hands over its share of the new target.
    owned_by_classic = set()
    for result in classic:
        beat_error = groups.heartbeat(
            group_id="g", generation_id=generation, member_id=result.member_id, group_instance_id=None
        )
        assert beat_error == ErrorCode.rebalance_in_progress
        rejoined = await join(
            groups,
            member_id=result.member_id,
            protocols=(("range", encode_consumer_subscription(["orders"])),),
        )
        assert (rejoined.error_code, rejoined.generation_id, rejoined.leader) == (
            ErrorCode.none,
            generation + 1,
            "",
        )
        synced = await sync(groups, rejoined)
        assert synced.error_code == ErrorCode.none
        partitions = decode_assignment(synced.assignment)["orders"]
        assert len(partitions) == 2
        owned_by_classic |= set(partitions)
        stable = groups.heartbeat(
            group_id="g", generation_id=generation + 1, member_id=result.member_id, group_instance_id=None
        )
        assert stable == ErrorCode.none
    # m1 gets the two partitions the classic members released.
    released = await beat(groups, "m1", joined.member_epoch, owned={})
    assert set(released.assignment[ORDERS]) == set(range(6)) - owned_by_classic
    # A classic member commits with its generation (a stale one: ILLEGAL_GENERATION).
    commit = await groups.commit_offsets(
        group_id="g",
        generation_id=generation,
        member_id=classic[0].member_id,
        group_instance_id=None,
        offsets=[PartitionOffset("orders", 0, 1)],
    )
    assert commit == [ErrorCode.illegal_generation]

    # A new coordinator (failover) loads the mixed group with its classic members.
    second = make_coordinator(offsets_log, clock)
    await lead_every_partition(second)
    reloaded = {m.member.member_id: m.member for m in consumer(second).describe("g").members}
    assert reloaded[classic[0].member_id].classic is not None
    assert reloaded["m1"].classic is None
    await second.stop()

    # The consumer-protocol member leaves: the group is classic again and rebalances.
    await beat(groups, "m1", -1)
    assert consumer(groups).describe("g").error_code == ErrorCode.group_id_not_found
    back = groups.describe_group("g")
    assert (back.state, len(back.members)) == ("PreparingRebalance", 2)
    assert (
        groups.heartbeat(
            group_id="g", generation_id=generation + 1, member_id=classic[0].member_id, group_instance_id=None
        )
        == ErrorCode.rebalance_in_progress
    )


# --- persistence ----------------------------------------------------------------------------------


async def test_a_new_coordinator_rebuilds_the_group_from_kafkas_records(offsets_log, clock) -> None:
    first = make_coordinator(offsets_log, clock)
    await lead_every_partition(first)
    one = await beat(first, "m1", 0, instance_id="pod-a")
    await beat(first, "m2", 0)
    revoke = await beat(first, "m1", 1, owned=one.assignment)
    await first.stop()
    types = {
        records.decode_key(key).record_type
        for _, key, _ in offsets_log.all_records()
        if records.decode_key(key)
    }
    assert types == set(range(3, 9))

    second = make_coordinator(offsets_log, clock)
    await lead_every_partition(second)
    described = consumer(second).describe("g")
    assert (described.group_epoch, described.assignment_epoch) == (2, 2)
    members = {m.member.member_id: m for m in described.members}
    assert members["m1"].member.instance_id == "pod-a"
    assert members["m1"].member.assigned == revoke.assignment
    assert count(members["m1"].member.pending_revocation) == 3
    # The reloaded group carries on: m1 finishes its revocation, m2 gets the partitions.
    assert (await beat(second, "m1", 1, owned=revoke.assignment)).member_epoch == 2
    assert count((await beat(second, "m2", 2, owned={})).assignment) == 3
    await second.stop()


def test_record_values_round_trip() -> None:
    value = records.CurrentAssignmentValue(5, 4, 2, ((ORDERS, (0, 1)),), ((PAYMENTS, (1,)),))
    assert records.decode_current_assignment(records.encode_current_assignment(value)) == value
    metadata = records.MemberMetadataValue("pod", None, "c", "/h", ("orders",), "a.*", 300, "range")
    assert records.decode_member_metadata(records.encode_member_metadata(metadata)) == metadata
    # A classic member's metadata rides in tag 0 (Kafka's ClassicMemberMetadata).
    classic = records.MemberMetadataValue(
        None, None, "c", "/h", ("orders",), None, 300, None,
        classic=records.ClassicMemberMetadata(10_000, (("range", b"sub"), ("roundrobin", b""))),
    )  # fmt: skip
    encoded = records.encode_member_metadata(classic)
    assert encoded.endswith(
        b"\x01\x00\x1e" + (10_000).to_bytes(4, "big") + b"\x03\x06range\x04sub\x00\x0broundrobin\x01\x00\x00"
    )
    assert records.decode_member_metadata(encoded) == classic
    topics = (records.TopicMetadata(ORDERS, "orders", 6),)
    assert records.decode_partition_metadata(records.encode_partition_metadata(3, topics)) == (3, topics)
    key = records.ConsumerRecordKey(records.TARGET_ASSIGNMENT_MEMBER, "g", "m1")
    assert records.decode_key(records.encode_key(key)) == key
    # The key layout Kafka writes: int16 type, then int16-length strings.
    assert records.encode_key(records.ConsumerRecordKey(3, "g")) == b"\x00\x03\x00\x01g"


def test_classic_subscriptions_are_read_with_owned_partitions_and_rack() -> None:
    import struct

    def string(value: str) -> bytes:
        return struct.pack(">h", len(value)) + value.encode()

    # ConsumerProtocolSubscription v3: topics, user data, owned partitions, generation, rack.
    v3 = (
        struct.pack(">hi", 3, 1) + string("orders") + struct.pack(">i", -1)
        + struct.pack(">i", 1) + string("orders") + struct.pack(">iii", 2, 0, 4)
        + struct.pack(">i", 7) + string("zone-a")
    )  # fmt: skip
    subscription = decode_subscription(v3)
    assert subscription == Subscription(("orders",), (("orders", (0, 4)),), "zone-a")
    # v0 says nothing of owned partitions; garbage is no subscription.
    assert decode_subscription(encode_consumer_subscription(["a", "b"])) == Subscription(
        ("a", "b"), None, None
    )
    assert decode_subscription(b"\x00\x00\x7f\xff\xff\xff") is None
    assert decode_assignment(encode_consumer_assignment({"orders": [1, 2]})) == {"orders": (1, 2)}


async def test_a_restarted_static_classic_member_takes_its_place_in_a_consumer_group(groups) -> None:
    subscription = (("range", encode_consumer_subscription(["orders"])),)
    await beat(groups, "m1", 0)
    first = await join(groups, instance="pod-a", protocols=subscription, require_known_member_id=False)
    assert first.error_code == ErrorCode.none
    # The same instance comes back without its member id (a restart): it replaces the old member.
    again = await join(groups, instance="pod-a", protocols=subscription, require_known_member_id=False)
    assert again.error_code == ErrorCode.none
    assert again.member_id != first.member_id
    ids = {m.member.member_id for m in consumer(groups).describe("g").members}
    assert ids == {"m1", again.member_id}


async def test_a_regex_subscribed_again_after_its_last_member_left_is_resolved_again(groups) -> None:
    regex = {"subscribed_topic_names": None, "subscribed_topic_regex": "orders|audit\\..*"}
    joined = await beat(groups, "m1", 0, **regex)
    await settle()
    resolved = await beat(groups, "m1", joined.member_epoch, owned={})
    assert count(resolved.assignment) == 7
    await beat(groups, "m1", -1)
    # librdkafka 0045 resubscribe_with_regex: the named topic first, then the regex's topics.
    again = await beat(
        groups, "m1", 0, subscribed_topic_names=["payments"], subscribed_topic_regex="orders|audit\\..*"
    )
    assert again.assignment == {PAYMENTS: frozenset({0, 1})}
