import django_filters

from controlplane.clusters.choices import ClusterStatus, OperationKind, OperationState, Provider
from controlplane.clusters.models import Cluster, Operation
from controlplane.core.api.filters import ApiFilterSet


class ClusterFilterSet(ApiFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    provider = django_filters.ChoiceFilter(choices=Provider.choices)
    status = django_filters.ChoiceFilter(choices=ClusterStatus.choices)

    class Meta:
        model = Cluster
        fields = ["organization", "name", "provider", "status"]


class OperationFilterSet(ApiFilterSet):
    kind = django_filters.ChoiceFilter(choices=OperationKind.choices)
    state = django_filters.ChoiceFilter(choices=OperationState.choices)

    class Meta:
        model = Operation
        fields = ["cluster", "kind", "state", "team", "resource_type", "resource_name"]
