"""The long-running workflows behind an Operation: provision, delete, restart, add and remove brokers.

Each step is recorded as it starts (step n of m, with timestamped log lines), so the API shows the
progress while the worker runs. Steps are idempotent: a redelivered task resumes where it stopped.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from controlplane.clusters import connections, membership, services
from controlplane.clusters.choices import BrokerStatus, ClusterStatus, OperationKind, OperationState, Provider
from controlplane.clusters.models import Broker, Cluster, Operation
from controlplane.clusters.provisioners.base import NodePlan, ProvisioningFailed
from controlplane.core.errors import ServiceError
from controlplane.kafka.cluster import ClusterDescription, describe_cluster, unregister_broker
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.quorum import QuorumView, add_raft_voter, describe_quorum, remove_raft_voter
from controlplane.kafka.reassignments import alter_partition_reassignments
from controlplane.kafka.topics import list_topics

logger = logging.getLogger(__name__)

# The Celery time limit of clusters.run_operation: a run older than this lost its worker.
OPERATION_TIME_LIMIT_SECONDS = 300
# How long a cluster may take until Metadata lists every broker (they register and are unfenced once the
# controller quorum has elected a leader).
REGISTRATION_TIMEOUT_SECONDS = 60.0
# Draining a broker waits this long for its replicas to be copied elsewhere, within the operation's limit.
DRAIN_TIMEOUT_SECONDS = 200.0
# A voter change refused for now (another not committed, a leader change) is sent again this long.
VOTER_CHANGE_TIMEOUT_SECONDS = 60.0
RETRIED_VOTER_ERRORS = ("REQUEST_TIMED_OUT", "NOT_CONTROLLER", "_TIMED_OUT")


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
        OperationKind.ADD_BROKER: _add_broker,
        OperationKind.REMOVE_BROKER: _remove_broker,
        OperationKind.REPLACE_CONTROLLER: _replace_controller,
        OperationKind.CHANGE_BROKER_CONFIG: _change_broker_config,
    }[operation.kind]
    try:
        workflow(operation.cluster, progress)
    except (ProvisioningFailed, KafkaGatewayError, ServiceError) as failure:
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
            reserved = _reserved_ports(cluster)
            plans = provisioner.plan_nodes(
                cluster_id=cluster.id,
                node_ids=list(range(1, cluster.broker_count + 1)),
                controller_ids=provisioner.controller_ids(cluster.broker_count),
                first_port=cluster.requested_port,
                reserved_ports=reserved,
            )
            for plan in plans:
                _create_broker(cluster, plan)
            cluster.bootstrap_servers = ",".join(plan.address for plan in plans)
            cluster.save(update_fields=["bootstrap_servers", "updated_at"])
    brokers = list(cluster.brokers.all())
    for broker in brokers:
        _describe_node(broker, progress)

    progress.step("write configs")
    security = services.listener_security(cluster)
    progress.line(
        f"listeners: {security.protocol}"
        + (f", ACLs on, super user {security.super_user}" if security.uses_sasl else "")
    )
    _write_configs(cluster, brokers, progress)
    if cluster.dynamic_quorum:
        _format_initial_controllers(cluster, brokers, progress)
    _bring_up(cluster, brokers, progress)


def _format_initial_controllers(cluster: Cluster, brokers: list[Broker], progress: OperationLog) -> None:
    """Formats each initial controller with the same voter set (`--initial-controllers`), once; the set
    and its directory ids are kept in the cluster directory, so a provisioning retried after a crash
    formats the rest with the same ones."""
    provisioner = services.provisioner_for(cluster)
    saved = provisioner.cluster_dir(cluster.id) / "initial-controllers"
    if saved.exists():
        initial = saved.read_text().strip()
    else:
        initial = ",".join(
            f"{b.node_id}@{b.host}:{b.controller_port}:{uuid.uuid4()}" for b in brokers if b.is_controller
        )
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(initial + "\n")
    for broker in brokers:
        if broker.is_controller:
            provisioner.format_controller(services.node_plan(broker), initial_controllers=initial)
    progress.line(f"formatted the controllers' metadata directories (initial voters {initial.count('@')})")


def _reserved_ports(cluster: Cluster) -> set[int]:
    """Ports of other live local clusters, which stay theirs even while their processes are stopped, and
    this cluster's own."""
    brokers = Broker.objects.filter(cluster__provider=Provider.LOCAL).exclude(
        cluster__status=ClusterStatus.DELETED
    )
    return {
        port
        for ports in brokers.values_list("port", "controller_port", "metrics_port")
        for port in ports
        if port
    }


