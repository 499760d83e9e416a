"""A bounded pre-pass over a request body, before kio's native reader sees it.

kio's reader (Rust) reserves memory for an array as soon as it reads the array's count: a
26-byte request whose compact-array count is a huge varint makes it ask for gigabytes, and a
failed allocation in Rust aborts the whole process instead of raising. So every request body is
walked here first, from the same kio schema the reader will use: every array count, string,
bytes and tagged-field length is checked against the bytes that are actually left (an array
element costs at least its smallest encoding), and the number of array elements in one request
is capped, which bounds what decoding can allocate. Nothing is allocated while walking.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Any

from broker.protocol.kio_fields import field_shape

# Array elements one request may hold, all arrays together. Decoding costs roughly 200 bytes per
# element (the reader's own vector slot plus the Python object), so this bounds a request's
# decoded size to tens of MB. Real requests stay far below: a Fetch or ListOffsets for 10,000
# partitions holds about 10,000, a CreateTopics of 10,000 partitions with manual assignments 40,000.
MAX_ARRAY_ELEMENTS = 200_000

_FIXED_WIDTH = {
    "bool": 1,
    "int8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "timedelta_i32": 4,
    "int64": 8,
    "timedelta_i64": 8,
    "float64": 8,
    "uuid": 16,
}
_VARIABLE = frozenset({"string", "bytes", "records"})

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

# Steps of a plan. Runs of fixed-width fields are merged into one SKIP.
_SKIP = 0  # (SKIP, width)
_STRING = 1  # (STRING, None): int16 / compact length, then bytes
_BYTES = 2  # (BYTES, None): int32 / compact length, then bytes
_ENTITY = 3  # (ENTITY, plan)
_ARRAY_FIXED = 4  # (ARRAY_FIXED, element width)
_ARRAY_STRING = 5  # (ARRAY_STRING, None)
_ARRAY_BYTES = 6  # (ARRAY_BYTES, None)
_ARRAY_ENTITY = 7  # (ARRAY_ENTITY, plan)
_NULLABLE_ENTITY = 8  # (NULLABLE_ENTITY, plan): an int8 presence marker (< 0: null), then the entity


class FrameBoundsError(ValueError):
    """A length or count in the request does not fit the bytes that are left."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    flexible: bool
    steps: tuple[tuple[int, Any], ...]
    tagged: dict[int, tuple[int, Any]]  # tag -> step reading that tagged field's value
    # Encoded size if the entity has only fixed-width fields and no tagged-field section, else 0.
    fixed_size: int
    # Smallest encoding of one instance (every string / array / bytes empty or null).
    min_size: int
    # Width of the fixed-width fields if a flexible entity has nothing else before its tagged
    # fields (Fetch partitions, ListOffsets partitions): the hot loop skips those inline.
    flat_width: int


def check_request_body(request_type: type, frame: bytes | memoryview, offset: int) -> None:
    """Raise FrameBoundsError unless every length in the body at `offset` fits in `frame`."""
    budget = [MAX_ARRAY_ELEMENTS]
    try:
        _walk(_plan_for(request_type), frame, offset, len(frame), budget)
    except IndexError:
        raise FrameBoundsError("request body is truncated") from None
    except struct.error:
        raise FrameBoundsError("request body is truncated") from None


@functools.cache
def _plan_for(entity_type: type) -> _Plan:
    flexible = bool(entity_type.__flexible__)
    steps: list[tuple[int, Any]] = []
    tagged: dict[int, tuple[int, Any]] = {}
    for field in dataclasses.fields(entity_type):
        step = _step_for(entity_type, field, flexible)
        tag = field.metadata.get("tag")
        if tag is not None:
            tagged[int(tag)] = step
        elif step[0] == _SKIP and steps and steps[-1][0] == _SKIP:
            steps[-1] = (_SKIP, steps[-1][1] + step[1])
        else:
            steps.append(step)
    fixed = not flexible and all(kind == _SKIP for kind, _ in steps)
    fixed_size = sum(width for _, width in steps) if fixed else 0
    min_size = sum(_min_size(step, flexible) for step in steps) + (1 if flexible else 0)
    flat_width = steps[0][1] if flexible and len(steps) == 1 and steps[0][0] == _SKIP else 0
    return _Plan(flexible, tuple(steps), tagged, fixed_size, min_size, flat_width)


def _step_for(entity_type: type, field: dataclasses.Field, flexible: bool) -> tuple[int, Any]:
    shape = field_shape(entity_type, field)
    if shape.entity is not None:
        plan = _plan_for(shape.entity)
        if not shape.is_array and shape.nullable:
            # Kafka's nullable structs (DescribeTopicPartitions' cursor): a presence byte first.
            return (_NULLABLE_ENTITY, plan)
        if not shape.is_array:
            return (_SKIP, plan.fixed_size) if plan.fixed_size else (_ENTITY, plan)
        return (_ARRAY_FIXED, plan.fixed_size) if plan.fixed_size else (_ARRAY_ENTITY, plan)
    kafka_type = field.metadata["kafka_type"]
    width = _FIXED_WIDTH.get(kafka_type)
    if width is None and kafka_type not in _VARIABLE:
        raise NotImplementedError(f"kafka_type {kafka_type} of {field.name}")
    if shape.is_array:
        if width is not None:
            return (_ARRAY_FIXED, width)
        return (_ARRAY_STRING, None) if kafka_type == "string" else (_ARRAY_BYTES, None)
    if width is not None:
        return (_SKIP, width)
    return (_STRING, None) if kafka_type == "string" else (_BYTES, None)


