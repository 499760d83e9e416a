from django.db import models
from django.db.models import Q

from controlplane.clusters.choices import (
    BrokerStatus,
    ClusterStatus,
    Engine,
    OperationKind,
    OperationState,
    Provider,
    SaslMechanism,
    SecurityProtocol,
)
from controlplane.tenancy.models import Organization


class Cluster(models.Model):
    """Desired spec (provider, size, config overrides, security) and last observed status of a cluster."""

    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="clusters")
    name = models.CharField(max_length=63)
    provider = models.CharField(max_length=20, choices=Provider.choices)
    # What runs the cluster's nodes, and its version (Apache Kafka's release; empty for our broker). A
    # registered cluster's engine is what the control plane detected when it was registered.
    engine = models.CharField(max_length=20, choices=Engine.choices, default=Engine.STREAMHUB)
    engine_version = models.CharField(max_length=30, blank=True)
    # How a registered cluster's engine was detected (which configs or feature levels gave it away).
    engine_evidence = models.CharField(max_length=500, blank=True)
    broker_count = models.PositiveSmallIntegerField(default=1)
    # Kafka broker property overrides (validated by broker_configs.validate_broker_config).
    broker_config = models.JSONField(default=dict, blank=True)
    # The first broker's listener port for local clusters; 0 lets the provisioner pick free ports.
    requested_port = models.PositiveIntegerField(default=0)
    bootstrap_servers = models.CharField(max_length=1000, blank=True)
    security_protocol = models.CharField(
        max_length=20, choices=SecurityProtocol.choices, default=SecurityProtocol.PLAINTEXT
    )
    sasl_mechanism = models.CharField(max_length=20, choices=SaslMechanism.choices, blank=True)
    # The control plane's own credential on the cluster; the password is Fernet-encrypted (encryption.py).
    admin_username = models.CharField(max_length=200, blank=True)
    admin_password_encrypted = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=ClusterStatus.choices, default=ClusterStatus.REQUESTED)
    status_reason = models.TextField(blank=True)
    # Last observation through the Kafka gateway: brokers up, controller, offline partitions.
    health = models.JSONField(default=dict, blank=True)
    health_checked_at = models.DateTimeField(null=True, blank=True)
    # Guardrail: partition replicas each broker may carry (empty: the default, see topics/guardrails.py).
    partition_replicas_per_broker = models.PositiveIntegerField(null=True, blank=True)
    # A local cluster's controller quorum is dynamic (KIP-853: its voters can be replaced); clusters
    # provisioned before it was, keep their fixed `controller.quorum.voters`.
    dynamic_quorum = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["organization_id", "name"]
        constraints = [
            # A deleted cluster keeps its row (operations and audit refer to it) but frees its name.
            models.UniqueConstraint(
                fields=["organization", "name"],
                condition=~Q(status="deleted"),
                name="unique_live_cluster_name_per_org",
            )
        ]

    def __str__(self) -> str:
        return self.name


class Broker(models.Model):
    """One broker node of a cluster: where it listens and, for local clusters, its process."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="brokers")
    node_id = models.PositiveIntegerField()
    host = models.CharField(max_length=255)
    port = models.PositiveIntegerField()
    # The controller listener's port of a local node that votes in the controller quorum; 0 otherwise.
    controller_port = models.PositiveIntegerField(default=0)
    # The Prometheus endpoint of a local node on 127.0.0.1 (our broker's metrics.port, Apache Kafka's JMX
    # exporter); 0 for registered clusters' brokers and nodes provisioned before it existed.
    metrics_port = models.PositiveIntegerField(default=0)
    rack = models.CharField(max_length=100, blank=True)
    data_dir = models.CharField(max_length=1000, blank=True)
    pid = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=BrokerStatus.choices, default=BrokerStatus.PENDING)
    restart_count = models.PositiveIntegerField(default=0)
    last_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster_id", "node_id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "node_id"], name="unique_node_per_cluster")]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.node_id}"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def is_controller(self) -> bool:
        return self.controller_port > 0


class Operation(models.Model):
    """A long-running change to a cluster and its progress: step n of m, timestamped log lines, error."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="operations")
    kind = models.CharField(max_length=30, choices=OperationKind.choices)
    state = models.CharField(max_length=20, choices=OperationState.choices, default=OperationState.PENDING)
    steps = models.JSONField(default=list)
    # 1-based number of the step running (or last run); 0 before the first starts.
    current_step = models.PositiveSmallIntegerField(default=0)
    log = models.JSONField(default=list)
    error = models.TextField(blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    requested_by = models.CharField(max_length=200, blank=True)
    # Changes a team asked for (topics, ...): whose, on what, by which request, and who asked, as the audit
    # log records an actor, so the outcome is recorded for them even when it is settled later.
    team = models.ForeignKey(
        "tenancy.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="operations"
    )
    resource_type = models.CharField(max_length=50, blank=True)
    resource_name = models.CharField(max_length=255, blank=True)
    request_id = models.CharField(max_length=64, blank=True, db_index=True)
    actor = models.JSONField(default=dict, blank=True)
    # What the control plane saw on the cluster when it settled the outcome.
    observed = models.JSONField(default=dict, blank=True)
    # Until then an outcome the cluster does not show yet may still come; after it, it is a failure.
    settle_by = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["cluster", "resource_type", "resource_name"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.cluster_id} ({self.state})"

    @property
    def current_step_name(self) -> str:
        return self.steps[self.current_step - 1] if 0 < self.current_step <= len(self.steps) else ""
