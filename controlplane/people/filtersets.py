import django_filters
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from controlplane.core.api.filters import ApiFilterSet, IdFilter
from controlplane.people.choices import PersonStatus


class PersonFilterSet(ApiFilterSet):
    search = django_filters.CharFilter(method="filter_search", help_text="Part of the username or e-mail.")
    organization = IdFilter(field_name="org_memberships__organization")
    team = IdFilter(field_name="team_memberships__team")
    status = django_filters.ChoiceFilter(choices=PersonStatus.choices, method="filter_status")

    class Meta:
        model = get_user_model()
        fields = ["search", "organization", "team", "status"]

    def filter_search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(username__icontains=value) | Q(email__icontains=value))

    def filter_status(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        if value == PersonStatus.DEACTIVATED:
            return queryset.filter(is_active=False)
        # Django marks an unusable password with this prefix (django.contrib.auth.hashers.UNUSABLE_PASSWORD_PREFIX).
        invited = Q(password__startswith="!") & (Q(identity__isnull=True) | Q(identity__source="local"))
        active = queryset.filter(is_active=True)
        return active.filter(invited) if value == PersonStatus.INVITED else active.exclude(invited)
