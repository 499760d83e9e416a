"""Every Raft message survives the JSON frame encoding; malformed frames are refused."""

from __future__ import annotations

import asyncio
import json
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.raft.messages import (
    AppendEntries,
    AppendResponse,
    Entry,
    InstallSnapshot,
    Message,
    RequestVote,
    Snapshot,
    TimeoutNow,
    VoteResponse,
)
from broker.raft.wire import FrameError, encode_frame, message_from_json, message_to_json, read_frame

small = st.integers(min_value=0, max_value=2**40)
entries = st.builds(Entry, small, small, st.binary(max_size=64))
messages = st.one_of(
    st.builds(RequestVote, small, small, small, small, st.booleans()),
    st.builds(VoteResponse, small, small, st.booleans(), st.booleans()),
    st.builds(AppendEntries, small, small, small, small, st.tuples(entries, entries), small),
    st.builds(AppendResponse, small, small, st.booleans(), small),
    st.builds(InstallSnapshot, small, small, st.builds(Snapshot, small, small, st.binary(max_size=64))),
    st.builds(TimeoutNow, small, small),
)


def read_one(data: bytes) -> dict:
    async def read() -> dict:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        return await read_frame(reader)

    return asyncio.run(read())


@given(messages)
def test_every_message_round_trips_through_a_frame(message: Message) -> None:
    frame = read_one(encode_frame({"t": "raft", "m": message_to_json(message)}))
    assert message_from_json(frame["m"]) == message


@pytest.mark.parametrize(
    "payload",
    [{"kind": "append", "term": 1}, {"kind": "teleport"}, {"kind": "vote", "term": "x", "extra": 1}, {}],
)
def test_a_malformed_message_is_a_frame_error(payload: dict) -> None:
    with pytest.raises(FrameError):
        message_from_json(payload)


def test_an_oversized_or_non_json_frame_is_refused() -> None:
    with pytest.raises(FrameError):
        read_one(struct.pack(">I", 2**31))
    with pytest.raises(FrameError):
        read_one(struct.pack(">I", 3) + b"{x}")
    with pytest.raises(FrameError):
        read_one(struct.pack(">I", 2) + json.dumps([]).encode())


@pytest.mark.parametrize(
    "payload",
    [
        ["kind", "vote"],
        {"kind": "timeout_now", "term": "1", "leader": 2},
        {"kind": "append_reply", "term": 1, "follower": 2, "success": 1, "match_index": 3},
        {"kind": "vote", "term": True, "candidate": 1, "last_log_index": 0, "last_log_term": 0},
    ],
)
def test_a_message_that_is_not_an_object_or_has_fields_of_the_wrong_type_is_a_frame_error(payload) -> None:
    with pytest.raises(FrameError):
        message_from_json(payload)


def test_json_nested_deeper_than_the_stack_is_a_frame_error() -> None:
    body = b"[" * 200_000 + b"]" * 200_000
    with pytest.raises(FrameError, match="not JSON"):
        read_one(struct.pack(">I", len(body)) + body)


def test_a_frame_of_a_million_empty_arrays_is_refused_before_parsing() -> None:
    # Parsed, these 3 MB would cost about 90 MB of Python lists; 64 MB of them, gigabytes.
    body = b"[" + b"[]," * 1_000_000 + b"[]]"
    with pytest.raises(FrameError, match="arrays/objects"):
        read_one(struct.pack(">I", len(body)) + body)
