from django.conf import settings
from django.db import models
from django.db.models import Q

from controlplane.people.choices import IdentitySource, LinkPurpose


class Identity(models.Model):
    """Where a person's identity comes from. A user without a row is local (accounts made before people
    were managed here). External identities are keyed by the provider's issuer and subject, the pair an
    OpenID Connect login matches a returning person by; they never hold a password here."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="identity")
    source = models.CharField(max_length=20, choices=IdentitySource.choices, default=IdentitySource.LOCAL)
    issuer = models.CharField(max_length=500, blank=True)
    subject = models.CharField(max_length=255, blank=True)
    # What the provider said at the last single sign-on: the groups claim's values (the profile page shows
    # them next to the teams they mapped to).
    idp_groups = models.JSONField(default=list, blank=True)
    last_sso_login_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user_id"]
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"],
                condition=~Q(source=IdentitySource.LOCAL),
                name="unique_external_identity",
            ),
            models.CheckConstraint(
                condition=Q(source=IdentitySource.LOCAL, issuer="", subject="")
                | (~Q(source=IdentitySource.LOCAL) & ~Q(issuer="") & ~Q(subject="")),
                name="identity_issuer_subject_match_source",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} ({self.source})"


class PasswordLink(models.Model):
    """A one-time link that lets a person set their password: an invitation or an admin-triggered reset.
    Only the SHA-256 of its random token is stored; the token is shown once, to the admin who made it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="password_links"
    )
    purpose = models.CharField(max_length=20, choices=LinkPurpose.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    # Set when a newer link, a deactivation or a use made it void before it expired.
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "used_at", "revoked_at"])]

    def __str__(self) -> str:
        return f"{self.purpose} link for {self.user_id}"
