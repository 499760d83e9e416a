"""Input validators (…InputSerializer) and output shapes (…Serializer) of ACL bindings and grants."""

from rest_framework import serializers

from controlplane.accounts.models import ServiceAccount
from controlplane.acls.choices import AclOperation, AclResourceType, GrantTemplate, PatternType, Permission
from controlplane.acls.models import AccessGrant, AclBinding
from controlplane.clusters.api.fields import VisibleClusterField
from controlplane.tenancy.api.fields import VisiblePrimaryKeyField
from controlplane.tenancy.models import Team

BINDING_FIELDS = [
    "resource_type",
    "resource_name",
    "pattern_type",
    "principal",
    "host",
    "operation",
    "permission",
]


class AclBindingSerializer(serializers.ModelSerializer):
    class Meta:
        model = AclBinding
        fields = [
            "id",
            "cluster",
            "team",
            "grant",
            "managed",
            *BINDING_FIELDS,
            "exists_on_cluster",
            "created_at",
        ]


class AccessGrantSerializer(serializers.ModelSerializer):
    bindings = AclBindingSerializer(many=True, read_only=True)

    class Meta:
        model = AccessGrant
        fields = [
            "id",
            "cluster",
            "team",
            "service_account",
            "template",
            "topic_prefix",
            "group_prefix",
            "transactional_id_prefix",
            "bindings",
            "created_at",
        ]


class AclBindingCreateInputSerializer(serializers.Serializer):
    cluster = VisibleClusterField()
    team = VisiblePrimaryKeyField(
        queryset=Team.objects.all(),
        required=False,
        allow_null=True,
        default=None,
        help_text="The owning team; org admins may leave it empty for an organization-wide binding.",
    )
    resource_type = serializers.ChoiceField(choices=AclResourceType.choices)
    resource_name = serializers.CharField(max_length=255)
    pattern_type = serializers.ChoiceField(choices=PatternType.choices)
    principal = serializers.RegexField(r"^User:.+$", max_length=255)
    host = serializers.CharField(max_length=255, default="*")
    operation = serializers.ChoiceField(choices=AclOperation.choices)
    permission = serializers.ChoiceField(choices=Permission.choices, default=Permission.ALLOW)


class AccessGrantCreateInputSerializer(serializers.Serializer):
    cluster = VisibleClusterField()
    service_account = VisiblePrimaryKeyField(queryset=ServiceAccount.objects.all(), team_path="team")
    template = serializers.ChoiceField(choices=GrantTemplate.choices)
    topic_prefix = serializers.CharField(max_length=249)
    group_prefix = serializers.CharField(max_length=249, required=False, default="", allow_blank=True)
    transactional_id_prefix = serializers.CharField(
        max_length=249, required=False, default="", allow_blank=True
    )


class AdoptBindingInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all(), allow_null=True)
