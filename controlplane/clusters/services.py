"""Every change to clusters goes through these functions: they check rights, write, audit and enqueue.

The provisioning and deletion workflows themselves run in workflows.py (called by Celery tasks).
"""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import redis
from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from redis.backoff import NoBackoff
from redis.retry import Retry

from controlplane.apache_kafka import runtime as apache_kafka_runtime
from controlplane.audit.choices import Result
from controlplane.audit.services import record_event
from controlplane.clusters.broker_configs import InvalidBrokerConfig, validate_broker_config
from controlplane.clusters.choices import (
    ACTIVE_OPERATION_STATES,
    DEFAULT_LOCAL_BROKERS,
    MAX_LOCAL_BROKERS,
    OPERATION_STEPS,
    PROVISIONED_ENGINES,
    WATCHED_STATUSES,
    BrokerStatus,
    ClusterStatus,
    Engine,
    OperationKind,
    OperationState,
    Provider,
    SaslMechanism,
    SecurityProtocol,
    check_transition,
)
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Broker, Cluster, Operation
from controlplane.clusters.provisioners.apache_kafka import ApacheKafkaProvisioner
from controlplane.clusters.provisioners.base import (
    ClusterTopology,
    ListenerSecurity,
    NodePlan,
    ProvisioningFailed,
)
from controlplane.clusters.provisioners.local import LocalProvisioner
from controlplane.core.changes import Change, audited_change
from controlplane.core.encryption import UnreadableSecret, decrypt_secret, encrypt_secret
from controlplane.core.errors import Conflict, ServiceError
from controlplane.kafka.cluster import ClusterDescription, describe_cluster
from controlplane.kafka.config_entries import config_entries
from controlplane.kafka.configs import describe_documented_configs
from controlplane.kafka.connection import Connection
from controlplane.kafka.engine import detect_engine
from controlplane.kafka.errors import AuthenticationFailed, ClusterUnreachable, KafkaGatewayError
from controlplane.tenancy.access import Actor, require_org_admin
from controlplane.tenancy.models import Organization

logger = logging.getLogger(__name__)

CLUSTER_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
BOOTSTRAP_ADDRESS = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,252})):([0-9]{1,5})$")
# The control plane's super user on the local clusters it provisions (principal User:<this>).
LOCAL_SUPER_USER = "streamhub-admin"
# What a new local cluster listens with; the mechanism is the one the control plane authenticates with
# (the broker enables both SCRAM variants).
LOCAL_SECURITY_PROTOCOL = SecurityProtocol.SASL_PLAINTEXT
LOCAL_SASL_MECHANISMS = (SaslMechanism.SCRAM_SHA_512, SaslMechanism.SCRAM_SHA_256)
PROBE_TIMEOUT_SECONDS = 3.0
STOP_TIMEOUT_SECONDS = 10.0
# An operation still "running" after this long lost its worker; health checks stop waiting for it.
OPERATION_STALE_AFTER = timedelta(minutes=15)


@dataclass(frozen=True)
class ClusterSpec:
    """What an admin asks for when creating a local cluster."""

    name: str
    broker_count: int = DEFAULT_LOCAL_BROKERS
    broker_config: dict[str, Any] = field(default_factory=dict)
    port: int = 0
    security_protocol: str = LOCAL_SECURITY_PROTOCOL
    sasl_mechanism: str = SaslMechanism.SCRAM_SHA_512
    engine: str = Engine.STREAMHUB
    # Apache Kafka's release (one of the installed ones; empty: the pinned one). Empty for our broker.
    engine_version: str = ""


def snapshot_cluster(cluster: Cluster) -> dict[str, Any]:
    return {
        "name": cluster.name,
        "provider": cluster.provider,
        "engine": cluster.engine,
        "engine_version": cluster.engine_version,
        "broker_count": cluster.broker_count,
        "broker_config": cluster.broker_config,
        "requested_port": cluster.requested_port,
        "bootstrap_servers": cluster.bootstrap_servers,
        "security_protocol": cluster.security_protocol,
        "sasl_mechanism": cluster.sasl_mechanism,
        "admin_username": cluster.admin_username,
        "status": cluster.status,
    }