def _min_size(step: tuple[int, Any], flexible: bool) -> int:
    kind, arg = step
    if kind == _SKIP:
        return int(arg)
    if kind == _ENTITY:
        return int(arg.min_size)
    if kind == _NULLABLE_ENTITY:
        return 1
    if flexible:
        return 1  # a compact length / count of 0 (null) or 1 (empty)
    return 2 if kind == _STRING else 4


def _read_uvarint(frame: bytes | memoryview, pos: int) -> tuple[int, int]:
    value = frame[pos]
    pos += 1
    if value < 0x80:
        return value, pos
    value &= 0x7F
    shift = 7
    while True:
        byte = frame[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise FrameBoundsError("varint longer than 5 bytes")


def _read_length(frame: bytes | memoryview, pos: int, flexible: bool, wide: bool) -> tuple[int, int]:
    """A string / bytes length or an array count; -1 means null."""
    if flexible:
        value, pos = _read_uvarint(frame, pos)
        return value - 1, pos
    if wide:
        return _INT32.unpack_from(frame, pos)[0], pos + 4
    return _INT16.unpack_from(frame, pos)[0], pos + 2


def _walk(plan: _Plan, frame: bytes | memoryview, pos: int, end: int, budget: list[int]) -> int:
    flexible = plan.flexible
    for kind, arg in plan.steps:
        pos = _walk_step(kind, arg, flexible, frame, pos, end, budget)
    if flexible:
        pos = _walk_tagged_fields(plan, frame, pos, end, budget)
    if pos > end:
        raise FrameBoundsError("request body is truncated")
    return pos


def _walk_step(
    kind: int, arg: Any, flexible: bool, frame: bytes | memoryview, pos: int, end: int, budget: list[int]
) -> int:
    if kind == _SKIP:
        pos += arg
        if pos > end:
            raise FrameBoundsError("request body is truncated")
        return pos
    if kind == _ENTITY:
        return _walk(arg, frame, pos, end, budget)
    if kind == _NULLABLE_ENTITY:
        if pos >= end:
            raise FrameBoundsError("request body is truncated")
        present = frame[pos] < 0x80  # Kafka reads the marker as a signed byte: negative means null
        return _walk(arg, frame, pos + 1, end, budget) if present else pos + 1
    if kind in (_STRING, _BYTES):
        length, pos = _read_length(frame, pos, flexible, kind == _BYTES)
        if length < -1 or length > end - pos:
            raise FrameBoundsError(f"length {length} with {end - pos} bytes left")
        return pos + max(length, 0)
    count, pos = _read_length(frame, pos, flexible, True)
    if count <= 0:
        if count < -1:
            raise FrameBoundsError(f"array count {count}")
        return pos
    if kind == _ARRAY_FIXED:
        smallest = arg
    elif kind == _ARRAY_ENTITY:
        smallest = arg.min_size
    else:
        smallest = 1 if flexible else (2 if kind == _ARRAY_STRING else 4)
    budget[0] -= count
    if count * smallest > end - pos or budget[0] < 0:
        raise FrameBoundsError(f"array count {count} with {end - pos} bytes left")
    if kind == _ARRAY_FIXED:
        return pos + count * arg
    if kind == _ARRAY_ENTITY:
        width = arg.flat_width
        if width:
            for _ in range(count):
                pos += width
                if frame[pos] == 0:  # no tagged fields, nearly always
                    pos += 1
                else:
                    pos = _walk_tagged_fields(arg, frame, pos, end, budget)
            if pos > end:
                raise FrameBoundsError("request body is truncated")
            return pos
        for _ in range(count):
            pos = _walk(arg, frame, pos, end, budget)
        return pos
    element = _STRING if kind == _ARRAY_STRING else _BYTES
    for _ in range(count):
        pos = _walk_step(element, None, flexible, frame, pos, end, budget)
    return pos


def _walk_tagged_fields(plan: _Plan, frame: bytes | memoryview, pos: int, end: int, budget: list[int]) -> int:
    count, pos = _read_uvarint(frame, pos)
    if count > end - pos:
        raise FrameBoundsError(f"{count} tagged fields with {end - pos} bytes left")
    for _ in range(count):
        tag, pos = _read_uvarint(frame, pos)
        size, pos = _read_uvarint(frame, pos)
        if size > end - pos:
            raise FrameBoundsError(f"tagged field of {size} bytes with {end - pos} bytes left")
        field_end = pos + size
        step = plan.tagged.get(tag)
        # A known tag's value must fit its declared size, whatever the reader does with the rest.
        if step is not None and _walk_step(step[0], step[1], True, frame, pos, field_end, budget) > field_end:
            raise FrameBoundsError(f"tagged field {tag} runs past its size")
        pos = field_end
    return pos
