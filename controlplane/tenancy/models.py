from django.conf import settings
from django.db import models

from controlplane.tenancy.choices import PrefixResourceType, TeamRole


class Organization(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    # Guardrail limits for every team of the organization whose own policy sets none (guardrails.py).
    guardrails = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class OrgMembership(models.Model):
    """Belonging to an organization; org admins see and change everything in it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="org_memberships"
    )
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    is_org_admin = models.BooleanField(default=False)
    # Granted by single sign-on's mapping rules: the next sign-in may take it away again (manual ones stay).
    from_idp = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organization_id", "user_id"]
        constraints = [models.UniqueConstraint(fields=["user", "organization"], name="unique_org_membership")]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization}"


class Team(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="teams")
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100)
    description = models.TextField(blank=True, max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organization_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="unique_team_name_per_org"),
            models.UniqueConstraint(fields=["organization", "slug"], name="unique_team_slug_per_org"),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_memberships"
    )
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=TeamRole.choices)
    # Granted by single sign-on's mapping rules: the next sign-in may take it away again (manual ones stay).
    from_idp = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team_id", "user_id"]
        constraints = [models.UniqueConstraint(fields=["user", "team"], name="unique_team_membership")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} as {self.role}"


class TeamPrefix(models.Model):
    """A name prefix a team owns. Prefixes never overlap across teams of one organization (services check)."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="prefixes")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="prefixes")
    resource_type = models.CharField(max_length=20, choices=PrefixResourceType.choices)
    prefix = models.CharField(max_length=249)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organization_id", "resource_type", "prefix"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "resource_type", "prefix"], name="unique_prefix_per_org"
            )
        ]

    def __str__(self) -> str:
        return f"{self.resource_type}:{self.prefix}"


class TeamPolicy(models.Model):
    """Limits on what a team may ask for. An empty limit means the guardrail default
    (controlplane/tenancy/guardrails.py); org admins set one to raise or lower it."""

    team = models.OneToOneField(Team, on_delete=models.CASCADE, related_name="policy")
    naming_pattern = models.CharField(max_length=200, blank=True)
    max_partitions_per_topic = models.PositiveIntegerField(null=True, blank=True)
    max_retention_ms = models.BigIntegerField(null=True, blank=True)
    max_total_partitions = models.PositiveIntegerField(null=True, blank=True)
    max_replication_factor = models.PositiveSmallIntegerField(null=True, blank=True)
    min_segment_bytes = models.BigIntegerField(null=True, blank=True)
    max_segment_bytes = models.BigIntegerField(null=True, blank=True)
    min_segment_ms = models.BigIntegerField(null=True, blank=True)
    admin_operations_per_minute = models.PositiveIntegerField(null=True, blank=True)
    # None allows every topic config; a list allows only the names in it.
    allowed_topic_configs = models.JSONField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["team_id"]
        verbose_name_plural = "team policies"

    def __str__(self) -> str:
        return f"policy of {self.team_id}"