def cluster_change(action: str, organization: Organization, **fields: Any) -> Change:
    return Change(action=action, resource_type="cluster", organization_id=organization.id, **fields)


def listener_security(cluster: Cluster) -> ListenerSecurity:
    """What the provisioner writes for a local cluster: SASL with its super user, or PLAINTEXT for the
    clusters made before local brokers had security (they keep their protocol)."""
    if cluster.security_protocol != SecurityProtocol.SASL_PLAINTEXT:
        return ListenerSecurity(protocol=cluster.security_protocol)
    try:
        password = decrypt_secret(cluster.admin_password_encrypted)
    except UnreadableSecret as error:
        raise ProvisioningFailed(
            "The super user's password cannot be decrypted: FIELD_ENCRYPTION_KEY (or SECRET_KEY) changed."
        ) from error
    return ListenerSecurity(
        protocol=cluster.security_protocol, super_user=cluster.admin_username, super_user_password=password
    )


def new_super_user_password() -> str:
    # URL-safe characters only: the broker reads it from a `name:MECHANISM:password;...` list.
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class SuperUserCredentials:
    """What a Kafka client needs to act as the control plane on a cluster (shown to operators only)."""

    bootstrap_servers: str
    security_protocol: str
    sasl_mechanism: str
    username: str
    password: str = field(repr=False)


def reveal_super_user_credentials(*, cluster: Cluster) -> SuperUserCredentials:
    """The control plane's credentials on `cluster`, for an operator at this host's shell (never the API).
    The reading is audited; the password is not."""
    if not cluster.admin_password_encrypted:
        raise ServiceError(
            f"Cluster {cluster.name} has no stored credentials: it listens with {cluster.security_protocol} "
            f"at {cluster.bootstrap_servers or '(no address yet)'}.",
            code="no_credentials",
        )
    change = cluster_change(
        "cluster.credentials_read", cluster.organization, after={"admin_username": cluster.admin_username}
    )
    change.on(cluster)
    credentials = SuperUserCredentials(
        bootstrap_servers=cluster.bootstrap_servers,
        security_protocol=cluster.security_protocol,
        sasl_mechanism=cluster.sasl_mechanism,
        username=cluster.admin_username,
        password=decrypt_secret(cluster.admin_password_encrypted),
    )
    record_event(actor=Actor.system(), change=change, result=Result.SUCCESS)
    return credentials


def node_plan(broker: Broker) -> NodePlan:
    from pathlib import Path

    return NodePlan(
        node_id=broker.node_id,
        host=broker.host,
        port=broker.port,
        data_dir=Path(broker.data_dir),
        controller_port=broker.controller_port,
        metrics_port=broker.metrics_port,
    )


def cluster_topology(cluster: Cluster) -> ClusterTopology:
    """The controller voters every node of the cluster is configured with (none: single-node)."""
    return ClusterTopology(
        voters=tuple(node_plan(b) for b in cluster.brokers.all() if b.is_controller),
        dynamic=cluster.dynamic_quorum,
    )


def provisioner_for(cluster: Cluster) -> LocalProvisioner:
    """The provisioner of a local cluster's engine: our broker's processes or Apache Kafka's JVMs."""
    if cluster.provider != Provider.LOCAL:
        raise ValueError(f"{cluster.provider} clusters have no provisioner")
    if cluster.engine == Engine.APACHE_KAFKA:
        return ApacheKafkaProvisioner(cluster.engine_version)
    return LocalProvisioner()


def available_engines() -> list[dict[str, Any]]:
    """The engines a new local cluster may run: our broker, and Apache Kafka with its installed versions
    (none listed when scripts/bootstrap.sh has not installed it)."""
    installed = apache_kafka_runtime.installed_versions()
    pinned = apache_kafka_runtime.pinned_version()
    return [
        {"engine": Engine.STREAMHUB, "label": Engine.STREAMHUB.label, "versions": [], "default_version": ""},
        {
            "engine": Engine.APACHE_KAFKA,
            "label": Engine.APACHE_KAFKA.label,
            "versions": installed,
            "default_version": pinned if pinned in installed else "",
        },
    ]


