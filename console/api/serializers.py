"""Input validators and output shapes of the console's session API."""

from rest_framework import serializers


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    is_superuser = serializers.BooleanField()


class SessionSerializer(serializers.Serializer):
    authenticated = serializers.BooleanField()
    user = UserSerializer(allow_null=True)


class LoginInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})


class LoginOutputSerializer(serializers.Serializer):
    user = UserSerializer()


class WorkerStatusSerializer(serializers.Serializer):
    alive = serializers.BooleanField()
    last_heartbeat = serializers.DateTimeField(allow_null=True)


class OverviewSerializer(serializers.Serializer):
    version = serializers.CharField()
    worker = WorkerStatusSerializer()


class LogoutOutputSerializer(serializers.Serializer):
    end_session_url = serializers.CharField(allow_null=True)


class SsoOptionSerializer(serializers.Serializer):
    name = serializers.CharField()
    login_url = serializers.CharField()


class CliOidcSerializer(serializers.Serializer):
    issuer = serializers.CharField()
    client_id = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())
    audience = serializers.CharField()


class CliAuthOptionsSerializer(serializers.Serializer):
    oidc = CliOidcSerializer(allow_null=True)


class AuthOptionsSerializer(serializers.Serializer):
    sso = SsoOptionSerializer(allow_null=True)
    local_login = serializers.BooleanField()


class ProfileOrganizationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    is_org_admin = serializers.BooleanField()
    from_idp = serializers.BooleanField()


class ProfileTeamSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    organization = serializers.CharField()
    role = serializers.CharField()
    from_idp = serializers.BooleanField()


class ProfileSerializer(serializers.Serializer):
    user = UserSerializer()
    source = serializers.CharField()
    issuer = serializers.CharField()
    idp_groups = serializers.ListField(child=serializers.CharField())
    last_sso_login_at = serializers.DateTimeField(allow_null=True)
    organizations = ProfileOrganizationSerializer(many=True)
    teams = ProfileTeamSerializer(many=True)
