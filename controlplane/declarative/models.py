from django.db import models
from django.db.models import Q

from controlplane.clusters.models import Cluster
from controlplane.declarative.choices import ChangeSetState, Kind
from controlplane.tenancy.models import Organization, Team


class ChangeSet(models.Model):
    """One application of a plan: who applied which file set, and what happened to each change."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="change_sets")
    file_set = models.CharField(max_length=100)
    state = models.CharField(max_length=20, choices=ChangeSetState.choices)
    actor_name = models.CharField(max_length=255)
    request_id = models.CharField(max_length=64, blank=True)
    plan_id = models.CharField(max_length=64)
    # {"changes": [{kind, name, team, cluster, action, diff, status, reason, operation}], "counts": {...}}
    report = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"change set {self.pk} of {self.file_set} ({self.state})"


class ManagedResource(models.Model):
    """A resource that a file set declares: only its own file set updates it, and prunes only what it owns.
    `resource_id` is the row of the domain app (topic, grant, quota, service account) it stands for."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="managed_resources")
    cluster = models.ForeignKey(
        Cluster, null=True, blank=True, on_delete=models.CASCADE, related_name="managed_resources"
    )
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="managed_resources")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    name = models.CharField(max_length=600)
    resource_id = models.PositiveBigIntegerField(null=True, blank=True)
    file_set = models.CharField(max_length=100)
    change_set = models.ForeignKey(ChangeSet, on_delete=models.PROTECT, related_name="resources")
    labels = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "cluster", "kind", "name"],
                condition=Q(cluster__isnull=False),
                name="unique_managed_resource_per_cluster",
            ),
            models.UniqueConstraint(
                fields=["organization", "kind", "name"],
                condition=Q(cluster__isnull=True),
                name="unique_managed_resource_per_organization",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.name} ({self.file_set})"
