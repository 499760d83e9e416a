from django.db import models

from controlplane.accounts.models import ServiceAccount
from controlplane.acls.choices import AclOperation, AclResourceType, GrantTemplate, PatternType, Permission
from controlplane.clusters.models import Cluster
from controlplane.kafka.acls import Acl
from controlplane.tenancy.models import Team


class AccessGrant(models.Model):
    """A template applied to a service account: its bindings are created and removed together."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="access_grants")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="access_grants")
    service_account = models.ForeignKey(
        ServiceAccount, on_delete=models.CASCADE, related_name="access_grants"
    )
    template = models.CharField(max_length=32, choices=GrantTemplate.choices)
    topic_prefix = models.CharField(max_length=249)
    group_prefix = models.CharField(max_length=249, blank=True)
    transactional_id_prefix = models.CharField(max_length=249, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster_id", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.template} for {self.service_account} on {self.topic_prefix}"


class AclBinding(models.Model):
    """One ACL binding: desired (managed, with a team or an org admin's) or found on the cluster (unmanaged)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="acl_bindings")
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.PROTECT, related_name="acl_bindings"
    )
    grant = models.ForeignKey(
        AccessGrant, null=True, blank=True, on_delete=models.CASCADE, related_name="bindings"
    )
    managed = models.BooleanField(default=True)
    resource_type = models.CharField(max_length=20, choices=AclResourceType.choices)
    resource_name = models.CharField(max_length=255)
    pattern_type = models.CharField(max_length=10, choices=PatternType.choices)
    principal = models.CharField(max_length=255)
    host = models.CharField(max_length=255, default="*")
    operation = models.CharField(max_length=20, choices=AclOperation.choices)
    permission = models.CharField(max_length=10, choices=Permission.choices)
    exists_on_cluster = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster_id", "resource_type", "resource_name", "principal", "operation"]

    def __str__(self) -> str:
        return (
            f"{self.permission} {self.principal} {self.operation} {self.resource_type}:{self.resource_name}"
        )

    @property
    def acl(self) -> Acl:
        return Acl(
            self.resource_type,
            self.resource_name,
            self.pattern_type,
            self.principal,
            self.host,
            self.operation,
            self.permission,
        )

    @staticmethod
    def fields_of(acl: Acl) -> dict[str, str]:
        return {
            "resource_type": acl.resource_type,
            "resource_name": acl.resource_name,
            "pattern_type": acl.pattern_type,
            "principal": acl.principal,
            "host": acl.host,
            "operation": acl.operation,
            "permission": acl.permission,
        }
