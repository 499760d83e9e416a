from rest_framework import serializers

from controlplane.audit.models import AuditEvent


class AuditEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditEvent
        fields = [
            "id",
            "timestamp",
            "organization_id",
            "team_id",
            "team_name",
            "actor_type",
            "actor_name",
            "actor_user",
            "via",
            "api_key_id",
            "action",
            "resource_type",
            "resource_id",
            "resource_name",
            "before",
            "after",
            "result",
            "reason",
            "client_address",
        ]
