"""Enumerations of the people domain."""

from django.db import models


class IdentitySource(models.TextChoices):
    # A password kept (hashed) here; one-time links set it.
    LOCAL = "local", "Local password"
    # An OpenID Connect provider vouches for the person (issue #24); no password is kept here.
    OIDC = "oidc", "Single sign-on (OpenID Connect)"


class LinkPurpose(models.TextChoices):
    INVITE = "invite", "Invitation"
    RESET = "reset", "Password reset"


class PersonStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    INVITED = "invited", "Invited"  # no password yet: waiting for the invitation to be accepted
    DEACTIVATED = "deactivated", "Deactivated"