def resolve_engine_version(engine: str, version: str) -> str:
    """The version a new cluster of `engine` runs: for Apache Kafka one of the installed versions (default:
    the pinned one); none for our broker. Refuses anything else with the versions on offer."""
    if engine == Engine.STREAMHUB:
        if version:
            raise ServiceError(
                "The StreamHub engine has no version to choose; it is this installation's broker.",
                code="invalid_engine_version",
            )
        return ""
    if engine not in PROVISIONED_ENGINES:
        raise ServiceError(
            f"Local clusters run the engines {', '.join(PROVISIONED_ENGINES)}, not {engine!r}.",
            code="invalid_engine",
            details={"engines": list(PROVISIONED_ENGINES)},
        )
    installed = apache_kafka_runtime.installed_versions()
    chosen = version or apache_kafka_runtime.pinned_version()
    if chosen not in installed:
        raise ServiceError(
            f"Apache Kafka {chosen} is not installed here"
            + (f"; installed: {', '.join(installed)}." if installed else " (run scripts/bootstrap.sh)."),
            code="invalid_engine_version",
            details={"installed_versions": installed},
        )
    return chosen


def set_cluster_guardrails(
    *, actor: Actor, cluster: Cluster, partition_replicas_per_broker: int | None
) -> Cluster:
    """Org admins set how many partition replicas each broker of the cluster may carry (None: the
    default); topic requests beyond the cluster's budget are refused before they reach it."""
    change = cluster_change(
        "cluster.set_guardrails",
        cluster.organization,
        before={"partition_replicas_per_broker": cluster.partition_replicas_per_broker},
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        cluster.partition_replicas_per_broker = partition_replicas_per_broker
        cluster.save(update_fields=["partition_replicas_per_broker", "updated_at"])
        change.after = {"partition_replicas_per_broker": partition_replicas_per_broker}
    return cluster


def set_cluster_status(cluster: Cluster, status: str, reason: str = "") -> None:
    """Moves a cluster along its lifecycle (choices.CLUSTER_TRANSITIONS) and records the change."""
    check_transition(cluster.status, status)
    if cluster.status == status and cluster.status_reason == reason:
        return
    before = {"status": cluster.status, "status_reason": cluster.status_reason}
    cluster.status, cluster.status_reason = status, reason
    if status == ClusterStatus.DELETED:
        cluster.deleted_at = timezone.now()
    cluster.save(update_fields=["status", "status_reason", "deleted_at", "updated_at"])
    change = cluster_change(
        "cluster.status_change",
        cluster.organization,
        before=before,
        after={"status": status, "status_reason": reason},
    )
    change.on(cluster)
    record_event(actor=Actor.system(), change=change, result=Result.SUCCESS)


def new_operation(cluster: Cluster, kind: str, actor: Actor, parameters: dict | None = None) -> Operation:
    operation = Operation.objects.create(
        cluster=cluster,
        kind=kind,
        steps=OPERATION_STEPS[kind],
        parameters=parameters or {},
        requested_by=actor.name,
        log=[{"at": timezone.now().isoformat(), "message": f"{kind} requested by {actor.name}"}],
    )
    transaction.on_commit(lambda: enqueue_operation(operation.id))
    return operation


def _queue_is_down() -> bool:
    """A quick look before publishing: Celery's own client retries a dead Redis for seconds."""
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return False
    client = redis.Redis.from_url(
        url, socket_connect_timeout=1, socket_timeout=1, retry=Retry(NoBackoff(), 0)
    )
    try:
        client.ping()
    except redis.RedisError:
        return True
    finally:
        client.close()
    return False


def enqueue_operation(operation_id: int) -> None:
    """Hands the operation to a worker. If the queue is down it stays pending and is resent later (by the
    health beat, or when the stack starts).

    Sent by name through the current Celery app (the project's, which `console` sets up as it loads), so
    the control plane never imports the Django project; the task itself is `tasks.run_operation`."""
    if _queue_is_down():
        logger.warning("the task queue is down; operation %s stays pending and will be resent", operation_id)
        return
    try:
        current_app.send_task("clusters.run_operation", args=[operation_id], retry=False, ignore_result=True)
    except Exception as error:  # the queue's client raises many types; the operation is resent either way
        logger.warning("could not enqueue operation %s (%s); it will be resent", operation_id, error)


def require_running_and_idle(cluster: Cluster) -> None:
    """Refuses (Conflict) a cluster that is not running, or runs an operation of its own."""
    if cluster.status not in WATCHED_STATUSES:
        raise Conflict(f"Cluster {cluster.name} is {cluster.status}.", code="not_running")
    busy = active_operation(cluster)
    if busy is not None:
        raise Conflict(
            f"Operation {busy.id} ({busy.kind}) is still running on {cluster.name}.",
            code="operation_running",
            details={"operation": busy.id},
        )


def active_operation(cluster: Cluster) -> Operation | None:
    """The cluster's own running operation (provisioning, brokers); teams' changes to resources on it
    (resource_type set) run beside those."""
    fresh_since = timezone.now() - OPERATION_STALE_AFTER
    return (
        cluster.operations.filter(
            state__in=ACTIVE_OPERATION_STATES, created_at__gte=fresh_since, resource_type=""
        )
        .order_by("-created_at")
        .first()
    )


def _validate_local_spec(spec: ClusterSpec) -> dict[str, str]:
    if not CLUSTER_NAME.match(spec.name):
        raise ServiceError(
            "A cluster name is 1-63 lowercase letters, digits and dashes, starting and ending with a "
            "letter or digit.",
            code="invalid_name",
        )
    if not 1 <= spec.broker_count <= MAX_LOCAL_BROKERS:
        raise ServiceError(
            f"Local clusters have 1 to {MAX_LOCAL_BROKERS} brokers.", code="invalid_broker_count"
        )
    if spec.port and not 1024 <= spec.port <= 65535 - spec.broker_count:
        raise ServiceError(
            "The port must be between 1024 and 65535, or 0 to pick free ports.", code="invalid_port"
        )
    if spec.security_protocol != LOCAL_SECURITY_PROTOCOL or spec.sasl_mechanism not in LOCAL_SASL_MECHANISMS:
        raise ServiceError(
            f"Local clusters listen with SASL_PLAINTEXT on 127.0.0.1 and authenticate with "
            f"{' or '.join(LOCAL_SASL_MECHANISMS)}; {spec.security_protocol or 'no protocol'} with "
            f"{spec.sasl_mechanism or 'no SASL mechanism'} is not offered.",
            code="unsupported_security",
            details={
                "security_protocol": [LOCAL_SECURITY_PROTOCOL],
                "sasl_mechanism": list(LOCAL_SASL_MECHANISMS),
            },
        )
    return checked_broker_config(spec.broker_config)


def checked_broker_config(broker_config: dict[str, str]) -> dict[str, str]:
    """The broker config as validate_broker_config normalizes it; a ServiceError naming every problem."""
    try:
        return validate_broker_config(broker_config)
    except InvalidBrokerConfig as error:
        raise ServiceError(
            "The broker config is not valid.",
            code="invalid_broker_config",
            details={"problems": error.problems},
        ) from error


def _name_taken(organization: Organization, name: str) -> bool:
    return (
        Cluster.objects.filter(organization=organization, name=name)
        .exclude(status=ClusterStatus.DELETED)
        .exists()
    )


def request_cluster(*, actor: Actor, organization: Organization, spec: ClusterSpec) -> Operation:
    """Records a local cluster and starts its provisioning workflow; the operation shows the progress.

    The cluster gets a control-plane super user with a random password, stored only encrypted; the
    provisioner writes it into the brokers' 0600 config, and `connection_for` authenticates with it."""
    change = cluster_change("cluster.create", organization, resource_name=spec.name)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, organization)
        overrides = _validate_local_spec(spec)
        engine_version = resolve_engine_version(spec.engine, spec.engine_version)
        if _name_taken(organization, spec.name):
            raise Conflict(f"A cluster named {spec.name!r} already exists.", code="duplicate")
        cluster = Cluster.objects.create(
            organization=organization,
            name=spec.name,
            provider=Provider.LOCAL,
            engine=spec.engine,
            engine_version=engine_version,
            broker_count=spec.broker_count,
            broker_config=overrides,
            requested_port=spec.port,
            security_protocol=spec.security_protocol,
            sasl_mechanism=spec.sasl_mechanism,
            admin_username=LOCAL_SUPER_USER,
            admin_password_encrypted=encrypt_secret(new_super_user_password()),
            dynamic_quorum=True,
        )
        change.on(cluster)
        change.after = snapshot_cluster(cluster)
        operation = new_operation(cluster, OperationKind.PROVISION, actor)
    return operation


