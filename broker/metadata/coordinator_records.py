"""Kafka's coordinator record encoding, shared by `__consumer_offsets` and `__transaction_state`.

Keys and values of both internal topics are Kafka message-spec structs: classic versions use
int16-length strings and int32-length arrays, flexible versions compact (unsigned-varint) lengths
and tagged fields. Which partition holds a key is Kafka's: abs(Java String.hashCode) % partitions.
"""

from __future__ import annotations

import struct
from typing import NamedTuple


class CoordinatorRecordError(ValueError):
    """A coordinator record that does not follow Kafka's schema."""


class RecordWriter:
    def __init__(self, flexible: bool = False) -> None:
        self.flexible = flexible
        self.parts: list[bytes] = []

    def int8(self, value: int) -> None:
        self.parts.append(struct.pack(">b", value))

    def int16(self, value: int) -> None:
        self.parts.append(struct.pack(">h", value))

    def int32(self, value: int) -> None:
        self.parts.append(struct.pack(">i", value))

    def int64(self, value: int) -> None:
        self.parts.append(struct.pack(">q", value))

    def uvarint(self, value: int) -> None:
        out = bytearray()
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        self.parts.append(bytes(out))

    def string(self, value: str | None) -> None:
        if value is None:
            if self.flexible:
                self.uvarint(0)
            else:
                self.int16(-1)
            return
        encoded = value.encode()
        if self.flexible:
            self.uvarint(len(encoded) + 1)
        else:
            if len(encoded) > 0x7FFF:
                raise CoordinatorRecordError("string longer than 32767 bytes")
            self.int16(len(encoded))
        self.parts.append(encoded)

    def bytes_(self, value: bytes) -> None:
        if self.flexible:
            self.uvarint(len(value) + 1)
        else:
            self.int32(len(value))
        self.parts.append(value)

    def array_length(self, count: int) -> None:
        """The length of an array; -1 writes a null array."""
        if self.flexible:
            self.uvarint(count + 1)
        else:
            self.int32(count)

    def no_tagged_fields(self) -> None:
        if self.flexible:
            self.uvarint(0)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


class RecordReader:
    def __init__(self, data: bytes, flexible: bool = False) -> None:
        self.data = memoryview(data)
        self.position = 0
        self.flexible = flexible

    def _take(self, size: int) -> memoryview:
        end = self.position + size
        if size < 0 or end > len(self.data):
            raise CoordinatorRecordError("record is truncated")
        chunk = self.data[self.position : end]
        self.position = end
        return chunk

    def int8(self) -> int:
        return struct.unpack(">b", self._take(1))[0]

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def uvarint(self) -> int:
        result = 0
        shift = 0
        while True:
            byte = self._take(1)[0]
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 35:
                raise CoordinatorRecordError("varint is too long")

    def nullable_string(self) -> str | None:
        length = self.uvarint() - 1 if self.flexible else self.int16()
        if length < 0:
            return None
        try:
            return bytes(self._take(length)).decode()
        except UnicodeDecodeError as error:
            raise CoordinatorRecordError("string is not UTF-8") from error

    def string(self) -> str:
        value = self.nullable_string()
        if value is None:
            raise CoordinatorRecordError("null in a non-nullable string")
        return value

    def bytes_(self) -> bytes:
        length = self.uvarint() - 1 if self.flexible else self.int32()
        if length < 0:
            raise CoordinatorRecordError("null in a non-nullable bytes field")
        return bytes(self._take(length))

    def nullable_array_length(self) -> int:
        """-1 for a null array."""
        length = self.uvarint() - 1 if self.flexible else self.int32()
        return max(length, -1)

    def array_length(self) -> int:
        length = self.nullable_array_length()
        if length < 0:
            raise CoordinatorRecordError("null array")
        return length

    def take(self, size: int) -> bytes:
        return bytes(self._take(size))

    def skip_tagged_fields(self) -> None:
        if not self.flexible:
            return
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint())

    def expect_end(self) -> None:
        if self.position != len(self.data):
            raise CoordinatorRecordError("trailing bytes after the record")


def java_string_hash(value: str) -> int:
    """Java's `String.hashCode()`: 31-based over UTF-16 code units, as a signed int32."""
    encoded = value.encode("utf-16-be")
    result = 0
    for index in range(0, len(encoded), 2):
        code_unit = (encoded[index] << 8) | encoded[index + 1]
        result = (31 * result + code_unit) & 0xFFFFFFFF
    return result - (1 << 32) if result & 0x80000000 else result


def java_utils_abs(value: int) -> int:
    """Kafka's `Utils.abs`: Math.abs, except that Integer.MIN_VALUE maps to 0."""
    return 0 if value == -(2**31) else abs(value)


def partition_for_key(key: str, num_partitions: int) -> int:
    """The internal-topic partition of a group id or transactional id, exactly as Kafka computes it."""
    return java_utils_abs(java_string_hash(key)) % num_partitions


class LogEntry(NamedTuple):
    """One record of a coordinator's internal topic as replay sees it.

    A data record has a key (value None: a tombstone); records written inside a transaction carry
    their producer id. A transaction marker has no key, and `commit` says which outcome it is."""

    offset: int
    key: bytes | None
    value: bytes | None
    producer_id: int = -1
    commit: bool | None = None
