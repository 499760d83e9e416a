from django.db import models


class ReplicationPolicy(models.TextChoices):
    """How MirrorMaker 2 names a replica: `<source alias>.<topic>` (Kafka's default: replicas of two sources never
    collide, and a consumer sees where a record came from) or the source's own name (identity)."""

    DEFAULT = "default", "Prefix with the source alias"
    IDENTITY = "identity", "Same name as the source"


class FlowState(models.TextChoices):
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    FAILED = "failed", "Failed"
    DELETED = "deleted", "Deleted"


POLICY_CLASSES = {
    ReplicationPolicy.DEFAULT: "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
    ReplicationPolicy.IDENTITY: "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
}
SOURCE_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
CHECKPOINT_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
HEARTBEAT_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
