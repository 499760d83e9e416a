"""Input validators (…InputSerializer) and output shapes (…Serializer) of service accounts and API keys."""

from datetime import timedelta
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from controlplane.accounts.choices import ApiKeyStatus
from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.accounts.services import MAX_ROTATION_OVERLAP
from controlplane.accounts.validators import SERVICE_ACCOUNT_NAME, SERVICE_ACCOUNT_NAME_RULE
from controlplane.tenancy.api.fields import VisiblePrimaryKeyField
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team

# The longest lifetime a key can be given (ten years); longer is what "never expires" (no lifetime) says.
MAX_KEY_LIFETIME_DAYS = 3650

# Outputs


class ServiceAccountSerializer(serializers.ModelSerializer):
    principal = serializers.CharField(read_only=True)

    class Meta:
        model = ServiceAccount
        fields = ["id", "organization", "team", "name", "principal", "description", "created_at"]


class ApiKeySerializer(serializers.ModelSerializer):
    """A key as lists show it: never the secret, which exists only in the create and rotate responses."""

    owner = serializers.SerializerMethodField()
    status = serializers.ChoiceField(choices=ApiKeyStatus.choices, read_only=True)
    rotated_from = serializers.SlugRelatedField(slug_field="key_id", read_only=True, allow_null=True)

    class Meta:
        model = ApiKey
        fields = [
            "key_id",
            "name",
            "role",
            "owner",
            "service_account",
            "status",
            "created_at",
            "expires_at",
            "last_used_at",
            "revoked_at",
            "overlap_until",
            "rotated_from",
        ]

    @extend_schema_field(serializers.CharField())
    def get_owner(self, api_key: ApiKey) -> str:
        if api_key.service_account_id is not None:
            return api_key.service_account.principal
        return api_key.user.get_username()


class ApiKeyWithSecretSerializer(ApiKeySerializer):
    secret = serializers.SerializerMethodField(help_text="The full key. It is shown only this once.")

    class Meta(ApiKeySerializer.Meta):
        fields = [*ApiKeySerializer.Meta.fields, "secret"]

    @extend_schema_field(serializers.CharField())
    def get_secret(self, api_key: ApiKey) -> str:
        return str(self.context["token"])


# Inputs


class ServiceAccountCreateInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())
    # A RegexField, so the OpenAPI document states the pattern the service enforces: a client (and the API
    # fuzz test) then knows a name like "dave laptop" is refused before sending it.
    name = serializers.RegexField(
        f"^{SERVICE_ACCOUNT_NAME.pattern}$",
        max_length=64,
        error_messages={"invalid": SERVICE_ACCOUNT_NAME_RULE},
    )
    description = serializers.CharField(max_length=1000, required=False, default="", allow_blank=True)


class ServiceAccountUpdateInputSerializer(serializers.Serializer):
    description = serializers.CharField(max_length=1000, allow_blank=True)


class ApiKeyCreateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    role = serializers.ChoiceField(choices=TeamRole.choices)
    service_account = VisiblePrimaryKeyField(
        queryset=ServiceAccount.objects.all(),
        team_path="team",
        required=False,
        allow_null=True,
        help_text="The account the key acts for; leave it out for a personal key acting for you.",
    )
    # A lifetime rather than a moment: it cannot lie in the past, so every value the schema allows is one the
    # server accepts (a past `expires_at` was a well-formed request refused); the answer states `expires_at`.
    expires_in_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_KEY_LIFETIME_DAYS,
        help_text="Days until the key expires, counted from its creation; leave it out for a key that never expires.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        days = attrs.pop("expires_in_days", None)
        attrs["expires_at"] = timezone.now() + timedelta(days=days) if days is not None else None
        return attrs


class ApiKeyRotateInputSerializer(serializers.Serializer):
    overlap_seconds = serializers.IntegerField(
        min_value=0,
        max_value=int(MAX_ROTATION_OVERLAP.total_seconds()),
        default=3600,
        help_text="How long the old key keeps working next to the new one.",
    )
