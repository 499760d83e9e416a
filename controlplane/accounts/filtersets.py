import django_filters
from django.db.models import Q, QuerySet
from django.utils import timezone

from controlplane.accounts.choices import ApiKeyStatus
from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.core.api.filters import ApiFilterSet, IdFilter, StrictBooleanFilter
from controlplane.tenancy.choices import TeamRole


class ServiceAccountFilterSet(ApiFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = ServiceAccount
        fields = ["organization", "team", "name"]


class ApiKeyFilterSet(ApiFilterSet):
    team = IdFilter(field_name="service_account__team")
    role = django_filters.ChoiceFilter(choices=TeamRole.choices)
    personal = StrictBooleanFilter(field_name="user", lookup_expr="isnull", exclude=True)
    status = django_filters.ChoiceFilter(choices=ApiKeyStatus.choices, method="filter_status")

    class Meta:
        model = ApiKey
        fields = ["service_account", "team", "role", "personal", "status"]

    def filter_status(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        now = timezone.now()
        live = Q(revoked_at__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        conditions = {
            ApiKeyStatus.ACTIVE: live & Q(overlap_until__isnull=True),
            ApiKeyStatus.ROTATING: live & Q(overlap_until__gt=now),
            ApiKeyStatus.EXPIRED: Q(revoked_at__isnull=True)
            & (Q(expires_at__lte=now) | Q(overlap_until__lte=now)),
            ApiKeyStatus.REVOKED: Q(revoked_at__isnull=False),
        }
        return queryset.filter(conditions[value])
