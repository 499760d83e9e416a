"""Build version-specific kio entities from handlers' answers, checked against the schema.

Handlers answer with a kio response entity, built with keyword arguments for the newest version
they serve (a misspelt or missing field is a TypeError where the answer is built, visible to a type
checker); `build_response` refuses anything else. An entity of the requested version passes through
untouched (the hot path: current clients ask for the newest version); an entity of another version of
the same api is read field by field (nested entities too) and rebuilt as the requested version.
`build_entity` also builds an entity from a dict tree keyed by kio's snake_case field names, under the
rules below: that is how tests and the conformance corpus write requests once for every version.
Fields that only OLDER versions have (Produce's and Fetch's topic names before topic ids, FindCoordinator's
single coordinator before v4, ...) are given by building the entity of a version that has them: the
conversion works from any version to any other. This module turns an answer into the entity class
of one api version, strictly:

- a key that is a field of the same entity in *another* version of the api is dropped: that is
  versioning (one tree serves every version);
- a key that is a field of no version is a `ResponseShapeError` (a misspelling such as
  ``error_cod`` must never go out as the default — success);
- a field without a schema default that the tree does not give is a `ResponseShapeError`
  (``error_code`` left out must never go out as 0), except ``throttle_time``, which the
  dispatcher owns and which defaults to "not throttled";
- a value of the wrong type is a `ResponseShapeError` (a string where an int goes, an int where
  a bool goes, a nested entity of another class); ints become kio's ErrorCode / timedelta /
  datetime wrappers and nested dicts and lists recurse.

One plan per entity class and position in its api is derived once from kio's public schema
(`kio.index`, `kio.schema.index`, and `broker.protocol.kio_fields`: dataclass fields and type hints) and cached.

A `ResponseShapeError` is a broker bug. It propagates like any other handler exception: the
connection logs it with its stack and closes. An error response would have to be built per api
(the errors of Produce, ListOffsets or OffsetCommit live per partition), and after a handler has
acted, "failed" could be as false as "succeeded"; a closed connection tells the client the one
true thing — the outcome is unknown — and Kafka clients retry or refresh metadata on it.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from kio.index import UnknownEntity, load_entity_schema
from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map, schema_name_map
from kio.static.constants import EntityType
from kio.static.primitive import i32Timedelta, i64Timedelta
from kio.static.protocol import Entity

from broker.protocol.kio_fields import field_shape, field_shapes
from broker.wire.schemas import response_class

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
# Fields whose absence means a neutral answer rather than a forgotten one.
_DEFAULTED_WHEN_MISSING = frozenset({"throttle_time"})
_INTEGER_TYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


# The throttle_time of an answer built by a handler: the dispatcher replaces it when a quota throttles.
NOT_THROTTLED = i32Timedelta.parse(datetime.timedelta(0))


class ResponseShapeError(TypeError):
    """A handler's answer does not fit the schema of the response it answers (a broker bug)."""


Converter = Callable[[Any], Any]


# One field: (name, Kafka's JSON spelling of a timedelta field such as throttle_time_ms — kio drops
# the unit — or None, converter, default factory or None when the handler must give the field,
# whether a plain int passes as it is).
_FieldPlan = tuple[str, str | None, Converter, Callable[[], Any] | None, bool]


@dataclasses.dataclass(frozen=True, slots=True)
class _EntityPlan:
    entity_type: type
    where: str
    fields: tuple[_FieldPlan, ...]
    # Every key some version of this entity (at this position in its api) accepts.
    known_keys: frozenset[str]


def _where(root: type, path: tuple[str, ...]) -> str:
    return f"{root.__name__} v{root.__version__}" + "".join(f".{step}" for step in path)


def _entity_at(entity_type: type, path: tuple[str, ...]) -> type | None:
    """The nested entity class reached from `entity_type` along field names `path`."""
    for step in path:
        shape = field_shapes(entity_type).get(step)
        if shape is None or shape.entity is None:
            return None
        entity_type = shape.entity
    return entity_type


def _versions_of(root: type) -> Iterator[type]:
    """Every version's class of the request/response `root` models."""
    kind = root.__type__
    if kind not in (EntityType.request, EntityType.response):
        yield root
        return
    name = api_key_map[root.__api_key__]
    for version, by_type in schema_name_map[name].items():
        if kind in by_type:
            try:
                yield load_entity_schema(name, version, kind)
            except UnknownEntity:
                continue


@functools.cache
def _known_keys(root: type, path: tuple[str, ...]) -> frozenset[str]:
    keys: set[str] = set()
    for version_root in _versions_of(root):
        entity = _entity_at(version_root, path)
        if entity is None:
            continue
        for field in dataclasses.fields(entity):
            keys.add(field.name)
            if field.metadata.get("kafka_type", "").startswith("timedelta"):
                keys.add(field.name + "_ms")
    return frozenset(keys)


def _wrong(where: str, expected: str, value: Any) -> ResponseShapeError:
    return ResponseShapeError(f"{where}: expected {expected}, got {type(value).__name__} {value!r:.80}")


