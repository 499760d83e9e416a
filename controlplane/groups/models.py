from django.db import models

from controlplane.clusters.models import Cluster
from controlplane.groups.choices import GroupType, ResetStrategy
from controlplane.tenancy.models import Team


class ConsumerGroup(models.Model):
    """A group as last observed on the cluster, with its lag; its team is the owner of its name's prefix."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="consumer_groups")
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="consumer_groups"
    )
    name = models.CharField(max_length=255)
    group_type = models.CharField(max_length=10, choices=GroupType.choices, default=GroupType.CLASSIC)
    state = models.CharField(max_length=30, blank=True)
    member_count = models.PositiveIntegerField(default=0)
    total_lag = models.BigIntegerField(default=0)
    # [{topic, partition, committed_offset, log_end_offset, lag}]; a share group's committed_offset is the
    # share-partition start offset and its lag the records not yet acknowledged (DescribeShareGroupOffsets).
    partition_lags = models.JSONField(default=list, blank=True)
    observed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster_id", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="unique_group_per_cluster")]

    def __str__(self) -> str:
        return self.name


class OffsetReset(models.Model):
    """An applied offset reset, with the offsets it replaced so it can be undone in one call."""

    group = models.ForeignKey(ConsumerGroup, on_delete=models.CASCADE, related_name="offset_resets")
    strategy = models.CharField(max_length=20, choices=ResetStrategy.choices)
    parameters = models.JSONField(default=dict, blank=True)
    # [{topic, partition, old_offset, new_offset}]; old_offset None: the group had no commit there.
    offsets = models.JSONField(default=list)
    requested_by = models.CharField(max_length=200, blank=True)
    applied_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-applied_at", "-id"]

    def __str__(self) -> str:
        return f"{self.strategy} reset of {self.group_id}"
