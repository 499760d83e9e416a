"""The classic consumer protocol's embedded formats: ConsumerProtocolSubscription (a JoinGroup
member's metadata) and ConsumerProtocolAssignment (a SyncGroup assignment).

The coordinator reads them when classic members live in a consumer-protocol group (Kafka 4.0's
online migration): it takes their subscriptions (topics, owned partitions, rack) and hands them
the assignment its server-side assignor computed, in the format their client decodes.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Subscription:
    topics: tuple[str, ...]
    # (topic, partitions) the member owns (v1+, cooperative clients); None when not said (v0).
    owned: tuple[tuple[str, tuple[int, ...]], ...] | None
    rack_id: str | None  # v3+


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def _unpack(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.position)
        self.position += struct.calcsize(fmt)
        return int(value)

    def int16(self) -> int:
        return self._unpack(">h")

    def int32(self) -> int:
        return self._unpack(">i")

    def string(self) -> str | None:
        length = self.int16()
        if length < 0:
            return None
        if self.position + length > len(self.data):
            raise ValueError("string past the end")
        value = self.data[self.position : self.position + length].decode()
        self.position += length
        return value

    def skip_bytes(self) -> None:
        length = self.int32()
        if length > 0:
            self.position += length
        if self.position > len(self.data):
            raise ValueError("bytes past the end")

    def count(self) -> int:
        """An array length; a negative one (null) counts as empty."""
        count = self.int32()
        if count > len(self.data):  # each element takes at least a byte: a lie, not a length
            raise ValueError("array longer than its data")
        return max(count, 0)

    def topic_partitions(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        entries = []
        for _ in range(self.count()):
            topic = self.string() or ""
            entries.append((topic, tuple(self.int32() for _ in range(self.count()))))
        return tuple(entries)

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.data)


def decode_subscription(data: bytes) -> Subscription | None:
    """A ConsumerProtocolSubscription (versions 0-3); None when it is not one."""
    try:
        reader = _Reader(data)
        version = reader.int16()
        topics = tuple(reader.string() or "" for _ in range(reader.count()))
        reader.skip_bytes()  # user data
        owned = None
        rack_id = None
        if version >= 1 and not reader.at_end:
            owned = reader.topic_partitions()
        if version >= 2 and not reader.at_end:
            reader.int32()  # generation id
        if version >= 3 and not reader.at_end:
            rack_id = reader.string()
        return Subscription(topics, owned, rack_id)
    except (struct.error, ValueError, UnicodeDecodeError):
        return None


def decode_assignment(data: bytes) -> dict[str, tuple[int, ...]] | None:
    """A ConsumerProtocolAssignment's partitions by topic; None when it is not one (or empty bytes)."""
    if not data:
        return None
    try:
        reader = _Reader(data)
        reader.int16()  # version
        return dict(reader.topic_partitions())
    except (struct.error, ValueError, UnicodeDecodeError):
        return None


def encode_consumer_subscription(topics: Sequence[str]) -> bytes:
    """ConsumerProtocolSubscription v0: what DescribeGroups shows as a member's metadata."""
    parts = [b"\x00\x00", len(topics).to_bytes(4, "big", signed=True)]
    for topic in topics:
        encoded = topic.encode()
        parts += [len(encoded).to_bytes(2, "big"), encoded]
    parts.append((-1).to_bytes(4, "big", signed=True))  # no user data
    return b"".join(parts)


def encode_consumer_assignment(assignment: Mapping[str, Sequence[int]]) -> bytes:
    """ConsumerProtocolAssignment v0: a SyncGroup assignment, and DescribeGroups' view of one."""
    parts = [b"\x00\x00", len(assignment).to_bytes(4, "big", signed=True)]
    for topic, partitions in sorted(assignment.items()):
        encoded = topic.encode()
        parts += [len(encoded).to_bytes(2, "big"), encoded, len(partitions).to_bytes(4, "big", signed=True)]
        parts += [p.to_bytes(4, "big", signed=True) for p in partitions]
    parts.append((-1).to_bytes(4, "big", signed=True))
    return b"".join(parts)
