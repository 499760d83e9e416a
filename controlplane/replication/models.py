from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from controlplane.clusters.models import Cluster
from controlplane.connect.models import ConnectCluster
from controlplane.replication.choices import FlowState, ReplicationPolicy
from controlplane.tenancy.models import Team


class ReplicationFlow(models.Model):
    """A team's MirrorMaker 2 flow: its topics (and groups) matching a pattern, copied from one cluster of the
    organization to another by three connectors on a Connect cluster attached to the target.

    The flow logs in to the source as its own Kafka user (read-only on the team's topics and groups) and to
    the target as another (the replica topics, MM2's internal topics, the team's groups for offset sync);
    both passwords are Fernet-encrypted here and otherwise only in the Connect cluster's 0600 secrets file."""

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="replication_flows")
    name = models.CharField(max_length=40)
    source_cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="+")
    target_cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="+")
    connect_cluster = models.ForeignKey(
        ConnectCluster, on_delete=models.PROTECT, related_name="replication_flows"
    )
    # MM2's alias of the source: the replica topics' prefix under the default policy.
    source_alias = models.CharField(max_length=40)
    topics_pattern = models.CharField(max_length=500)
    groups_pattern = models.CharField(max_length=500, blank=True)
    replication_policy = models.CharField(
        max_length=20, choices=ReplicationPolicy.choices, default=ReplicationPolicy.DEFAULT
    )
    sync_topic_configs = models.BooleanField(default=True)
    sync_topic_acls = models.BooleanField(default=False)
    sync_group_offsets = models.BooleanField(default=True)
    checkpoint_interval_seconds = models.PositiveIntegerField(
        default=60, validators=[MinValueValidator(1), MaxValueValidator(3600)]
    )
    # MM2 writes an offset sync at least every `offset_lag_max` records: translated group offsets are at most
    # this far behind a group's own.
    offset_lag_max = models.PositiveIntegerField(default=100, validators=[MaxValueValidator(1_000_000)])
    # A `replication_lag_records` alert rule covering the flow fires when a partition's replica stays more than
    # this many records behind (0: the rule's own threshold applies, and a rule threshold of 0 skips the flow).
    lag_alert_records = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(2**31 - 1)])
    state = models.CharField(max_length=20, choices=FlowState.choices, default=FlowState.RUNNING)
    state_reason = models.TextField(blank=True)
    source_principal = models.CharField(max_length=200, blank=True)
    source_password_encrypted = models.TextField(blank=True)
    target_principal = models.CharField(max_length=200, blank=True)
    target_password_encrypted = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["team_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"],
                condition=~Q(state="deleted"),
                name="unique_live_flow_name_per_team",
            ),
            models.UniqueConstraint(
                fields=["target_cluster", "source_alias"],
                condition=~Q(state="deleted"),
                name="unique_live_source_alias_per_target",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ReplicationLagSample(models.Model):
    """The flow's replication lag as one lag sampling run of its target cluster saw it
    (controlplane/replication/alerting.py); kept for LAG_RAW_RETENTION_SECONDS, like groups' raw lag history."""

    flow = models.ForeignKey(ReplicationFlow, on_delete=models.CASCADE, related_name="lag_samples")
    observed_at = models.DateTimeField()
    # Records the replicas lack over every partition, and on the worst partition (null: unknown in this run).
    lag_records = models.BigIntegerField(null=True, blank=True, validators=[MaxValueValidator(2**63 - 1)])
    max_partition_lag_records = models.BigIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(2**63 - 1)]
    )
    # [{"topic", "partition", "lag_records"}] of this run.
    partitions = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["flow_id", "-observed_at"]
        indexes = [models.Index(fields=["flow", "observed_at"], name="replication_lag_flow_time")]

    def __str__(self) -> str:
        return f"{self.flow_id} @ {self.observed_at}: {self.lag_records}"
