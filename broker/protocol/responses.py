"""Build version-specific kio response entities from plain dict trees.

Handlers answer with plain dicts keyed by kio's snake_case field names. This module turns
such a tree into the entity class for one api version: keys that version lacks are dropped,
missing keys get the schema default (or a neutral zero value), ints become kio's
ErrorCode/timedelta/datetime wrappers, and nested dicts/lists recurse.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import uuid
from collections.abc import Callable
from typing import Any

from kio.schema.errors import ErrorCode
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    is_optional,
)
from kio.static.primitive import i32Timedelta, i64Timedelta
from kio.static.protocol import Entity

from broker.wire.schemas import response_class

_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)

Converter = Callable[[Any], Any]
# (field name, alternate dict key, converter, default factory)
FieldPlan = tuple[str, str | None, Converter, Callable[[], Any]]


def _error_code(value: Any) -> ErrorCode:
    return value if isinstance(value, ErrorCode) else ErrorCode(int(value))


def _timedelta_i32(value: Any) -> Any:
    if isinstance(value, datetime.timedelta):
        return value
    return i32Timedelta.parse(datetime.timedelta(milliseconds=int(value)))


def _timedelta_i64(value: Any) -> Any:
    if isinstance(value, datetime.timedelta):
        return value
    return i64Timedelta.parse(datetime.timedelta(milliseconds=int(value)))


def _datetime(value: Any) -> Any:
    if value is None or isinstance(value, datetime.datetime):
        return value
    if int(value) < 0:
        return None
    return _EPOCH + datetime.timedelta(milliseconds=int(value))


def _uuid(value: Any) -> uuid.UUID | None:
    if value is None or isinstance(value, uuid.UUID):
        return value
    return uuid.UUID(str(value))


def _identity(value: Any) -> Any:
    return value


_PRIMITIVE_CONVERTERS: dict[str, Converter] = {
    "error_code": _error_code,
    "timedelta_i32": _timedelta_i32,
    "timedelta_i64": _timedelta_i64,
    "datetime_i64": _datetime,
    "uuid": _uuid,
}

_PRIMITIVE_ZEROES: dict[str, Any] = {
    "error_code": ErrorCode.none,
    "timedelta_i32": i32Timedelta.parse(datetime.timedelta(0)),
    "timedelta_i64": i64Timedelta.parse(datetime.timedelta(0)),
    "datetime_i64": None,
    "uuid": None,
    "string": "",
    "bytes": b"",
    "records": None,
    "bool": False,
    "float64": 0.0,
}


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


@functools.cache
def _plan(entity_type: type[Entity]) -> tuple[FieldPlan, ...]:
    plans: list[FieldPlan] = []
    for field in dataclasses.fields(entity_type):
        kind = classify_field(field)
        optional = is_optional(field)
        kafka_type = field.metadata.get("kafka_type", "")
        converter: Converter
        if isinstance(kind, EntityTupleField):
            nested = kind.type_
            converter = functools.partial(_convert_list, nested)
            zero: Callable[[], Any] = _constant(())
        elif isinstance(kind, EntityField):
            nested = kind.type_
            converter = functools.partial(_convert_optional_entity, nested)
            zero = _constant(None) if optional else functools.partial(_from_dict, nested, {})
        elif isinstance(kind, PrimitiveTupleField):
            item = _PRIMITIVE_CONVERTERS.get(kafka_type, _identity)
            converter = functools.partial(_convert_primitive_list, item)
            zero = _constant(())
        else:
            assert isinstance(kind, PrimitiveField)
            converter = _PRIMITIVE_CONVERTERS.get(kafka_type, _identity)
            zero = _constant(None) if optional else _constant(_PRIMITIVE_ZEROES.get(kafka_type, 0))
        if field.default is not dataclasses.MISSING:
            default: Callable[[], Any] = _constant(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory
        else:
            default = zero
        # Handlers may spell Kafka's JSON name (throttle_time_ms) where kio drops the unit.
        alternate = field.name + "_ms" if kafka_type.startswith("timedelta") else None
        plans.append((field.name, alternate, converter, default))
    return tuple(plans)


def _convert_list(entity_type: type[Entity], items: Any) -> Any:
    if items is None:
        return None
    return tuple(item if isinstance(item, entity_type) else _from_dict(entity_type, item) for item in items)


def _convert_optional_entity(entity_type: type[Entity], value: Any) -> Any:
    if value is None or isinstance(value, entity_type):
        return value
    return _from_dict(entity_type, value)


def _convert_primitive_list(item: Converter, values: Any) -> Any:
    if values is None:
        return None
    return tuple(item(v) for v in values)


def _from_dict(entity_type: type[Entity], body: dict[str, Any]) -> Any:
    kwargs = {}
    for name, alternate, converter, default in _plan(entity_type):
        if name in body:
            kwargs[name] = converter(body[name])
        elif alternate is not None and alternate in body:
            kwargs[name] = converter(body[alternate])
        else:
            kwargs[name] = default()
    return entity_type(**kwargs)


def build_entity(entity_type: type[Entity], body: dict[str, Any]) -> Entity:
    """Build any kio entity (request, response or nested) from a plain dict tree."""
    return _from_dict(entity_type, body)  # type: ignore[no-any-return]


def build_response(api_key: int, api_version: int, body: dict[str, Any]) -> Entity:
    """The kio response entity for `api_key`/`api_version` holding `body`."""
    return build_entity(response_class(api_key, api_version), body)