def _primitive_converter(kafka_type: str, optional: bool, where: str) -> Converter:
    """A converter that accepts exactly the Python values kio can write as `kafka_type`."""

    def none_or(value: Any, expected: str) -> Any:
        if value is None and optional:
            return None
        raise _wrong(where, expected, value)

    if kafka_type in _INTEGER_TYPES:

        def integer(value: Any) -> Any:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            return none_or(value, "int")

        return integer
    if kafka_type == "error_code":

        def error_code(value: Any) -> Any:
            if isinstance(value, ErrorCode):
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                try:
                    return ErrorCode(value)
                except ValueError:
                    raise _wrong(where, "a Kafka error code", value) from None
            return none_or(value, "ErrorCode")

        return error_code
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        wrapper = i32Timedelta if kafka_type == "timedelta_i32" else i64Timedelta

        def duration(value: Any) -> Any:
            if isinstance(value, datetime.timedelta):
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                return wrapper.parse(datetime.timedelta(milliseconds=value))
            return none_or(value, "timedelta or int milliseconds")

        return duration
    if kafka_type == "datetime_i64":

        def moment(value: Any) -> Any:
            if value is None or isinstance(value, datetime.datetime):
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                return None if value < 0 else _EPOCH + datetime.timedelta(milliseconds=value)
            raise _wrong(where, "datetime or int milliseconds", value)

        return moment
    if kafka_type == "uuid":

        def identifier(value: Any) -> Any:
            # kio writes None as the zero uuid ("no id") for every uuid field.
            if value is None or isinstance(value, uuid.UUID):
                return value
            raise _wrong(where, "UUID", value)

        return identifier
    if kafka_type == "string":

        def text(value: Any) -> Any:
            return value if isinstance(value, str) else none_or(value, "str")

        return text
    if kafka_type in ("bytes", "records"):

        def blob(value: Any) -> Any:
            return value if isinstance(value, bytes | bytearray | memoryview) else none_or(value, "bytes")

        return blob
    if kafka_type == "bool":

        def flag(value: Any) -> Any:
            return value if isinstance(value, bool) else none_or(value, "bool")

        return flag
    if kafka_type == "float64":

        def number(value: Any) -> Any:
            if isinstance(value, float | int) and not isinstance(value, bool):
                return value
            return none_or(value, "float")

        return number
    raise NotImplementedError(f"{where}: kafka type {kafka_type!r}")


def _sequence(item: Converter, optional: bool, where: str) -> Converter:
    def convert(values: Any) -> Any:
        if isinstance(values, list | tuple):
            return tuple([item(value) for value in values])
        if values is None and optional:
            return None
        raise _wrong(where, "list", values)

    return convert


def _int_sequence(item: Converter, optional: bool, where: str) -> Converter:
    """`_sequence` for arrays of ints (replica lists): checked without a call per element."""

    def convert(values: Any) -> Any:
        if isinstance(values, list | tuple):
            for value in values:
                if value.__class__ is not int:
                    return tuple([item(value) for value in values])
            return tuple(values)
        if values is None and optional:
            return None
        raise _wrong(where, "list", values)

    return convert


def _nested(entity_type: type, root: type, path: tuple[str, ...], optional: bool, where: str) -> Converter:
    # Derived on first use: deriving it now would derive every nested plan of every version.
    plan: list[_EntityPlan] = []

    def convert(value: Any) -> Any:
        if value.__class__ is dict:
            if not plan:
                plan.append(_plan(entity_type, root, path))
            return _from_dict(plan[0], value)
        if type(value) is entity_type:
            return value
        if _of_same_api(value, entity_type):
            return _copier(type(value), entity_type, root, path)(value)
        if value is None and optional:
            return None
        raise _wrong(where, f"dict or {entity_type.__name__}", value)

    return convert


def _of_same_api(value: Any, entity_type: type) -> bool:
    """`value` is a kio entity of another version of `entity_type`'s api (same kind: request,
    response or nested); its fields are then checked by name like a dict's keys."""
    kind = getattr(type(value), "__type__", None)
    return (
        kind is not None
        and dataclasses.is_dataclass(value)
        and kind is entity_type.__type__  # type: ignore[attr-defined]
        and type(value).__api_key__ == entity_type.__api_key__  # type: ignore[attr-defined]
    )


@functools.cache
def _copier(source: type, target: type, root: type, path: tuple[str, ...]) -> Converter:
    """Rebuilds an entity of class `source` as `target`, the same entity in another version of its api.

    The values come from a kio entity, already of kio's types: they are copied, not checked again (an
    entity of the requested version is not either); nested entities are rebuilt as their `target` class.
    A field `target` requires that `source` lacks is a `ResponseShapeError` on every call."""
    where = _where(root, path)
    source_fields = {field.name for field in dataclasses.fields(source)}
    copied: list[tuple[str, Converter | None]] = []
    neutral: dict[str, Any] = {}
    for field in dataclasses.fields(target):
        if field.name not in source_fields:
            if field.name in _DEFAULTED_WHEN_MISSING:
                neutral[field.name] = NOT_THROTTLED
            elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                return _missing(f"{where}.{field.name}")
            continue
        shape = field_shape(target, field)
        nested = None
        if shape.entity is not None:
            field_where = f"{where}.{field.name}"
            one = _nested_copier(shape.entity, root, (*path, field.name), field_where)
            nested = _sequence(one, shape.nullable, field_where) if shape.is_array else one
            if not shape.is_array and shape.nullable:
                nested = _or_none(one)
        copied.append((field.name, nested))

    def copy(value: Any) -> Any:
        return target(
            **neutral,
            **{
                name: getattr(value, name) if nested is None else nested(getattr(value, name))
                for name, nested in copied
            },
        )

    return copy


