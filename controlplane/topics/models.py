from django.db import models

from controlplane.clusters.models import Cluster
from controlplane.tenancy.models import Team


class Topic(models.Model):
    """A topic on a cluster: the desired spec a team asked for (managed) or what was found there
    (unmanaged, no team), with the last observed state cached so lists never wait on the cluster."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="topics")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.PROTECT, related_name="topics")
    name = models.CharField(max_length=249)
    managed = models.BooleanField(default=True)
    partitions = models.PositiveIntegerField()
    replication_factor = models.PositiveSmallIntegerField(default=1)
    # Desired config overrides by Kafka name; names not listed keep the cluster default.
    configs = models.JSONField(default=dict, blank=True)
    exists_on_cluster = models.BooleanField(default=False)
    observed_partitions = models.PositiveIntegerField(null=True, blank=True)
    observed_replication_factor = models.PositiveSmallIntegerField(null=True, blank=True)
    # Overrides the cluster reports for the topic (source DYNAMIC_TOPIC_CONFIG).
    observed_configs = models.JSONField(default=dict, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    message_count = models.BigIntegerField(default=0)
    # [{partition, leader, replicas, isr, start_offset, end_offset, size_bytes}]
    partition_details = models.JSONField(default=list, blank=True)
    observed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster_id", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="unique_topic_per_cluster")]

    def __str__(self) -> str:
        return self.name
