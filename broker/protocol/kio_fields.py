"""The shape of a kio schema field, read through public APIs only (dataclasses and type hints).

kio's schema classes are dataclasses whose annotations say everything the protocol needs: ``X``,
``X | None``, ``tuple[X, ...]`` or ``tuple[X, ...] | None``, where X is a primitive or a nested
entity dataclass. kio's own introspection helpers are private (`kio.serial._introspect`).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any


@dataclasses.dataclass(frozen=True, slots=True)
class FieldShape:
    # The value's type, or the element type of an array, without "| None".
    item: Any
    is_array: bool
    # The field (the whole array, for arrays) may be None.
    nullable: bool
    # An array whose elements may be None (uuid arrays of the broker registration APIs).
    item_nullable: bool

    @property
    def entity(self) -> type | None:
        """The nested entity class of an entity or entity-array field."""
        return self.item if dataclasses.is_dataclass(self.item) else None  # type: ignore[return-value]


def _strip_none(hint: Any) -> tuple[Any, bool]:
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(args) == 1:
            return args[0], True
    return hint, False


@functools.cache
def field_shapes(entity_type: type) -> dict[str, FieldShape]:
    """Every field of the kio entity class `entity_type`, by name, in declaration order."""
    hints = typing.get_type_hints(entity_type)
    shapes = {}
    for field in dataclasses.fields(entity_type):
        inner, nullable = _strip_none(hints[field.name])
        if typing.get_origin(inner) is tuple:
            item, item_nullable = _strip_none(typing.get_args(inner)[0])
            shapes[field.name] = FieldShape(item, True, nullable, item_nullable)
        else:
            shapes[field.name] = FieldShape(inner, False, nullable, False)
    return shapes


def field_shape(entity_type: type, field: dataclasses.Field) -> FieldShape:
    return field_shapes(entity_type)[field.name]
