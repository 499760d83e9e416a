from django.db import models


class ConnectClusterStatus(models.TextChoices):
    PROVISIONING = "provisioning", "Provisioning"
    RUNNING = "running", "Running"
    # Some workers are down: connectors run on the others (distributed mode moves their tasks).
    DEGRADED = "degraded", "Degraded"
    FAILED = "failed", "Failed"
    DELETED = "deleted", "Deleted"


class WorkerStatus(models.TextChoices):
    STARTING = "starting", "Starting"
    RUNNING = "running", "Running"
    STOPPED = "stopped", "Stopped"


class ConnectorState(models.TextChoices):
    """What the team asked the connector to be (Connect's own state per task is read live)."""

    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"


# Plugins allowed on a Connect cluster whose org admin named none. The FileStream connectors are left out:
# they read and write any file the workers' user may, on the control plane's host.
DEFAULT_ALLOWED_PLUGINS = (
    "io.debezium.connector.postgresql.PostgresConnector",
    "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
)
