from django.db import models

from controlplane.clusters.models import Cluster
from controlplane.reconcile.choices import DriftKind, RunState
from controlplane.tenancy.models import Team


class ReconcileRun(models.Model):
    """One pass of the reconciler over a cluster: what it created, what drift it found, or why it failed."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="reconcile_runs")
    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"reconcile {self.cluster_id} ({self.state})"


class Drift(models.Model):
    """A difference between desired and observed state, as the latest run of the cluster found it."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="drifts")
    run = models.ForeignKey(ReconcileRun, on_delete=models.CASCADE, related_name="drifts")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE, related_name="drifts")
    kind = models.CharField(max_length=40, choices=DriftKind.choices)
    resource_type = models.CharField(max_length=20)
    resource_name = models.CharField(max_length=600)
    details = models.JSONField(default=dict, blank=True)
    detected_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster_id", "kind", "resource_name"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.resource_name}"
