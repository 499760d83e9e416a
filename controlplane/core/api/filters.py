"""List filters: each refuses (400, naming the filter) a value that is not of its documented type, so a
misspelled value cannot silently widen a list; a filter by an object id is a number, and an id that names no
visible object lists nothing (like an object of another team: it does not exist for the caller)."""

import re
from datetime import UTC, datetime

import django_filters
from django import forms
from django.db import models
from django.db.models import QuerySet
from django_filters.filterset import FILTER_FOR_DBFIELD_DEFAULTS

_WHOLE_NUMBER = re.compile(r"-?[0-9]+")


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    """ISO 8601 times compared in UTC. Python accepts UTC offsets PostgreSQL refuses (beyond ±16 h), and a
    time at the edge of the calendar cannot be converted at all: such a bound matches nothing."""

    def filter(self, queryset: QuerySet, value: datetime | None) -> QuerySet:
        if value is None:
            return queryset
        try:
            value = value.astimezone(UTC)
        except OverflowError:
            return queryset.none()
        return super().filter(queryset, value)


class WholeNumberField(forms.IntegerField):
    """Digits only: Django's own field reads "1.0" as 1 and lets "0.5" through a decimal filter."""

    def to_python(self, value: object) -> int | None:
        if value in self.empty_values:
            return None
        if not isinstance(value, str) or not _WHOLE_NUMBER.fullmatch(value):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return int(value)


class IdFilter(django_filters.NumberFilter):
    """An object's id: a whole number a database integer holds. A larger one (schemathesis sent a 29-digit ?team=)
    overflowed SQLite's integer in the query, a 500; the form refuses it instead, a 400 naming the filter."""

    field_class = WholeNumberField

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("min_value", -(2**63))
        kwargs.setdefault("max_value", 2**63 - 1)
        super().__init__(*args, **kwargs)


class StrictBooleanField(forms.Field):
    """`true` or `false`, as the OpenAPI document's boolean is written in a query. Django's NullBooleanField
    reads anything else as "no filter", which turned `?managed=yes` into the whole list."""

    def to_python(self, value: object) -> bool | None:
        if value in self.empty_values:
            return None
        if value not in ("true", "false"):
            raise forms.ValidationError("Enter true or false.", code="invalid")
        return value == "true"


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class ApiFilterSet(django_filters.FilterSet):
    """The base of every list's filters: foreign keys filter by id (IdFilter), booleans are strict."""

    FILTER_DEFAULTS = {
        **FILTER_FOR_DBFIELD_DEFAULTS,
        models.ForeignKey: {"filter_class": IdFilter},
        models.OneToOneField: {"filter_class": IdFilter},
        models.BooleanField: {"filter_class": StrictBooleanFilter},
        models.AutoField: {"filter_class": IdFilter},
        models.BigAutoField: {"filter_class": IdFilter},
    }
