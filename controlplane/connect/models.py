from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q

from controlplane.clusters.models import Cluster
from controlplane.connect.choices import ConnectClusterStatus, ConnectorState, WorkerStatus
from controlplane.tenancy.models import Organization, Team


class ConnectCluster(models.Model):
    """Kafka Connect workers (distributed mode) an org admin attached to one of the organization's clusters.

    The workers log in to the cluster as their own Kafka user (`principal_name`, SCRAM), whose password is
    Fernet-encrypted here and written to the workers' 0600 configs; the ACLs it holds are its internal topics
    and group, and the topic and group prefixes of the teams whose connectors run on it."""

    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="connect_clusters")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="connect_clusters")
    name = models.CharField(max_length=63)
    worker_count = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(
        max_length=20, choices=ConnectClusterStatus.choices, default=ConnectClusterStatus.PROVISIONING
    )
    status_reason = models.TextField(blank=True)
    # The workers' group id; their config, offset and status topics are named after it.
    group_id = models.CharField(max_length=200)
    principal_name = models.CharField(max_length=200)
    password_encrypted = models.TextField(blank=True)
    # Connector classes teams may use here (empty: choices.DEFAULT_ALLOWED_PLUGINS).
    allowed_plugins = models.JSONField(default=list, blank=True)
    # Guardrail: the tasks (sum of tasks.max) one team's connectors may ask for on this Connect cluster.
    # (Every integer field states its bound: otherwise the OpenAPI document would differ between databases.)
    max_tasks_per_team = models.PositiveIntegerField(default=8, validators=[MaxValueValidator(1000)])
    # The only directory whose files connectors may read or write (FileStream's `file`, a database's TLS
    # files...); empty: no connector may name a local file at all.
    file_directory = models.CharField(max_length=1000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["organization_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "name"],
                condition=~Q(status="deleted"),
                name="unique_live_connect_cluster_name_per_org",
            )
        ]

    def __str__(self) -> str:
        return self.name


class ConnectWorker(models.Model):
    connect_cluster = models.ForeignKey(ConnectCluster, on_delete=models.CASCADE, related_name="workers")
    index = models.PositiveSmallIntegerField(validators=[MaxValueValidator(2)])
    rest_port = models.PositiveIntegerField()
    directory = models.CharField(max_length=1000)
    pid = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=WorkerStatus.choices, default=WorkerStatus.STARTING)
    restart_count = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(2**31 - 1)])

    class Meta:
        ordering = ["connect_cluster_id", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["connect_cluster", "index"], name="unique_worker_per_connect_cluster"
            )
        ]

    def __str__(self) -> str:
        return f"{self.connect_cluster.name}/{self.index}"


class Connector(models.Model):
    """A team's connector: its config as the team gave it, minus secrets (which only the 0600 file under the
    Connect cluster's secrets directory holds; the config references them through the config provider)."""

    connect_cluster = models.ForeignKey(ConnectCluster, on_delete=models.PROTECT, related_name="connectors")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="connectors")
    name = models.CharField(max_length=200)
    connector_class = models.CharField(max_length=300)
    config = models.JSONField(default=dict, blank=True)
    secret_keys = models.JSONField(default=list, blank=True)
    tasks_max = models.PositiveIntegerField(default=1, validators=[MaxValueValidator(1000)])
    desired_state = models.CharField(
        max_length=20, choices=ConnectorState.choices, default=ConnectorState.RUNNING
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["connect_cluster_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["connect_cluster", "name"], name="unique_connector_per_connect_cluster"
            )
        ]

    def __str__(self) -> str:
        return self.name


class ConnectorSourceLag(models.Model):
    """Where a change-data-capture connector stands against its database, as the last lag sampling run saw it
    (controlplane/connect/lag.py): the database's current WAL position, the replication slot's confirmed
    flush position, and the position of the last change the connector committed to its topics (Connect's
    source offset). Positions are PostgreSQL LSNs as text (`0/16B3748`); lags are WAL bytes."""

    connector = models.OneToOneField(
        Connector, primary_key=True, on_delete=models.CASCADE, related_name="source_lag"
    )
    slot_name = models.CharField(max_length=200, blank=True)
    current_lsn = models.CharField(max_length=40, blank=True)
    confirmed_flush_lsn = models.CharField(max_length=40, blank=True)
    committed_lsn = models.CharField(max_length=40, blank=True)
    # WAL bytes the database wrote that the connector's topics do not hold yet (null: unknown).
    lag_bytes = models.BigIntegerField(null=True, blank=True, validators=[MaxValueValidator(2**63 - 1)])
    # WAL bytes the slot keeps on the database's disk for the connector.
    slot_retained_bytes = models.BigIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(2**63 - 1)]
    )
    # Records the connector's topics hold (the sum of their partitions' end offsets).
    topic_records = models.BigIntegerField(null=True, blank=True, validators=[MaxValueValidator(2**63 - 1)])
    error = models.TextField(blank=True)
    observed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.connector_id}: {self.lag_bytes}"
