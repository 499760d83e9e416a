"""Classic groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup): the group type every coordinator has.

It follows Kafka's state machine: Empty -> PreparingRebalance -> CompletingRebalance ->
Stable, with Dead for deleted groups. JoinGroup and SyncGroup wait (on futures) until the
rebalance completes; timers come from the coordinator's clock and die with their partition.
A group's metadata is written to `__consumer_offsets` in Kafka's own format.

A classic `Group` entry also holds the committed offsets of its id, whatever the group's type (a
consumer or Streams group's offsets live in an Empty classic entry): the coordinator's one offsets path
reads and writes them there (broker/groups/coordinator.py).

Assignments are opaque bytes: eager and cooperative assignors both run in the clients.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence

from kio.schema.errors import ErrorCode

from broker.groups.classic_records import group_from_metadata, group_metadata_record
from broker.groups.clock import Timer
from broker.groups.group import CommittedOffset, Group, GroupState, JoinResult, Member, SyncResult
from broker.groups.group_type import (
    ClassicJoin,
    DescribedMember,
    GroupDescription,
    GroupHost,
    ListedGroup,
    OffsetCommitter,
)
from broker.groups.offsets_format import GroupMetadataValue, OffsetsFormatError

log = logging.getLogger(__name__)


class ClassicGroups:
    """The classic groups of the `__consumer_offsets` partitions a coordinator owns.

    The coordinator checks that it serves a group (and that its id is valid) before asking.
    """

    def __init__(self, coordinator: GroupHost) -> None:
        self._coordinator = coordinator
        self.config = coordinator.config
        self.clock = coordinator.clock
        self.groups: dict[str, Group] = {}

    def group_from_metadata(self, group_id: str, value: GroupMetadataValue | None) -> Group:
        """The group a replayed metadata record describes; its members must heartbeat again, or expire."""
        group = group_from_metadata(group_id, value, self.clock.now_ms())
        for member in group.members.values():
            self.schedule_session_timeout(group, member)
        return group

    def release_group(self, group: Group) -> None:
        for timer in (group.rebalance_timer, group.sync_timer, *group.pending_members.values()):
            if timer is not None:
                timer.cancel()
        for member in group.members.values():
            if member.session_timer is not None:
                member.session_timer.cancel()
            self.answer_join(member, JoinResult(ErrorCode.not_coordinator, member_id=member.member_id))
            self.answer_sync(member, SyncResult(ErrorCode.not_coordinator))

    async def join(self, join: ClassicJoin) -> JoinResult:
        group_id, member_id = join.group_id, join.member_id
        session_timeout_ms, rebalance_timeout_ms = join.session_timeout_ms, join.rebalance_timeout_ms
        if not self.config.min_session_timeout_ms <= session_timeout_ms <= self.config.max_session_timeout_ms:
            return JoinResult(ErrorCode.invalid_session_timeout, member_id=member_id)
        if rebalance_timeout_ms < 0:
            rebalance_timeout_ms = session_timeout_ms
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                return JoinResult(ErrorCode.unknown_member_id, member_id=member_id)
            group = Group(group_id=group_id, current_state_timestamp=self.clock.now_ms())
            self.groups[group_id] = group
        if group.is_(GroupState.DEAD):
            return JoinResult(ErrorCode.coordinator_not_available, member_id=member_id)
        if not group.supports_protocols(join.protocol_type, {name for name, _ in join.protocols}):
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id=member_id)
        member = Member(
            member_id=member_id,
            group_instance_id=join.group_instance_id,
            client_id=join.client_id,
            client_host=join.client_host,
            session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            protocol_type=join.protocol_type,
            protocols=tuple(join.protocols),
        )
        log.debug("group %s: JoinGroup from %r (%s)", group_id, member_id, group.state.value)
        if not member_id:
            return await self._join_unknown_member(group, member, join.require_known_member_id)
        return await self._join_known_member(group, member)

    async def _join_unknown_member(
        self, group: Group, joining: Member, require_known_member_id: bool
    ) -> JoinResult:
        new_member_id = f"{joining.client_id}-{uuid.uuid4()}"
        instance_id = joining.group_instance_id
        if instance_id is not None and instance_id in group.static_members:
            return await self._rejoin_static_member(
                group, group.static_members[instance_id], new_member_id, joining
            )
        if len(group.members) + len(group.pending_members) >= self.config.max_group_size:
            return JoinResult(ErrorCode.group_max_size_reached, member_id=new_member_id)
        if instance_id is None and require_known_member_id:
            # KIP-394: hand out the id first, so a client that gives up mid-join cannot leave
            # an unknown member behind; the id is forgotten if it never comes back.
            group.pending_members[new_member_id] = self._coordinator.call_later(
                group.group_id,
                joining.session_timeout_ms,
                lambda: self._expire_pending_member(group, new_member_id),
            )
            return JoinResult(ErrorCode.member_id_required, member_id=new_member_id)
        joining.member_id = new_member_id
        return await self._add_member_and_rebalance(group, joining)

    async def _join_known_member(self, group: Group, joining: Member) -> JoinResult:
        member_id = joining.member_id
        instance_id = joining.group_instance_id
        if member_id in group.pending_members:
            timer = group.pending_members.pop(member_id)
            if timer is not None:
                timer.cancel()
            return await self._add_member_and_rebalance(group, joining)
        fenced = self._fenced_instance_error(group, member_id, instance_id)
        if fenced is not None:
            return JoinResult(fenced, member_id=member_id)
        member = group.members.get(member_id)
        if member is None or group.is_(GroupState.EMPTY):
            return JoinResult(ErrorCode.unknown_member_id, member_id=member_id)
        same_protocols = member.protocols == joining.protocols
        if group.is_(GroupState.COMPLETING_REBALANCE) and same_protocols:
            # The member lost our JoinGroup answer: send the same one again.
            self.schedule_session_timeout(group, member)
            return self._join_result_for(group, member)
        if group.is_(GroupState.STABLE) and same_protocols and member_id != group.leader_id:
            self.schedule_session_timeout(group, member)
            return self._join_result_for(group, member)
        self._update_member(member, joining)
        future = self._await_join(member)
        self.prepare_rebalance(group)
        self._maybe_complete_join(group)
        return await asyncio.shield(future)

    async def _rejoin_static_member(
        self, group: Group, old_member_id: str, new_member_id: str, joining: Member
    ) -> JoinResult:
        """KIP-345: a restarted static member takes over its old identity without a rebalance."""
        old = group.members[old_member_id]
        self.answer_join(old, JoinResult(ErrorCode.fenced_instance_id, member_id=old_member_id))
        self.answer_sync(old, SyncResult(ErrorCode.fenced_instance_id))
        assert joining.group_instance_id is not None
        previous_leader = group.leader_id
        member = group.replace_static_member(joining.group_instance_id, old_member_id, new_member_id)
        self._update_member(member, joining)
        if group.is_(GroupState.STABLE) and group.select_protocol() == group.protocol_name:
            self.schedule_session_timeout(group, member)
            generation = group.generation_id
            error = await self.store(group)
            if error is not None and group.generation_id == generation:
                return JoinResult(error, member_id=new_member_id)
            # Like Kafka: name the leader by its old id, so a restarted leader acts as a
            # follower and fetches its assignment instead of re-assigning a stable group.
            return JoinResult(
                ErrorCode.none,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader=previous_leader or "",
                member_id=new_member_id,
            )
        future = self._await_join(member)
        if not group.is_(GroupState.PREPARING_REBALANCE):
            self.prepare_rebalance(group)
        self._maybe_complete_join(group)
        return await asyncio.shield(future)

    async def _add_member_and_rebalance(self, group: Group, member: Member) -> JoinResult:
        future = self._await_join(member)
        group.add_member(member)
        group.new_member_added = True
        self.schedule_session_timeout(group, member)
        self.prepare_rebalance(group)
        self._maybe_complete_join(group)
        return await asyncio.shield(future)

    def _await_join(self, member: Member) -> asyncio.Future[JoinResult]:
        # A member that sends JoinGroup twice gets the first one answered; Kafka drops it.
        self.answer_join(member, JoinResult(ErrorCode.rebalance_in_progress, member_id=member.member_id))
        member.join_future = asyncio.get_running_loop().create_future()
        return member.join_future

    @staticmethod
    def _update_member(member: Member, joining: Member) -> None:
        member.protocols = joining.protocols
        member.protocol_type = joining.protocol_type
        member.session_timeout_ms = joining.session_timeout_ms
        member.rebalance_timeout_ms = joining.rebalance_timeout_ms
        member.client_id = joining.client_id
        member.client_host = joining.client_host

    @staticmethod
    def _fenced_instance_error(group: Group, member_id: str, instance_id: str | None) -> int | None:
        if instance_id is None:
            return None
        known = group.static_members.get(instance_id)
        if known is not None and known != member_id:
            return ErrorCode.fenced_instance_id
        return None

    def _expire_pending_member(self, group: Group, member_id: str) -> None:
        if member_id in group.pending_members:
            # An id that never came back is forgotten; the rebalance may be waiting for it.
            del group.pending_members[member_id]
            self._maybe_complete_join(group)

    def _join_result_for(self, group: Group, member: Member) -> JoinResult:
        assert group.protocol_name is not None
        members: tuple[tuple[str, str | None, bytes], ...] = ()
        if member.member_id == group.leader_id:
            members = tuple(
                (m.member_id, m.group_instance_id, m.metadata_for(group.protocol_name))
                for m in group.members.values()
            )
        return JoinResult(
            ErrorCode.none,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            member_id=member.member_id,
            members=members,
        )

    # --- rebalancing -------------------------------------------------------------------------

    def prepare_rebalance(self, group: Group) -> None:
        if group.is_(GroupState.PREPARING_REBALANCE):
            return
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._cancel(group.sync_timer)
            for member in group.members.values():
                member.assignment = b""
                self.answer_sync(member, SyncResult(ErrorCode.rebalance_in_progress))
        was_empty = group.is_(GroupState.EMPTY)
        group.transition_to(GroupState.PREPARING_REBALANCE, self.clock.now_ms())
        delay = self.config.initial_rebalance_delay_ms
        if was_empty and delay > 0:
            group.in_initial_delay = True
            group.new_member_added = False
            remaining = max(group.max_rebalance_timeout_ms() - delay, 0)
            group.rebalance_timer = self._coordinator.call_later(
                group.group_id, delay, lambda: self._on_initial_delay_elapsed(group, remaining)
            )
        else:
            group.rebalance_timer = self._coordinator.call_later(
                group.group_id, group.max_rebalance_timeout_ms(), lambda: self._complete_join(group)
            )

    def _on_initial_delay_elapsed(self, group: Group, remaining_ms: int) -> None:
        if not group.is_(GroupState.PREPARING_REBALANCE):
            return
        if group.new_member_added and remaining_ms > 0:
            # Members keep arriving: wait one more delay, within the rebalance timeout.
            group.new_member_added = False
            delay = min(self.config.initial_rebalance_delay_ms, remaining_ms)
            left = max(remaining_ms - self.config.initial_rebalance_delay_ms, 0)
            group.rebalance_timer = self._coordinator.call_later(
                group.group_id, delay, lambda: self._on_initial_delay_elapsed(group, left)
            )
            return
        group.in_initial_delay = False
        self._complete_join(group)

    def _maybe_complete_join(self, group: Group) -> None:
        if (
            group.is_(GroupState.PREPARING_REBALANCE)
            and not group.in_initial_delay
            and group.all_members_joined()
        ):
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if not group.is_(GroupState.PREPARING_REBALANCE):
            return
        self._cancel(group.rebalance_timer)
        group.in_initial_delay = False
        for member in list(group.members.values()):
            if not member.is_awaiting_join:
                self._remove_member(group, member)
        group.generation_id += 1
        now = self.clock.now_ms()
        if not group.members:
            group.protocol_name = None
            group.leader_id = None
            group.transition_to(GroupState.EMPTY, now)
            self._coordinator.spawn(self.store(group))
            return
        group.protocol_name = group.select_protocol()
        group.transition_to(GroupState.COMPLETING_REBALANCE, now)
        log.debug(
            "group %s: generation %d with %s, leader %s",
            group.group_id,
            group.generation_id,
            list(group.members),
            group.leader_id,
        )
        for member in group.members.values():
            self.answer_join(member, self._join_result_for(group, member))
            self.schedule_session_timeout(group, member)
        generation = group.generation_id
        group.sync_timer = self._coordinator.call_later(
            group.group_id, group.max_rebalance_timeout_ms(), lambda: self._on_sync_timeout(group, generation)
        )

    def _on_sync_timeout(self, group: Group, generation: int) -> None:
        """Members that never sent SyncGroup after a join are gone; rebalance without them."""
        if not group.is_(GroupState.COMPLETING_REBALANCE) or group.generation_id != generation:
            return
        for member in list(group.members.values()):
            if not member.is_awaiting_sync:
                self._remove_member(group, member)
        self.prepare_rebalance(group)
        self._maybe_complete_join(group)

    def schedule_session_timeout(self, group: Group, member: Member) -> None:
        self._cancel(member.session_timer)
        member.session_timer = self._coordinator.call_later(
            group.group_id, member.session_timeout_ms, lambda: self._on_session_expired(group, member)
        )

    def _on_session_expired(self, group: Group, member: Member) -> None:
        if group.members.get(member.member_id) is not member:
            return
        if member.is_awaiting_join or member.is_awaiting_sync:
            # A member parked in JoinGroup/SyncGroup cannot heartbeat; the rebalance and
            # sync timeouts decide its fate instead.
            self.schedule_session_timeout(group, member)
            return
        log.info("group %s: member %s session expired", group.group_id, member.member_id)
        self._remove_member_and_rebalance(group, member)

    def _remove_member(self, group: Group, member: Member) -> None:
        group.remove_member(member.member_id)
        self._cancel(member.session_timer)
        self.answer_join(member, JoinResult(ErrorCode.unknown_member_id, member_id=member.member_id))
        self.answer_sync(member, SyncResult(ErrorCode.unknown_member_id))

    def _remove_member_and_rebalance(self, group: Group, member: Member) -> None:
        self._remove_member(group, member)
        if group.is_(GroupState.STABLE) or group.is_(GroupState.COMPLETING_REBALANCE):
            self.prepare_rebalance(group)
        self._maybe_complete_join(group)

    # --- SyncGroup ---------------------------------------------------------------------------

    async def sync(
        self,
        *,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Mapping[str, bytes],
    ) -> SyncResult:
        group = self.groups.get(group_id)
        if group is None:
            return SyncResult(ErrorCode.unknown_member_id)
        fenced = self._fenced_instance_error(group, member_id, group_instance_id)
        if fenced is not None:
            return SyncResult(fenced)
        member = group.members.get(member_id)
        if member is None or group.is_(GroupState.EMPTY):
            return SyncResult(ErrorCode.unknown_member_id)
        if generation_id != group.generation_id:
            return SyncResult(ErrorCode.illegal_generation)
        if (protocol_type and protocol_type != group.protocol_type) or (
            protocol_name and protocol_name != group.protocol_name
        ):
            return SyncResult(ErrorCode.inconsistent_group_protocol)
        log.debug("group %s: SyncGroup from %s (%s)", group_id, member_id, group.state.value)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return SyncResult(ErrorCode.rebalance_in_progress)
        self.schedule_session_timeout(group, member)
        if group.is_(GroupState.STABLE):
            return SyncResult(ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name)
        self.answer_sync(member, SyncResult(ErrorCode.rebalance_in_progress))
        member.sync_future = future = asyncio.get_running_loop().create_future()
        if member_id == group.leader_id:
            # Shielded: a leader that disconnects mid-write must not leave the group half-synced.
            generation = group.generation_id
            completion = asyncio.ensure_future(self._store_sync(group, assignments))
            try:
                stored = await asyncio.shield(completion)
            except asyncio.CancelledError:
                completion.add_done_callback(lambda done: self._finish_stored_sync(group, generation, done))
                raise
            # The group turns Stable and the leader, which computed the assignment, is answered in this
            # step; the waiting followers after it. A follower's SyncGroup cannot overtake the leader's
            # answer, and clients' rebalance listeners (aiokafka's tests among them) expect the leader
            # to hold its assignment once a follower holds its own. Kafka's order is unspecified.
            self._finish_sync(group, generation, stored)
            if future.done():
                return future.result()
        return await asyncio.shield(future)

    def _finish_stored_sync(
        self, group: Group, generation: int, done: asyncio.Future[dict[str, bytes] | None]
    ) -> None:
        if not done.cancelled() and done.exception() is None:
            self._finish_sync(group, generation, done.result())

    async def _store_sync(self, group: Group, assignments: Mapping[str, bytes]) -> dict[str, bytes] | None:
        """Writes the leader's assignment; returns it completed for every member, or None when the
        write failed (the members are told, and the group rebalances) or a rebalance overtook it."""
        generation = group.generation_id
        complete = {member_id: assignments.get(member_id, b"") for member_id in group.members}
        error = await self.store(group, complete)
        if not group.is_(GroupState.COMPLETING_REBALANCE) or group.generation_id != generation:
            return None  # a rebalance started while we were writing; it answered the waiters
        if error is not None:
            for member in group.members.values():
                self.answer_sync(member, SyncResult(error))
            self.prepare_rebalance(group)
            self._maybe_complete_join(group)
            return None
        return complete

    def _finish_sync(self, group: Group, generation: int, complete: dict[str, bytes] | None) -> None:
        """The stored assignment takes effect: Stable, and every waiting member answered."""
        if (
            complete is None
            or not group.is_(GroupState.COMPLETING_REBALANCE)
            or group.generation_id != generation
        ):
            return
        self._cancel(group.sync_timer)
        for member_id, member in group.members.items():
            member.assignment = complete.get(member_id, b"")
        group.transition_to(GroupState.STABLE, self.clock.now_ms())
        for member in group.members.values():
            self.answer_sync(
                member,
                SyncResult(ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name),
            )

    # --- Heartbeat and LeaveGroup ------------------------------------------------------------

    def heartbeat(
        self, *, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> int:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.unknown_member_id
        fenced = self._fenced_instance_error(group, member_id, group_instance_id)
        if fenced is not None:
            return fenced
        member = group.members.get(member_id)
        if member is None or group.is_(GroupState.EMPTY):
            return ErrorCode.unknown_member_id
        if generation_id != group.generation_id:
            return ErrorCode.illegal_generation
        self.schedule_session_timeout(group, member)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return ErrorCode.rebalance_in_progress
        return ErrorCode.none

    def leave(self, group_id: str, members: Sequence[tuple[str, str | None]]) -> list[int]:
        """Removes (member_id, group_instance_id) pairs; returns an error per member."""
        group = self.groups.get(group_id)
        if group is None:
            return [ErrorCode.unknown_member_id] * len(members)
        results: list[int] = []
        removed_any = False
        for member_id, instance_id in members:
            if not member_id and instance_id is not None:
                member_id = group.static_members.get(instance_id, "")
            fenced = self._fenced_instance_error(group, member_id, instance_id)
            if fenced is not None:
                results.append(fenced)
            elif member_id in group.pending_members:
                self._cancel(group.pending_members.pop(member_id))
                results.append(ErrorCode.none)
                removed_any = True
            elif member_id in group.members:
                self._remove_member(group, group.members[member_id])
                results.append(ErrorCode.none)
                removed_any = True
            else:
                results.append(ErrorCode.unknown_member_id)
        if removed_any:
            if group.is_(GroupState.STABLE) or group.is_(GroupState.COMPLETING_REBALANCE):
                self.prepare_rebalance(group)
            self._maybe_complete_join(group)
        return results

    # --- offsets -----------------------------------------------------------------------------

    def committing_member_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        """A classic group's check: the member and its generation (Kafka's ClassicGroup rule)."""
        generation_id, member_id, transactional = (
            committer.generation_id,
            committer.member_id,
            committer.transactional,
        )
        group = self.groups.get(group_id)
        if group is None:
            # Admin tools and manual-assignment consumers commit without joining.
            return None if generation_id < 0 or transactional else ErrorCode.illegal_generation
        if group.is_(GroupState.DEAD):
            return ErrorCode.coordinator_not_available
        if transactional and generation_id < 0:
            return None  # TxnOffsetCommit before v3 carries no member (KIP-447 added it)
        fenced = self._fenced_instance_error(group, member_id, committer.group_instance_id)
        if fenced is not None:
            return fenced
        if generation_id < 0 and group.is_(GroupState.EMPTY):
            return None
        # Kafka checks the member and its generation before the group's state: an unknown member is told so
        # (and rejoins) even while the group awaits its leader's assignment.
        if member_id not in group.members:
            return ErrorCode.unknown_member_id
        if generation_id != group.generation_id:
            return ErrorCode.illegal_generation
        if not transactional and group.is_(GroupState.COMPLETING_REBALANCE):
            return ErrorCode.rebalance_in_progress
        return None

    def listed(self) -> list[ListedGroup]:
        return [
            ListedGroup(group.group_id, group.protocol_type or "", group.state.value)
            for group in self.groups.values()
            if not group.is_(GroupState.DEAD)
        ]

    def describe(self, group_id: str) -> GroupDescription:
        group = self.groups.get(group_id)
        if group is None:
            # Kafka's answer for an unknown group in DescribeGroups v0-5.
            return GroupDescription(ErrorCode.none, group_id, GroupState.DEAD.value, "", "", ())
        stable = group.is_(GroupState.STABLE) and group.protocol_name is not None
        members = tuple(
            DescribedMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                # Like Kafka: metadata and assignment only once the group is Stable.
                metadata=m.metadata_for(group.protocol_name) if stable and group.protocol_name else b"",
                assignment=m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        return GroupDescription(
            ErrorCode.none,
            group_id,
            group.state.value,
            group.protocol_type or "",
            (group.protocol_name or "") if stable else "",
            members,
        )

    # --- offsets retention -------------------------------------------------------------------

    @staticmethod
    def expired_offsets(group: Group, now: int, retention: int) -> list[tuple[str, int]]:
        def expired(committed: CommittedOffset, base: int) -> bool:
            if committed.expire_timestamp >= 0:
                return committed.expire_timestamp <= now
            return base + retention <= now

        if group.is_(GroupState.EMPTY):
            if group.protocol_type is None:
                return [tp for tp, c in group.offsets.items() if expired(c, c.commit_timestamp)]
            return [tp for tp, c in group.offsets.items() if expired(c, group.current_state_timestamp)]
        subscribed = group.subscribed_topics() if group.is_(GroupState.STABLE) else None
        if subscribed is None:
            return []
        return [
            tp
            for tp, c in group.offsets.items()
            if tp[0] not in subscribed and expired(c, c.commit_timestamp)
        ]

    # --- persistence -------------------------------------------------------------------------

    async def store(self, group: Group, assignments: Mapping[str, bytes] | None = None) -> int | None:
        """Writes the group's metadata (with `assignments` instead of the members' own, if given)."""
        try:
            record = group_metadata_record(group, assignments)
        except OffsetsFormatError:
            # A client id or instance id too long for Kafka's int16-length strings.
            log.warning("group %s: metadata does not fit Kafka's record format", group.group_id)
            return ErrorCode.unknown_server_error
        return await self._coordinator.append(self._coordinator.partition_for(group.group_id), [record])

    @staticmethod
    def answer_join(member: Member, result: JoinResult) -> None:
        if member.join_future is not None and not member.join_future.done():
            member.join_future.set_result(result)

    @staticmethod
    def answer_sync(member: Member, result: SyncResult) -> None:
        if member.sync_future is not None and not member.sync_future.done():
            member.sync_future.set_result(result)

    @staticmethod
    def _cancel(timer: Timer | None) -> None:
        if timer is not None:
            timer.cancel()

    def empty(self, group: Group) -> None:
        """Answers the group's waiting requests (they rejoin) and leaves it empty: its members went to a
        consumer group (online upgrade), and it only holds the offsets."""
        for timer in (group.rebalance_timer, group.sync_timer, *group.pending_members.values()):
            self._cancel(timer)
        for member in group.members.values():
            self._cancel(member.session_timer)
            self.answer_join(member, JoinResult(ErrorCode.rebalance_in_progress, member_id=member.member_id))
            self.answer_sync(member, SyncResult(ErrorCode.rebalance_in_progress))
        group.members.clear()
        group.static_members.clear()
        group.pending_members.clear()
        group.rebalance_timer = group.sync_timer = None
        group.leader_id = group.protocol_name = None
        group.in_initial_delay = False
        group.transition_to(GroupState.EMPTY, self.clock.now_ms())