def _create_broker(cluster: Cluster, plan: NodePlan) -> Broker:
    return Broker.objects.create(
        cluster=cluster,
        node_id=plan.node_id,
        host=plan.host,
        port=plan.port,
        controller_port=plan.controller_port,
        metrics_port=plan.metrics_port,
        data_dir=str(plan.data_dir),
    )


def _describe_node(broker: Broker, progress: OperationLog) -> None:
    role = f"broker + controller (quorum port {broker.controller_port})" if broker.is_controller else "broker"
    progress.line(f"broker {broker.node_id}: {broker.address}, {role}")


def _write_configs(cluster: Cluster, brokers: list[Broker], progress: OperationLog) -> None:
    provisioner = services.provisioner_for(cluster)
    security = services.listener_security(cluster)
    topology = services.cluster_topology(cluster)
    for broker in brokers:
        provisioner.write_config(
            cluster_id=cluster.id,
            node=services.node_plan(broker),
            overrides=cluster.broker_config,
            security=security,
            topology=topology,
        )
        progress.line(f"broker {broker.node_id}: wrote {broker.data_dir}/broker.properties")


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
            connection=connections.connection_for(cluster, bootstrap_servers=broker.address),
            timeout_seconds=provisioner.start_timeout_seconds,
        )
        broker.status, broker.last_seen = BrokerStatus.RUNNING, timezone.now()
        broker.save(update_fields=["status", "last_seen"])
        progress.line(f"broker {broker.node_id}: answers Metadata at {broker.address}")


def _verify(cluster: Cluster, progress: OperationLog) -> None:
    """Waits until the cluster's Metadata lists every broker: in a replicated cluster each has then
    registered with the controller and been unfenced. Then, for as long as the same deadline allows, until
    no partition is under-replicated or offline (replicas of a restarted broker catching up); a cluster
    still short of that when the time is up is degraded, which the health checks take from there."""
    expected = set(cluster.brokers.values_list("node_id", flat=True))
    deadline = time.monotonic() + REGISTRATION_TIMEOUT_SECONDS
    reported: set[int] = set()
    listed: ClusterDescription | None = None
    while True:
        try:
            description = describe_cluster(
                connections.connection_for(cluster), timeout_seconds=services.PROBE_TIMEOUT_SECONDS
            )
            seen = {node.node_id for node in description.brokers}
        except KafkaGatewayError:
            if time.monotonic() > deadline and listed is None:
                raise
            description, seen = None, set()
        for node_id in sorted((seen & expected) - reported):
            progress.line(f"broker {node_id}: registered and listed in Metadata")
        reported |= seen & expected
        if description is not None and expected <= seen:
            listed = description
            if not description.under_replicated_partitions and not description.offline_partitions:
                break
        if time.monotonic() > deadline:
            if listed is None:
                raise ProvisioningFailed(
                    f"Metadata lists brokers {sorted(seen)}, expected {sorted(expected)}."
                )
            break
        time.sleep(0.25)
    progress.line(
        f"cluster {listed.cluster_id}: {len(expected)} broker(s), controller {listed.controller_id}"
    )
    services.observe_cluster(cluster, description=listed)


def _restart_brokers(cluster: Cluster, progress: OperationLog) -> None:
    if cluster.status not in (ClusterStatus.RUNNING, ClusterStatus.DEGRADED):
        raise ProvisioningFailed(
            f"The cluster is {cluster.status}; only running or degraded clusters restart brokers."
        )
    node_ids = progress.operation.parameters.get("node_ids")
    brokers = list(cluster.brokers.filter(node_id__in=node_ids) if node_ids else cluster.brokers.all())
    _bring_up(cluster, brokers, progress)