def probe_cluster(connection: Connection) -> ClusterDescription:
    try:
        return describe_cluster(connection, timeout_seconds=PROBE_TIMEOUT_SECONDS)
    except AuthenticationFailed as error:
        raise ServiceError(
            "The cluster refused the credentials.",
            code="authentication_failed",
            details={"kafka_error": error.error_name},
        ) from error
    except KafkaGatewayError as error:
        raise ServiceError(
            f"The cluster at {connection.bootstrap_servers} did not answer Metadata.",
            code="cluster_unreachable",
            details={"kafka_error": error.error_name, "message": error.message},
        ) from error


def _health_from(
    description: ClusterDescription,
    expected: int | None,
    dead_node_ids: set[int] | frozenset[int] = frozenset(),
) -> dict[str, Any]:
    return {
        "reachable": True,
        "cluster_id": description.cluster_id,
        "controller_id": description.controller_id,
        "brokers_up": len(description.brokers),
        "brokers_expected": expected,
        "broker_ids": [node.node_id for node in description.brokers],
        "topic_count": description.topic_count,
        "partition_count": description.partition_count,
        "offline_partitions": description.offline_partitions,
        "under_replicated_partitions": description.under_replicated_partitions,
        "dead_broker_ids": sorted(dead_node_ids),
        "error": "",
    }


