import django_filters

from controlplane.reconcile.models import Drift, ReconcileRun


class DriftFilterSet(django_filters.FilterSet):
    class Meta:
        model = Drift
        fields = ["cluster", "team", "kind", "resource_type"]


class ReconcileRunFilterSet(django_filters.FilterSet):
    class Meta:
        model = ReconcileRun
        fields = ["cluster", "state"]
