import django_filters

from controlplane.core.api.filters import ApiFilterSet
from controlplane.groups.models import ConsumerGroup


class ConsumerGroupFilterSet(ApiFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = ConsumerGroup
        fields = ["cluster", "team", "state", "name", "group_type"]
