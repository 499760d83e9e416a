from django.db import models

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.models import Cluster
from controlplane.credentials.choices import ScramMechanism


class ScramCredential(models.Model):
    """A service account's SCRAM credential on one cluster. Only the cluster keeps the salted password."""

    service_account = models.ForeignKey(
        ServiceAccount, on_delete=models.CASCADE, related_name="scram_credentials"
    )
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="scram_credentials")
    mechanism = models.CharField(max_length=20, choices=ScramMechanism.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    rotated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["service_account_id", "cluster_id", "mechanism"]
        constraints = [
            models.UniqueConstraint(
                fields=["service_account", "cluster", "mechanism"], name="unique_scram_credential"
            )
        ]

    def __str__(self) -> str:
        return f"{self.service_account.name}@{self.cluster.name} ({self.mechanism})"
