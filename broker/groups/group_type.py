"""The kinds of group one group coordinator holds, and what it asks of each.

`GroupCoordinator` (broker/groups/coordinator.py) is composed of its group types: classic groups
(`ClassicGroups`, broker/groups/classic_groups.py) always, and components for the others, added with
`GroupCoordinator.add_group_type`: consumer-protocol groups (KIP-848, `ConsumerGroups`) and Streams groups
(KIP-1071, `StreamsGroups`). A component keeps its groups, answers its own protocol's requests, and tells the
coordinator what the shared pieces need: offset commit/fetch checks, ListGroups, DeleteGroups and
OffsetDelete, offsets expiry, its records in `__consumer_offsets`, unloading a partition, stopping.

The classic-protocol requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups) first go to
each component's hook: a group converted from the classic protocol keeps classic members, served by its
component (online migration); a hook answers None for a group it does not serve that way, and
`ClassicGroups` serves the request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from broker.groups.clock import Clock, Timer
from broker.groups.group import JoinResult, SyncResult

CLASSIC_GROUP_TYPE = "classic"
MAX_KEY_STRING_BYTES = 0x7FFF


def is_valid_group_id(group_id: str) -> bool:
    """Non-empty and short enough for the int16-length strings of `__consumer_offsets` keys."""
    return bool(group_id) and len(group_id.encode()) <= MAX_KEY_STRING_BYTES


@dataclass(frozen=True, slots=True)
class GroupCoordinatorConfig:
    """Kafka's broker settings for groups, under their Kafka names (in milliseconds)."""

    initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    max_group_size: int = 2**31 - 1  # group.max.size
    offsets_retention_ms: int = 10080 * 60_000  # offsets.retention.minutes
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes


class GroupHost(Protocol):
    """What the group coordinator lends its group types: settings, clock, timers, writes, partitions."""

    config: GroupCoordinatorConfig
    clock: Clock

    def call_later(self, group_id: str, delay_ms: int, callback: Callable[[], None]) -> Timer:
        """A timer of the group, cancelled with its partition."""
        ...

    def spawn(self, work: Awaitable[object]) -> None:
        """Runs `work` in the background (a write nobody waits for)."""
        ...

    async def append(self, partition: int, records: Sequence[tuple[bytes, bytes | None]]) -> int | None:
        """Writes records to an owned partition of `__consumer_offsets`: None, or the error for the client."""
        ...

    def partition_for(self, group_id: str) -> int: ...


@dataclass(frozen=True, slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = CLASSIC_GROUP_TYPE


@dataclass(frozen=True, slots=True)
class OffsetCommitter:
    """Who commits offsets, as an OffsetCommit or TxnOffsetCommit names it."""

    member_id: str
    generation_id: int  # the member epoch for a consumer-protocol group
    group_instance_id: str | None
    transactional: bool = False


@dataclass(frozen=True, slots=True)
class ClassicJoin:
    """A JoinGroup request's fields."""

    group_id: str
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: Sequence[tuple[str, bytes]]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    client_id: str
    client_host: str
    require_known_member_id: bool


@dataclass(frozen=True, slots=True)
class DescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupDescription:
    error_code: int
    group_id: str
    state: str
    protocol_type: str
    protocol_data: str
    members: tuple[DescribedMember, ...]


class GroupType(Protocol):
    """A group type the coordinator is composed with; its groups live in the coordinator's partitions.

    The coordinator asks a hook only about a group of a partition it owns and has loaded.
    """

    type_name: str

    def holds(self, group_id: str) -> bool:
        """Whether a group of this type has the id (then the checks below are its own)."""
        ...

    def committing_member_error(self, group_id: str, committer: OffsetCommitter) -> int | None:
        """Why this group refuses the (transactional) offset commit of `committer`, or None."""
        ...

    def fetching_member_error(self, group_id: str, member_id: str | None, member_epoch: int) -> int | None:
        """Why this group refuses an OffsetFetch by the member, or None."""
        ...

    def listed(self) -> list[ListedGroup]:
        """The groups of this type in owned partitions (listed instead of a classic entry of the same id)."""
        ...

    # --- the classic protocol's requests, for groups with classic members -----------------------

    async def classic_join(self, join: ClassicJoin) -> JoinResult | None:
        """JoinGroup of a group of this type, or None: classic groups serve it."""
        ...

    def classic_sync(
        self, group_id: str, generation_id: int, member_id: str, protocol_name: str | None
    ) -> SyncResult | None:
        """SyncGroup of a classic member of a group of this type, or None: classic groups serve it."""
        ...

    def classic_heartbeat(self, group_id: str, generation_id: int, member_id: str) -> int | None:
        """Heartbeat of a classic member of a group of this type, or None: classic groups serve it."""
        ...

    def classic_leave(self, group_id: str, members: Sequence[tuple[str, str | None]]) -> list[int] | None:
        """LeaveGroup (one error per member) from a group of this type, or None: classic groups serve it."""
        ...

    def describe_classic(self, group_id: str) -> GroupDescription | None:
        """DescribeGroups of a group of this type in the classic layout, or None: classic groups answer."""
        ...

    # --- offsets and deletion ------------------------------------------------------------------

    def protected_topics(self, group_id: str) -> set[str] | None:
        """Topics whose offsets OffsetDelete must keep (the group consumes them), or None: classic rules."""
        ...

    def keeps_offsets(self, group_id: str) -> bool:
        """Whether the group's offsets must not expire now (it has live members)."""
        ...

    async def delete(self, group_id: str) -> int | None:
        """DeleteGroups: the error to answer, or None once this type's part is gone (or it holds no such
        group) and the classic entry holding the offsets is to be deleted."""
        ...

    # --- records in __consumer_offsets, partitions, stopping -----------------------------------

    def replay(self, partition: int, key: bytes, value: bytes | None) -> bool:
        """Whether the record is this type's (then it keeps it for `partition_loaded`)."""
        ...

    def partition_loaded(self, partition: int, serving: bool) -> None:
        """The partition's log was replayed: its groups of this type are served if `serving` (else the
        partition was unloaded meanwhile and what was replayed goes)."""
        ...

    def drop_partition(self, partition: int) -> None:
        """The partition was unloaded: its groups of this type go (their members rejoin elsewhere)."""
        ...

    def release(self) -> None:
        """The coordinator stops: timers stop."""
        ...
