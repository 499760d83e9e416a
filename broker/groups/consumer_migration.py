"""Online migration between the classic and the consumer protocol (Kafka 4.0's
`group.consumer.migration.policy`), and the classic members of consumer groups.

A consumer-protocol member joining a classic group turns it into a consumer group (its offsets stay).
A group with members keeps them: they become classic members of the consumer group, served through
JoinGroup, SyncGroup and Heartbeat (the coordinator hands these requests to `ConsumerGroups`' hooks,
which are `ClassicMembers`'), their assignment computed by the server-side assignor (a Heartbeat answers
REBALANCE_IN_PROGRESS when a member's assignment must change; its JoinGroup moves it one step, its
SyncGroup hands the partitions over). When the last consumer-protocol member leaves a group of classic
members, it becomes a classic group again, which rebalances. An empty group converts either way
whatever the policy.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from kio.schema.errors import ErrorCode

from broker.groups import consumer_records as records
from broker.groups.assignors import Assignment
from broker.groups.consumer_config import (
    CONSUMER_PROTOCOL_TYPE,
    ConsumerGroupConfig,
    HeartbeatResult,
    TopicCatalog,
    apply_heartbeat_fields,
)
from broker.groups.consumer_group import (
    STATIC_LEAVE_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    reconcile,
)
from broker.groups.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_consumer_assignment,
    encode_consumer_subscription,
)
from broker.groups.group import Group, GroupState, JoinResult, Member, SyncResult
from broker.groups.group_type import ClassicJoin, DescribedMember, GroupDescription

if TYPE_CHECKING:
    from broker.groups.coordinator import GroupCoordinator

log = logging.getLogger(__name__)


class ConsumerGroupsView(Protocol):
    """What the classic members of consumer groups use of `ConsumerGroups` (broker/groups/consumer_groups.py),
    which holds the groups and serves the consumer protocol."""

    config: ConsumerGroupConfig
    groups: dict[str, ConsumerGroup]
    topic_catalog: TopicCatalog

    def join(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> ConsumerMember | HeartbeatResult:
        """A (re)joining member of the group, or why it may not join."""
        ...

    def refresh_subscribed_topics(self, group: ConsumerGroup) -> None: ...

    def maybe_compute_target(self, group: ConsumerGroup) -> None: ...

    def on_member_state_changed(self, group: ConsumerGroup, member: ConsumerMember) -> None: ...

    def schedule_session_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None: ...

    def remove_member(self, group: ConsumerGroup, member: ConsumerMember) -> None: ...

    def cancel_member_timers(self, member: ConsumerMember) -> None: ...

    def subscribed_topic_ids(
        self, group: ConsumerGroup, member: ConsumerMember, catalog: Mapping[str, tuple[uuid.UUID, int]]
    ) -> frozenset[uuid.UUID]: ...

    def topic_names(self, group: ConsumerGroup) -> dict[uuid.UUID, str]: ...

    async def store(self, group: ConsumerGroup, *, delete: bool = False) -> int | None:
        """Writes what changed in the group (all tombstones with `delete`): None, or the client's error."""
        ...

    async def drop(self, group: ConsumerGroup) -> int | None:
        """Deletes the (empty) group's records, then the group."""
        ...


