"""Input validators (…InputSerializer) and output shapes (…Serializer) of the clusters API.

Credentials are write-only: no output shape carries a password, encrypted or not.
"""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from controlplane.clusters.brokers import broker_health
from controlplane.clusters.capacity import partition_budget
from controlplane.clusters.choices import (
    DEFAULT_LOCAL_BROKERS,
    MAX_LOCAL_BROKERS,
    PROVISIONED_ENGINE_CHOICES,
    Engine,
    SaslMechanism,
    SecurityProtocol,
)
from controlplane.clusters.models import Broker, Cluster, Operation
from controlplane.core.api.config_fields import ConfigEntrySerializer
from controlplane.tenancy.api.fields import VisibleOrganizationField
from controlplane.tenancy.models import Organization

# Inputs


class ClusterCreateInputSerializer(serializers.Serializer):
    organization = VisibleOrganizationField(queryset=Organization.objects.all())
    name = serializers.RegexField(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", max_length=63)
    broker_count = serializers.IntegerField(
        min_value=1,
        max_value=MAX_LOCAL_BROKERS,
        default=DEFAULT_LOCAL_BROKERS,
        help_text="1: a single broker; 2 or more: replicated, the first three nodes also vote in the "
        "controller quorum (3 or more: topics default to 3 replicas, min.insync.replicas 2).",
    )
    broker_config = serializers.DictField(
        child=serializers.CharField(max_length=1000, allow_blank=True),
        default=dict,
        help_text='Kafka broker property overrides, e.g. {"num.partitions": "3"}.',
    )
    port = serializers.IntegerField(
        min_value=0, max_value=65535, default=0, help_text="The first broker's port; 0 picks free ports."
    )
    engine = serializers.ChoiceField(
        choices=PROVISIONED_ENGINE_CHOICES,
        default=Engine.STREAMHUB,
        help_text="What runs the nodes: streamhub (our broker) or apache-kafka (Apache Kafka's own JVMs; "
        "every node is KRaft, a single node votes alone in its controller quorum).",
    )
    engine_version = serializers.CharField(
        max_length=30,
        default="",
        allow_blank=True,
        help_text="apache-kafka only: one of the installed versions (GET /api/v1/clusters/engines/); empty "
        "for the pinned one.",
    )


class BrokerConfigChangeInputSerializer(serializers.Serializer):
    broker_config = serializers.DictField(
        child=serializers.CharField(max_length=1000, allow_blank=True),
        help_text="The cluster's new broker property overrides (all of them: omitted ones return to the "
        "defaults); every node is restarted with them, one at a time.",
    )


class EngineSerializer(serializers.Serializer):
    engine = serializers.CharField()
    label = serializers.CharField()
    versions = serializers.ListField(child=serializers.CharField(), help_text="Installed versions.")
    default_version = serializers.CharField(allow_blank=True)


class ClusterRegisterInputSerializer(serializers.Serializer):
    organization = VisibleOrganizationField(queryset=Organization.objects.all())
    name = serializers.RegexField(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", max_length=63)
    bootstrap_servers = serializers.CharField(max_length=1000, help_text="host:port pairs, comma separated.")
    security_protocol = serializers.ChoiceField(
        choices=SecurityProtocol.choices, default=SecurityProtocol.PLAINTEXT
    )
    sasl_mechanism = serializers.ChoiceField(choices=SaslMechanism.choices, default=SaslMechanism.NONE)
    username = serializers.CharField(max_length=200, default="", allow_blank=True)
    password = serializers.CharField(
        max_length=1000, default="", allow_blank=True, write_only=True, style={"input_type": "password"}
    )


class ClusterDeleteInputSerializer(serializers.Serializer):
    confirm_name = serializers.CharField(max_length=63, help_text="The cluster's name, repeated.")


class ClusterGuardrailsInputSerializer(serializers.Serializer):
    partition_replicas_per_broker = serializers.IntegerField(
        min_value=1,
        max_value=1_000_000,
        allow_null=True,
        help_text="Partition replicas each broker may carry; null: the default (4,000).",
    )


class PartitionBudgetSerializer(serializers.Serializer):
    per_broker = serializers.IntegerField()
    brokers = serializers.IntegerField()
    max_replicas = serializers.IntegerField()
    used_replicas = serializers.IntegerField()


class BrokerRemoveInputSerializer(serializers.Serializer):
    confirm_node_id = serializers.IntegerField(help_text="The broker's node id, repeated.")


class ReassignmentInputSerializer(serializers.Serializer):
    topic = serializers.CharField(max_length=249)
    partitions = serializers.ListField(
        child=serializers.IntegerField(min_value=0),
        required=False,
        allow_empty=False,
        help_text="Partitions to move; all of the topic's when omitted.",
    )
    replicas = serializers.ListField(
        child=serializers.IntegerField(min_value=0),
        required=False,
        allow_empty=False,
        help_text="The target replica list (the first is the preferred leader).",
    )
    onto_broker = serializers.IntegerField(
        min_value=0,
        required=False,
        help_text="Instead of `replicas`: move one replica of each partition onto this broker.",
    )

    def validate(self, attrs: dict) -> dict:
        if ("replicas" in attrs) == ("onto_broker" in attrs):
            raise serializers.ValidationError("Give either replicas or onto_broker.")
        return attrs


# Outputs


# Integer fields are declared rather than derived from the models: derived bounds differ between database
# backends, and the schema must not depend on the database that generated it.


class BrokerSerializer(serializers.ModelSerializer):
    node_id = serializers.IntegerField(read_only=True)
    port = serializers.IntegerField(read_only=True)
    controller_port = serializers.IntegerField(read_only=True)
    metrics_port = serializers.IntegerField(
        read_only=True, help_text="The node's Prometheus endpoint on 127.0.0.1 (0: none)."
    )
    pid = serializers.IntegerField(read_only=True, allow_null=True)
    restart_count = serializers.IntegerField(read_only=True)
    roles = serializers.SerializerMethodField()
    health = serializers.SerializerMethodField(
        help_text="From the last health check: up (listed in Metadata), not_listed (not registered or "
        "fenced), down (its process is not running)."
    )

    class Meta:
        model = Broker
        fields = [
            "node_id",
            "host",
            "port",
            "controller_port",
            "metrics_port",
            "rack",
            "roles",
            "status",
            "health",
            "pid",
            "restart_count",
            "last_seen",
        ]

    def get_roles(self, broker: Broker) -> list[str]:
        return ["broker", "controller"] if broker.is_controller else ["broker"]

    @extend_schema_field(serializers.CharField())
    def get_health(self, broker: Broker) -> str:
        return broker_health(broker.cluster, broker)


class OperationSerializer(serializers.ModelSerializer):
    """A cluster operation (provisioning, brokers) or a team's change to a cluster whose outcome is being
    confirmed (`team`, `resource_type`, `resource_name`): `succeeded`/`failed` only after the control
    plane looked at the cluster; `observed` is what it saw."""

    step = serializers.IntegerField(source="current_step", read_only=True)
    step_count = serializers.SerializerMethodField()
    step_name = serializers.CharField(source="current_step_name", read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True)

    class Meta:
        model = Operation
        fields = [
            "id",
            "cluster",
            "cluster_name",
            "kind",
            "state",
            "steps",
            "step",
            "step_count",
            "step_name",
            "log",
            "error",
            "requested_by",
            "team",
            "resource_type",
            "resource_name",
            "request_id",
            "observed",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_step_count(self, operation: Operation) -> int:
        return len(operation.steps)


class ClusterSerializer(serializers.ModelSerializer):
    broker_count = serializers.IntegerField(read_only=True)
    requested_port = serializers.IntegerField(read_only=True)
    health = serializers.JSONField(
        read_only=True,
        help_text="The last health check: reachable, cluster_id, controller_id, brokers_up, brokers_expected, "
        "broker_ids (listed in Metadata), dead_broker_ids (local processes not running), topic_count, "
        "partition_count, offline_partitions, under_replicated_partitions, error. A running cluster with a "
        "broker down or missing, or any offline or under-replicated partition, is degraded.",
    )
    has_admin_credentials = serializers.SerializerMethodField()
    partition_budget = serializers.SerializerMethodField(
        help_text="Guardrail: partition replicas the cluster may carry (per broker times brokers) and in use."
    )

    class Meta:
        model = Cluster
        fields = [
            "id",
            "organization",
            "name",
            "provider",
            "engine",
            "engine_version",
            "engine_evidence",
            "broker_count",
            "broker_config",
            "requested_port",
            "bootstrap_servers",
            "security_protocol",
            "sasl_mechanism",
            "admin_username",
            "has_admin_credentials",
            "status",
            "status_reason",
            "health",
            "health_checked_at",
            "partition_replicas_per_broker",
            "partition_budget",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = {
            "partition_replicas_per_broker": {"read_only": True, "min_value": 1, "max_value": 1_000_000}
        }

    def get_has_admin_credentials(self, cluster: Cluster) -> bool:
        return bool(cluster.admin_password_encrypted)

    @extend_schema_field(PartitionBudgetSerializer)
    def get_partition_budget(self, cluster: Cluster) -> dict[str, int]:
        return partition_budget(cluster).as_dict()


class BrokerWithConfigsSerializer(BrokerSerializer):
    configs = serializers.SerializerMethodField()

    class Meta(BrokerSerializer.Meta):
        fields = [*BrokerSerializer.Meta.fields, "configs"]

    @extend_schema_field(serializers.DictField(child=ConfigEntrySerializer(), allow_null=True))
    def get_configs(self, broker: Broker) -> dict | None:
        return self.context.get("broker_configs", {}).get(broker.node_id)


class ClusterDetailSerializer(ClusterSerializer):
    brokers = BrokerWithConfigsSerializer(many=True, read_only=True)
    configs_error = serializers.SerializerMethodField(
        help_text="Why broker configs could not be read, if so."
    )

    class Meta(ClusterSerializer.Meta):
        fields = [*ClusterSerializer.Meta.fields, "brokers", "configs_error"]

    def get_configs_error(self, cluster: Cluster) -> str:
        return self.context.get("configs_error", "")


class AcceptedOperationSerializer(serializers.Serializer):
    """The answer to a long operation (202): the operation, where to follow it, and the cluster."""

    operation = OperationSerializer()
    operation_url = serializers.SerializerMethodField()
    cluster = ClusterSerializer(source="operation.cluster")

    def get_operation_url(self, accepted: dict) -> str:
        return reverse(
            "operation-detail", args=[accepted["operation"].id], request=self.context.get("request")
        )


class ThroughputQuerySerializer(serializers.Serializer):
    since = serializers.DateTimeField(required=False, help_text="default: one hour before `until`")
    until = serializers.DateTimeField(required=False, help_text="default: now")

    def validate(self, attrs: dict) -> dict:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError({"since": "must be before until"})
        return attrs


class TopicThroughputSerializer(serializers.Serializer):
    topic = serializers.CharField()
    messages_per_second = serializers.ListField(child=serializers.FloatField())


class ThroughputSerializer(serializers.Serializer):
    """Messages per second between consecutive lag-sampler runs (raw history: the last hour at most)."""

    cluster = serializers.IntegerField()
    times = serializers.ListField(child=serializers.DateTimeField(), help_text="end of each interval")
    messages_per_second = serializers.ListField(child=serializers.FloatField())
    by_topic = TopicThroughputSerializer(many=True, help_text="busiest topic first")


class ReplicaProgressSerializer(serializers.Serializer):
    node_id = serializers.IntegerField()
    bytes = serializers.IntegerField()


class PartitionReassignmentSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    replicas = serializers.ListField(child=serializers.IntegerField(), help_text="the full set while moving")
    target = serializers.ListField(child=serializers.IntegerField())
    adding = serializers.ListField(child=serializers.IntegerField())
    removing = serializers.ListField(child=serializers.IntegerField())
    leader = serializers.IntegerField()
    leader_bytes = serializers.IntegerField()
    adding_bytes = ReplicaProgressSerializer(many=True)
    percent = serializers.FloatField(help_text="adding replicas' bytes against the leader's")


class ReassignmentsSerializer(serializers.Serializer):
    """The cluster's ongoing partition reassignments; an empty list when nothing moves."""

    partitions = PartitionReassignmentSerializer(many=True)
    percent = serializers.FloatField(help_text="over every adding replica; 100 when nothing moves")


class ReassignmentTargetSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    replicas = serializers.ListField(child=serializers.IntegerField())


class ReassignmentStartedSerializer(serializers.Serializer):
    requested = ReassignmentTargetSerializer(many=True)


class HostedReplicaSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    leader = serializers.IntegerField(help_text="the partition's leader; -1 when it has none")
    is_leader = serializers.BooleanField()
    replicas = serializers.ListField(child=serializers.IntegerField())
    isr = serializers.ListField(child=serializers.IntegerField())
    in_sync = serializers.BooleanField(help_text="this broker's replica is in the ISR")
    under_replicated = serializers.BooleanField()
    size_bytes = serializers.IntegerField(allow_null=True, help_text="this replica's bytes on this broker")


class LogDirSerializer(serializers.Serializer):
    path = serializers.CharField()
    error = serializers.CharField(allow_null=True, help_text="Kafka's error for a directory it cannot use")
    total_bytes = serializers.IntegerField(allow_null=True, help_text="the volume's size, if the broker says")
    usable_bytes = serializers.IntegerField(
        allow_null=True, help_text="free on the volume, if the broker says"
    )
    size_bytes = serializers.IntegerField(help_text="bytes of the replicas in the directory")
    replica_count = serializers.IntegerField()


class NodeMetricsSerializer(serializers.Serializer):
    bytes_in_total = serializers.FloatField(help_text="record bytes appended since the node started")
    bytes_out_total = serializers.FloatField(help_text="record bytes fetched since the node started")
    messages_in_total = serializers.FloatField()
    requests_total = serializers.FloatField()
    bytes_in_per_second = serializers.FloatField(
        allow_null=True, help_text="since the previous read of this page (null on the first)"
    )
    bytes_out_per_second = serializers.FloatField(allow_null=True)
    messages_in_per_second = serializers.FloatField(allow_null=True)
    requests_per_second = serializers.FloatField(allow_null=True)
    under_replicated_partitions = serializers.IntegerField(
        allow_null=True, help_text="the node's own count (Apache Kafka only; null for our broker)"
    )


class BrokerDetailSerializer(serializers.Serializer):
    node_id = serializers.IntegerField()
    host = serializers.CharField()
    port = serializers.IntegerField()
    rack = serializers.CharField(allow_blank=True)
    listed = serializers.BooleanField(help_text="the broker is in the cluster's Metadata")
    health = serializers.CharField()
    is_active_controller = serializers.BooleanField()
    is_controller_voter = serializers.BooleanField()
    replica_count = serializers.IntegerField()
    leader_count = serializers.IntegerField()
    out_of_sync_count = serializers.IntegerField(help_text="hosted replicas not in their partition's ISR")
    under_replicated_count = serializers.IntegerField(
        help_text="hosted partitions with fewer ISR than replicas"
    )
    messages_in_per_second = serializers.FloatField(
        allow_null=True,
        help_text="appended to the partitions it leads, from the lag sampler's log-end offsets (last 5 min)",
    )
    log_dirs = LogDirSerializer(many=True)
    log_dirs_error = serializers.CharField(allow_blank=True)
    replicas = HostedReplicaSerializer(many=True)
    metrics = NodeMetricsSerializer(
        allow_null=True, help_text="From the node's own Prometheus endpoint (local clusters of both engines)"
    )
    metrics_error = serializers.CharField(allow_blank=True, help_text="Why there are no metrics, if so.")


class BrokerConfigsInputSerializer(serializers.Serializer):
    configs = serializers.DictField(
        child=serializers.CharField(max_length=1000, allow_null=True),
        allow_empty=False,
        help_text="Dynamic broker config names to set; null returns one to its static or default value.",
    )


class BrokerConfigsSerializer(serializers.Serializer):
    configs = serializers.DictField(child=ConfigEntrySerializer(), help_text="as read back from the broker")


class TopicPartitionSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()


class OpenTransactionSerializer(serializers.Serializer):
    transactional_id = serializers.CharField()
    state = serializers.CharField(help_text="Kafka's name: Empty, Ongoing, PrepareCommit, CompleteAbort, …")
    producer_id = serializers.IntegerField()
    producer_epoch = serializers.IntegerField()
    timeout_ms = serializers.IntegerField()
    started_at = serializers.DateTimeField(allow_null=True, help_text="null while no transaction is open")
    partitions = serializers.SerializerMethodField()
    coordinator_id = serializers.IntegerField(help_text="the broker whose transaction coordinator owns it")
    team = serializers.CharField(allow_null=True, help_text="the team whose transactional-id prefix it has")

    @extend_schema_field(TopicPartitionSerializer(many=True))
    def get_partitions(self, transaction: Any) -> list[dict[str, Any]]:
        return [{"topic": topic, "partition": partition} for topic, partition in transaction.partitions]


class TransactionsQuerySerializer(serializers.Serializer):
    state = serializers.CharField(required=False, max_length=32, help_text="only transactions in this state")


class HangingTransactionSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    producer_id = serializers.IntegerField()
    producer_epoch = serializers.IntegerField()
    coordinator_epoch = serializers.IntegerField()
    open_transaction_offset = serializers.IntegerField(help_text="the first offset of the open transaction")
    last_timestamp_ms = serializers.IntegerField(help_text="the producer's last write, epoch milliseconds")


class HangingTransactionsQuerySerializer(serializers.Serializer):
    topic = serializers.CharField(required=False, max_length=249, help_text="look at this topic only")


class AbortTransactionInputSerializer(serializers.Serializer):
    topic = serializers.CharField(max_length=249)
    partition = serializers.IntegerField(min_value=0)
    producer_id = serializers.IntegerField(min_value=0)
