"""Kafka's ACL model (names as Kafka spells them) and the grant templates."""

from django.db import models


class AclResourceType(models.TextChoices):
    TOPIC = "TOPIC", "Topic"
    GROUP = "GROUP", "Consumer group"
    TRANSACTIONAL_ID = "TRANSACTIONAL_ID", "Transactional id"
    BROKER = "BROKER", "Cluster"


class PatternType(models.TextChoices):
    LITERAL = "LITERAL", "Literal"
    PREFIXED = "PREFIXED", "Prefixed"


class AclOperation(models.TextChoices):
    ALL = "ALL", "All"
    READ = "READ", "Read"
    WRITE = "WRITE", "Write"
    CREATE = "CREATE", "Create"
    DELETE = "DELETE", "Delete"
    ALTER = "ALTER", "Alter"
    DESCRIBE = "DESCRIBE", "Describe"
    CLUSTER_ACTION = "CLUSTER_ACTION", "Cluster action"
    DESCRIBE_CONFIGS = "DESCRIBE_CONFIGS", "Describe configs"
    ALTER_CONFIGS = "ALTER_CONFIGS", "Alter configs"
    IDEMPOTENT_WRITE = "IDEMPOTENT_WRITE", "Idempotent write"


class Permission(models.TextChoices):
    ALLOW = "ALLOW", "Allow"
    DENY = "DENY", "Deny"


class GrantTemplate(models.TextChoices):
    PRODUCER = "producer", "Producer on a topic prefix"
    CONSUMER = "consumer", "Consumer on a topic prefix with a group prefix"
    STREAM_APP = "stream_app", "Stream application (consume, produce, internal topics, transactions)"
    TRANSACTIONAL_PRODUCER = (
        "transactional_producer",
        "Transactional producer on a topic prefix with a transactional-id prefix",
    )
    SHARE_CONSUMER = "share_consumer", "Share consumer (queue) on a topic prefix with a share-group prefix"
