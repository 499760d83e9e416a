"""The long-running workflows behind an Operation: provision, delete, restart brokers.

Each step is recorded as it starts (step n of m, with timestamped log lines), so the API shows the
progress while the worker runs. Steps are idempotent: a redelivered task resumes where it stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from controlplane.clusters import services
from controlplane.clusters.choices import BrokerStatus, ClusterStatus, OperationKind, OperationState, Provider
from controlplane.clusters.models import Broker, Cluster, Operation
from controlplane.clusters.provisioners.base import ProvisioningFailed
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.gateway import describe_cluster

logger = logging.getLogger(__name__)

# The Celery time limit of clusters.run_operation: a run older than this lost its worker.
OPERATION_TIME_LIMIT_SECONDS = 300


class OperationLog:
    """Writes an operation's progress immediately, outside any transaction, so it is visible while running."""

    def __init__(self, operation: Operation) -> None:
        self.operation = operation

    def line(self, message: str) -> None:
        self.operation.log = [*self.operation.log, {"at": timezone.now().isoformat(), "message": message}]
        self.operation.save(update_fields=["log"])

    def step(self, name: str) -> None:
        number = self.operation.steps.index(name) + 1
        self.operation.current_step = number
        self.operation.save(update_fields=["current_step"])
        self.line(f"step {number}/{len(self.operation.steps)}: {name}")

    def finish(self, *, error: str = "") -> None:
        self.operation.state = OperationState.FAILED if error else OperationState.SUCCEEDED
        self.operation.error = error
        self.operation.finished_at = timezone.now()
        self.operation.save(update_fields=["state", "error", "finished_at"])
        self.line(f"failed: {error}" if error else "succeeded")


def run_operation(operation_id: int) -> str:
    """Runs one operation to its end; a finished or superseded operation is left alone."""
    if not _claim(operation_id):
        return "nothing to do"
    operation = Operation.objects.select_related("cluster__organization").get(pk=operation_id)
    progress = OperationLog(operation)
    workflow: Callable[[Cluster, OperationLog], None] = {
        OperationKind.PROVISION: _provision,
        OperationKind.DELETE: _delete,
        OperationKind.RESTART_BROKER: _restart_brokers,
    }[operation.kind]
    try:
        workflow(operation.cluster, progress)
    except (ProvisioningFailed, KafkaGatewayError) as failure:
        reason = failure.reason if isinstance(failure, ProvisioningFailed) else str(failure)
        _fail(operation, progress, reason)
        return OperationState.FAILED
    except Exception as unexpected:  # the operation must end with a reason, whatever went wrong
        logger.exception("operation %s failed", operation_id)
        _fail(operation, progress, f"Unexpected error: {unexpected}")
        raise
    progress.finish()
    return OperationState.SUCCEEDED


def _claim(operation_id: int) -> bool:
    """Takes a pending operation, or one whose worker died mid-way (acks_late redelivers it); a duplicate
    delivery of an operation another worker is running, or a finished one, is skipped."""
    now = timezone.now()
    claimed = Operation.objects.filter(pk=operation_id, state=OperationState.PENDING).update(
        state=OperationState.RUNNING, started_at=now
    )
    if claimed:
        return True
    abandoned_before = now - timedelta(seconds=OPERATION_TIME_LIMIT_SECONDS)
    return bool(
        Operation.objects.filter(
            pk=operation_id, state=OperationState.RUNNING, started_at__lt=abandoned_before
        ).update(started_at=now)
    )


def _fail(operation: Operation, progress: OperationLog, reason: str) -> None:
    # The cluster's status is settled before the operation reads as finished, so whoever waits for the
    # operation sees the cluster's outcome too.
    try:
        cluster = Cluster.objects.get(pk=operation.cluster_id)
        if operation.kind == OperationKind.PROVISION:
            _stop_brokers(cluster, progress)
            services.set_cluster_status(cluster, ClusterStatus.FAILED, reason)
        elif operation.kind == OperationKind.DELETE:
            services.set_cluster_status(cluster, ClusterStatus.FAILED, f"Deletion failed: {reason}")
        elif cluster.status in (ClusterStatus.RUNNING, ClusterStatus.DEGRADED):
            services.set_cluster_status(cluster, ClusterStatus.DEGRADED, reason)
    finally:
        progress.finish(error=reason)


