"""MirrorMaker 2's checkpoint records, decoded: the translated offsets a failover commits on the target.

MirrorCheckpointConnector writes them to `<source alias>.checkpoints.internal` on the target in Kafka's own
struct encoding (big-endian): the key is (group: STRING, topic: STRING, partition: INT32), where the topic is
the replica's name on the target and STRING an INT16 length then UTF-8; the value is a version (INT16, 0),
then (upstream offset: INT64, downstream offset: INT64, metadata: STRING). The latest record of a key wins.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


class BadCheckpoint(ValueError):
    """A record of the checkpoints topic that is not a version-0 checkpoint."""


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int


def _string(data: bytes, at: int) -> tuple[str, int]:
    if at + 2 > len(data):
        raise BadCheckpoint("truncated string length")
    (length,) = struct.unpack_from(">h", data, at)
    at += 2
    if length < 0 or at + length > len(data):
        raise BadCheckpoint("bad string length")
    return data[at : at + length].decode(), at + length


def decode(key: bytes, value: bytes) -> Checkpoint:
    group, at = _string(key, 0)
    topic, at = _string(key, at)
    if at + 4 != len(key):
        raise BadCheckpoint("bad key length")
    (partition,) = struct.unpack_from(">i", key, at)
    if len(value) < 2 + 16 + 2:
        raise BadCheckpoint("value too short")
    (version,) = struct.unpack_from(">h", value, 0)
    if version != 0:
        raise BadCheckpoint(f"checkpoint version {version}")
    upstream, downstream = struct.unpack_from(">qq", value, 2)
    _string(value, 18)
    return Checkpoint(group, topic, partition, upstream, downstream)


def latest(records: list[tuple[bytes | None, bytes | None]]) -> dict[tuple[str, str, int], Checkpoint]:
    """The newest checkpoint per (group, replica topic, partition) of records read in offset order; records
    that are not checkpoints (or tombstones) are skipped."""
    newest: dict[tuple[str, str, int], Checkpoint] = {}
    for key, value in records:
        if key is None or value is None:
            continue
        try:
            checkpoint = decode(key, value)
        except (BadCheckpoint, UnicodeDecodeError, struct.error):
            continue
        newest[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
    return newest
