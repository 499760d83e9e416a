"""Frames on the controller listener: a 4-byte big-endian length, then one JSON object.

Our own encoding rather than Kafka's Vote/BeginQuorumEpoch/Fetch shapes: those describe
KRaft's pull-based variant of Raft, while `RaftNode` is the push-based Raft of the paper
(AppendEntries, InstallSnapshot). JSON keeps the low-volume metadata traffic readable in a
packet capture; entry and snapshot bytes travel base64-encoded.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import struct
from typing import Any

from broker.raft.messages import (
    AppendEntries,
    AppendResponse,
    Entry,
    InstallSnapshot,
    Message,
    RequestVote,
    Snapshot,
    TimeoutNow,
    Voter,
    VoteResponse,
)
from broker.runtime.request_memory import SMALL_FRAME_BYTES, RequestMemory

MAX_FRAME_BYTES = 64 * 1024 * 1024
# JSON arrays and objects in one frame. Each costs a Python list or dict (about 60-250 bytes) when
# parsed, so `[[],[],...]` in a 64 MB frame would cost gigabytes; real frames hold a few per Raft
# entry or metadata record (entries travel base64-encoded): a catch-up of every record of a
# 10,000-partition topic stays far below.
MAX_FRAME_CONTAINERS = 1_000_000
_LENGTH = struct.Struct(">I")


class FrameError(Exception):
    """The peer sent something that is not a frame of ours: close the connection."""


async def read_frame(
    reader: asyncio.StreamReader,
    *,
    max_frame_bytes: int = MAX_FRAME_BYTES,
    memory: RequestMemory | None = None,
) -> dict[str, Any]:
    """One frame. With `memory` (a listener's), a large frame's declared size is reserved there
    before its body is read, and released once it is parsed: all connections together hold at
    most that much in large frames, a connection that does not fit waits unread; small frames
    (Raft heartbeats, broker RPCs) go by without waiting."""
    header = await reader.readexactly(_LENGTH.size)
    (length,) = _LENGTH.unpack(header)
    if length > max_frame_bytes:
        raise FrameError(f"frame of {length} bytes is larger than {max_frame_bytes}")
    if memory is None or length < SMALL_FRAME_BYTES:
        return _parse(await reader.readexactly(length))
    await memory.reserve(length)
    try:
        # StreamReader grows its buffer with the bytes that arrive, not with the length announced.
        return _parse(await reader.readexactly(length))
    finally:
        memory.release(length)


def _parse(body: bytes) -> dict[str, Any]:
    containers = body.count(b"[") + body.count(b"{")  # an upper bound: brackets in strings count too
    if containers > MAX_FRAME_CONTAINERS:
        raise FrameError(f"frame has {containers} JSON arrays/objects, more than {MAX_FRAME_CONTAINERS}")
    try:
        frame = json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than Python's stack
        raise FrameError(f"frame is not JSON: {exc}") from None
    if not isinstance(frame, dict):
        raise FrameError("frame is not a JSON object")
    return frame


def encode_frame(frame: dict[str, Any]) -> bytes:
    body = json.dumps(frame, separators=(",", ":")).encode()
    return _LENGTH.pack(len(body)) + body


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def message_to_json(message: Message) -> dict[str, Any]:
    if isinstance(message, RequestVote):
        return {"kind": "vote", **_fields(message)}
    if isinstance(message, VoteResponse):
        return {"kind": "vote_reply", **_fields(message)}
    if isinstance(message, AppendEntries):
        fields = _fields(message)
        fields["entries"] = [[e.index, e.term, _b64(e.data)] for e in message.entries]
        return {"kind": "append", **fields}
    if isinstance(message, AppendResponse):
        return {"kind": "append_reply", **_fields(message)}
    if isinstance(message, TimeoutNow):
        return {"kind": "timeout_now", **_fields(message)}
    snapshot = message.snapshot
    return {
        "kind": "snapshot",
        "term": message.term,
        "leader": message.leader,
        "snapshot": [snapshot.last_index, snapshot.last_term, _b64(snapshot.data)],
        "voters": None if snapshot.voters is None else [v.to_json() for v in snapshot.voters],
    }


def _fields(message: Any) -> dict[str, Any]:
    return {name: getattr(message, name) for name in message.__slots__}


def message_from_json(data: Any) -> Message:
    """Raises FrameError for anything malformed, including fields of the wrong type."""
    if not isinstance(data, dict):
        raise FrameError("Raft message is not a JSON object")
    return _checked_types(_message_from_dict(data))


def _checked_types(message: Message) -> Message:
    for field in dataclasses.fields(message):
        value = getattr(message, field.name)
        # bool is an int subclass: an int field must hold an int that is not a bool, and the reverse.
        if (field.type == "int" and (type(value) is not int)) or (
            field.type == "bool" and type(value) is not bool
        ):
            raise FrameError(f"malformed Raft message: {field.name} is {type(value).__name__}")
    return message


def _message_from_dict(data: dict[str, Any]) -> Message:
    try:
        kind = data.pop("kind")
        if kind == "vote":
            return RequestVote(**data)
        if kind == "vote_reply":
            return VoteResponse(**data)
        if kind == "append":
            entries = tuple(Entry(int(i), int(t), base64.b64decode(d)) for i, t, d in data.pop("entries"))
            return AppendEntries(entries=entries, **data)
        if kind == "append_reply":
            return AppendResponse(**data)
        if kind == "timeout_now":
            return TimeoutNow(**data)
        if kind == "snapshot":
            index, term, payload = data["snapshot"]
            listed = data.get("voters")
            voters = None if listed is None else tuple(Voter.from_json(v) for v in listed)
            snapshot = Snapshot(int(index), int(term), base64.b64decode(payload), voters)
            return InstallSnapshot(data["term"], data["leader"], snapshot)
    except (KeyError, TypeError, ValueError) as exc:
        raise FrameError(f"malformed Raft message: {exc}") from None
    raise FrameError(f"unknown Raft message kind {kind!r}")
