from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from controlplane.alerts.models import Alert
from controlplane.clusters.models import Cluster
from controlplane.connect.models import ConnectCluster
from controlplane.replication.choices import ReplicationPolicy
from controlplane.replication.models import ReplicationFlow, ReplicationLagSample
from controlplane.tenancy.models import Team


class ReplicationFlowSerializer(serializers.ModelSerializer):
    """The flow's Kafka users are named; their passwords are never shown."""

    class Meta:
        model = ReplicationFlow
        fields = [
            "id",
            "team",
            "name",
            "source_cluster",
            "target_cluster",
            "connect_cluster",
            "source_alias",
            "topics_pattern",
            "groups_pattern",
            "replication_policy",
            "sync_topic_configs",
            "sync_topic_acls",
            "sync_group_offsets",
            "checkpoint_interval_seconds",
            "offset_lag_max",
            "lag_alert_records",
            "state",
            "state_reason",
            "source_principal",
            "target_principal",
            "created_at",
            "updated_at",
        ]


class ConnectorTaskStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.CharField()
    trace = serializers.CharField()


class ConnectorStateSerializer(serializers.Serializer):
    state = serializers.CharField()
    trace = serializers.CharField(required=False)
    error = serializers.CharField(required=False)
    tasks = ConnectorTaskStateSerializer(many=True)


class FlowConnectorsSerializer(serializers.Serializer):
    source = ConnectorStateSerializer(required=False)
    checkpoint = ConnectorStateSerializer(required=False)
    heartbeat = ConnectorStateSerializer(required=False)


class FlowAlertSerializer(serializers.ModelSerializer):
    rule_name = serializers.CharField(source="rule.name")

    class Meta:
        model = Alert
        fields = [
            "id", "rule", "rule_name", "state", "severity", "value", "reason", "pending_since", "fired_at",
            "resolved_at",
        ]  # fmt: skip


class LagSampleSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReplicationLagSample
        fields = ["observed_at", "lag_records", "max_partition_lag_records", "error"]


class ReplicationFlowDetailSerializer(ReplicationFlowSerializer):
    """With Connect's state of the connectors, the flow's lag alerts and its sampled lag (the last hour at
    most, oldest first)."""

    connectors = serializers.SerializerMethodField()
    alert_state = serializers.SerializerMethodField()
    alerts = serializers.SerializerMethodField()
    lag_history = serializers.SerializerMethodField()

    class Meta(ReplicationFlowSerializer.Meta):
        fields = [
            *ReplicationFlowSerializer.Meta.fields,
            "connectors",
            "alert_state",
            "alerts",
            "lag_history",
        ]

    @extend_schema_field(FlowConnectorsSerializer)
    def get_connectors(self, flow: ReplicationFlow) -> dict:
        return self.context.get("connectors", {})

    @extend_schema_field(serializers.ChoiceField(choices=["firing", "pending", "ok"]))
    def get_alert_state(self, flow: ReplicationFlow) -> str:
        return self.context["alerts"][0]

    @extend_schema_field(FlowAlertSerializer(many=True))
    def get_alerts(self, flow: ReplicationFlow) -> list:
        return FlowAlertSerializer(self.context["alerts"][1], many=True).data

    @extend_schema_field(LagSampleSerializer(many=True))
    def get_lag_history(self, flow: ReplicationFlow) -> list:
        return LagSampleSerializer(self.context["lag_history"], many=True).data


class ReplicationFlowUpdateInputSerializer(serializers.Serializer):
    lag_alert_records = serializers.IntegerField(min_value=0, max_value=2**31 - 1)


class ReplicationFlowCreateInputSerializer(serializers.Serializer):
    team = serializers.PrimaryKeyRelatedField(queryset=Team.objects.all())
    name = serializers.CharField(max_length=40)
    source_cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    target_cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    connect_cluster = serializers.PrimaryKeyRelatedField(queryset=ConnectCluster.objects.all())
    topics_pattern = serializers.CharField(max_length=500)
    groups_pattern = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    source_alias = serializers.CharField(max_length=40, required=False, allow_blank=True, default="")
    replication_policy = serializers.ChoiceField(
        choices=ReplicationPolicy.choices, default=ReplicationPolicy.DEFAULT
    )
    sync_topic_configs = serializers.BooleanField(default=True)
    sync_topic_acls = serializers.BooleanField(default=False)
    sync_group_offsets = serializers.BooleanField(default=True)
    checkpoint_interval_seconds = serializers.IntegerField(min_value=1, max_value=3600, default=60)
    offset_lag_max = serializers.IntegerField(min_value=0, max_value=1_000_000, default=100)
    lag_alert_records = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)


class PartitionLagSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    replica_topic = serializers.CharField()
    source_end_offset = serializers.IntegerField()
    replica_end_offset = serializers.IntegerField()
    lag_records = serializers.IntegerField()
    lag_ms = serializers.IntegerField()


class FailOverInputSerializer(serializers.Serializer):
    group = serializers.CharField(max_length=255)


class CommittedOffsetSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()


class FailOverSerializer(serializers.Serializer):
    group = serializers.CharField()
    offsets = CommittedOffsetSerializer(many=True)


class DeleteQuerySerializer(serializers.Serializer):
    # A query boolean is "true" or "false", nothing else (DRF's BooleanField would read "yes" and "1").
    delete_replica_topics = serializers.ChoiceField(choices=["true", "false"], default="false")
