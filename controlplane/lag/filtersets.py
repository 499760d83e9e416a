import django_filters

from controlplane.core.api.filters import ApiFilterSet, IdFilter
from controlplane.lag.models import GroupLag
from controlplane.lag.observations import Health


class GroupLagFilterSet(ApiFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=Health.choices)
    team = IdFilter(field_name="group__team")
    name = django_filters.CharFilter(field_name="group__name", lookup_expr="icontains")

    class Meta:
        model = GroupLag
        fields = ["cluster", "status", "team", "name"]
