"""What one broker keeps for share groups: the groups it coordinates, the share-partitions it leads and the
share sessions of the members fetching from it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kio.schema.errors import ErrorCode

from broker.share.persister import ShareCoordinator
from broker.share.share_groups import ShareGroupCoordinator, TopicCatalog
from broker.share.share_partition import SharePartition

# (group id, topic id, partition)
SharePartitionKey = tuple[str, uuid.UUID, int]
TopicPartitionId = tuple[uuid.UUID, int]


@dataclass(slots=True)
class ShareSession:
    """A member's share session on this broker (KIP-932): the partitions it fetches, and the epoch its next
    request must carry."""

    group_id: str
    member_id: str
    next_epoch: int = 1
    # Insertion-ordered: the partitions in the order they joined the session.
    partitions: dict[TopicPartitionId, None] = field(default_factory=dict)
    # The client connection that opened the session (Kafka's connection id): when it closes, the session ends
    # and what the member holds is offered again at once, as Kafka 4.2's share session cache does on a
    # disconnect, rather than when the records' locks run out.
    connection: object | None = None


def next_session_epoch(epoch: int) -> int:
    """Epochs count up from 1 and wrap past the int32 maximum back to 1 (0 and -1 are reserved)."""
    return 1 if epoch >= 2**31 - 1 else epoch + 1


class ShareStateStore(Protocol):
    """Where share-partition windows survive restarts and leader changes (`__share_group_state`, through the
    share coordinator of each share-partition); `coordinator` is this broker's own share coordinator."""

    coordinator: ShareCoordinator

    async def prepare(self, key: SharePartitionKey, leader_epoch: int) -> ErrorCode: ...

    def restore(
        self, key: SharePartitionKey, *, delivery_count_limit: int, max_in_flight: int
    ) -> SharePartition | None: ...

    async def save(self, key: SharePartitionKey, share: SharePartition, leader_epoch: int) -> bool: ...

    def start_initializing(
        self, group_id: str, state_epoch: int, topic_partitions: Mapping[uuid.UUID, frozenset[int]]
    ) -> None: ...

    async def reset(self, key: SharePartitionKey, start_offset: int) -> bool: ...

    async def forget(self, key: SharePartitionKey) -> None: ...

    async def close(self) -> None: ...


class ShareState:
    def __init__(self, topic_catalog: TopicCatalog) -> None:
        self.groups = ShareGroupCoordinator(topic_catalog)
        # Set by the server once its storage is up; None keeps share-partitions in memory only.
        self.store: ShareStateStore | None = None
        self.partitions: dict[SharePartitionKey, SharePartition] = {}
        # The leader epoch each share-partition was loaded under: a newer one means another broker led it
        # meanwhile, so its state is read again from the share coordinator.
        self.loaded_epochs: dict[SharePartitionKey, int] = {}
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self.groups.member_left.append(self.release_member)

    def partition(self, key: SharePartitionKey, create: Callable[[], SharePartition]) -> SharePartition:
        found = self.partitions.get(key)
        if found is None:
            found = self.partitions[key] = create()
        return found

    def release_member(self, group_id: str, member_id: str) -> None:
        """A member left its group or closed its session: the records it holds are offered again."""
        for (group, _topic_id, _index), partition in self.partitions.items():
            if group == group_id:
                partition.release_member(member_id)

    def open_session(
        self, group_id: str, member_id: str, max_sessions: int, connection: object | None = None
    ) -> ShareSession | ErrorCode:
        """Epoch 0: a new session replaces the member's previous one (whose records go back)."""
        key = (group_id, member_id)
        if key in self.sessions:
            self.close_session(group_id, member_id)
        elif len(self.sessions) >= max_sessions:
            return ErrorCode.share_session_limit_reached
        session = self.sessions[key] = ShareSession(group_id, member_id, connection=connection)
        return session

    def connection_closed(self, connection: object, keys: Iterable[tuple[str, str]]) -> None:
        """A client connection closed: the share sessions among `keys` (group id, member id) that it opened end,
        unless the member has opened a newer one since."""
        for group_id, member_id in list(keys):
            session = self.sessions.get((group_id, member_id))
            if session is not None and session.connection is connection:
                self.close_session(group_id, member_id)

    def close_session(self, group_id: str, member_id: str) -> None:
        if self.sessions.pop((group_id, member_id), None) is not None:
            self.release_member(group_id, member_id)

    def session(self, group_id: str, member_id: str, epoch: int) -> ShareSession | ErrorCode:
        """The session a subsequent request (epoch > 0, or -1 to close) continues."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            return ErrorCode.share_session_not_found
        if epoch != -1 and epoch != session.next_epoch:
            return ErrorCode.invalid_share_session_epoch
        return session

    def forget_topic(self, topic_id: uuid.UUID) -> None:
        """A deleted topic's share-partitions go with it."""
        for key in [key for key in self.partitions if key[1] == topic_id]:
            del self.partitions[key]
            self.loaded_epochs.pop(key, None)
