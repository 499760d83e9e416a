"""Enumerations of the consumer-groups domain."""

from django.db import models


class GroupType(models.TextChoices):
    """Kafka's group types as ListGroups v5 names them."""

    CLASSIC = "classic", "Classic consumer group"
    CONSUMER = "consumer", "Consumer group (KIP-848 protocol)"
    SHARE = "share", "Share group (queue)"
    STREAMS = "streams", "Streams group"


# The kinds librdkafka's ListConsumerGroups does not list: only the lag sampler (ListGroups v5) sees them.
PROTOCOL_ONLY_TYPES = frozenset({GroupType.SHARE, GroupType.STREAMS})


class ResetStrategy(models.TextChoices):
    EARLIEST = "earliest", "To the earliest offset"
    LATEST = "latest", "To the latest offset"
    TIMESTAMP = "timestamp", "To the first offset at or after a time"
    OFFSET = "offset", "To exact offsets per partition"
    SHIFT = "shift", "Shift by N"


# Kafka accepts offset commits from outside the group only while it has no members.
INACTIVE_STATES = frozenset({"EMPTY", "DEAD", "UNKNOWN"})
