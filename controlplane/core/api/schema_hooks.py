"""The refusals every operation can answer, in the published OpenAPI document: drf-spectacular documents the
success answer of each view; the error shape (errors.py) and when each status comes are the same everywhere,
so they are added here once instead of on every view."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.settings import api_settings

from controlplane.core.api.query import QUERY_NAMES_OBJECTS

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every refusal: a sentence, a code scripts can test, details (per field for 400) and the "
    "request id also sent as X-Request-ID.",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object", "additionalProperties": True},
                "request_id": {"type": "string"},
            },
            "required": ["code", "message", "details", "request_id"],
        }
    },
    "required": ["error"],
}

_ANSWERS = {
    "400": "The request is not valid: a body field, a query parameter (a list filter) or a value the "
    "service refuses; `error.details` names each.",
    "401": "Missing or invalid credentials.",
    "403": "Authenticated but not allowed (said before anything about the request body).",
    "404": "No such object, or one the caller may not see: in the path, or named by an id in the body "
    "(`error.details` names the field).",
    "409": "It conflicts with the current state (a duplicate name, an object still in use).",
    "413": "The body is larger than the server accepts.",
    "429": "Too many changes by the team in the last minute.",
    "503": "The cluster did not answer (in time), or the outcome of a change is unknown.",
}
_UNSAFE = {"post", "put", "patch", "delete"}


def document_error_answers(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    reference = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in _UNSAFE | {"get"}:
                continue
            statuses = ["400", "401", "403", "429"]
            names_objects = operation.pop(QUERY_NAMES_OBJECTS, False)
            if "{" in path or names_objects or _body_names_objects(operation, generator):
                statuses.append("404")
            if method in _UNSAFE:
                statuses += ["409", "413", "503"]
            elif "{" in path:
                statuses.append("503")  # a detail reads the cluster
            responses = operation.setdefault("responses", {})
            for status in statuses:
                responses.setdefault(status, {"description": _ANSWERS[status], "content": reference})
    return result


def _body_names_objects(operation: dict[str, Any], generator: Any) -> bool:
    """Whether the operation's body refers to other objects by id (a related field, answered 404 when the
    object is not there: errors.names_a_missing_object)."""
    for content in operation.get("requestBody", {}).get("content", {}).values():
        reference = content.get("schema", {}).get("$ref", "")
        if not reference.startswith("#/components/schemas/"):
            continue
        component = generator.registry[(reference.rsplit("/", 1)[1], "schemas")]
        if _names_objects(component.object):
            return True
    return False


def _names_objects(serializer: Any) -> bool:
    if isinstance(serializer, type):
        serializer = serializer()
    if isinstance(serializer, serializers.ListSerializer):
        serializer = serializer.child
    if not isinstance(serializer, serializers.Serializer):
        return False
    return any(
        isinstance(field, serializers.RelatedField | serializers.ManyRelatedField) or _names_objects(field)
        for field in serializer.fields.values()
        if not field.read_only
    )


# What the form fields behind a list's filters (and a query serializer's fields) refuse beyond the type
# drf-spectacular states: an id outside PostgreSQL's bigint, and a text with a NUL character (no database column
# holds one). The ordering (unknown fields are ignored) and the page's limit and offset (clamped; they state a
# minimum) take anything of their type, so they are left as they are.
_BIGINT = {"minimum": -(2**63), "maximum": 2**63 - 1}
_NO_NUL = r"^[^\x00]*$"


def bound_query_parameters(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: each query parameter's schema states what the server accepts, so a
    value the document allows is never refused with 400."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "query" or parameter.get("name") == api_settings.ORDERING_PARAM:
                    continue
                schema = parameter.get("schema", {})
                _bound(schema.get("items", {}) if schema.get("type") == "array" else schema)
    return result


def _bound(schema: dict[str, Any], *, no_nul: str = _NO_NUL) -> None:
    if "enum" in schema or "$ref" in schema:
        return
    if schema.get("type") == "integer" and "minimum" not in schema and "maximum" not in schema:
        schema.update(_BIGINT)
    elif schema.get("type") == "string" and "format" not in schema and "pattern" not in schema:
        schema["pattern"] = no_nul


class TextWithoutNul(OpenApiSerializerFieldExtension):
    """A text field of a request body (DRF's CharField and its kinds) refuses a NUL character: its documented
    schema says so, as the query parameters' do (bound_query_parameters). Answers keep the plain schema: a
    record's text read from Kafka may hold one."""

    target_class = serializers.CharField
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        # A field with a pattern of its own (RegexField, SlugField, a RegexValidator) gets that one afterwards.
        has_pattern = any(isinstance(v, RegexValidator) for v in self.target.validators)
        if direction == "request" and not has_pattern:
            # drf-spectacular writes a field that allows "" and has a pattern as oneOf(pattern, empty): the
            # pattern takes one character at least, so that "" matches one branch only.
            _bound(schema, no_nul=_NO_NUL.replace("*", "+"))
        return schema
