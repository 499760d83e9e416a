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
