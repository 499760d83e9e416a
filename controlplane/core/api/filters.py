from datetime import UTC, datetime

import django_filters
from django.db.models import QuerySet


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


class IdFilter(django_filters.NumberFilter):
    """An object's id: a whole number a database integer holds. A larger one (schemathesis sent a 29-digit ?team=)
    overflowed SQLite's integer in the query, a 500; the form refuses it instead, a 400 naming the filter."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("min_value", -(2**63))
        kwargs.setdefault("max_value", 2**63 - 1)
        super().__init__(*args, **kwargs)