def _provision(cluster: Cluster, progress: OperationLog) -> None:
    if cluster.status in (ClusterStatus.DELETING, ClusterStatus.DELETED):
        raise ProvisioningFailed(f"The cluster is {cluster.status}.")
    services.set_cluster_status(cluster, ClusterStatus.PROVISIONING)
    provisioner = services.provisioner_for(cluster)

    progress.step("allocate ports")
    if not cluster.brokers.exists():
        with transaction.atomic():
            # Ports of other live local clusters stay theirs even while their processes are stopped.
            reserved = set(
                Broker.objects.filter(cluster__provider=Provider.LOCAL)
                .exclude(cluster=cluster)
                .exclude(cluster__status=ClusterStatus.DELETED)
                .values_list("port", flat=True)
            )
            plans = provisioner.plan_nodes(
                cluster_id=cluster.id,
                broker_count=cluster.broker_count,
                first_port=cluster.requested_port,
                reserved_ports=reserved,
            )
            for plan in plans:
                Broker.objects.create(
                    cluster=cluster,
                    node_id=plan.node_id,
                    host=plan.host,
                    port=plan.port,
                    data_dir=str(plan.data_dir),
                )
            cluster.bootstrap_servers = ",".join(plan.address for plan in plans)
            cluster.save(update_fields=["bootstrap_servers", "updated_at"])
    brokers = list(cluster.brokers.all())
    for broker in brokers:
        progress.line(f"broker {broker.node_id}: {broker.address}")

    progress.step("write configs")
    security = services.listener_security(cluster)
    progress.line(
        f"listeners: {security.protocol}"
        + (f", ACLs on, super user {security.super_user}" if security.uses_sasl else "")
    )
    for broker in brokers:
        provisioner.write_config(
            cluster_id=cluster.id,
            node=services.node_plan(broker),
            overrides=cluster.broker_config,
            security=security,
        )
        progress.line(f"broker {broker.node_id}: wrote {broker.data_dir}/broker.properties")

    _bring_up(cluster, brokers, progress)


def _bring_up(cluster: Cluster, brokers: list[Broker], progress: OperationLog) -> None:
    """The steps provisioning and restarting share: start, wait for Metadata, verify."""
    progress.step("start brokers")
    _start_dead_brokers(cluster, brokers, progress)
    progress.step("wait for Metadata")
    _wait_for_brokers(cluster, brokers, progress)
    progress.step("verify")
    _verify(cluster, progress)


def _start_dead_brokers(cluster: Cluster, brokers: list[Broker], progress: OperationLog) -> None:
    provisioner = services.provisioner_for(cluster)
    for broker in brokers:
        plan = services.node_plan(broker)
        running = provisioner.running_pid(plan, broker.pid)
        if running is not None:
            broker.pid = running
            broker.save(update_fields=["pid"])
            progress.line(f"broker {broker.node_id}: already running (pid {running})")
            continue
        restarting = broker.pid is not None
        broker.pid = provisioner.start(plan)
        broker.status = BrokerStatus.STARTING
        broker.restart_count += int(restarting)
        broker.save(update_fields=["pid", "status", "restart_count"])
        progress.line(f"broker {broker.node_id}: started (pid {broker.pid})")


def _wait_for_brokers(cluster: Cluster, brokers: list[Broker], progress: OperationLog) -> None:
    provisioner = services.provisioner_for(cluster)
    for broker in brokers:
        provisioner.wait_until_ready(
            services.node_plan(broker),
            broker.pid,
            connection=services.connection_for(cluster, bootstrap_servers=broker.address),
            timeout_seconds=services.START_TIMEOUT_SECONDS,
        )
        broker.status, broker.last_seen = BrokerStatus.RUNNING, timezone.now()
        broker.save(update_fields=["status", "last_seen"])
        progress.line(f"broker {broker.node_id}: answers Metadata at {broker.address}")


def _verify(cluster: Cluster, progress: OperationLog) -> None:
    description = describe_cluster(
        services.connection_for(cluster), timeout_seconds=services.PROBE_TIMEOUT_SECONDS
    )
    expected = set(cluster.brokers.values_list("node_id", flat=True))
    seen = {node.node_id for node in description.brokers}
    if not expected <= seen:
        raise ProvisioningFailed(f"Metadata lists brokers {sorted(seen)}, expected {sorted(expected)}.")
    progress.line(
        f"cluster {description.cluster_id}: {len(seen)} broker(s), controller {description.controller_id}"
    )
    services.observe_cluster(cluster)


def _restart_brokers(cluster: Cluster, progress: OperationLog) -> None:
    if cluster.status not in (ClusterStatus.RUNNING, ClusterStatus.DEGRADED):
        raise ProvisioningFailed(
            f"The cluster is {cluster.status}; only running or degraded clusters restart brokers."
        )
    node_ids = progress.operation.parameters.get("node_ids")
    brokers = list(cluster.brokers.filter(node_id__in=node_ids) if node_ids else cluster.brokers.all())
    _bring_up(cluster, brokers, progress)


def _stop_brokers(cluster: Cluster, progress: OperationLog) -> None:
    if cluster.provider != Provider.LOCAL:
        return
    provisioner = services.provisioner_for(cluster)
    for broker in cluster.brokers.all():
        provisioner.stop(
            services.node_plan(broker), broker.pid, timeout_seconds=services.STOP_TIMEOUT_SECONDS
        )
        broker.status = BrokerStatus.STOPPED
        broker.save(update_fields=["status"])
        progress.line(f"broker {broker.node_id}: stopped")


def _delete(cluster: Cluster, progress: OperationLog) -> None:
    progress.step("stop brokers")
    if cluster.provider == Provider.EXTERNAL:
        progress.line("external cluster: nothing runs here, it is only forgotten")
    _stop_brokers(cluster, progress)
    progress.step("remove data")
    if cluster.provider == Provider.LOCAL:
        services.provisioner_for(cluster).remove(cluster_id=cluster.id)
        progress.line("removed the brokers' data, configs and logs")
    progress.step("release")
    with transaction.atomic():
        # Freeing the broker rows frees their ports for other clusters.
        cluster.brokers.all().delete()
        services.set_cluster_status(cluster, ClusterStatus.DELETED)
