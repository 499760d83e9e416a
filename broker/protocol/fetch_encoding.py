"""Hand-framed Fetch responses (v0-17; v0-3 carry old-format message sets, see broker.wire.records.legacy).

From v13 a topic is named by its id (16 bytes) instead of its name; from v16 a partition answered
NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH may carry its current leader (tagged field 1) and the
response the endpoints of those leaders (tagged field 0, KIP-951).

Fetch responses are mostly record bytes. kio's pure-Python writer copies them into a
BytesIO and then again into the frame; here the small fixed fields are packed with struct
and the record buffers are handed to the transport untouched (writelines), which cut the
broker's Fetch CPU roughly in half in bench/broker_throughput. Unit tests check every
version against kio's decoder.
"""

from __future__ import annotations

import struct
from typing import Any

_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_TOP = struct.Struct(">ihi")  # throttle_time_ms, error_code, session_id
_PARTITION_V4 = struct.Struct(">ihqq")  # partition, error, high watermark, last stable offset
_PARTITION_V0 = struct.Struct(">ihq")  # partition, error, high watermark
_I64 = struct.Struct(">q")
_ABORTED = struct.Struct(">qq")
# A partition's tagged fields holding only field 1: count, tag, size (9), leader id, leader epoch, its own
# (empty) tagged fields.
_CURRENT_LEADER = struct.Struct(">BBBiiB")

FLEXIBLE_FROM = 12
TOPIC_IDS_FROM = 13
LEADER_HINTS_FROM = 16
# v18 adds the follower's high watermark as a tagged request field (KIP-1166); the response is v17's.
MAX_VERSION = 18


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_fetch_response(version: int, correlation_id: int, body: dict[str, Any]) -> list[bytes]:
    """Size prefix, response header and body as a list of buffers to write in order."""
    if not 0 <= version <= MAX_VERSION:
        raise ValueError(f"hand-framed Fetch supports v0-{MAX_VERSION}, not v{version}")
    flexible = version >= FLEXIBLE_FROM
    by_id = version >= TOPIC_IDS_FROM
    leader_hints = version >= LEADER_HINTS_FROM
    head = bytearray(_I32.pack(correlation_id))
    if flexible:
        head.append(0)  # response header tagged fields
    if version >= 1:
        head += _I32.pack(body.get("throttle_time", 0))
    if version >= 7:
        head += _I16.pack(int(body.get("error_code", 0))) + _I32.pack(body.get("session_id", 0))
    chunks: list[bytes] = []
    current = head
    topics = body["responses"]
    current += _uvarint(len(topics) + 1) if flexible else _I32.pack(len(topics))
    for topic in topics:
        if by_id:
            current += topic["topic_id"].bytes
        else:
            name = topic["topic"].encode()
            current += (_uvarint(len(name) + 1) if flexible else _I16.pack(len(name))) + name
        partitions = topic["partitions"]
        current += _uvarint(len(partitions) + 1) if flexible else _I32.pack(len(partitions))
        for part in partitions:
            if version < 4:
                current += _PARTITION_V0.pack(
                    part["partition_index"], int(part["error_code"]), part["high_watermark"]
                )
                records = part.get("records") or b""
                current += _I32.pack(len(records))
                if records:
                    chunks.append(bytes(current))
                    chunks.append(records)
                    current = bytearray()
                continue
            current += _PARTITION_V4.pack(
                part["partition_index"],
                int(part["error_code"]),
                part["high_watermark"],
                part.get("last_stable_offset", -1),
            )
            if version >= 5:
                current += _I64.pack(part.get("log_start_offset", -1))
            aborted = part.get("aborted_transactions")
            if aborted is None:
                current += b"\x00" if flexible else _I32.pack(-1)
            else:
                current += _uvarint(len(aborted) + 1) if flexible else _I32.pack(len(aborted))
                for txn in aborted:
                    current += _ABORTED.pack(txn["producer_id"], txn["first_offset"])
                    if flexible:
                        current.append(0)
            if version >= 11:
                current += _I32.pack(part.get("preferred_read_replica", -1))
            records = part.get("records")
            if records is None:
                current += b"\x00" if flexible else _I32.pack(-1)
            else:
                current += _uvarint(len(records) + 1) if flexible else _I32.pack(len(records))
                if records:
                    chunks.append(bytes(current))
                    chunks.append(records)
                    current = bytearray()
            if flexible:
                leader = part.get("current_leader") if leader_hints else None
                if leader is None:
                    current.append(0)  # partition tagged fields
                else:
                    current += _CURRENT_LEADER.pack(1, 1, 9, leader["leader_id"], leader["leader_epoch"], 0)
        if flexible:
            current.append(0)  # topic tagged fields
    if flexible:
        endpoints = body.get("node_endpoints") if leader_hints else None
        if endpoints:
            current += b"\x01" + _tagged(0, _node_endpoints(endpoints))
        else:
            current.append(0)  # response tagged fields
    chunks.append(bytes(current))
    size = sum(len(chunk) for chunk in chunks)
    chunks.insert(0, _I32.pack(size))
    return chunks


def _compact_string(value: str | None) -> bytes:
    if value is None:
        return b"\x00"
    raw = value.encode()
    return _uvarint(len(raw) + 1) + raw


def _node_endpoints(endpoints: list[dict[str, Any]]) -> bytes:
    out = bytearray(_uvarint(len(endpoints) + 1))
    for node in endpoints:
        out += _I32.pack(node["node_id"]) + _compact_string(node["host"]) + _I32.pack(node["port"])
        out += _compact_string(node.get("rack"))
        out.append(0)  # node endpoint tagged fields
    return bytes(out)


def _tagged(tag: int, value: bytes) -> bytes:
    return _uvarint(tag) + _uvarint(len(value)) + value
