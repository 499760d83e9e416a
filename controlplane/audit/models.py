from django.conf import settings
from django.db import models

from controlplane.audit.choices import ActorType, Result, Via


class AuditEvent(models.Model):
    """One change, or one refused attempt at a change. Rows are only ever inserted.

    Organization and team are kept as plain ids and names, not foreign keys, so the trail of a deleted
    team stays complete and readable.
    """

    timestamp = models.DateTimeField(auto_now_add=True, db_index=True)
    organization_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    team_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    team_name = models.CharField(max_length=100, blank=True)
    actor_type = models.CharField(max_length=20, choices=ActorType.choices)
    actor_name = models.CharField(max_length=200)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    via = models.CharField(max_length=20, choices=Via.choices)
    api_key_id = models.CharField(max_length=32, blank=True)
    action = models.CharField(max_length=100, db_index=True)
    resource_type = models.CharField(max_length=50, db_index=True)
    resource_id = models.CharField(max_length=64, blank=True)
    resource_name = models.CharField(max_length=255, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    result = models.CharField(max_length=10, choices=Result.choices)
    reason = models.TextField(blank=True)
    client_address = models.GenericIPAddressField(null=True, blank=True)
    # The HTTP request that caused it (its X-Request-ID), also for outcomes settled after the request.
    request_id = models.CharField(max_length=64, blank=True, db_index=True)

    class Meta:
        ordering = ["-timestamp", "-id"]

    def __str__(self) -> str:
        return f"{self.timestamp:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action} {self.result}"
