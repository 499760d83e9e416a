"""Input validators (…InputSerializer) and output shapes (…Serializer) of client quotas."""

from rest_framework import serializers

from controlplane.clusters.api.fields import VisibleClusterField
from controlplane.quotas.choices import QuotaKey
from controlplane.quotas.models import ClientQuota


class QuotaEntitySerializer(serializers.Serializer):
    user = serializers.CharField(
        allow_null=True, required=False, max_length=255, help_text="null: the default user"
    )
    client_id = serializers.CharField(
        allow_null=True,
        required=False,
        max_length=255,
        source="client-id",
        help_text="null: the default client id",
    )


class ClientQuotaSerializer(serializers.ModelSerializer):
    entity = serializers.SerializerMethodField()

    class Meta:
        model = ClientQuota
        fields = [
            "id",
            "cluster",
            "team",
            "entity",
            "entity_key",
            "managed",
            "values",
            "exists_on_cluster",
            "observed_values",
            "observed_at",
            "created_at",
        ]

    def get_entity(self, quota: ClientQuota) -> dict:
        return {("client_id" if key == "client-id" else key): value for key, value in quota.entity.items()}


QUOTA_VALUES = serializers.DictField(
    child=serializers.FloatField(allow_null=True),
    help_text=f"Keys: {', '.join(QuotaKey.values)}; null removes a key.",
)


class ClientQuotaInputSerializer(serializers.Serializer):
    cluster = VisibleClusterField()
    entity = QuotaEntitySerializer()
    values = QUOTA_VALUES


class ClientQuotaUpdateInputSerializer(serializers.Serializer):
    values = QUOTA_VALUES
