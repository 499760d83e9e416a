from django.db import models


class ApiKeyStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    ROTATING = "rotating", "Rotated, valid until the overlap ends"
    EXPIRED = "expired", "Expired"
    REVOKED = "revoked", "Revoked"