def _unreachable_health(cluster: Cluster, error: KafkaGatewayError) -> dict[str, Any]:
    return {**cluster.health, "reachable": False, "brokers_up": 0, "error": str(error)}


def register_external_cluster(
    *,
    actor: Actor,
    organization: Organization,
    name: str,
    bootstrap_servers: str,
    security_protocol: str = SecurityProtocol.PLAINTEXT,
    sasl_mechanism: str = SaslMechanism.NONE,
    username: str = "",
    password: str = "",
) -> Cluster:
    """Registers an existing Kafka-compatible cluster; it must answer Metadata with the given credentials."""
    change = cluster_change("cluster.register", organization, resource_name=name)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, organization)
        if not CLUSTER_NAME.match(name):
            raise ServiceError(
                "A cluster name is 1-63 lowercase letters, digits and dashes.", code="invalid_name"
            )
        addresses = [item.strip() for item in bootstrap_servers.split(",") if item.strip()]
        bad = [
            item
            for item in addresses
            if not BOOTSTRAP_ADDRESS.match(item) or not 0 < int(item.rsplit(":", 1)[1]) < 65536
        ]
        if not addresses or bad:
            raise ServiceError(
                "Bootstrap servers are host:port pairs separated by commas.",
                code="invalid_bootstrap_servers",
                details={"invalid": bad},
            )
        sasl = security_protocol.startswith("SASL")
        if sasl and not (sasl_mechanism and username and password):
            raise ServiceError(
                f"{security_protocol} needs a SASL mechanism, a username and a password.",
                code="invalid_credentials",
            )
        if _name_taken(organization, name):
            raise Conflict(f"A cluster named {name!r} already exists.", code="duplicate")
        cluster = Cluster(
            organization=organization,
            name=name,
            provider=Provider.EXTERNAL,
            broker_count=0,
            bootstrap_servers=",".join(addresses),
            security_protocol=security_protocol,
            sasl_mechanism=sasl_mechanism if sasl else "",
            admin_username=username if sasl else "",
            admin_password_encrypted=encrypt_secret(password) if sasl else "",
            status=ClusterStatus.RUNNING,
        )
        description = probe_cluster(connection_for(cluster))
        if description.brokers:
            detected = detect_engine(
                connection_for(cluster), description.brokers[0], timeout_seconds=PROBE_TIMEOUT_SECONDS
            )
            cluster.engine, cluster.engine_version = detected.engine, detected.version
            cluster.engine_evidence = detected.evidence[:500]
        else:
            cluster.engine = Engine.UNKNOWN
        cluster.broker_count = len(description.brokers)
        cluster.health = _health_from(description, None)
        cluster.health_checked_at = timezone.now()
        cluster.save()
        Broker.objects.bulk_create(
            Broker(
                cluster=cluster,
                node_id=node.node_id,
                host=node.host,
                port=node.port,
                status=BrokerStatus.RUNNING,
                last_seen=timezone.now(),
            )
            for node in description.brokers
        )
        change.on(cluster)
        change.after = snapshot_cluster(cluster)
    return cluster


