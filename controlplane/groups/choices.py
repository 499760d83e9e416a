"""Enumerations of the consumer-groups domain."""

from django.db import models


class ResetStrategy(models.TextChoices):
    EARLIEST = "earliest", "To the earliest offset"
    LATEST = "latest", "To the latest offset"
    TIMESTAMP = "timestamp", "To the first offset at or after a time"
    OFFSET = "offset", "To exact offsets per partition"
    SHIFT = "shift", "Shift by N"


# Kafka accepts offset commits from outside the group only while it has no members.
INACTIVE_STATES = frozenset({"EMPTY", "DEAD", "UNKNOWN"})
