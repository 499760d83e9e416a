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