def request_broker_config_change(
    *, actor: Actor, cluster: Cluster, broker_config: dict[str, Any]
) -> Operation:
    """Org admins replace a local cluster's broker config overrides (the static ones, in every node's config
    file); an operation rewrites the configs and restarts the nodes one at a time, each back in sync before
    the next, so a replicated cluster keeps serving. Dynamic configs change without a restart
    (brokers.update_broker_configs)."""
    change = cluster_change(
        "cluster.change_broker_config", cluster.organization, before={"broker_config": cluster.broker_config}
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        if cluster.provider != Provider.LOCAL:
            raise ServiceError(
                "A registered cluster's brokers are configured where it runs.", code="not_local"
            )
        require_running_and_idle(cluster)
        cluster.broker_config = checked_broker_config(broker_config)
        cluster.save(update_fields=["broker_config", "updated_at"])
        operation = new_operation(cluster, OperationKind.CHANGE_BROKER_CONFIG, actor)
        change.after = {"broker_config": cluster.broker_config}
    return operation


def request_cluster_deletion(*, actor: Actor, cluster: Cluster, confirm_name: str) -> Operation:
    """Starts the delete workflow: local brokers are stopped and their data removed; external clusters
    are only forgotten. The caller must repeat the cluster's name."""
    change = cluster_change("cluster.delete", cluster.organization, before=snapshot_cluster(cluster))
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_org_admin(actor, cluster.organization)
        if confirm_name != cluster.name:
            raise ServiceError(
                "Confirm the deletion with the cluster's exact name.", code="confirmation_mismatch"
            )
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        if cluster.status in (ClusterStatus.DELETING, ClusterStatus.DELETED):
            raise Conflict(f"Cluster {cluster.name} is already {cluster.status}.", code="already_deleting")
        set_cluster_status(cluster, ClusterStatus.DELETING)
        # Whatever was running for it is superseded; the delete workflow stops the processes.
        cluster.operations.filter(state__in=ACTIVE_OPERATION_STATES).update(
            state=OperationState.FAILED,
            error="Superseded by the cluster's deletion.",
            finished_at=timezone.now(),
        )
        operation = new_operation(cluster, OperationKind.DELETE, actor)
        change.after = snapshot_cluster(cluster)
    return operation


def read_broker_configs(*, cluster: Cluster) -> tuple[dict[int, dict[str, dict]], str]:
    """Each broker's configs as the cluster reports them (DescribeConfigs v4 with types and documentation,
    asked of each broker), or an empty map and why. A broker that does not answer is left out and named in
    the reason; the others still show."""
    node_ids = list(cluster.brokers.values_list("node_id", flat=True))
    if not node_ids or cluster.status not in (*WATCHED_STATUSES, ClusterStatus.PROVISIONING):
        return {}, ""
    connection = connection_for(cluster)
    try:
        listed = {node.node_id: node for node in describe_cluster(connection).brokers}
    except KafkaGatewayError as error:
        return {}, str(error)
    configs: dict[int, dict[str, dict]] = {}
    problems: list[str] = []
    for node_id in node_ids:
        if node_id not in listed:
            problems.append(f"broker {node_id} is not in the cluster's metadata")
            continue
        try:
            # The gateway's default timeout, not the health probe's 3 s: a busy machine can take longer
            # than that to open a connection to a just-started broker.
            entries = describe_documented_configs(connection, broker=listed[node_id])
        except KafkaGatewayError as error:
            problems.append(f"broker {node_id}: {error}")
            continue
        configs[node_id] = config_entries(entries)
    return configs, "; ".join(problems)


def check_cluster_health(*, cluster: Cluster) -> Cluster:
    """Observes a running or degraded cluster: brokers up, under-replicated and offline partitions. A local
    broker whose process died marks the cluster degraded and gets a restart operation; a cluster that
    answers with every broker and fully replicated partitions is running again."""
    if cluster.status not in WATCHED_STATUSES or active_operation(cluster) is not None:
        return cluster
    dead: list[Broker] = []
    brokers = list(cluster.brokers.all())
    if cluster.provider == Provider.LOCAL:
        provisioner = provisioner_for(cluster)
        dead = [b for b in brokers if not provisioner.is_alive(node_plan(b), b.pid)]
    # The survivors of a replicated cluster still answer: their view (under-replicated partitions, the
    # ISR without the dead broker) is worth recording even while a broker is down. With none left there
    # is nobody to ask.
    if len(dead) < len(brokers) or not brokers:
        observe_cluster(cluster, dead_node_ids={b.node_id for b in dead})
    if dead:
        with transaction.atomic():
            for broker in dead:
                broker.status = BrokerStatus.DEAD
                broker.save(update_fields=["status"])
            ids = ", ".join(str(b.node_id) for b in dead)
            set_cluster_status(
                cluster, ClusterStatus.DEGRADED, f"Broker {ids} is not running; restarting it."
            )
            new_operation(
                cluster,
                OperationKind.RESTART_BROKER,
                Actor.system(),
                parameters={"node_ids": [b.node_id for b in dead]},
            )
    return cluster


def observe_cluster(
    cluster: Cluster,
    *,
    dead_node_ids: set[int] | frozenset[int] = frozenset(),
    description: ClusterDescription | None = None,
) -> None:
    """Stores what the cluster reports about itself and sets running or degraded from it: degraded while a
    broker is missing or any partition is under-replicated or offline. `description` is a Metadata answer the
    caller already has (asking again could reach a broker whose view is a moment behind)."""
    expected = cluster.brokers.count() if cluster.provider == Provider.LOCAL else None
    try:
        if description is None:
            description = describe_cluster(connection_for(cluster), timeout_seconds=PROBE_TIMEOUT_SECONDS)
    except KafkaGatewayError as error:
        cluster.health = _unreachable_health(cluster, error)
        cluster.health_checked_at = timezone.now()
        cluster.save(update_fields=["health", "health_checked_at", "updated_at"])
        reason = (
            "The cluster is unreachable." if isinstance(error, ClusterUnreachable) else "Metadata failed."
        )
        set_cluster_status(cluster, ClusterStatus.DEGRADED, f"{reason} ({error})")
        return
    now = timezone.now()
    cluster.health = _health_from(description, expected, dead_node_ids)
    cluster.health_checked_at = now
    cluster.save(update_fields=["health", "health_checked_at", "updated_at"])
    seen = {node.node_id for node in description.brokers} - set(dead_node_ids)
    cluster.brokers.filter(node_id__in=seen).update(last_seen=now, status=BrokerStatus.RUNNING)
    problems = []
    if dead_node_ids:
        problems.append(f"broker {', '.join(map(str, sorted(dead_node_ids)))} is not running")
    if expected is not None and len(seen) < expected:
        problems.append(f"{len(seen)} of {expected} brokers answer")
    if description.offline_partitions:
        problems.append(f"{description.offline_partitions} partitions are offline")
    if description.under_replicated_partitions:
        problems.append(f"{description.under_replicated_partitions} partitions are under-replicated")
    if problems:
        set_cluster_status(cluster, ClusterStatus.DEGRADED, "; ".join(problems) + ".")
    else:
        set_cluster_status(cluster, ClusterStatus.RUNNING)


def resend_stuck_operations(*, older_than: timedelta = timedelta(minutes=1)) -> list[int]:
    """Operations created while the queue was down are still pending: send them again."""
    cutoff = timezone.now() - older_than
    ids = list(
        Operation.objects.filter(state=OperationState.PENDING, created_at__lt=cutoff).values_list(
            "id", flat=True
        )
    )
    for operation_id in ids:
        enqueue_operation(operation_id)
    return ids


def start_local_clusters() -> list[str]:
    """Brings back the local clusters the stack stopped (or that died with the host); returns what it did."""
    report = []
    for cluster in Cluster.objects.filter(
        provider=Provider.LOCAL, status__in=[ClusterStatus.STOPPED, *WATCHED_STATUSES]
    ).select_related("organization"):
        provisioner = provisioner_for(cluster)
        brokers = list(cluster.brokers.all())
        try:
            # Every node starts before any is waited for: a replicated cluster's brokers only answer once
            # a majority of its controller voters runs.
            for broker in brokers:
                plan = node_plan(broker)
                running = provisioner.running_pid(plan, broker.pid)
                if running is not None:
                    broker.pid = running
                else:
                    broker.pid = provisioner.start(plan)
                    broker.status = BrokerStatus.STARTING
                    broker.save(update_fields=["pid", "status"])
            for broker in brokers:
                provisioner.wait_until_ready(
                    node_plan(broker),
                    broker.pid,
                    connection=connection_for(cluster, bootstrap_servers=broker.address),
                    timeout_seconds=provisioner.start_timeout_seconds,
                )
                broker.status, broker.last_seen = BrokerStatus.RUNNING, timezone.now()
                broker.save(update_fields=["pid", "status", "last_seen"])
        except ProvisioningFailed as failure:
            set_cluster_status(cluster, ClusterStatus.DEGRADED, failure.reason)
            report.append(f"cluster {cluster.name}: {failure.reason}")
            continue
        set_cluster_status(cluster, ClusterStatus.RUNNING)
        report.append(f"cluster {cluster.name}: running at {cluster.bootstrap_servers}")
    return report


def stop_local_clusters() -> list[str]:
    """Stops every local broker process, keeping data and definitions (the stack's Ctrl-C)."""
    report = []
    for cluster in Cluster.objects.filter(provider=Provider.LOCAL).exclude(
        status__in=[ClusterStatus.DELETED, ClusterStatus.STOPPED]
    ):
        provisioner = provisioner_for(cluster)
        # Broker-only nodes first, controller voters last: a broker's controlled shutdown needs the quorum.
        for broker in sorted(cluster.brokers.all(), key=lambda each: (each.is_controller, each.node_id)):
            provisioner.stop(node_plan(broker), broker.pid, timeout_seconds=STOP_TIMEOUT_SECONDS)
            broker.status = BrokerStatus.STOPPED
            broker.save(update_fields=["status"])
        if cluster.status in (ClusterStatus.RUNNING, ClusterStatus.DEGRADED, ClusterStatus.PROVISIONING):
            set_cluster_status(cluster, ClusterStatus.STOPPED, "Stopped with the stack.")
        report.append(f"cluster {cluster.name}: stopped")
    return report


def ensure_default_cluster(
    *, organization_name: str, cluster_name: str, port: int, broker_count: int = 3
) -> Cluster | None:
    """Defines the organization's default local cluster once (idempotent). Returns it when newly requested.
    Like every new local cluster, three brokers (RF 3) unless asked otherwise (DEFAULT_CLUSTER_BROKERS)."""
    from controlplane.tenancy import services as tenancy

    actor = Actor.system()
    organization = Organization.objects.filter(name=organization_name).first()
    if organization is None:
        organization = tenancy.create_organization(actor=actor, name=organization_name)
    if (
        Cluster.objects.filter(organization=organization, name=cluster_name)
        .exclude(status=ClusterStatus.DELETED)
        .exists()
    ):
        return None
    operation = request_cluster(
        actor=actor,
        organization=organization,
        spec=ClusterSpec(name=cluster_name, port=port, broker_count=broker_count),
    )
    return operation.cluster
