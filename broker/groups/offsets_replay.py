"""Reading a `__consumer_offsets` partition back: the classic records (offset commits, group metadata) it
holds, the offsets of transactions still open, and the records of other group types handed to them.

Also the answers the coordinator gives when a write to the topic fails, and how it names another broker.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Protocol

from kio.schema.errors import ErrorCode

from broker.groups.group import CommittedOffset
from broker.groups.offsets_format import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetsFormatError,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
)
from broker.metadata.coordinator_records import LogEntry

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
# Whether another group type takes the record (partition, key, value): then it is not classic.
ClaimRecord = Callable[[int, bytes, bytes | None], bool]


class CoordinatorLocator(Protocol):
    """Which broker coordinates a group (FindCoordinator) when that is not always this one."""

    def locate(self, group_id: str, listener_name: str) -> CoordinatorEndpoint: ...


@dataclass(frozen=True, slots=True)
class CoordinatorEndpoint:
    error_code: int
    node_id: int = -1
    host: str = ""
    port: int = -1


# Kafka's GroupMetadataManager turns storage errors into ones group clients act on: retry
# later (COORDINATOR_NOT_AVAILABLE) or look the coordinator up again (NOT_COORDINATOR).
_APPEND_ERRORS = {
    ErrorCode.unknown_topic_or_partition: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas_after_append: ErrorCode.coordinator_not_available,
    ErrorCode.request_timed_out: ErrorCode.coordinator_not_available,
    ErrorCode.not_leader_or_follower: ErrorCode.not_coordinator,
    ErrorCode.kafka_storage_error: ErrorCode.not_coordinator,
}
_TOO_LARGE = {ErrorCode.message_too_large, ErrorCode.record_list_too_large, ErrorCode.invalid_fetch_size}


def coordinator_error_for_append(error_code: int, *, offset_commit: bool) -> int:
    """The group-level answer for an append to `__consumer_offsets` that failed with `error_code`."""
    if error_code in _TOO_LARGE:
        return ErrorCode.invalid_commit_offset_size if offset_commit else ErrorCode.unknown_server_error
    return _APPEND_ERRORS.get(error_code, error_code)  # type: ignore[call-overload]


@dataclass(slots=True)
class ReplayedPartition:
    """What a partition's log says: per group its metadata (None: a tombstone) and offsets (None: deleted),
    and the offsets of open transactions (producer id -> group -> partition -> offset)."""

    partition: int
    claim: ClaimRecord
    metadata: dict[str, GroupMetadataValue | None] = field(default_factory=dict)
    offsets: dict[str, dict[TopicPartition, CommittedOffset | None]] = field(default_factory=dict)
    pending: dict[int, dict[str, dict[TopicPartition, CommittedOffset]]] = field(default_factory=dict)

    def committed_offsets(self, group_id: str) -> dict[TopicPartition, CommittedOffset]:
        return {tp: o for tp, o in self.offsets.get(group_id, {}).items() if o is not None}

    def apply(
        self,
        key_bytes: bytes,
        value_bytes: bytes | None,
        metadata: dict[str, GroupMetadataValue | None],
        offsets: dict[str, dict[TopicPartition, CommittedOffset | None]],
    ) -> None:
        if self.claim(self.partition, key_bytes, value_bytes):
            return
        try:
            _apply_classic_record(key_bytes, value_bytes, metadata, offsets)
        except OffsetsFormatError:
            log.warning("skipping an unreadable __consumer_offsets record in partition %d", self.partition)


async def replay_partition(
    partition: int, entries: AsyncIterator[LogEntry], claim: ClaimRecord
) -> ReplayedPartition:
    """Reads the partition's entries in order: a transaction's records count once its commit marker comes
    (an abort drops them), those of transactions still open end up in `pending`."""
    replayed = ReplayedPartition(partition, claim)
    # Records written inside a transaction, per producer, until its marker says what they become.
    open_transactions: dict[int, list[tuple[bytes, bytes | None]]] = {}
    async for entry in entries:
        if entry.key is None:
            written = open_transactions.pop(entry.producer_id, [])
            if entry.commit:
                for key_bytes, value_bytes in written:
                    replayed.apply(key_bytes, value_bytes, replayed.metadata, replayed.offsets)
            continue
        if entry.producer_id >= 0:
            open_transactions.setdefault(entry.producer_id, []).append((entry.key, entry.value))
            continue
        if entry.value is None:
            # A tombstone (DeleteGroups, expiry) also drops the offset from open transactions.
            for producer_id, written in open_transactions.items():
                open_transactions[producer_id] = [r for r in written if r[0] != entry.key]
        replayed.apply(entry.key, entry.value, replayed.metadata, replayed.offsets)
    for producer_id, written in open_transactions.items():
        pending: dict[str, dict[TopicPartition, CommittedOffset | None]] = {}
        for key_bytes, value_bytes in written:
            replayed.apply(key_bytes, value_bytes, {}, pending)
        for group_id, group_offsets in pending.items():
            kept = {tp: o for tp, o in group_offsets.items() if o is not None}
            replayed.pending.setdefault(producer_id, {}).setdefault(group_id, {}).update(kept)
    return replayed


def _apply_classic_record(
    key_bytes: bytes,
    value_bytes: bytes | None,
    metadata: dict[str, GroupMetadataValue | None],
    offsets: dict[str, dict[TopicPartition, CommittedOffset | None]],
) -> None:
    key = decode_key(key_bytes)
    if isinstance(key, OffsetCommitKey):
        committed = None
        if value_bytes is not None:
            value = decode_offset_commit_value(value_bytes)
            committed = CommittedOffset(
                offset=value.offset,
                leader_epoch=value.leader_epoch,
                metadata=value.metadata,
                commit_timestamp=value.commit_timestamp,
                expire_timestamp=value.expire_timestamp,
            )
        offsets.setdefault(key.group, {})[(key.topic, key.partition)] = committed
    elif isinstance(key, GroupMetadataKey):
        if value_bytes is None:
            metadata[key.group] = None
            # A group tombstone follows its offsets' tombstones; drop what came before.
            offsets.pop(key.group, None)
        else:
            metadata[key.group] = decode_group_metadata_value(value_bytes)
