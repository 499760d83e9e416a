"""Committed offsets of every group, and those pending in open transactions, in `__consumer_offsets`.

A group's offsets live in the classic entry of its id (`ClassicGroups.groups`), whatever the group's type:
an Empty classic entry holds a consumer or Streams group's. The coordinator checks who may commit, fetch
or delete (broker/groups/coordinator.py); this writes and reads the offsets, Kafka's way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kio.schema.errors import ErrorCode

from broker.groups.clock import Clock
from broker.groups.group import CommittedOffset, Group, GroupState
from broker.groups.group_type import MAX_KEY_STRING_BYTES, GroupCoordinatorConfig
from broker.groups.offsets_format import (
    GroupMetadataKey,
    OffsetCommitKey,
    OffsetCommitValue,
    encode_group_metadata_key,
    encode_offset_commit_key,
    encode_offset_commit_value,
)

TopicPartition = tuple[str, int]
Records = Sequence[tuple[bytes, bytes | None]]


@dataclass(frozen=True, slots=True)
class PartitionOffset:
    """One partition's offset in an OffsetCommit request."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


class OffsetsHost(Protocol):
    """What the offsets use of the coordinator: settings, clock, and writes to its partitions."""

    config: GroupCoordinatorConfig
    clock: Clock

    def partition_for(self, group_id: str) -> int: ...

    def append(
        self,
        partition: int,
        records: Records,
        *,
        offset_commit: bool = False,
        producer: tuple[int, int] | None = None,
    ) -> Awaitable[int | None]:
        """Writes to an owned partition: None, or the error for the client."""
        ...


