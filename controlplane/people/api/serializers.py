"""Input validators (…InputSerializer) and output shapes (…Serializer) of the people API."""

from typing import Any

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from controlplane.people import services
from controlplane.people.choices import IdentitySource, LinkPurpose, PersonStatus
from controlplane.tenancy.api.fields import VisibleOrganizationField, VisiblePrimaryKeyField
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Organization, Team

# Django's own username rule (letters, digits and @.+-_), as its User model validates it.
USERNAME_FIELD = {"max_length": 150, "regex": r"^[\w.@+-]+\Z"}


class PersonOrganizationSerializer(serializers.Serializer):
    membership = serializers.IntegerField(source="id", help_text="The org membership (`/org-memberships/`).")
    organization = serializers.IntegerField(source="organization_id")
    organization_name = serializers.CharField(source="organization.name")
    is_org_admin = serializers.BooleanField()


class PersonTeamSerializer(serializers.Serializer):
    membership = serializers.IntegerField(source="id")
    team = serializers.IntegerField(source="team_id")
    team_name = serializers.CharField(source="team.name")
    role = serializers.ChoiceField(choices=TeamRole.choices)


class PendingLinkSerializer(serializers.Serializer):
    purpose = serializers.ChoiceField(choices=LinkPurpose.choices)
    expires_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()


class PersonSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    status = serializers.SerializerMethodField()
    identity_source = serializers.SerializerMethodField()
    is_superuser = serializers.BooleanField()
    organizations = PersonOrganizationSerializer(source="org_memberships.all", many=True)
    teams = PersonTeamSerializer(source="team_memberships.all", many=True)
    pending_link = serializers.SerializerMethodField(
        help_text="The open invitation or reset link, if any (its token is never shown again)."
    )
    last_login = serializers.DateTimeField(allow_null=True)
    date_joined = serializers.DateTimeField()

    @extend_schema_field(serializers.ChoiceField(choices=PersonStatus.choices))
    def get_status(self, user: Any) -> str:
        return services.person_status(user)

    @extend_schema_field(serializers.ChoiceField(choices=IdentitySource.choices))
    def get_identity_source(self, user: Any) -> str:
        return services.identity_source(user)

    @extend_schema_field(PendingLinkSerializer(allow_null=True))
    def get_pending_link(self, user: Any) -> dict | None:
        link = services.open_link(user)
        return PendingLinkSerializer(link).data if link is not None else None


class IssuedLinkSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="The one-time link; shown only in this response.")
    purpose = serializers.ChoiceField(choices=LinkPurpose.choices)
    expires_at = serializers.DateTimeField()
    emailed = serializers.BooleanField(help_text="Whether it was also e-mailed to the person.")


class CreatedPersonSerializer(serializers.Serializer):
    person = PersonSerializer()
    link = IssuedLinkSerializer(allow_null=True, help_text="The invitation, when no password was given.")


class LinkInfoSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    purpose = serializers.ChoiceField(choices=LinkPurpose.choices)
    expires_at = serializers.DateTimeField()


# Inputs


class TeamRoleInputSerializer(serializers.Serializer):
    team = VisiblePrimaryKeyField(queryset=Team.objects.all())
    role = serializers.ChoiceField(choices=TeamRole.choices)


class PersonCreateInputSerializer(serializers.Serializer):
    organization = VisibleOrganizationField(queryset=Organization.objects.all())
    username = serializers.RegexField(**USERNAME_FIELD)
    email = serializers.EmailField(required=False, default="", allow_blank=True)
    is_org_admin = serializers.BooleanField(default=False)
    teams = TeamRoleInputSerializer(many=True, required=False, default=list, max_length=100)
    password = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=4096,
        trim_whitespace=False,
        style={"input_type": "password"},
        help_text="Set a password now; without one the answer holds an invitation link.",
    )

    def validate_teams(self, value: list[dict]) -> list[dict]:
        teams = [entry["team"].pk for entry in value]
        if len(teams) != len(set(teams)):
            raise serializers.ValidationError("A team is listed twice.")
        return value


class PersonUpdateInputSerializer(serializers.Serializer):
    email = serializers.EmailField(allow_blank=True)


class TokenInputSerializer(serializers.Serializer):
    token = serializers.CharField(max_length=200)


class SetPasswordInputSerializer(TokenInputSerializer):
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})


def user_queryset():
    return (
        get_user_model()
        .objects.prefetch_related("org_memberships__organization", "team_memberships__team")
        .select_related("identity")
    )
