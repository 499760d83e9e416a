from controlplane.core.api.filters import ApiFilterSet
from controlplane.reconcile.models import Drift, ReconcileRun


class DriftFilterSet(ApiFilterSet):
    class Meta:
        model = Drift
        fields = ["cluster", "team", "kind", "resource_type"]


class ReconcileRunFilterSet(ApiFilterSet):
    class Meta:
        model = ReconcileRun
        fields = ["cluster", "state"]