class ClassicMembers:
    """A coordinator's conversions between classic and consumer groups, and the classic-protocol requests
    of consumer groups' classic members."""

    def __init__(self, consumer: ConsumerGroupsView, coordinator: GroupCoordinator) -> None:
        self._consumer = consumer
        self._coordinator = coordinator
        self._classic = coordinator.classic

    # --- upgrade: a classic group with members becomes a consumer group ---------------------

    def upgrade_refusal(self, classic: Group) -> str | None:
        """Why a classic group with members may not become a consumer group (Kafka's checks)."""
        if not self._consumer.config.upgrade_allowed:
            return (
                f"Cannot upgrade classic group {classic.group_id} to consumer group: "
                f"group.consumer.migration.policy is {self._consumer.config.migration_policy}."
            )
        if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return (
                f"Cannot upgrade classic group {classic.group_id} to consumer group: its protocol type is "
                f"{classic.protocol_type!r}, not {CONSUMER_PROTOCOL_TYPE!r}."
            )
        if len(classic.members) >= self._consumer.config.max_size:
            return (
                f"Cannot upgrade classic group {classic.group_id} to consumer group: it has "
                f"{len(classic.members)} members, group.consumer.max.size is {self._consumer.config.max_size}."
            )
        return None

    def upgrade(self, classic: Group) -> ConsumerGroup:
        """The consumer group a live classic group becomes: its members keep their generation (as
        member epoch), subscription and partitions; the classic group is emptied (it keeps the offsets)."""
        ids = {name: topic_id for name, (topic_id, _) in self._consumer.topic_catalog().items()}
        group = ConsumerGroup(classic.group_id)
        claimed: set[tuple[uuid.UUID, int]] = set()
        for member in classic.members.values():
            subscription = decode_subscription(member.metadata_for(classic.protocol_name or ""))
            assigned = {
                topic_id: partitions - {p for t, p in claimed if t == topic_id}
                for topic_id, partitions in _by_topic_id(
                    decode_assignment(member.assignment) or {}, ids
                ).items()
            }
            assigned = {topic_id: ps for topic_id, ps in assigned.items() if ps}
            claimed.update((topic_id, p) for topic_id, ps in assigned.items() for p in ps)
            converted = ConsumerMember(
                member_id=member.member_id,
                instance_id=member.group_instance_id,
                rack_id=subscription.rack_id if subscription is not None else None,
                client_id=member.client_id,
                client_host=member.client_host,
                subscribed_topic_names=tuple(sorted(set(subscription.topics)))
                if subscription is not None
                else (),
                rebalance_timeout_ms=member.rebalance_timeout_ms,
                member_epoch=classic.generation_id,
                previous_member_epoch=classic.generation_id,
                assigned=assigned,
                classic=records.ClassicMemberMetadata(member.session_timeout_ms, member.protocols),
            )
            group.add_member(converted)
            group.target[member.member_id] = assigned
        self._consumer.refresh_subscribed_topics(group)
        group.group_epoch = group.assignment_epoch = classic.generation_id
        self._classic.empty(classic)
        for converted in group.members.values():
            self._consumer.schedule_session_timeout(group, converted)
        log.info(
            "group %s: classic group with %d members upgraded to a consumer group",
            group.group_id,
            len(group.members),
        )
        return group

    async def _classic_join(self, group: ConsumerGroup, member_id: str, join: ClassicJoin) -> JoinResult:
        """JoinGroup of a classic member of a
        consumer group: its subscription updates the group, and it moves one step towards its
        target (what it must revoke, or its new partitions); answered at once, with its member
        epoch as generation and no leader (the server assigns). A new member gets its id at once."""
        group_instance_id, protocols = join.group_instance_id, join.protocols
        session_timeout_ms, rebalance_timeout_ms = join.session_timeout_ms, join.rebalance_timeout_ms
        client_id, client_host = join.client_id, join.client_host
        if (
            not self._coordinator.config.min_session_timeout_ms
            <= session_timeout_ms
            <= self._coordinator.config.max_session_timeout_ms
        ):
            return JoinResult(ErrorCode.invalid_session_timeout, member_id=member_id)
        names = {name for name, _ in protocols}
        others = (
            m.classic for m in group.members.values() if m.classic is not None and m.member_id != member_id
        )
        if not protocols or any(not names & {n for n, _ in other.supported_protocols} for other in others):
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        protocol_name, metadata = protocols[0]
        subscription = decode_subscription(metadata)
        if subscription is None:
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        epoch_before = group.group_epoch
        if member_id:
            member = group.members.get(member_id)
            if member is None:
                return JoinResult(ErrorCode.unknown_member_id, member_id=member_id)
            if member.classic is None:
                return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        else:
            previous = group.members.get(group.static_members.get(group_instance_id or "", ""))
            if previous is not None and previous.classic is not None:
                # A classic static member that restarted replaces its old self (Kafka's classic rule),
                # taking over its partitions and epoch.
                previous.previous_member_epoch = previous.member_epoch
                previous.member_epoch = STATIC_LEAVE_EPOCH
            joined = self._consumer.join(group, f"{client_id}-{uuid.uuid4()}", group_instance_id)
            if isinstance(joined, HeartbeatResult):
                return JoinResult(joined.error_code, member_id=joined.member_id or "")
            member = joined
        member.classic = records.ClassicMemberMetadata(session_timeout_ms, tuple(protocols))
        apply_heartbeat_fields(
            group, member, group_instance_id, subscription.rack_id,
            rebalance_timeout_ms if rebalance_timeout_ms >= 0 else session_timeout_ms,
            tuple(sorted(set(subscription.topics))), None, None, client_id, client_host,
        )  # fmt: skip
        self._consumer.refresh_subscribed_topics(group)
        group.group_epoch = min(group.group_epoch, epoch_before + 1)
        self._consumer.maybe_compute_target(group)
        ids = {name: topic_id for name, (topic_id, _) in self._consumer.topic_catalog().items()}
        # Eager members revoke everything before they join (they report nothing owned);
        # cooperative ones say what they still own.
        owned = _by_topic_id(dict(subscription.owned or ()), ids)
        if reconcile(group, member, owned):
            reconcile(group, member, owned)  # a revocation already done moves on at once
        self._consumer.on_member_state_changed(group, member)
        self._consumer.schedule_session_timeout(group, member)
        append_error = await self._consumer.store(group)
        if append_error is not None:
            return JoinResult(append_error, member_id=member.member_id)
        return JoinResult(
            ErrorCode.none,
            generation_id=member.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=protocol_name,
            leader="",
            member_id=member.member_id,
        )

    def _classic_member(
        self, group_id: str, member_id: str, generation_id: int
    ) -> tuple[ConsumerGroup, ConsumerMember] | int | None:
        """The consumer group and the classic member a SyncGroup/Heartbeat names; an error code;
        or None when the group is not a consumer group with members (the classic path serves it)."""
        group = self._consumer.groups.get(group_id)
        if group is None or not group.members:
            return None
        member = group.members.get(member_id)
        if member is None or member.classic is None:
            return ErrorCode.unknown_member_id
        if generation_id != member.member_epoch:
            return ErrorCode.illegal_generation
        return group, member

    def sync(
        self, group_id: str, generation_id: int, member_id: str, protocol_name: str | None
    ) -> SyncResult | None:
        """SyncGroup of a classic member: its current partitions, at once (the server assigned them)."""
        found = self._classic_member(group_id, member_id, generation_id)
        if found is None:
            return None
        if isinstance(found, int):
            return SyncResult(found)
        group, member = found
        assert member.classic is not None
        self._consumer.schedule_session_timeout(group, member)
        names = self._consumer.topic_names(group)
        assignment = encode_consumer_assignment(
            {names[t]: sorted(ps) for t, ps in member.assigned.items() if t in names}
        )
        protocol_name = protocol_name or member.classic.supported_protocols[0][0]
        return SyncResult(ErrorCode.none, assignment, CONSUMER_PROTOCOL_TYPE, protocol_name)

    def heartbeat(self, group_id: str, generation_id: int, member_id: str) -> int | None:
        """Heartbeat of a classic member: REBALANCE_IN_PROGRESS when its JoinGroup would move it."""
        found = self._classic_member(group_id, member_id, generation_id)
        if found is None:
            return None
        if isinstance(found, int):
            return found
        group, member = found
        self._consumer.schedule_session_timeout(group, member)
        epochs_before = (group.group_epoch, group.assignment_epoch)
        self._consumer.refresh_subscribed_topics(group)
        self._consumer.maybe_compute_target(group)
        if (group.group_epoch, group.assignment_epoch) != epochs_before:
            self._coordinator.spawn(self._consumer.store(group))
        return ErrorCode.rebalance_in_progress if self._must_rejoin(group, member) else ErrorCode.none

    @staticmethod
    def _must_rejoin(group: ConsumerGroup, member: ConsumerMember) -> bool:
        """Whether the classic member's JoinGroup would move it: it owes partitions, or would get a
        new epoch or partitions (tried on a copy; the member itself moves only when it rejoins)."""
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            return True
        return reconcile(group, dataclasses.replace(member), member.assigned)

    def leave(self, group_id: str, members: Sequence[tuple[str, str | None]]) -> list[int] | None:
        """LeaveGroup of classic members of a consumer group."""
        group = self._consumer.groups.get(group_id)
        if group is None or not group.members:
            return None
        results: list[int] = []
        for member_id, instance_id in members:
            if not member_id and instance_id is not None:
                member_id = group.static_members.get(instance_id, "")
            member = group.members.get(member_id)
            if member is None or member.classic is None:
                # A consumer-protocol member leaves with a heartbeat, not LeaveGroup (Kafka's rule).
                results.append(ErrorCode.unknown_member_id)
            elif instance_id is not None and member.instance_id != instance_id:
                results.append(ErrorCode.fenced_instance_id)
            else:
                self._consumer.remove_member(group, member)
                results.append(ErrorCode.none)
        if ErrorCode.none in results:
            self._coordinator.spawn(self.store_after_removal(group))
        return results

    async def store_after_removal(self, group: ConsumerGroup) -> int | None:
        """Writes a group a member left; one left with classic members only becomes classic again."""
        classic = self._downgrade(group)
        if classic is None:
            return await self._consumer.store(group)
        error = await self._consumer.store(group, delete=True)
        return error if error is not None else await self._classic.store(classic)

    def _downgrade(self, group: ConsumerGroup) -> Group | None:
        """The classic group a consumer group of classic members only becomes (Kafka's online
        downgrade): same members, their current partitions, generation = their epoch; it rebalances."""
        members = list(group.members.values())
        if (
            not members
            or any(m.classic is None for m in members)
            or not self._consumer.config.downgrade_allowed
        ):
            return None
        if len(members) > self._coordinator.config.max_group_size:
            return None
        common = set.intersection(*({n for n, _ in m.classic.supported_protocols} for m in members))  # type: ignore[union-attr]
        first = members[0].classic
        assert first is not None
        chosen = next((name for name, _ in first.supported_protocols if name in common), None)
        if chosen is None:
            return None
        names = self._consumer.topic_names(group)
        classic = self._coordinator.offsets_holder(group.group_id)
        self._classic.empty(classic)
        # The epoch the members reconciled to (the leave already bumped the group epoch): their
        # heartbeats carry it as generation and are answered REBALANCE_IN_PROGRESS, not fenced.
        classic.generation_id = group.assignment_epoch
        classic.protocol_type = CONSUMER_PROTOCOL_TYPE
        classic.protocol_name = chosen
        for m in members:
            assert m.classic is not None
            self._consumer.cancel_member_timers(m)
            classic.members[m.member_id] = Member(
                member_id=m.member_id,
                group_instance_id=m.instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                session_timeout_ms=m.classic.session_timeout_ms,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                protocol_type=CONSUMER_PROTOCOL_TYPE,
                protocols=m.classic.supported_protocols,
                assignment=encode_consumer_assignment(
                    {names[t]: sorted(ps) for t, ps in m.assigned.items() if t in names}
                ),
            )
            if m.instance_id is not None:
                classic.static_members[m.instance_id] = m.member_id
        classic.leader_id = members[0].member_id
        classic.transition_to(GroupState.STABLE, self._coordinator.clock.now_ms())
        del self._consumer.groups[group.group_id]
        for member in classic.members.values():
            self._classic.schedule_session_timeout(classic, member)
        self._classic.prepare_rebalance(classic)
        log.info(
            "group %s: the last consumer-protocol member left; downgraded to a classic group of %d members",
            group.group_id,
            len(members),
        )
        return classic

    # --- the classic APIs over consumer groups -------------------------------------------------

    async def join(self, join: ClassicJoin) -> JoinResult | None:
        """JoinGroup of a consumer group: a classic member's, or (an empty group) its conversion back to a
        classic group, which then serves the request (None)."""
        group = self._consumer.groups.get(join.group_id)
        if group is None:
            return None
        if group.members:
            if join.protocol_type != CONSUMER_PROTOCOL_TYPE:
                return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=join.member_id)
            return await self._classic_join(group, join.member_id, join)
        # An empty consumer group becomes a classic group again (its offsets stay).
        error = await self._consumer.drop(group)
        if error is not None:
            return JoinResult(error, member_id=join.member_id)
        return None

    def describe(self, group_id: str) -> GroupDescription | None:
        """DescribeGroups of a consumer group, in the classic layout: members carry their
        subscription and assignment in the ConsumerProtocol formats, so classic tools see them."""
        group = self._consumer.groups.get(group_id)
        if group is None:
            return None
        names = self._consumer.topic_names(group)
        members = tuple(
            DescribedMember(
                member_id=member.member_id,
                group_instance_id=member.instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                metadata=encode_consumer_subscription(
                    sorted(
                        {
                            names[t]
                            for t in self._consumer.subscribed_topic_ids(
                                group, member, self._consumer.topic_catalog()
                            )
                            if t in names
                        }
                    )
                ),
                assignment=encode_consumer_assignment(
                    {names.get(t, str(t)): sorted(ps) for t, ps in member.assigned.items()}
                ),
            )
            for member in group.members.values()
        )
        return GroupDescription(
            ErrorCode.none, group_id, group.state.value, CONSUMER_PROTOCOL_TYPE, group.assignor_name, members
        )


def _by_topic_id(partitions_by_name: Mapping[str, Sequence[int]], ids: Mapping[str, uuid.UUID]) -> Assignment:
    """A classic protocol's partitions by topic name as an assignment by topic id (unknown topics dropped)."""
    return {ids[name]: frozenset(ps) for name, ps in partitions_by_name.items() if name in ids and ps}
