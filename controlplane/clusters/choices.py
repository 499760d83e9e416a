"""Enumerations of the clusters domain and the allowed cluster status transitions."""

from django.db import models


class Provider(models.TextChoices):
    LOCAL = "local", "Local broker processes on this host"
    EXTERNAL = "external", "An existing cluster, registered by bootstrap address"


class Engine(models.TextChoices):
    STREAMHUB = "streamhub", "StreamHub broker"
    APACHE_KAFKA = "apache-kafka", "Apache Kafka"
    # A registered cluster that gave nothing away (controlplane/kafka/engine.py).
    UNKNOWN = "unknown", "Not identified"


# The engines a new local cluster may run.
PROVISIONED_ENGINES = (Engine.STREAMHUB, Engine.APACHE_KAFKA)
PROVISIONED_ENGINE_CHOICES = [(engine.value, engine.label) for engine in PROVISIONED_ENGINES]


class ClusterStatus(models.TextChoices):
    REQUESTED = "requested", "Requested"
    PROVISIONING = "provisioning", "Provisioning"
    RUNNING = "running", "Running"
    DEGRADED = "degraded", "Degraded"
    STOPPED = "stopped", "Stopped with the stack"
    DELETING = "deleting", "Deleting"
    DELETED = "deleted", "Deleted"
    FAILED = "failed", "Failed"


# From -> the statuses it may move to. `stopped` is a local cluster whose processes were stopped together
# with the stack (`make run` Ctrl-C); its data and definition are kept and it comes back on the next run.
CLUSTER_TRANSITIONS: dict[str, frozenset[str]] = {
    ClusterStatus.REQUESTED: frozenset(
        {ClusterStatus.PROVISIONING, ClusterStatus.FAILED, ClusterStatus.DELETING}
    ),
    # Degraded: the brokers came up and registered but some partitions were still catching up at the end.
    ClusterStatus.PROVISIONING: frozenset(
        {
            ClusterStatus.RUNNING,
            ClusterStatus.DEGRADED,
            ClusterStatus.FAILED,
            ClusterStatus.STOPPED,
            ClusterStatus.DELETING,
        }
    ),
    ClusterStatus.RUNNING: frozenset({ClusterStatus.DEGRADED, ClusterStatus.STOPPED, ClusterStatus.DELETING}),
    ClusterStatus.DEGRADED: frozenset(
        {ClusterStatus.RUNNING, ClusterStatus.STOPPED, ClusterStatus.DELETING, ClusterStatus.FAILED}
    ),
    ClusterStatus.STOPPED: frozenset(
        {ClusterStatus.RUNNING, ClusterStatus.DEGRADED, ClusterStatus.PROVISIONING, ClusterStatus.DELETING}
    ),
    ClusterStatus.FAILED: frozenset({ClusterStatus.PROVISIONING, ClusterStatus.DELETING}),
    ClusterStatus.DELETING: frozenset({ClusterStatus.DELETED, ClusterStatus.FAILED}),
    ClusterStatus.DELETED: frozenset(),
}

# Statuses in which a cluster's brokers are expected to be up, so health checks watch them.
WATCHED_STATUSES = (ClusterStatus.RUNNING, ClusterStatus.DEGRADED)


class InvalidTransition(ValueError):
    pass


def check_transition(current: str, target: str) -> None:
    """Raises InvalidTransition unless a cluster in `current` may move to `target` (staying put is fine)."""
    if current != target and target not in CLUSTER_TRANSITIONS[current]:
        raise InvalidTransition(f"A {current} cluster cannot become {target}.")


class SecurityProtocol(models.TextChoices):
    PLAINTEXT = "PLAINTEXT", "PLAINTEXT"
    SASL_PLAINTEXT = "SASL_PLAINTEXT", "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL", "SASL_SSL"
    SSL = "SSL", "SSL"


class SaslMechanism(models.TextChoices):
    NONE = "", "None"
    PLAIN = "PLAIN", "PLAIN"
    SCRAM_SHA_256 = "SCRAM-SHA-256", "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512", "SCRAM-SHA-512"


class BrokerStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    STARTING = "starting", "Starting"
    RUNNING = "running", "Running"
    DEAD = "dead", "Process not running"
    STOPPED = "stopped", "Stopped"


class OperationKind(models.TextChoices):
    PROVISION = "provision", "Provision"
    DELETE = "delete", "Delete"
    RESTART_BROKER = "restart_broker", "Restart broker"
    ADD_BROKER = "add_broker", "Add broker"
    REMOVE_BROKER = "remove_broker", "Remove broker"
    REPLACE_CONTROLLER = "replace_controller", "Replace controller"
    CHANGE_BROKER_CONFIG = "change_broker_config", "Change broker config (rolling restart)"
    # Changes a team asks of a cluster whose outcome the request could not confirm in time.
    TOPIC_CREATE = "topic_create", "Create topic"
    TOPIC_DELETE = "topic_delete", "Delete topic"
    TOPIC_PARTITIONS = "topic_partitions", "Add partitions"
    TOPIC_CONFIGS = "topic_configs", "Change topic configs"


class OperationState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


ACTIVE_OPERATION_STATES = (OperationState.PENDING, OperationState.RUNNING)

# The named steps of each workflow, in order; Operation stores which one it is on.
CHANGE_STEPS = ["check guardrails", "send to the cluster", "confirm on the cluster"]

OPERATION_STEPS: dict[str, list[str]] = {
    OperationKind.TOPIC_CREATE: CHANGE_STEPS,
    OperationKind.TOPIC_DELETE: CHANGE_STEPS,
    OperationKind.TOPIC_PARTITIONS: CHANGE_STEPS,
    OperationKind.TOPIC_CONFIGS: CHANGE_STEPS,
    OperationKind.PROVISION: [
        "allocate ports",
        "write configs",
        "start brokers",
        "wait for Metadata",
        "verify",
    ],
    OperationKind.DELETE: ["stop brokers", "remove data", "release"],
    OperationKind.RESTART_BROKER: ["start brokers", "wait for Metadata", "verify"],
    OperationKind.ADD_BROKER: [
        "allocate ports",
        "write configs",
        "start brokers",
        "wait for Metadata",
        "verify",
    ],
    OperationKind.REMOVE_BROKER: [
        "plan reassignment",
        "move replicas",
        "stop broker",
        "unregister",
        "remove data",
    ],
    OperationKind.CHANGE_BROKER_CONFIG: ["write configs", "restart brokers one at a time", "verify"],
    OperationKind.REPLACE_CONTROLLER: [
        "allocate ports",
        "write configs",
        "start the new node",
        "catch up as an observer",
        "add voter",
        "move replicas",
        "remove voter",
        "stop the old node",
        "unregister",
        "remove data",
    ],
}


# The most brokers a local cluster may have.
MAX_LOCAL_BROKERS = 9
# New local clusters replicate: three brokers, each also a controller voter (see provisioners/local.py).
DEFAULT_LOCAL_BROKERS = 3
