"""Enumerations of the lag domain (Health lives in observations.py, shared with alerting)."""

from django.db import models


class Resolution(models.TextChoices):
    RAW = "raw", "Raw samples (the last hour, from Redis)"
    MINUTE = "1m", "1-minute rollups (7 days)"
    HOUR = "1h", "1-hour rollups (90 days)"


class RollupResolution(models.TextChoices):
    MINUTE = "1m", "1 minute"
    HOUR = "1h", "1 hour"
