from django.db import models

from controlplane.clusters.models import Cluster
from controlplane.groups.models import ConsumerGroup
from controlplane.lag.choices import RollupResolution
from controlplane.lag.observations import Health


class GroupLag(models.Model):
    """A group's health and lag as the latest sampling run saw them; one row per group."""

    group = models.OneToOneField(
        ConsumerGroup, primary_key=True, on_delete=models.CASCADE, related_name="lag"
    )
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="group_lags")
    status = models.CharField(max_length=20, choices=Health.choices, default=Health.OK)
    # Health rank (worst is highest), so the fleet view can sort by it in the database.
    severity = models.PositiveSmallIntegerField(default=0)
    reason = models.CharField(max_length=500, blank=True)
    lag_messages = models.BigIntegerField(default=0)
    lag_seconds = models.FloatField(null=True, blank=True)
    lag_seconds_is_lower_bound = models.BooleanField(default=False)
    time_to_catch_up_seconds = models.FloatField(null=True, blank=True)
    consume_rate = models.FloatField(null=True, blank=True)
    produce_rate = models.FloatField(null=True, blank=True)
    state = models.CharField(max_length=30, blank=True)
    member_count = models.PositiveIntegerField(default=0)
    # [{member_id, client_id, host, assignments: [{topic, partition}]}], refreshed every minute
    members = models.JSONField(default=list, blank=True)
    members_observed_at = models.DateTimeField(null=True, blank=True)
    # [PartitionObservation as a dict]
    partitions = models.JSONField(default=list, blank=True)
    observed_at = models.DateTimeField()

    class Meta:
        ordering = ["-severity", "-lag_messages", "group_id"]
        indexes = [models.Index(fields=["cluster", "-severity"], name="lag_grouplag_worst")]

    def __str__(self) -> str:
        return f"{self.group_id}: {self.status}"


class LagRollup(models.Model):
    """One group's lag over one minute or one hour: the worst total and, per partition, the worst values.

    One row per (group, bucket) with the partitions in JSON keeps a 24-hour chart at 1,440 rows whatever
    the partition count, and the table at groups x buckets rather than groups x partitions x buckets."""

    group = models.ForeignKey(ConsumerGroup, on_delete=models.CASCADE, related_name="lag_rollups")
    resolution = models.CharField(max_length=2, choices=RollupResolution.choices)
    bucket_start = models.DateTimeField()
    samples = models.PositiveIntegerField(default=0)
    lag_messages_max = models.BigIntegerField(default=0)
    lag_messages_avg = models.FloatField(default=0)
    lag_seconds_max = models.FloatField(null=True, blank=True)
    # {"topic/partition": [lag_messages_max, lag_seconds_max or null]}
    partitions = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["group_id", "resolution", "bucket_start"]
        constraints = [
            models.UniqueConstraint(
                fields=["group", "resolution", "bucket_start"], name="unique_lag_rollup_bucket"
            )
        ]
        indexes = [models.Index(fields=["resolution", "bucket_start"], name="lag_rollup_retention")]

    def __str__(self) -> str:
        return f"{self.group_id} {self.resolution} {self.bucket_start:%Y-%m-%d %H:%M}"