def _change_broker_config(cluster: Cluster, progress: OperationLog) -> None:
    """Rewrites every node's config, then restarts the nodes one at a time: broker-only nodes first, the
    controller voters after, the active controller last (one leader election instead of several). Each
    node must answer Metadata again and the cluster must have no under-replicated partition before the
    next one stops, so replicated topics keep their leaders and in-sync replicas."""
    brokers = list(cluster.brokers.all())
    progress.step("write configs")
    progress.line(f"broker config overrides: {cluster.broker_config or '(none)'}")
    _write_configs(cluster, brokers, progress)
    progress.step("restart brokers one at a time")
    active = (cluster.health or {}).get("controller_id")
    provisioner = services.provisioner_for(cluster)
    for broker in sorted(brokers, key=lambda b: (b.is_controller, b.node_id == active, b.node_id)):
        provisioner.stop(
            services.node_plan(broker), broker.pid, timeout_seconds=services.STOP_TIMEOUT_SECONDS
        )
        broker.status = BrokerStatus.STOPPED
        broker.save(update_fields=["status"])
        progress.line(f"broker {broker.node_id}: stopped")
        _start_dead_brokers(cluster, [broker], progress)
        _wait_for_brokers(cluster, [broker], progress)
        _wait_until_in_sync(cluster, broker.node_id, progress)
    progress.step("verify")
    _verify(cluster, progress)


def _wait_until_in_sync(cluster: Cluster, node_id: int, progress: OperationLog) -> None:
    """Waits until the cluster lists `node_id` and no partition is under-replicated or offline."""
    deadline = time.monotonic() + REGISTRATION_TIMEOUT_SECONDS
    while True:
        try:
            description = describe_cluster(
                connections.connection_for(cluster), timeout_seconds=services.PROBE_TIMEOUT_SECONDS
            )
            listed = any(node.node_id == node_id for node in description.brokers)
            lagging = description.under_replicated_partitions + description.offline_partitions
        except KafkaGatewayError as error:
            listed, lagging = False, -1
            last = str(error)
        else:
            last = f"{lagging} partition(s) under-replicated or offline" if listed else "not listed"
        if listed and lagging == 0:
            progress.line(f"broker {node_id}: back, every partition in sync")
            return
        if time.monotonic() > deadline:
            raise ProvisioningFailed(
                f"Broker {node_id} was not back in sync {REGISTRATION_TIMEOUT_SECONDS:.0f}s after its restart "
                f"({last}); the remaining brokers were not restarted."
            )
        time.sleep(0.25)


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


def _add_broker(cluster: Cluster, progress: OperationLog) -> None:
    """A new broker-only node with the cluster's voters and security; it registers with the controller."""
    node_id = int(progress.operation.parameters["node_id"])
    provisioner = services.provisioner_for(cluster)
    progress.step("allocate ports")
    broker = cluster.brokers.filter(node_id=node_id).first()
    if broker is None:
        with transaction.atomic():
            (plan,) = provisioner.plan_nodes(
                cluster_id=cluster.id,
                node_ids=[node_id],
                controller_ids=set(),
                first_port=0,
                reserved_ports=_reserved_ports(cluster),
            )
            broker = _create_broker(cluster, plan)
            cluster.broker_count = cluster.brokers.count()
            cluster.save(update_fields=["broker_count", "updated_at"])
    _describe_node(broker, progress)
    progress.step("write configs")
    _write_configs(cluster, [broker], progress)
    _bring_up(cluster, [broker], progress)
    _refresh_bootstrap_servers(cluster)


def _refresh_bootstrap_servers(cluster: Cluster) -> None:
    cluster.bootstrap_servers = ",".join(b.address for b in cluster.brokers.all())
    cluster.broker_count = cluster.brokers.count()
    cluster.save(update_fields=["bootstrap_servers", "broker_count", "updated_at"])


def _remove_broker(cluster: Cluster, progress: OperationLog) -> None:
    """Drains a broker-only node (its replicas go to the others), then stops, unregisters and deletes it."""
    node_id = int(progress.operation.parameters["node_id"])
    broker = cluster.brokers.filter(node_id=node_id).first()
    connection = connections.connection_for(cluster)
    progress.step("plan reassignment")
    if broker is None:
        progress.line(f"broker {node_id} is already gone")
        return
    moves = membership.plan_broker_drain(cluster, node_id)
    progress.line(f"{len(moves)} partition(s) have a replica on broker {node_id}")
    for (topic, partition), target in sorted(moves.items()):
        progress.line(f"{topic}-{partition}: -> {target}")
    alter_partition_reassignments(connection, moves)

    progress.step("move replicas")
    _wait_until_drained(cluster, node_id, progress)

    progress.step("stop broker")
    # Clients stop bootstrapping from it before it goes away.
    cluster.bootstrap_servers = ",".join(b.address for b in cluster.brokers.exclude(node_id=node_id))
    cluster.save(update_fields=["bootstrap_servers", "updated_at"])
    provisioner = services.provisioner_for(cluster)
    plan = services.node_plan(broker)
    provisioner.stop(plan, broker.pid, timeout_seconds=services.STOP_TIMEOUT_SECONDS)
    broker.status = BrokerStatus.STOPPED
    broker.save(update_fields=["status"])
    progress.line(f"broker {node_id}: stopped")

    progress.step("unregister")
    unregister_broker(connections.connection_for(cluster), node_id=node_id)
    progress.line(f"broker {node_id}: unregistered from the controller")

    progress.step("remove data")
    provisioner.remove_node(plan)
    broker.delete()
    _refresh_bootstrap_servers(cluster)
    progress.line(f"broker {node_id}: removed {plan.data_dir}")
    services.observe_cluster(cluster)


