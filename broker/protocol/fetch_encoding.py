"""Hand-framed Fetch responses (v0-12; v0-3 carry old-format message sets, see broker.wire.records.legacy).

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

FLEXIBLE_FROM = 12


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_fetch_response(version: int, correlation_id: int, body: dict[str, Any]) -> list[bytes]:
    """Size prefix, response header and body as a list of buffers to write in order."""
    if not 0 <= version <= 12:
        raise ValueError(f"hand-framed Fetch supports v0-12, not v{version}")
    flexible = version >= FLEXIBLE_FROM
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
                current.append(0)  # partition tagged fields
        if flexible:
            current.append(0)  # topic tagged fields
    if flexible:
        current.append(0)  # response tagged fields
    chunks.append(bytes(current))
    size = sum(len(chunk) for chunk in chunks)
    chunks.insert(0, _I32.pack(size))
    return chunks