def _missing(where: str) -> Converter:
    def refuse(value: Any) -> Any:
        raise ResponseShapeError(f"{where}: required and not given")

    return refuse


def _or_none(convert: Converter) -> Converter:
    return lambda value: None if value is None else convert(value)


def _nested_copier(target: type, root: type, path: tuple[str, ...], where: str) -> Converter:
    """One nested value: kept when already of `target`, copied from another version's entity, else checked
    like a dict answer's (a dict, or a wrong value, inside an entity)."""
    checked = _nested(target, root, path, False, where)

    def convert(value: Any) -> Any:
        if value.__class__ is target:
            return value
        if _of_same_api(value, target):
            return _copier(value.__class__, target, root, path)(value)
        return checked(value)

    return convert


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


@functools.cache
def _plan(entity_type: type, root: type, path: tuple[str, ...]) -> _EntityPlan:
    where = _where(root, path)
    plans = []
    for field in dataclasses.fields(entity_type):
        shape = field_shape(entity_type, field)
        item, is_tuple, optional = shape.item, shape.is_array, shape.nullable
        field_where = f"{where}.{field.name}"
        kafka_type = field.metadata.get("kafka_type", "")
        convert: Converter
        if dataclasses.is_dataclass(item):
            nested_path = (*path, field.name)
            if is_tuple:
                one = _nested(item, root, nested_path, False, field_where + "[]")  # type: ignore[arg-type]
                convert = _sequence(one, optional, field_where)
            else:
                convert = _nested(item, root, nested_path, optional, field_where)  # type: ignore[arg-type]
        elif is_tuple and kafka_type in _INTEGER_TYPES:
            convert = _int_sequence(
                _primitive_converter(kafka_type, False, field_where + "[]"), optional, field_where
            )
        elif is_tuple:
            convert = _sequence(
                _primitive_converter(kafka_type, False, field_where + "[]"), optional, field_where
            )
        else:
            convert = _primitive_converter(kafka_type, optional, field_where)
        default: Callable[[], Any] | None
        if field.default is not dataclasses.MISSING:
            default = _constant(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory
        elif field.name in _DEFAULTED_WHEN_MISSING:
            default = _constant(convert(0))
        else:
            default = None
        alternate = field.name + "_ms" if kafka_type.startswith("timedelta") else None
        plain_int = not is_tuple and kafka_type in _INTEGER_TYPES
        plans.append((field.name, alternate, convert, default, plain_int))
    return _EntityPlan(entity_type, where, tuple(plans), _known_keys(root, path))


def _from_dict(plan: _EntityPlan, body: dict[str, Any]) -> Any:
    kwargs = {}
    used = 0
    for name, alternate, convert, default, plain_int in plan.fields:
        if name in body:
            value = body[name]
            # Most fields are ints: skip the call for them (this runs per field of every answer).
            kwargs[name] = value if plain_int and value.__class__ is int else convert(value)
            used += 1
        elif alternate is not None and alternate in body:
            kwargs[name] = convert(body[alternate])
            used += 1
        elif default is not None:
            kwargs[name] = default()
        else:
            raise ResponseShapeError(f"{plan.where}.{name}: required and not given")
    if used != len(body):
        unknown = body.keys() - plan.known_keys
        if unknown:
            raise ResponseShapeError(f"{plan.where}: no version has field(s) {', '.join(sorted(unknown))}")
    return plan.entity_type(**kwargs)


def build_entity(entity_type: type[Entity], body: dict[str, Any] | Entity) -> Entity:
    """The request or response entity `entity_type` holding `body` (checked, see the module doc)."""
    if type(body) is entity_type:
        return body
    if isinstance(body, dict):
        return _from_dict(_plan(entity_type, entity_type, ()), body)  # type: ignore[no-any-return]
    if _of_same_api(body, entity_type):
        return _copier(type(body), entity_type, entity_type, ())(body)  # type: ignore[no-any-return]
    raise _wrong(_where(entity_type, ()), f"dict or {entity_type.__name__}", body)


def build_response(api_key: int, api_version: int, answer: Entity) -> Entity:
    """A handler's answer as the kio response entity of `api_key`/`api_version`: passed through when it is
    that version's, rebuilt from another version's. Handlers answer entities; a dict is a `ResponseShapeError`."""
    entity_type = response_class(api_key, api_version)
    if isinstance(answer, dict):
        raise ResponseShapeError(f"{_where(entity_type, ())}: a handler answered a dict, not a kio entity")
    return build_entity(entity_type, answer)
