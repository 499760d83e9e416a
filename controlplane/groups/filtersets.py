import django_filters

from controlplane.groups.models import ConsumerGroup


class ConsumerGroupFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = ConsumerGroup
        fields = ["cluster", "team", "state", "name"]
