"""Encoding controller RPC messages to and from the JSON objects their frames carry.

A message is a frozen dataclass whose fields are JSON-shaped types: int, bool, str, float, None,
`X | None`, `tuple[T, ...]` (a JSON array), fixed tuples `tuple[A, B]` (a short JSON array),
`dict[str, T]`, another message, or `Any` for payloads another layer owns (metadata records, Raft
messages). Decoding checks every value against its field's type, so a renamed or retyped field is a
clear error at the boundary, never a KeyError deep in a handler.

Fields are versioned as Kafka's message specs are: `field(metadata=since(1))` exists from version 1
on, `until(0)` only up to version 0. A field absent from a version is neither written nor read in it
(it takes its default).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeVar, Union

_M = TypeVar("_M", bound="Message")

_NO_VERSION_LIMIT = 1 << 15


class MessageError(ValueError):
    """A JSON object that is not the message it should be (a missing, extra-typed or invalid field)."""


def since(version: int) -> dict[str, int]:
    """Field metadata: the field exists from `version` on."""
    return {"since": version}


def until(version: int) -> dict[str, int]:
    """Field metadata: the field exists up to `version` (later versions dropped it)."""
    return {"until": version}


def omitted_when_none(**metadata: int) -> dict[str, int]:
    """Field metadata: a None value is left out of the object (readers that test for the key, as
    d32902d's do for a fetch's snapshot, see no key rather than null)."""
    return {**metadata, "omit_none": 1}


class Message:
    """Base of every request and response: `API` names the RPC (its id in the frame)."""

    __slots__ = ()
    API: ClassVar[str]

    def to_json(self, version: int) -> dict[str, Any]:
        encoded: dict[str, Any] = {}
        for spec in _fields(type(self)):
            if spec.present_in(version):
                value = getattr(self, spec.name)
                if value is None and spec.omit_none:
                    continue
                encoded[spec.name] = _encode(value, version)
        return encoded

    @classmethod
    def from_json(cls, data: Any, version: int) -> Self:
        if not isinstance(data, Mapping):
            raise MessageError(f"{cls.__name__}: an object expected, got {type(data).__name__}")
        values: dict[str, Any] = {}
        for spec in _fields(cls):
            if not spec.present_in(version):
                continue
            if spec.name not in data:
                if spec.required:
                    raise MessageError(f"{cls.__name__}.{spec.name} is missing")
                continue
            values[spec.name] = spec.decode(data[spec.name], version, spec.where)
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise MessageError(f"{cls.__name__}: {exc}") from None


@dataclasses.dataclass(frozen=True, slots=True)
class _FieldSpec:
    name: str
    type: Any
    required: bool
    since: int
    until: int
    omit_none: bool
    decode: Decoder
    where: str

    def present_in(self, version: int) -> bool:
        return self.since <= version <= self.until


@functools.cache
def _fields(cls: type[Message]) -> tuple[_FieldSpec, ...]:
    hints = typing.get_type_hints(cls)
    return tuple(
        _FieldSpec(
            f.name,
            hints[f.name],
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            int(f.metadata.get("since", 0)),
            int(f.metadata.get("until", _NO_VERSION_LIMIT)),
            bool(f.metadata.get("omit_none")),
            _decoder(hints[f.name]),
            f"{cls.__name__}.{f.name}",
        )
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
    )


def _encode(value: Any, version: int) -> Any:
    if isinstance(value, Message):
        return value.to_json(version)
    if isinstance(value, tuple | list):
        return [_encode(item, version) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item, version) for key, item in value.items()}
    return value


Decoder = Callable[[Any, int, str], Any]


@functools.cache
def _decoder(tp: Any) -> Decoder:
    """The decoding function of one field type, built once: looking at the type for every value
    cost a 2,000-partition AlterPartition request 150 ms of the controller's event loop."""
    if tp is Any:
        return lambda value, version, where: value
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        arms = typing.get_args(tp)
        others = [arm for arm in arms if arm is not type(None)]
        if len(others) != 1 or type(None) not in arms:
            raise TypeError(f"{tp!r}: only `X | None` unions are supported")
        inner = _decoder(others[0])
        return lambda value, version, where: None if value is None else inner(value, version, where)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])

            def decode_array(value: Any, version: int, where: str) -> Any:
                if not isinstance(value, list):
                    raise MessageError(f"{where}: an array expected, got {_kind(value)}")
                return tuple([item(each, version, where) for each in value])

            return decode_array
        items = [_decoder(arg) for arg in args]

        def decode_fixed(value: Any, version: int, where: str) -> Any:
            if not isinstance(value, list):
                raise MessageError(f"{where}: an array expected, got {_kind(value)}")
            if len(value) != len(items):
                raise MessageError(f"{where}: {len(items)} items expected, got {len(value)}")
            return tuple([decode(each, version, where) for decode, each in zip(items, value, strict=True)])

        return decode_fixed
    if origin is dict:
        item = _decoder(typing.get_args(tp)[1])

        def decode_object(value: Any, version: int, where: str) -> Any:
            if not isinstance(value, dict):
                raise MessageError(f"{where}: an object expected, got {_kind(value)}")
            return {str(key): item(each, version, where) for key, each in value.items()}

        return decode_object
    if isinstance(tp, type) and issubclass(tp, Message):
        return lambda value, version, where: tp.from_json(value, version)
    if tp in _SCALARS:
        accepts, expected = _SCALARS[tp]

        def decode_scalar(value: Any, version: int, where: str) -> Any:
            if not accepts(value):
                raise MessageError(f"{where}: {expected} expected, got {_kind(value)}")
            return float(value) if tp is float else value

        return decode_scalar
    raise TypeError(f"no JSON decoding for {tp!r}")


# JSON scalars: bool is not an integer here (Python's bool is an int subclass, JSON's true is not 1).
_SCALARS: dict[type, tuple[Callable[[Any], bool], str]] = {
    bool: (lambda value: isinstance(value, bool), "true or false"),
    int: (lambda value: isinstance(value, int) and not isinstance(value, bool), "an integer"),
    float: (lambda value: isinstance(value, int | float) and not isinstance(value, bool), "a number"),
    str: (lambda value: isinstance(value, str), "a string"),
}


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
