from rest_framework import serializers

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.api.fields import VisibleClusterField
from controlplane.credentials.choices import ScramMechanism
from controlplane.credentials.models import ScramCredential
from controlplane.tenancy.api.fields import VisiblePrimaryKeyField


class ScramCredentialSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="service_account.name", read_only=True)

    class Meta:
        model = ScramCredential
        fields = ["id", "service_account", "cluster", "mechanism", "username", "created_at", "rotated_at"]


class ScramCredentialWithPasswordSerializer(ScramCredentialSerializer):
    password = serializers.SerializerMethodField(help_text="Shown only this once.")

    class Meta(ScramCredentialSerializer.Meta):
        fields = [*ScramCredentialSerializer.Meta.fields, "password"]

    def get_password(self, credential: ScramCredential) -> str:
        return self.context["password"]


class ScramCredentialCreateInputSerializer(serializers.Serializer):
    service_account = VisiblePrimaryKeyField(queryset=ServiceAccount.objects.all(), team_path="team")
    cluster = VisibleClusterField()
    mechanism = serializers.ChoiceField(choices=ScramMechanism.choices, default=ScramMechanism.SCRAM_SHA_512)
