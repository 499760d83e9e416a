"""The group coordinator: the groups of every type, and their offsets, in `__consumer_offsets`.

It is composed of its group types (broker/groups/group_type.py): classic groups (`ClassicGroups`)
always, and the components `add_group_type` adds (consumer-protocol and Streams groups). It keeps
what they share: the partitions (through the coordinator runtime), committed offsets (commit, fetch,
transactions, deletion, expiry), ListGroups and DeleteGroups, and the replay of the log. Requests of the
classic protocol go to the group types' hooks first, so converted groups keep their classic members.
Offsets and group metadata are written to `__consumer_offsets` in Kafka's own format, and replayed when a
partition is loaded.

A group belongs to one `__consumer_offsets` partition (`partition_for_group`). A broker owns the
partitions it leads (a single node leads them all): `load_partition` when it becomes the
leader, `unload_partition` when leadership moves (broker/server/group_storage.py follows the
metadata log), and answers NOT_COORDINATOR for every other group.

Assignments are opaque bytes: eager and cooperative assignors both run in the clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from kio.schema.errors import ErrorCode

from broker.coordinator.runtime import CoordinatorRuntime, CoordinatorSlot
from broker.groups.classic_groups import ClassicGroups
from broker.groups.clock import Clock, LoopClock, Timer
from broker.groups.group import (
    CommittedOffset,
    Group,
    GroupState,
    JoinResult,
    SyncResult,
)
from broker.groups.group_offsets import GroupOffsets, PartitionOffset
from broker.groups.group_type import (
    ClassicJoin,
    GroupCoordinatorConfig,
    GroupDescription,
    GroupType,
    ListedGroup,
    OffsetCommitter,
    is_valid_group_id,
)
from broker.groups.offsets_format import (
    partition_for_group,
)
from broker.groups.offsets_log import OFFSETS_TOPIC_NAME, OffsetsAppendError, OffsetsLog
from broker.groups.offsets_replay import CoordinatorLocator, coordinator_error_for_append, replay_partition

log = logging.getLogger(__name__)

_GroupTypeT = TypeVar("_GroupTypeT")

# What a group's ACL-free answer to "which operations may I do" is: READ, DELETE, DESCRIBE.
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)


class GroupCoordinator:
    """Serves the groups of the `__consumer_offsets` partitions it owns: the shard of the
    coordinator runtime (broker/coordinator/runtime.py) for that topic.

    A partition is loaded when this broker becomes its leader and unloaded when leadership moves
    away, and groups of other partitions get NOT_COORDINATOR.
    """

    def __init__(
        self,
        log: OffsetsLog,
        config: GroupCoordinatorConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.log = log
        self.config = config or GroupCoordinatorConfig()
        self.clock: Clock = clock or LoopClock()
        self.classic = ClassicGroups(self)
        # The group types beside classic groups this coordinator is composed with (add_group_type).
        self.group_types: list[GroupType] = []
        self.runtime = CoordinatorRuntime(OFFSETS_TOPIC_NAME, self)
        # Set once the broker joined its quorum: FindCoordinator names the leader of the key's partition.
        self.locator: CoordinatorLocator | None = None
        self.offsets = GroupOffsets(self.classic.groups, self)
        self._tasks: set[asyncio.Task[None]] = set()

    # --- lifecycle ---------------------------------------------------------------------------

    def add_group_type(self, group_type: GroupType) -> None:
        self.group_types.append(group_type)

    def group_type(self, kind: type[_GroupTypeT]) -> _GroupTypeT | None:
        """The group type of that class this coordinator holds, if any."""
        return next((t for t in self.group_types if isinstance(t, kind)), None)

    def group_type_of(self, group_id: str) -> GroupType | None:
        """The group type (other than classic) that has a group of that id, if any."""
        return next((t for t in self.group_types if t.holds(group_id)), None)

    @property
    def groups(self) -> dict[str, Group]:
        """The classic group entries: classic groups, and the holders of every group's offsets."""
        return self.classic.groups

    @property
    def partitions(self) -> dict[int, CoordinatorSlot]:
        """The `__consumer_offsets` partitions this coordinator owns (loading or loaded)."""
        return self.runtime.slots

    @property
    def stopped(self) -> bool:
        return self.runtime.stopped

    def load_partition(self, partition: int) -> asyncio.Task[None] | None:
        """Becomes the coordinator of the partition's groups; they get COORDINATOR_LOAD_IN_PROGRESS
        until its log is replayed (in the returned task). None when already owned or stopped."""
        return self.runtime.load(partition)

    def unload_partition(self, partition: int) -> None:
        """Stops coordinating the partition's groups: their waiting JoinGroup/SyncGroup requests
        get NOT_COORDINATOR, timers stop and the state is dropped (the new leader replays it)."""
        self.runtime.unload(partition)

    def drop_partition_state(self, partition: int) -> None:
        for group_type in self.group_types:
            group_type.drop_partition(partition)
        unloaded = [group_id for group_id in self.groups if self.partition_for(group_id) == partition]
        for group_id in unloaded:
            group = self.groups.pop(group_id)
            self.classic.release_group(group)
            # Like Kafka: an unloaded group is Dead, so writes still in flight leave it alone.
            group.transition_to(GroupState.DEAD, self.clock.now_ms())
        self.offsets.drop_partition(partition)
        log.info("unloaded __consumer_offsets partition %d (%d groups)", partition, len(unloaded))

    def call_later(self, group_id: str, delay_ms: int, callback: Callable[[], None]) -> Timer:
        """A timer of the group (session, rebalance, sync, revocation): the runtime cancels it with the
        group's partition, so it never fires on a group that was unloaded."""
        return self.runtime.call_later(self.partition_for(group_id), self.clock, delay_ms, callback)

    def owns_partition(self, partition: int) -> bool:
        return self.runtime.owns(partition)

    async def load_partition_state(self, slot: CoordinatorSlot) -> None:
        try:
            await self._load_partition_state(slot)
        finally:
            serving = self.runtime.current(slot)
            for group_type in self.group_types:
                group_type.partition_loaded(slot.partition, serving)

    async def _load_partition_state(self, slot: CoordinatorSlot) -> None:
        partition = slot.partition
        replayed = await replay_partition(
            partition, self.runtime.replay(slot, self.log.read(partition)), self._claimed_by_group_type
        )
        if not self.runtime.current(slot):
            return
        # A new leader may hold records its followers lack; serve them once they are committed.
        with contextlib.suppress(OffsetsAppendError):  # leadership moved: the check below sees it
            await self.log.wait_until_committed(partition)
        if not self.runtime.current(slot):
            return
        for group_id in replayed.metadata.keys() | replayed.offsets.keys():
            if self.partition_for(group_id) != partition:
                log.warning("group %s found in __consumer_offsets partition %d: ignored", group_id, partition)
                continue
            value = replayed.metadata.get(group_id)
            group_offsets = replayed.committed_offsets(group_id)
            if value is None and not group_offsets:
                continue
            group = self.classic.group_from_metadata(group_id, value)
            group.offsets = group_offsets
            self.groups[group_id] = group
        self.offsets.add_pending(replayed.pending)
        groups = sum(1 for group_id in self.groups if self.partition_for(group_id) == partition)
        log.info("coordinating the %d groups of __consumer_offsets partition %d", groups, partition)

    def _claimed_by_group_type(self, partition: int, key: bytes, value: bytes | None) -> bool:
        return any(group_type.replay(partition, key, value) for group_type in self.group_types)

    async def stop(self) -> None:
        """Stops timers and answers every waiting request with NOT_COORDINATOR."""
        for group_type in self.group_types:
            group_type.release()
        self.runtime.stop()
        for group in self.groups.values():
            self.classic.release_group(group)
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        await self.stop()

    def group_count(self) -> int:
        return len(self.groups)

    def partition_for(self, group_id: str) -> int:
        return partition_for_group(group_id, self.log.num_partitions)

    def availability_error(self, group_id: str) -> int | None:
        """NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this broker cannot serve `group_id` now (share
        groups, kept beside this coordinator, ask it too)."""
        return self._availability_error(group_id)

    def _availability_error(self, group_id: str) -> int | None:
        return self.runtime.availability_error(self.partition_for(group_id))

    # --- the classic protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup ---------------------

    async def join_group(
        self,
        *,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str,
        protocols: Sequence[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        client_id: str,
        client_host: str,
        require_known_member_id: bool,
    ) -> JoinResult:
        error = self._availability_error(group_id)
        if error is not None:
            return JoinResult(error, member_id=member_id)
        if not is_valid_group_id(group_id):
            return JoinResult(ErrorCode.invalid_group_id, member_id=member_id)
        join = ClassicJoin(
            group_id, member_id, group_instance_id, protocol_type, protocols, session_timeout_ms,
            rebalance_timeout_ms, client_id, client_host, require_known_member_id,
        )  # fmt: skip
        for group_type in self.group_types:
            answer = await group_type.classic_join(join)
            if answer is not None:
                return answer
        return await self.classic.join(join)

    async def sync_group(
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
        error = self._availability_error(group_id)
        if error is not None:
            return SyncResult(error)
        for group_type in self.group_types:
            answer = group_type.classic_sync(group_id, generation_id, member_id, protocol_name)
            if answer is not None:
                return answer
        return await self.classic.sync(
            group_id=group_id,
            generation_id=generation_id,
            member_id=member_id,
            group_instance_id=group_instance_id,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            assignments=assignments,
        )

    def heartbeat(
        self, *, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> int:
        error = self._availability_error(group_id)
        if error is not None:
            return error
        for group_type in self.group_types:
            answer = group_type.classic_heartbeat(group_id, generation_id, member_id)
            if answer is not None:
                return answer
        return self.classic.heartbeat(
            group_id=group_id,
            generation_id=generation_id,
            member_id=member_id,
            group_instance_id=group_instance_id,
        )

    def leave_group(
        self, *, group_id: str, members: Sequence[tuple[str, str | None]]
    ) -> tuple[int, list[int]]:
        """Removes (member_id, group_instance_id) pairs; returns a group error and one per member."""
        error = self._availability_error(group_id)
        if error is not None:
            return error, [error] * len(members)
        for group_type in self.group_types:
            answer = group_type.classic_leave(group_id, members)
            if answer is not None:
                return ErrorCode.none, answer
        return ErrorCode.none, self.classic.leave(group_id, members)

    def describe_group(self, group_id: str) -> GroupDescription:
        error = self._availability_error(group_id)
        if error is not None:
            return GroupDescription(error, group_id, "", "", "", ())
        if not is_valid_group_id(group_id):
            return GroupDescription(ErrorCode.invalid_group_id, group_id, "", "", "", ())
        for group_type in self.group_types:
            described = group_type.describe_classic(group_id)
            if described is not None:
                return described
        return self.classic.describe(group_id)

    # --- offsets -----------------------------------------------------------------------------

    async def commit_offsets(
        self,
        *,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: Sequence[PartitionOffset],
        retention_ms: int = -1,
    ) -> list[int]:
        """Commits offsets; returns one error code per entry of `offsets`, in order."""
        error = self._commit_error(group_id, OffsetCommitter(member_id, generation_id, group_instance_id))
        if error is not None:
            return [error] * len(offsets)
        group = self.offsets_holder(group_id)
        if member_id in group.members:
            self.classic.schedule_session_timeout(group, group.members[member_id])
        return await self.offsets.commit(group_id, offsets, retention_ms)

    async def commit_transactional_offsets(
        self,
        *,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: Sequence[PartitionOffset],
    ) -> list[int]:
        """TxnOffsetCommit: the offsets are written to the group's partition inside the producer's
        transaction and stay pending until its marker arrives (`complete_transaction`)."""
        error = self._commit_error(
            group_id, OffsetCommitter(member_id, generation_id, group_instance_id, transactional=True)
        )
        if error is not None:
            return [error] * len(offsets)
        return await self.offsets.commit_transactional(group_id, (producer_id, producer_epoch), offsets)

    def _commit_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        """Why an (transactional) offset commit is refused, or None: the checks every group shares,
        then the group type's own check of the committing member."""
        error = self._availability_error(group_id)
        if error is not None:
            return error
        if not is_valid_group_id(group_id):
            return ErrorCode.invalid_group_id
        group_type = self.group_type_of(group_id)
        if group_type is not None:
            return group_type.committing_member_error(group_id, committer)
        return self.classic.committing_member_error(group_id, committer)

    def offsets_holder(self, group_id: str) -> Group:
        """The classic group entry that holds `group_id`'s offsets (an Empty one is made if none)."""
        return self.offsets.holder(group_id)

    @property
    def pending_transactions(self) -> dict[int, dict[str, dict[tuple[str, int], CommittedOffset]]]:
        """Offsets of open transactions: producer id -> group -> partition -> offset."""
        return self.offsets.pending_transactions

    def complete_transaction(self, partition: int, producer_id: int, commit: bool) -> None:
        """The marker of `producer_id`'s transaction was written to `partition`: its pending offsets
        of that partition's groups become committed offsets, or are dropped on abort."""
        if self.runtime.defer_until_loaded(
            partition, lambda: self.complete_transaction(partition, producer_id, commit)
        ):
            # Being replayed (a new leader): the replay may have read the log before this marker,
            # so the transaction it finds open is completed once it has finished.
            return
        self.offsets.complete_transaction(partition, producer_id, commit)

    def has_pending_offsets(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether a transaction holds an offset of the group's partition (OffsetFetch require_stable)."""
        return self.offsets.has_pending(group_id, topic, partition)

    def fetch_offsets(
        self,
        *,
        group_id: str,
        topics: Sequence[tuple[str, Sequence[int]]] | None,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[int, list[tuple[str, int, CommittedOffset | None]]]:
        """Committed offsets of the listed partitions (all of the group's when `topics` is None).

        A member that names itself (OffsetFetch v9) is checked by its group type; a classic group lets
        anyone read its offsets (Kafka's ClassicGroup.validateOffsetFetch). Offsets still pending in a
        transaction are not returned (`has_pending_offsets` tells OffsetFetch with `require_stable` to
        answer UNSTABLE_OFFSET_COMMIT).
        """
        error = self._availability_error(group_id)
        group_type = self.group_type_of(group_id) if error is None else None
        if group_type is not None:
            error = group_type.fetching_member_error(group_id, member_id, member_epoch)
        if error is not None:
            return error, []
        return ErrorCode.none, self.offsets.fetch(group_id, topics)

    async def delete_offsets(
        self, *, group_id: str, partitions: Sequence[tuple[str, int]]
    ) -> tuple[int, list[int]]:
        """OffsetDelete: one error per partition. Offsets of topics the group consumes stay."""
        error = self._availability_error(group_id)
        if error is not None:
            return error, []
        if not is_valid_group_id(group_id):
            return ErrorCode.invalid_group_id, []
        group_type = self.group_type_of(group_id)
        protected = group_type.protected_topics(group_id) if group_type is not None else None
        if protected is None:
            return await self.offsets.delete(group_id, partitions)
        free = [tp for tp in partitions if tp[0] not in protected]
        error, codes = await self.offsets.delete(group_id, free)
        if error != ErrorCode.none:
            return error, []
        done = dict(zip(free, codes, strict=True))
        return ErrorCode.none, [done.get(tp, ErrorCode.group_subscribed_to_topic) for tp in partitions]

    # --- admin -------------------------------------------------------------------------------

    async def delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        results: dict[str, int] = {}
        for group_id in group_ids:
            error = self._availability_error(group_id)
            group_type = self.group_type_of(group_id) if error is None else None
            refusal = await group_type.delete(group_id) if group_type is not None else None
            if refusal is not None:
                results[group_id] = refusal
                continue
            group = self.groups.get(group_id)
            if group is None and error is None and self.offsets.pending_of(group_id):
                # Only a transaction's offsets so far: Kafka has made it an empty group by now (kept
                # in the map, so a marker arriving during the deletion finds it dead).
                group = self.offsets_holder(group_id)
            if error is not None:
                results[group_id] = error
            elif not is_valid_group_id(group_id):
                results[group_id] = ErrorCode.invalid_group_id
            elif group is None or group.is_(GroupState.DEAD):
                results[group_id] = ErrorCode.group_id_not_found
            elif not group.is_(GroupState.EMPTY):
                results[group_id] = ErrorCode.non_empty_group
            else:
                results[group_id] = await asyncio.shield(self.offsets.delete_group(group))
        return results

    def list_groups(
        self, *, states_filter: Sequence[str] = (), types_filter: Sequence[str] = ()
    ) -> tuple[int, list[ListedGroup]]:
        """The groups of the partitions this coordinator owns (Kafka's ListGroups per broker)."""
        if self.stopped:
            return ErrorCode.not_coordinator, []
        if not all(owned.loaded for owned in self.partitions.values()):
            return ErrorCode.coordinator_load_in_progress, []
        states = {s.lower() for s in states_filter}
        types = {t.lower() for t in types_filter}
        # A group of another type is listed instead of the classic entry that holds its offsets.
        by_id = {group.group_id: group for group in self.classic.listed()}
        for group_type in self.group_types:
            by_id.update((group.group_id, group) for group in group_type.listed())
        listed = [
            group
            for group in by_id.values()
            if (not states or group.state.lower() in states) and (not types or group.group_type in types)
        ]
        return ErrorCode.none, sorted(listed, key=lambda g: g.group_id)

    async def expire_offsets(self, now_ms: int | None = None) -> int:
        """Drops expired offsets (offsets.retention.minutes) and then empty groups; returns the count.

        An Empty consumer group's offsets expire together, counted from when it became
        empty; a group that never had members (commits from admin tools) expires each
        offset from its commit time; a live consumer group only loses offsets of topics
        it no longer subscribes to (KIP-211, KIP-496).
        """
        if self.stopped:
            return 0
        now = self.clock.now_ms() if now_ms is None else now_ms
        retention = self.config.offsets_retention_ms

        def expired_of(group: Group) -> list[tuple[str, int]] | None:
            group_type = self.group_type_of(group.group_id)
            if group_type is not None and group_type.keeps_offsets(group.group_id):
                return None
            return self.classic.expired_offsets(group, now, retention)

        return await self.offsets.expire(now, expired_of)

    async def append(
        self,
        partition: int,
        records: Sequence[tuple[bytes, bytes | None]],
        *,
        offset_commit: bool = False,
        producer: tuple[int, int] | None = None,
    ) -> int | None:
        """Writes to an owned, loaded partition; None once the ISR has it,
        else the error for the client."""

        def append() -> Awaitable[int]:
            if producer is None:
                return self.log.append(partition, records)
            return self.log.append(partition, records, producer)

        return await self.runtime.write(
            partition, append, lambda code: coordinator_error_for_append(code, offset_commit=offset_commit)
        )

    # --- small helpers -----------------------------------------------------------------------

    def spawn(self, work: Awaitable[object]) -> None:
        async def run() -> None:
            await work

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Waits for background writes (group metadata, expiry) to finish; used by tests and shutdown."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
