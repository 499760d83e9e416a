from django.db import models

from controlplane.clusters.models import Cluster
from controlplane.tenancy.models import Team


class ClientQuota(models.Model):
    """Quota values for one entity: {"user": name}, {"client-id": id}, both, or defaults (a None name)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="client_quotas")
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.PROTECT, related_name="client_quotas"
    )
    entity = models.JSONField()
    entity_key = models.CharField(max_length=600)
    managed = models.BooleanField(default=True)
    values = models.JSONField(default=dict)
    exists_on_cluster = models.BooleanField(default=False)
    observed_values = models.JSONField(default=dict, blank=True)
    observed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster_id", "entity_key"]
        constraints = [models.UniqueConstraint(fields=["cluster", "entity_key"], name="unique_quota_entity")]

    def __str__(self) -> str:
        return self.entity_key
