from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from controlplane.accounts.choices import ApiKeyStatus
from controlplane.accounts.validators import validate_service_account_name
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Organization, Team


class ServiceAccount(models.Model):
    """An application's identity. Its name is fixed: clusters know it as principal `User:<name>`."""

    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="service_accounts")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="service_accounts")
    name = models.CharField(max_length=64, validators=[validate_service_account_name])
    description = models.TextField(blank=True, max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organization_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="unique_service_account_per_org")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def principal(self) -> str:
        return f"User:{self.name}"


class ApiKey(models.Model):
    """A REST API key, owned by a person (a personal key) or by a service account (exactly one)."""

    key_id = models.CharField(max_length=32, unique=True)
    secret_hash = models.CharField(max_length=64)
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=20, choices=TeamRole.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="api_keys"
    )
    service_account = models.ForeignKey(
        ServiceAccount, null=True, blank=True, on_delete=models.CASCADE, related_name="api_keys"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Set when the key is rotated: it keeps working until then, so deployments can switch over.
    overlap_until = models.DateTimeField(null=True, blank=True)
    rotated_from = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rotated_to"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, service_account__isnull=True)
                | models.Q(user__isnull=True, service_account__isnull=False),
                name="api_key_has_exactly_one_owner",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_id})"

    def status_at(self, moment=None) -> str:
        moment = moment or timezone.now()
        if self.revoked_at is not None:
            return ApiKeyStatus.REVOKED
        if self.expires_at is not None and self.expires_at <= moment:
            return ApiKeyStatus.EXPIRED
        if self.overlap_until is not None:
            return ApiKeyStatus.ROTATING if self.overlap_until > moment else ApiKeyStatus.EXPIRED
        return ApiKeyStatus.ACTIVE

    @property
    def status(self) -> str:
        return self.status_at()

    @property
    def is_usable(self) -> bool:
        return self.status in {ApiKeyStatus.ACTIVE, ApiKeyStatus.ROTATING}

    @property
    def team(self) -> Team | None:
        return self.service_account.team if self.service_account_id else None

    def actor(self, user: Any, client_address: str | None) -> Actor:
        """A request authenticated with this key (tenancy.access.Credentials) acts for the key's owner, with
        at most the key's role; `user` is the request's stand-in for a service account's key."""
        return Actor(user=self.user, api_key=self, client_address=client_address)
