from rest_framework import serializers

from controlplane.clusters.api.fields import VisibleClusterField
from controlplane.reconcile.models import Drift, ReconcileRun


class DriftSerializer(serializers.ModelSerializer):
    class Meta:
        model = Drift
        fields = [
            "id",
            "cluster",
            "run",
            "team",
            "kind",
            "resource_type",
            "resource_name",
            "details",
            "detected_at",
        ]


class ReconcileRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReconcileRun
        fields = ["id", "cluster", "state", "started_at", "finished_at", "summary", "error"]


class ReconcileInputSerializer(serializers.Serializer):
    cluster = VisibleClusterField()