class GroupOffsets:
    def __init__(self, groups: dict[str, Group], host: OffsetsHost) -> None:
        self.groups = groups
        self._host = host
        # TxnOffsetCommit offsets waiting for their transaction's marker: producer id -> group ->
        # partition -> offset. The commit marker makes them the group's offsets; abort drops them.
        self.pending_transactions: dict[int, dict[str, dict[TopicPartition, CommittedOffset]]] = {}

    def holder(self, group_id: str) -> Group:
        """The classic group entry that holds `group_id`'s offsets (an Empty one is made if none)."""
        return self.groups.setdefault(
            group_id, Group(group_id=group_id, current_state_timestamp=self._host.clock.now_ms())
        )

    async def commit(self, group_id: str, offsets: Sequence[PartitionOffset], retention_ms: int) -> list[int]:
        """One error code per entry of `offsets`, in order."""
        now = self._host.clock.now_ms()
        results, accepted = self._accept(
            offsets, now, expire_timestamp=now + retention_ms if retention_ms >= 0 else -1
        )
        if not accepted:
            return results

        def apply() -> None:
            self.holder(group_id).offsets.update(accepted)

        return await self._write(group_id, results, accepted, apply)

    async def commit_transactional(
        self, group_id: str, producer: tuple[int, int], offsets: Sequence[PartitionOffset]
    ) -> list[int]:
        """Written inside the producer's transaction; pending until its marker (`complete_transaction`)."""
        results, accepted = self._accept(offsets, self._host.clock.now_ms(), expire_timestamp=-1)
        if not accepted:
            return results

        def apply() -> None:
            self.pending_transactions.setdefault(producer[0], {}).setdefault(group_id, {}).update(accepted)

        return await self._write(group_id, results, accepted, apply, producer=producer)

    def _accept(
        self, offsets: Sequence[PartitionOffset], now: int, *, expire_timestamp: int
    ) -> tuple[list[int], dict[TopicPartition, CommittedOffset]]:
        """One error code per entry (in order) and the offsets that may be written."""
        results: list[int] = []
        accepted: dict[TopicPartition, CommittedOffset] = {}
        for entry in offsets:
            metadata = entry.metadata or ""
            if len(metadata.encode()) > self._host.config.offset_metadata_max_bytes:
                results.append(ErrorCode.offset_metadata_too_large)
                continue
            if len(entry.topic.encode()) > MAX_KEY_STRING_BYTES:
                results.append(ErrorCode.unknown_topic_or_partition)
                continue
            results.append(ErrorCode.none)
            accepted[(entry.topic, entry.partition)] = CommittedOffset(
                offset=entry.offset,
                leader_epoch=entry.leader_epoch,
                metadata=metadata,
                commit_timestamp=now,
                expire_timestamp=expire_timestamp,
            )
        return results, accepted

    async def _write(
        self,
        group_id: str,
        results: list[int],
        accepted: Mapping[TopicPartition, CommittedOffset],
        apply: Callable[[], None],
        *,
        producer: tuple[int, int] | None = None,
    ) -> list[int]:
        """Appends the accepted offsets to the group's partition, then `apply`s them in memory."""
        records = [
            (
                encode_offset_commit_key(OffsetCommitKey(group_id, topic, partition)),
                encode_offset_commit_value(
                    OffsetCommitValue(
                        offset=committed.offset,
                        metadata=committed.metadata,
                        commit_timestamp=committed.commit_timestamp,
                        leader_epoch=committed.leader_epoch,
                        expire_timestamp=committed.expire_timestamp,
                    )
                ),
            )
            for (topic, partition), committed in accepted.items()
        ]

        async def write() -> list[int]:
            append_error = await self._host.append(
                self._host.partition_for(group_id), records, offset_commit=True, producer=producer
            )
            if append_error is not None:
                return [append_error if code == ErrorCode.none else code for code in results]
            apply()
            return results

        # Shielded so a cancelled request cannot leave the log and the memory disagreeing.
        return await asyncio.shield(write())

    def complete_transaction(self, partition: int, producer_id: int, commit: bool) -> None:
        """The pending offsets of the producer's transaction for the partition's groups become committed
        offsets, or are dropped on abort."""
        by_group = self.pending_transactions.get(producer_id)
        if not by_group:
            return
        for group_id in [g for g in by_group if self._host.partition_for(g) == partition]:
            pending = by_group.pop(group_id)
            if commit:
                self.holder(group_id).offsets.update(pending)
        if not by_group:
            del self.pending_transactions[producer_id]

    def has_pending(self, group_id: str, topic: str, partition: int) -> bool:
        return any(
            (topic, partition) in by_group.get(group_id, {})
            for by_group in self.pending_transactions.values()
        )

    def pending_of(self, group_id: str) -> list[tuple[int, TopicPartition, CommittedOffset]]:
        """(producer id, partition, offset) of the group's offsets pending in open transactions."""
        return [
            (producer_id, tp, offset)
            for producer_id, by_group in self.pending_transactions.items()
            for tp, offset in by_group.get(group_id, {}).items()
        ]

    def add_pending(
        self, pending: Mapping[int, Mapping[str, Mapping[TopicPartition, CommittedOffset]]]
    ) -> None:
        """Offsets of transactions a replayed partition left open."""
        for producer_id, by_group in pending.items():
            for group_id, group_offsets in by_group.items():
                self.pending_transactions.setdefault(producer_id, {}).setdefault(group_id, {}).update(
                    group_offsets
                )

    def drop_partition(self, partition: int) -> None:
        for by_group in self.pending_transactions.values():
            for group_id in [g for g in by_group if self._host.partition_for(g) == partition]:
                del by_group[group_id]

    def fetch(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None
    ) -> list[tuple[str, int, CommittedOffset | None]]:
        group = self.groups.get(group_id)
        stored = group.offsets if group is not None else {}
        if topics is None:
            return [(t, p, committed) for (t, p), committed in sorted(stored.items())]
        return [(t, p, stored.get((t, p))) for t, partitions in topics for p in partitions]

    async def delete(self, group_id: str, partitions: Sequence[TopicPartition]) -> tuple[int, list[int]]:
        """OffsetDelete by classic rules: a live group keeps the offsets of the topics it consumes."""
        group = self.groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.group_id_not_found, []
        subscribed: set[str] = set()
        if not group.is_(GroupState.EMPTY):
            topics = group.subscribed_topics()
            if topics is None:
                return ErrorCode.non_empty_group, []
            subscribed = topics
        results = [
            ErrorCode.group_subscribed_to_topic if topic in subscribed else ErrorCode.none
            for topic, _ in partitions
        ]
        doomed = [
            (topic, partition)
            for (topic, partition), code in zip(partitions, results, strict=True)
            if code == ErrorCode.none and (topic, partition) in group.offsets
        ]
        if doomed:
            append_error = await asyncio.shield(self._remove(group, doomed))
            if append_error is not None:
                return append_error, []
        return ErrorCode.none, results

    async def _remove(self, group: Group, keys: Sequence[TopicPartition]) -> int | None:
        error = await self._host.append(
            self._host.partition_for(group.group_id), _tombstones(group.group_id, keys)
        )
        if error is None:
            for key in keys:
                group.offsets.pop(key, None)
        return error

    async def delete_group(self, group: Group) -> int:
        """Tombstones for the group's offsets, those still pending in open transactions included, and
        for its metadata. As in Kafka, the pending ones are dropped: a later commit marker leaves the
        group deleted (replay drops them at the tombstone too)."""
        clock = self._host.clock
        group.transition_to(GroupState.DEAD, clock.now_ms())
        pending = self.pending_of(group.group_id)
        doomed = group.offsets.keys() | {tp for _, tp, _ in pending}
        records = _tombstones(group.group_id, sorted(doomed), group_too=True)
        error = await self._host.append(self._host.partition_for(group.group_id), records)
        if error is not None:
            group.transition_to(GroupState.EMPTY, clock.now_ms())
            return error
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]
        for producer_id, tp, offset in pending:
            # Offsets a transaction wrote while the tombstones were being written stay its own.
            by_group = self.pending_transactions.get(producer_id, {})
            offsets = by_group.get(group.group_id, {})
            if offsets.get(tp) is offset:
                del offsets[tp]
            if not offsets:
                by_group.pop(group.group_id, None)
            if not by_group:
                self.pending_transactions.pop(producer_id, None)
        return ErrorCode.none

    async def expire(self, now: int, expired_of: Callable[[Group], list[TopicPartition] | None]) -> int:
        """Drops the offsets `expired_of` names (None: the group keeps them all; an offset a transaction is
        about to replace stays, as in Kafka), and the groups left Empty without offsets; returns how many
        offsets went."""
        expired_total = 0
        for group in list(self.groups.values()):
            candidates = expired_of(group)
            if candidates is None:
                continue
            expired = [tp for tp in candidates if not self.has_pending(group.group_id, *tp)]
            delete_group = (
                group.is_(GroupState.EMPTY)
                and not group.pending_members  # a client is mid-way through joining
                and len(expired) == len(group.offsets)
            )
            if not expired and not delete_group:
                continue
            records = _tombstones(group.group_id, expired, group_too=delete_group)
            if await self._host.append(self._host.partition_for(group.group_id), records) is not None:
                continue  # not written (not owned any more, or too few replicas): memory stays
            for key in expired:
                group.offsets.pop(key, None)
            expired_total += len(expired)
            if delete_group and group.is_(GroupState.EMPTY) and not group.offsets:
                group.transition_to(GroupState.DEAD, now)
                self.groups.pop(group.group_id, None)
        return expired_total


def _tombstones(group_id: str, keys: Sequence[TopicPartition], *, group_too: bool = False) -> Records:
    """Tombstones for the group's offsets of `keys`, then (`group_too`) for its metadata."""
    records: list[tuple[bytes, bytes | None]] = [
        (encode_offset_commit_key(OffsetCommitKey(group_id, t, p)), None) for t, p in keys
    ]
    if group_too:
        records.append((encode_group_metadata_key(GroupMetadataKey(group_id)), None))
    return records
