"""Query parameters: an operation takes the ones its OpenAPI description lists, and refuses any other (400
naming it). A misspelled filter (`?clustre=3`) was silently ignored and widened the list to everything, the
worst answer for a script that acts on what it lists. Each documented parameter is given once (a list filter
that takes several values excepted), and only free-text ones may be empty: `?until=` is not a time.

What is documented comes from the same declarations drf-spectacular reads: a list's filterset, ordering,
search and pagination, and an action's query serializer (`takes_query`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import django_filters
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter, SearchFilter
from rest_framework.pagination import LimitOffsetPagination

if TYPE_CHECKING:
    from django.http import QueryDict
    from rest_framework.views import APIView

Handler = TypeVar("Handler", bound=Callable[..., Any])


@dataclass(frozen=True)
class QueryParameter:
    repeatable: bool = False  # ?state=firing&state=pending
    may_be_empty: bool = False  # free text; "" is no number, time, choice or boolean


# Marks an operation whose query names objects by id; the schema hook turns it into a documented 404.
QUERY_NAMES_OBJECTS = "x-query-names-objects"

FREE_TEXT = QueryParameter(may_be_empty=True)
TYPED = QueryParameter()


def takes_query(serializer: type[serializers.Serializer]) -> Callable[[Handler], Handler]:
    """An action's query parameters: documented in the OpenAPI description and the only ones it accepts. The
    action still validates them with the serializer (`serializer(data=request.query_params)`)."""

    names_objects = any(
        isinstance(field, serializers.RelatedField | serializers.ManyRelatedField)
        for field in serializer().fields.values()
    )

    def decorate(handler: Handler) -> Handler:
        handler.query_serializer = serializer  # type: ignore[attr-defined]
        # An id in the query that names nothing visible is a 404, as in a body (schema_hooks documents it).
        extensions = {QUERY_NAMES_OBJECTS: True} if names_objects else None
        return extend_schema(parameters=[serializer], extensions=extensions)(handler)

    return decorate


def accepted_query_parameters(view: APIView, action: str | None) -> dict[str, QueryParameter]:
    handler = getattr(view, action, None) if action else None
    serializer = getattr(handler, "query_serializer", None)
    accepted = serializer_parameters(serializer) if serializer is not None else {}
    if action == "list":
        accepted |= list_parameters(view)
    return accepted


def list_parameters(view: APIView) -> dict[str, QueryParameter]:
    """A list's filters, ordering, search and page, as drf-spectacular documents them."""
    accepted: dict[str, QueryParameter] = {}
    for backend_class in getattr(view, "filter_backends", ()):
        backend = backend_class()
        if isinstance(backend, DjangoFilterBackend):
            filterset = backend.get_filterset_class(view, view.get_queryset())
            if filterset is not None:
                accepted |= {name: _filter_parameter(f) for name, f in filterset.base_filters.items()}
        elif isinstance(backend, OrderingFilter):
            accepted[backend.ordering_param] = FREE_TEXT
        elif isinstance(backend, SearchFilter) and getattr(view, "search_fields", None):
            accepted[backend.search_param] = FREE_TEXT
    paginator = getattr(view, "paginator", None)
    if isinstance(paginator, LimitOffsetPagination):
        accepted[paginator.limit_query_param] = TYPED
        accepted[paginator.offset_query_param] = TYPED
    return accepted


def _filter_parameter(definition: django_filters.Filter) -> QueryParameter:
    if isinstance(definition, django_filters.MultipleChoiceFilter):
        return QueryParameter(repeatable=True)
    free_text = isinstance(definition, django_filters.CharFilter)
    return FREE_TEXT if free_text else TYPED


def serializer_parameters(serializer: type[serializers.Serializer]) -> dict[str, QueryParameter]:
    parameters = {}
    for name, field in serializer().fields.items():
        if field.read_only:
            continue
        if isinstance(field, serializers.ListField | serializers.MultipleChoiceField):
            parameters[name] = QueryParameter(repeatable=True)
        elif isinstance(field, serializers.CharField) and not isinstance(field, serializers.ChoiceField):
            parameters[name] = FREE_TEXT
        else:
            parameters[name] = TYPED
    return parameters


def refuse_unexpected(query: QueryDict, accepted: Mapping[str, QueryParameter]) -> None:
    """400 naming every query parameter the operation does not take, or takes otherwise."""
    errors: dict[str, list[str]] = {}
    for name, values in query.lists():
        parameter = accepted.get(name)
        if parameter is None:
            known = ", ".join(sorted(accepted)) or "none"
            errors[name] = [f"Unknown query parameter (this operation takes: {known})."]
        elif len(values) > 1 and not parameter.repeatable:
            errors[name] = ["Given more than once; it takes one value."]
        elif not parameter.may_be_empty and any(value == "" for value in values):
            errors[name] = ["Empty; leave the parameter out instead."]
    if errors:
        raise ValidationError(errors)
