from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from controlplane.clusters.models import Cluster
from controlplane.connect.models import ConnectCluster, Connector, ConnectWorker
from controlplane.connect.services import MAX_WORKERS
from controlplane.tenancy.models import Team


class ConnectWorkerSerializer(serializers.ModelSerializer):
    class Meta:
        model = ConnectWorker
        fields = ["index", "status", "restart_count"]


class ConnectClusterSerializer(serializers.ModelSerializer):
    """The workers' REST addresses are not shown: only the control plane calls them."""

    workers = ConnectWorkerSerializer(many=True, read_only=True)

    class Meta:
        model = ConnectCluster
        fields = [
            "id",
            "organization",
            "cluster",
            "name",
            "worker_count",
            "status",
            "status_reason",
            "group_id",
            "principal_name",
            "allowed_plugins",
            "max_tasks_per_team",
            "file_directory",
            "workers",
            "created_at",
        ]
        # Bounds stated here, not left to the database's column range (SQLite's and PostgreSQL's differ, and the
        # published schema must not depend on which one generated it).
        extra_kwargs = {"worker_count": {"min_value": 1, "max_value": MAX_WORKERS}}


class ConnectClusterCreateInputSerializer(serializers.Serializer):
    cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    name = serializers.CharField(max_length=63)
    worker_count = serializers.IntegerField(min_value=1, max_value=MAX_WORKERS, default=1)
    allowed_plugins = serializers.ListField(child=serializers.CharField(max_length=300), required=False)
    max_tasks_per_team = serializers.IntegerField(min_value=1, max_value=1000, default=8)
    file_directory = serializers.CharField(
        max_length=1000,
        required=False,
        default="",
        help_text="An absolute directory: the only place whose files connectors may read or write.",
    )


class ConnectorSerializer(serializers.ModelSerializer):
    """The config as the team gave it; secrets appear only as the names of the keys they fill."""

    class Meta:
        model = Connector
        fields = [
            "id",
            "connect_cluster",
            "team",
            "name",
            "connector_class",
            "config",
            "secret_keys",
            "tasks_max",
            "desired_state",
            "created_at",
            "updated_at",
        ]


class ConnectorLagSerializer(serializers.Serializer):
    """The last lag sampling run's view: `consumer_group` for a sink (its group `connect-<name>`), `source`
    for a PostgreSQL CDC connector (WAL positions as LSNs, lags in WAL bytes), `none` before any."""

    kind = serializers.ChoiceField(choices=["none", "consumer_group", "source"])
    group_id = serializers.IntegerField(required=False)
    group = serializers.CharField(required=False)
    status = serializers.CharField(required=False)
    lag_messages = serializers.IntegerField(required=False)
    lag_seconds = serializers.FloatField(required=False, allow_null=True)
    slot_name = serializers.CharField(required=False)
    current_lsn = serializers.CharField(required=False)
    confirmed_flush_lsn = serializers.CharField(required=False)
    committed_lsn = serializers.CharField(required=False)
    lag_bytes = serializers.IntegerField(required=False, allow_null=True)
    slot_retained_bytes = serializers.IntegerField(required=False, allow_null=True)
    topic_records = serializers.IntegerField(required=False, allow_null=True)
    error = serializers.CharField(required=False)
    observed_at = serializers.DateTimeField(required=False)


class ConnectorDetailSerializer(ConnectorSerializer):
    status = serializers.SerializerMethodField()
    lag = serializers.SerializerMethodField()

    class Meta(ConnectorSerializer.Meta):
        fields = [*ConnectorSerializer.Meta.fields, "status", "lag"]

    def get_status(self, connector: Connector) -> dict:
        return self.context.get("status", {})

    @extend_schema_field(ConnectorLagSerializer)
    def get_lag(self, connector: Connector) -> dict:
        return ConnectorLagSerializer(self.context.get("lag", {"kind": "none"})).data


@extend_schema_field(
    {
        "type": "object",
        "description": "Connect's own connector config: `connector.class` and the plugin's settings, as strings.",
        "properties": {"connector.class": {"type": "string", "minLength": 1}},
        "required": ["connector.class"],
        "additionalProperties": {"type": "string"},
    }
)
class ConnectorConfigField(serializers.DictField):
    """A connector's config, which names its plugin (`connector.class`) as Connect requires."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(child=serializers.CharField(allow_blank=True, trim_whitespace=False), **kwargs)

    def to_internal_value(self, data: object) -> dict:
        config = super().to_internal_value(data)
        if not config.get("connector.class"):
            raise serializers.ValidationError("connector.class is required.")
        return config


class ConnectorCreateInputSerializer(serializers.Serializer):
    connect_cluster = serializers.PrimaryKeyRelatedField(queryset=ConnectCluster.objects.all())
    team = serializers.PrimaryKeyRelatedField(queryset=Team.objects.all())
    name = serializers.CharField(max_length=200)
    config = ConnectorConfigField()
    secrets = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False), required=False, write_only=True
    )
    validate_only = serializers.BooleanField(default=False)


class ConnectorUpdateInputSerializer(serializers.Serializer):
    config = serializers.DictField(child=serializers.CharField(allow_blank=True, trim_whitespace=False))
    secrets = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False), required=False, write_only=True
    )


class ConnectorRestartInputSerializer(serializers.Serializer):
    task = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)
    only_failed = serializers.BooleanField(default=False)


class ValidOnlySerializer(serializers.Serializer):
    valid = serializers.BooleanField()


class WorkerHealthSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    status = serializers.CharField()
    alive = serializers.BooleanField()
    serving = serializers.BooleanField()


class ConnectClusterHealthSerializer(serializers.Serializer):
    status = serializers.CharField()
    workers = WorkerHealthSerializer(many=True)
    connectors = serializers.IntegerField()


class ConnectorPluginSerializer(serializers.Serializer):
    type = serializers.CharField()
    version = serializers.CharField()
    allowed = serializers.BooleanField()
    # Connect's own key, a Python keyword: declared through the class namespace.
    locals()["class"] = serializers.CharField()