def _wait_until_drained(cluster: Cluster, node_id: int, progress: OperationLog) -> None:
    """Waits until no partition has a replica on `node_id` and no reassignment still runs, logging the
    copy progress now and then."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_SECONDS
    last_report = 0.0
    while True:
        topics = list_topics(
            connections.connection_for(cluster), timeout_seconds=services.PROBE_TIMEOUT_SECONDS
        )
        holding = [
            f"{name}-{info.partition}"
            for name, topic in topics.items()
            for info in topic.partitions
            if node_id in info.replicas
        ]
        if not holding:
            progress.line(f"broker {node_id} holds no replicas")
            return
        if time.monotonic() > deadline:
            raise ProvisioningFailed(
                f"Broker {node_id} still holds {len(holding)} replica(s) after {DRAIN_TIMEOUT_SECONDS:.0f}s: "
                + ", ".join(holding[:10])
            )
        if time.monotonic() - last_report > 5:
            view = membership.describe_reassignments(cluster=cluster)
            progress.line(
                f"{len(holding)} replica(s) still on broker {node_id}; copies {view.percent:.0f}% done"
            )
            last_report = time.monotonic()
        time.sleep(0.5)


def _quorum(cluster: Cluster) -> QuorumView | None:
    try:
        return describe_quorum(
            connections.connection_for(cluster), timeout_seconds=services.PROBE_TIMEOUT_SECONDS
        )
    except KafkaGatewayError:
        return None  # a leader change or a broker restarting: asked again


def _wait_for_quorum(
    cluster: Cluster, done: Callable[[QuorumView], bool], what: str, timeout_seconds: float
) -> QuorumView:
    deadline = time.monotonic() + timeout_seconds
    while True:
        view = _quorum(cluster)
        if view is not None and done(view):
            return view
        if time.monotonic() > deadline:
            raise ProvisioningFailed(f"Timed out after {timeout_seconds:.0f}s waiting for {what}.")
        time.sleep(0.25)


def _replace_controller(cluster: Cluster, progress: OperationLog) -> None:
    """KIP-853, one voter at a time, all through the Kafka protocol: a new broker+controller node joins as
    an observer and catches up, AddRaftVoter makes it a voter, the old node's replicas move off it,
    RemoveRaftVoter takes it out of the quorum, and it is stopped, unregistered and removed."""
    old_id = int(progress.operation.parameters["node_id"])
    new_id = int(progress.operation.parameters["new_node_id"])
    provisioner = services.provisioner_for(cluster)
    progress.step("allocate ports")
    new = cluster.brokers.filter(node_id=new_id).first()
    if new is None:
        with transaction.atomic():
            (plan,) = provisioner.plan_nodes(
                cluster_id=cluster.id,
                node_ids=[new_id],
                controller_ids={new_id},
                first_port=0,
                reserved_ports=_reserved_ports(cluster),
            )
            new = _create_broker(cluster, plan)
            cluster.broker_count = cluster.brokers.count()
            cluster.save(update_fields=["broker_count", "updated_at"])
    _describe_node(new, progress)

    progress.step("write configs")
    _write_configs(cluster, [new], progress)
    provisioner.format_controller(services.node_plan(new), initial_controllers=None)
    progress.line(f"broker {new_id}: formatted to join the quorum as an observer")

    progress.step("start the new node")
    _start_dead_brokers(cluster, [new], progress)
    _wait_for_brokers(cluster, [new], progress)

    progress.step("catch up as an observer")
    view = _wait_for_quorum(
        cluster,
        lambda v: (
            v.voter(new_id) is not None
            or (
                (o := v.observer(new_id)) is not None
                and o.directory_id is not None
                and o.log_end_offset >= v.high_watermark
            )
        ),
        f"controller {new_id} to catch up with the metadata log",
        provisioner.start_timeout_seconds,
    )
    joined = view.voter(new_id) or view.observer(new_id)
    directory_id = None if joined is None else joined.directory_id
    if joined is None or directory_id is None:
        raise ProvisioningFailed(f"Controller {new_id} reports no directory id; is its quorum dynamic?")
    progress.line(
        f"controller {new_id}: caught up at offset {joined.log_end_offset} (directory {joined.directory_id})"
    )

    progress.step("add voter")
    if view.voter(new_id) is None:
        _retry_while_pending(
            lambda: add_raft_voter(
                connections.connection_for(cluster),
                node_id=new_id,
                directory_id=directory_id,
                host=new.host,
                port=new.controller_port,
            ),
            f"AddRaftVoter of {new_id}",
            lambda: (v := _quorum(cluster)) is not None and v.voter(new_id) is not None,
        )
    _wait_for_quorum(cluster, lambda v: v.voter(new_id) is not None, f"{new_id} among the voters", 30)
    progress.line(f"controller {new_id}: a voter")

    old = cluster.brokers.filter(node_id=old_id).first()
    progress.step("move replicas")
    if old is not None:
        moves = membership.plan_broker_drain(cluster, old_id)
        progress.line(f"{len(moves)} partition(s) have a replica on broker {old_id}")
        if moves:
            alter_partition_reassignments(connections.connection_for(cluster), moves)
        _wait_until_drained(cluster, old_id, progress)

    progress.step("remove voter")
    voters = _wait_for_quorum(cluster, lambda v: True, "the quorum", 30)
    leaving = voters.voter(old_id)
    if leaving is not None:
        _retry_while_pending(
            lambda: remove_raft_voter(
                connections.connection_for(cluster), node_id=old_id, directory_id=leaving.directory_id
            ),
            f"RemoveRaftVoter of {old_id}",
            lambda: (v := _quorum(cluster)) is not None and v.voter(old_id) is None,
        )
    after = _wait_for_quorum(
        cluster,
        lambda v: v.voter(old_id) is None and v.voter(v.leader_id) is not None,
        f"a quorum without {old_id}",
        30,
    )
    progress.line(f"voters now {sorted(v.node_id for v in after.voters)}, leader {after.leader_id}")

    progress.step("stop the old node")
    # The others' configs name the quorum as it is now (for their next start), and clients stop
    # bootstrapping from the old node before it goes away.
    remaining = list(cluster.brokers.exclude(node_id=old_id))
    cluster.bootstrap_servers = ",".join(b.address for b in remaining)
    cluster.save(update_fields=["bootstrap_servers", "updated_at"])
    if old is not None:
        plan = services.node_plan(old)
        provisioner.stop(plan, old.pid, timeout_seconds=services.STOP_TIMEOUT_SECONDS)
        old.status = BrokerStatus.STOPPED
        old.save(update_fields=["status"])
        progress.line(f"broker {old_id}: stopped")

    progress.step("unregister")
    if old is not None:
        unregister_broker(connections.connection_for(cluster), node_id=old_id)
        progress.line(f"broker {old_id}: unregistered from the controller")

    progress.step("remove data")
    if old is not None:
        provisioner.remove_node(services.node_plan(old))
        old.delete()
    _write_configs(cluster, list(cluster.brokers.all()), progress)
    _refresh_bootstrap_servers(cluster)
    services.observe_cluster(cluster)


def _retry_while_pending(change: Callable[[], None], what: str, done: Callable[[], bool]) -> None:
    """A voter change answered REQUEST_TIMED_OUT (another one not committed yet, the new voter not caught
    up, a leader change) is sent again until VOTER_CHANGE_TIMEOUT_SECONDS. A refusal saying it is done
    already (an earlier attempt whose answer was lost) ends it when `done` confirms it."""
    deadline = time.monotonic() + VOTER_CHANGE_TIMEOUT_SECONDS
    while True:
        try:
            change()
            return
        except KafkaGatewayError as error:
            if error.error_name in ("DUPLICATE_VOTER", "VOTER_NOT_FOUND") and done():
                return
            if error.error_name not in RETRIED_VOTER_ERRORS or time.monotonic() > deadline:
                raise ProvisioningFailed(f"{what} failed: {error}") from error
        time.sleep(0.5)
