"""Kio response entities of the version asked, from handlers' answers.

Handlers answer with a kio response entity, built with keyword arguments for the newest version they serve
(a misspelt or missing field is a TypeError where the answer is built, visible to a type checker);
`build_response` refuses anything else. An entity of the requested version passes through untouched (the
hot path: current clients ask for the newest version); an entity of another version of the same api is read
field by field (nested entities too) and rebuilt as the requested version. Fields that only OLDER versions
have (Produce's and Fetch's topic names before topic ids, FindCoordinator's single coordinator before v4, ...)
are given by building the entity of a version that has them: the conversion works from any version to any
other. A field the requested version requires that the entity's version lacks is a `ResponseShapeError`
(never a default sent as success), except ``throttle_time``, which the dispatcher owns and which defaults to
"not throttled"; so is a nested value that is not an entity of the same api.

A `ResponseShapeError` is a broker bug. It propagates like any other handler exception: the
connection logs it with its stack and closes. An error response would have to be built per api
(the errors of Produce, ListOffsets or OffsetCommit live per partition), and after a handler has
acted, "failed" could be as false as "succeeded"; a closed connection tells the client the one
true thing — the outcome is unknown — and Kafka clients retry or refresh metadata on it.

(Tests build entities from dict trees under the same rules: `tests/fixtures/entity_trees.py`.)
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
from collections.abc import Callable
from typing import Any

from kio.static.primitive import i32Timedelta
from kio.static.protocol import Entity

from broker.protocol.kio_fields import field_shape
from broker.wire.schemas import response_class

# Fields whose absence means a neutral answer rather than a forgotten one.
DEFAULTED_WHEN_MISSING = frozenset({"throttle_time"})


# The throttle_time of an answer built by a handler: the dispatcher replaces it when a quota throttles.
NOT_THROTTLED = i32Timedelta.parse(datetime.timedelta(0))


class ResponseShapeError(TypeError):
    """A handler's answer does not fit the schema of the response it answers (a broker bug)."""


Converter = Callable[[Any], Any]


def entity_position(root: type, path: tuple[str, ...]) -> str:
    """Where a value sits, for errors: ``ListOffsetsResponse v7.topics.partitions``."""
    return f"{root.__name__} v{root.__version__}" + "".join(f".{step}" for step in path)


def shape_error(where: str, expected: str, value: Any) -> ResponseShapeError:
    return ResponseShapeError(f"{where}: expected {expected}, got {type(value).__name__} {value!r:.80}")


def sequence_of(item: Converter, optional: bool, where: str) -> Converter:
    """A converter of a list (or tuple) to kio's tuple, each element converted by `item`."""

    def convert(values: Any) -> Any:
        if isinstance(values, list | tuple):
            return tuple([item(value) for value in values])
        if values is None and optional:
            return None
        raise shape_error(where, "list", values)

    return convert


def same_api(value: Any, entity_type: type) -> bool:
    """`value` is a kio entity of another version of `entity_type`'s api (same kind: request, response or
    nested)."""
    kind = getattr(type(value), "__type__", None)
    return (
        kind is not None
        and dataclasses.is_dataclass(value)
        and kind is entity_type.__type__  # type: ignore[attr-defined]
        and type(value).__api_key__ == entity_type.__api_key__  # type: ignore[attr-defined]
    )


def rebuild_as(value: Any, target: type, root: type, path: tuple[str, ...]) -> Any:
    """`value`, an entity of `target`'s api, as `target` (`root` and `path`: where `target` sits, for errors)."""
    if value.__class__ is target:
        return value
    return _copier(value.__class__, target, root, path)(value)


@functools.cache
def _copier(source: type, target: type, root: type, path: tuple[str, ...]) -> Converter:
    """Rebuilds an entity of class `source` as `target`, the same entity in another version of its api.

    The values come from a kio entity, already of kio's types: they are copied, not checked again (an
    entity of the requested version is not either); nested entities are rebuilt as their `target` class.
    A field `target` requires that `source` lacks is a `ResponseShapeError` on every call."""
    where = entity_position(root, path)
    source_fields = {field.name for field in dataclasses.fields(source)}
    copied: list[tuple[str, Converter | None]] = []
    neutral: dict[str, Any] = {}
    for field in dataclasses.fields(target):
        if field.name not in source_fields:
            if field.name in DEFAULTED_WHEN_MISSING:
                neutral[field.name] = NOT_THROTTLED
            elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                return _missing(f"{where}.{field.name}")
            continue
        shape = field_shape(target, field)
        nested = None
        if shape.entity is not None:
            field_where = f"{where}.{field.name}"
            one = _nested_copier(shape.entity, root, (*path, field.name), field_where)
            nested = sequence_of(one, shape.nullable, field_where) if shape.is_array else one
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
    """One nested value: kept when already of `target`, copied from another version's entity, else refused."""

    def convert(value: Any) -> Any:
        if value.__class__ is target:
            return value
        if same_api(value, target):
            return _copier(value.__class__, target, root, path)(value)
        raise shape_error(where, target.__name__, value)

    return convert


def build_entity(entity_type: type[Entity], entity: Entity) -> Entity:
    """`entity`, a kio entity of `entity_type`'s api in any version, as `entity_type`."""
    if type(entity) is entity_type:
        return entity
    if same_api(entity, entity_type):
        return _copier(type(entity), entity_type, entity_type, ())(entity)  # type: ignore[no-any-return]
    raise shape_error(entity_position(entity_type, ()), entity_type.__name__, entity)


def build_response(api_key: int, api_version: int, answer: Entity) -> Entity:
    """A handler's answer as the kio response entity of `api_key`/`api_version`: passed through when it is
    that version's, rebuilt from another version's. Handlers answer entities; a dict is a `ResponseShapeError`."""
    entity_type = response_class(api_key, api_version)
    if isinstance(answer, dict):
        raise ResponseShapeError(
            f"{entity_position(entity_type, ())}: a handler answered a dict, not a kio entity"
        )
    return build_entity(entity_type, answer)
