"""Enumerations of the topics domain."""

from django.db import models


class BrowseStart(models.TextChoices):
    OFFSET = "offset", "From an offset"
    TIMESTAMP = "timestamp", "From a timestamp"
    NEWEST = "newest", "The newest records"
    EARLIEST = "earliest", "From the start of the log"


# Topic configs Kafka knows (REFERENCE §3). Anything else is refused before the cluster sees it.
KNOWN_TOPIC_CONFIGS = frozenset(
    {
        "cleanup.policy",
        "compression.type",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "index.interval.bytes",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.downconversion.enable",
        "message.timestamp.type",
        "message.timestamp.difference.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.after.max.ms",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    }
)
