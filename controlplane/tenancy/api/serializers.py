"""Input validators (…InputSerializer) and output shapes (…Serializer) of the tenancy API."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from controlplane.tenancy.api.fields import VisibleOrganizationField, VisiblePrimaryKeyField
from controlplane.tenancy.choices import PrefixResourceType, TeamRole
from controlplane.tenancy.guardrails import DEFAULT_LIMITS, LIMIT_FIELDS, effective_limits, team_limits
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team, TeamPolicy, TeamPrefix
from controlplane.tenancy.validators import (
    validate_naming_pattern,
    validate_prefix,
    validate_topic_config_names,
)


def _as_drf_error(check, *args) -> None:
    try:
        check(*args)
    except DjangoValidationError as error:
        raise serializers.ValidationError(error.messages) from error


class UsernameField(serializers.SlugRelatedField):
    def __init__(self, **kwargs) -> None:
        super().__init__(
            slug_field="username", queryset=get_user_model().objects.filter(is_active=True), **kwargs
        )


# Outputs


class OrganizationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Organization
        fields = ["id", "name", "slug", "created_at"]


class OrgMembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = OrgMembership
        fields = ["id", "organization", "username", "is_org_admin", "created_at"]


class TeamSerializer(serializers.ModelSerializer):
    class Meta:
        model = Team
        fields = ["id", "organization", "name", "slug", "description", "created_at"]


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "team", "username", "role", "created_at"]


class TeamPrefixSerializer(serializers.ModelSerializer):
    class Meta:
        model = TeamPrefix
        fields = ["id", "organization", "team", "resource_type", "prefix", "created_at"]


class EffectiveLimitsSerializer(serializers.Serializer):
    max_partitions_per_topic = serializers.IntegerField()
    max_total_partitions = serializers.IntegerField()
    max_replication_factor = serializers.IntegerField()
    max_retention_ms = serializers.IntegerField()
    min_segment_bytes = serializers.IntegerField()
    max_segment_bytes = serializers.IntegerField()
    min_segment_ms = serializers.IntegerField()
    admin_operations_per_minute = serializers.IntegerField()


class OrganizationGuardrailsSerializer(serializers.Serializer):
    organization = serializers.IntegerField(source="id")
    limits = serializers.SerializerMethodField(help_text="The organization's own limits for its teams.")
    effective_limits = serializers.SerializerMethodField(
        help_text="What a team without limits of its own gets: these, the defaults where they set none."
    )
    default_limits = serializers.SerializerMethodField()

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_limits(self, organization: Organization) -> dict[str, int]:
        return dict(organization.guardrails)

    @extend_schema_field(EffectiveLimitsSerializer)
    def get_effective_limits(self, organization: Organization) -> dict[str, int]:
        return effective_limits(None, organization.guardrails).as_dict()

    @extend_schema_field(EffectiveLimitsSerializer)
    def get_default_limits(self, organization: Organization) -> dict[str, int]:
        return DEFAULT_LIMITS.as_dict()


class TeamPolicySerializer(serializers.ModelSerializer):
    # Declared, not derived from the model: derived integer bounds differ between database backends,
    # and the schema must be the same whichever database generated it.
    max_partitions_per_topic = serializers.IntegerField(allow_null=True, read_only=True)
    max_retention_ms = serializers.IntegerField(allow_null=True, read_only=True)
    max_total_partitions = serializers.IntegerField(allow_null=True, read_only=True)
    max_replication_factor = serializers.IntegerField(allow_null=True, read_only=True)
    min_segment_bytes = serializers.IntegerField(allow_null=True, read_only=True)
    max_segment_bytes = serializers.IntegerField(allow_null=True, read_only=True)
    min_segment_ms = serializers.IntegerField(allow_null=True, read_only=True)
    admin_operations_per_minute = serializers.IntegerField(allow_null=True, read_only=True)
    allowed_topic_configs = serializers.ListField(
        child=serializers.CharField(), allow_null=True, read_only=True
    )
    effective_limits = serializers.SerializerMethodField(
        help_text="The limits in force: the policy's own values, the guardrail defaults where it sets none."
    )
    default_limits = serializers.SerializerMethodField(help_text="The guardrail defaults.")

    class Meta:
        model = TeamPolicy
        fields = [
            "id",
            "team",
            "naming_pattern",
            *LIMIT_FIELDS,
            "allowed_topic_configs",
            "effective_limits",
            "default_limits",
            "updated_at",
        ]

    @extend_schema_field(EffectiveLimitsSerializer)
    def get_effective_limits(self, policy: TeamPolicy) -> dict[str, int]:
        return team_limits(policy).as_dict()

    @extend_schema_field(EffectiveLimitsSerializer)
    def get_default_limits(self, policy: TeamPolicy) -> dict[str, int]:
        return DEFAULT_LIMITS.as_dict()


# Inputs


class OrganizationCreateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    slug = serializers.SlugField(max_length=100, required=False, default="", allow_blank=True)


class OrgMembershipCreateInputSerializer(serializers.Serializer):
    organization = VisibleOrganizationField(queryset=Organization.objects.all())
    username = UsernameField()
    is_org_admin = serializers.BooleanField(default=False)


class OrgMembershipUpdateInputSerializer(serializers.Serializer):
    is_org_admin = serializers.BooleanField()


class TeamCreateInputSerializer(serializers.Serializer):
    organization = VisibleOrganizationField(queryset=Organization.objects.all())
    name = serializers.CharField(max_length=100)
    slug = serializers.SlugField(max_length=100, required=False, default="", allow_blank=True)
    description = serializers.CharField(max_length=1000, required=False, default="", allow_blank=True)


class TeamUpdateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False)
    description = serializers.CharField(max_length=1000, required=False, allow_blank=True)


class MembershipCreateInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())
    username = UsernameField()
    role = serializers.ChoiceField(choices=TeamRole.choices)


class MembershipUpdateInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=TeamRole.choices)


class TeamPrefixCreateInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())
    resource_type = serializers.ChoiceField(choices=PrefixResourceType.choices)
    prefix = serializers.CharField(max_length=249, trim_whitespace=False)

    def validate(self, attrs: dict) -> dict:
        try:
            validate_prefix(attrs["resource_type"], attrs["prefix"])
        except DjangoValidationError as error:
            raise serializers.ValidationError({"prefix": error.messages}) from error
        return attrs


class GuardrailLimitsInputSerializer(serializers.Serializer):
    """Limits an org admin sets for all teams of the organization (null: back to the default)."""

    max_partitions_per_topic = serializers.IntegerField(
        min_value=1, max_value=100_000, allow_null=True, required=False
    )
    max_total_partitions = serializers.IntegerField(
        min_value=1, max_value=1_000_000, allow_null=True, required=False
    )
    max_replication_factor = serializers.IntegerField(
        min_value=1, max_value=32, allow_null=True, required=False
    )
    max_retention_ms = serializers.IntegerField(
        min_value=1, max_value=2**63 - 1, allow_null=True, required=False
    )
    min_segment_bytes = serializers.IntegerField(
        min_value=14, max_value=2**31 - 1, allow_null=True, required=False
    )
    max_segment_bytes = serializers.IntegerField(
        min_value=14, max_value=2**31 - 1, allow_null=True, required=False
    )
    min_segment_ms = serializers.IntegerField(
        min_value=1, max_value=2**63 - 1, allow_null=True, required=False
    )
    admin_operations_per_minute = serializers.IntegerField(
        min_value=1, max_value=100_000, allow_null=True, required=False
    )


class TeamPolicyUpdateInputSerializer(GuardrailLimitsInputSerializer):
    """A team's own policy: the same limits (they win over the organization's), plus naming and configs."""

    naming_pattern = serializers.CharField(max_length=200, allow_blank=True, required=False)
    allowed_topic_configs = serializers.ListField(
        child=serializers.CharField(max_length=200), allow_null=True, required=False, max_length=200
    )

    def validate_naming_pattern(self, value: str) -> str:
        _as_drf_error(validate_naming_pattern, value)
        return value

    def validate_allowed_topic_configs(self, value: list[str] | None) -> list[str] | None:
        _as_drf_error(validate_topic_config_names, value)
        return sorted(set(value)) if value is not None else None
