"""Request bodies are JSON, and each field takes the JSON type the OpenAPI description gives it. DRF's fields
convert on their own (`"is_org_admin": 0` is False, `"partitions": "3"` is 3, `"name": 7` is "7"), so a
client's mistake became a change it did not mean; these are refused (400) before the serializer runs, each
field named with the type it takes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

_NAMES = {
    bool: "a boolean",
    int: "a whole number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
}


def mistyped_fields(serializer: serializers.Serializer, data: Any) -> dict[str, Any]:
    """Each field of `data` whose JSON type is not the one the field takes, with what it takes."""
    if not isinstance(data, dict):
        return {}  # the serializer itself says the body must be an object
    errors: dict[str, Any] = {}
    for name, field in serializer.fields.items():
        if field.read_only or name not in data:
            continue
        error = _field_error(field, data[name])
        if error:
            errors[name] = error
    return errors


def _field_error(field: serializers.Field, value: Any) -> Any:
    if value is None:
        return None  # null: the field's own allow_null decides
    if isinstance(field, serializers.Serializer):
        return mistyped_fields(field, value)
    if isinstance(field, serializers.ListSerializer):
        if not isinstance(value, list):
            return [f"Expected {_NAMES[list]}."]
        nested = {index: mistyped_fields(field.child, item) for index, item in enumerate(value)}
        return {index: error for index, error in nested.items() if error}
    expected = _json_types(field)
    if expected and not _is_of(value, expected):
        return [f"Expected {' or '.join(_NAMES[kind] for kind in expected)}."]
    if isinstance(field, serializers.ListField) and isinstance(value, list) and field.child is not None:
        nested = {index: _field_error(field.child, item) for index, item in enumerate(value)}
        return {index: error for index, error in nested.items() if error} or None
    if isinstance(field, serializers.DictField) and isinstance(value, dict) and field.child is not None:
        nested = {key: _field_error(field.child, item) for key, item in value.items()}
        return {key: error for key, error in nested.items() if error} or None
    return None


def _json_types(field: serializers.Field) -> tuple[type, ...]:
    """The JSON types the field's OpenAPI schema names; () where the field itself decides (choices, JSON)."""
    if isinstance(field, serializers.BooleanField):
        return (bool,)
    if isinstance(field, serializers.IntegerField | serializers.PrimaryKeyRelatedField):
        return (int,)
    if isinstance(field, serializers.FloatField):
        return (int, float)
    if isinstance(
        field,
        serializers.CharField
        | serializers.DateTimeField
        | serializers.DateField
        | serializers.SlugRelatedField,
    ):
        return (str,)
    if isinstance(
        field, serializers.ListField | serializers.ManyRelatedField | serializers.MultipleChoiceField
    ):
        return (list,)
    if isinstance(field, serializers.DictField):
        return (dict,)
    return ()


def _is_of(value: Any, expected: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in expected  # a JSON boolean is no number, though Python's bool is an int
    return isinstance(value, expected)
