"""Apache Kafka clusters provisioned and operated by the control plane: the same services and workflows the
API and the Celery worker run (here called in-process: the worker would only add a queue in between), real
Apache Kafka JVMs under a throwaway data directory, SCRAM clients checking each step from outside."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.alerts import cluster_health
from controlplane.alerts import services as alerts
from controlplane.alerts.choices import Metric
from controlplane.alerts.models import Alert
from controlplane.apache_kafka import runtime
from controlplane.clusters import brokers, membership, node_metrics, services, workflows
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster, Operation
from controlplane.core.encryption import decrypt_secret
from controlplane.core.errors import ServiceError
from controlplane.kafka.quorum import describe_quorum
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration

SYSTEM = Actor.system()


def _apache_kafka_pids_under(root: Path) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
                if "kafka.Kafka" in cmdline and str(root) in cmdline:
                    pids.append(int(entry))
    return pids


@pytest.fixture
def data_dir(tmp_path: Path, settings) -> Iterator[Path]:
    settings.DATA_DIR = tmp_path
    yield tmp_path
    for pid in _apache_kafka_pids_under(tmp_path / "clusters"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def organization(db, data_dir):
    return tenancy.create_organization(actor=SYSTEM, name="Acme")


def _run(operation: Operation) -> Operation:
    workflows.run_operation(operation.id)
    operation.refresh_from_db()
    assert operation.state == "succeeded", (operation.error, [line["message"] for line in operation.log])
    return operation


def _provision(organization, name: str, broker_count: int, **spec) -> Cluster:
    operation = services.request_cluster(
        actor=SYSTEM,
        organization=organization,
        spec=services.ClusterSpec(name=name, broker_count=broker_count, engine="apache-kafka", **spec),
    )
    _run(operation)
    return Cluster.objects.get(pk=operation.cluster_id)


def _client_config(cluster: Cluster) -> dict[str, str]:
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": cluster.admin_username,
        "sasl.password": decrypt_secret(cluster.admin_password_encrypted),
    }


def _create_topic(cluster: Cluster, name: str, replication: int) -> None:
    admin = AdminClient(_client_config(cluster))
    futures = admin.create_topics([NewTopic(name, num_partitions=2, replication_factor=replication)])
    futures[name].result(timeout=30)


def _round_trip(cluster: Cluster, topic: str, count: int = 20) -> None:
    producer = Producer({**_client_config(cluster), "acks": "all"})
    for index in range(count):
        producer.produce(topic, value=f"message-{index}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer(
        {**_client_config(cluster), "group.id": f"g-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    seen: set[bytes] = set()
    deadline = time.monotonic() + 60
    try:
        while len(seen) < count and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                seen.add(message.value())
    finally:
        consumer.close()
    assert len(seen) == count


# Four JVM starts: 1-2 minutes on a quiet machine, up to ~4 on one loaded to 30 (the default limit is 300 s).
@pytest.mark.timeout(480)
def test_a_one_node_apache_kafka_cluster_is_provisioned_operated_and_deleted(organization, data_dir) -> None:
    started = time.monotonic()
    cluster = _provision(organization, "solo", 1)
    provisioned_in = time.monotonic() - started
    assert cluster.status == "running", cluster.status_reason
    assert cluster.engine == "apache-kafka"
    assert cluster.engine_version == runtime.pinned_version()
    (broker,) = cluster.brokers.all()
    assert broker.is_controller
    assert broker.metrics_port
    _create_topic(cluster, "orders", 1)
    _round_trip(cluster, "orders")
    print(f"provisioned a 1-node Apache Kafka cluster in {provisioned_in:.1f}s")

    metrics = urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=10).read()
    assert b'kafka_broker_topic_bytes_in_total{topic="orders"' in metrics
    # The broker page reads them: totals now, rates from the next read on.
    page = brokers.describe_broker(cluster=cluster, node_id=1)
    assert page["metrics"]["bytes_in_total"] > 0, page["metrics_error"]
    assert page["metrics"]["under_replicated_partitions"] == 0
    _round_trip(cluster, "orders", count=5)
    assert brokers.describe_broker(cluster=cluster, node_id=1)["metrics"]["bytes_in_per_second"] > 0

    # A dynamic config, through IncrementalAlterConfigs, without a restart.
    configs = brokers.update_broker_configs(
        actor=SYSTEM, cluster=cluster, node_id=1, configs={"log.cleaner.threads": "2"}
    )
    assert configs["log.cleaner.threads"]["value"] == "2"

    # A static config: every node's file rewritten and the node restarted.
    pid_before = cluster.brokers.get().pid
    _run(
        services.request_broker_config_change(
            actor=SYSTEM, cluster=cluster, broker_config={"log.retention.hours": 48}
        )
    )
    broker = cluster.brokers.get()
    assert broker.pid != pid_before
    assert "log.retention.hours=48\n" in (Path(broker.data_dir) / "broker.properties").read_text()
    read, problems = services.read_broker_configs(cluster=Cluster.objects.get(pk=cluster.pk))
    assert read[1]["log.retention.hours"]["value"] == "48", problems

    # Stopped with the stack and started again, its data kept.
    services.stop_local_clusters()
    assert not _apache_kafka_pids_under(Path(broker.data_dir))
    assert Cluster.objects.get(pk=cluster.pk).status == "stopped"
    services.start_local_clusters()
    cluster.refresh_from_db()
    assert cluster.status == "running", cluster.status_reason
    _round_trip(cluster, "orders", count=40)

    # A node killed outright: the health check finds it down and restarts it.
    killed = cluster.brokers.get().pid
    os.kill(killed, signal.SIGKILL)
    wait_until(lambda: killed not in _apache_kafka_pids_under(data_dir), 30, "the killed node to be gone")
    services.check_cluster_health(cluster=cluster)
    cluster.refresh_from_db()
    assert cluster.status == "degraded"
    restart = cluster.operations.get(kind="restart_broker", state="pending")
    _run(restart)
    cluster.refresh_from_db()
    assert cluster.status == "running", cluster.status_reason

    _run(services.request_cluster_deletion(actor=SYSTEM, cluster=cluster, confirm_name="solo"))
    assert not (Path(broker.data_dir)).exists()
    assert not _apache_kafka_pids_under(Path(broker.data_dir).parent)
    assert Cluster.objects.get(pk=cluster.pk).status == "deleted"


def _failed(organization, name: str, **spec) -> Operation:
    operation = services.request_cluster(
        actor=SYSTEM,
        organization=organization,
        spec=services.ClusterSpec(name=name, broker_count=1, engine="apache-kafka", **spec),
    )
    workflows.run_operation(operation.id)
    operation.refresh_from_db()
    assert operation.state == "failed"
    assert Cluster.objects.get(pk=operation.cluster_id).status == "failed"
    return operation


def test_a_node_whose_port_is_taken_fails_the_provisioning_with_the_reason(organization) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        operation = _failed(organization, "squatted", port=port)
    assert f"Port {port} on 127.0.0.1 is already in use." in operation.error


def test_a_node_whose_config_kafka_refuses_fails_with_kafkas_reason(organization) -> None:
    operation = _failed(organization, "misconfigured", broker_config={"num.io.threads": 0})
    assert "Cannot format node 1" in operation.error
    assert "Invalid value 0 for configuration num.io.threads" in operation.error, operation.error
    assert "\tat " not in operation.error, "the reason, not the stack frames"


def test_without_java_the_provisioning_fails_saying_so(organization, monkeypatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    operation = _failed(organization, "javaless")
    assert "no Java" in operation.error


def test_an_apache_kafka_version_that_is_not_installed_is_refused(organization) -> None:
    with pytest.raises(ServiceError) as refused:
        services.request_cluster(
            actor=SYSTEM,
            organization=organization,
            spec=services.ClusterSpec(name="future", engine="apache-kafka", engine_version="9.9.9"),
        )
    assert type(refused.value) is ServiceError  # a plain refusal: HTTP 400
    assert refused.value.code == "invalid_engine_version"
    assert runtime.pinned_version() in refused.value.details["installed_versions"]
    assert not Cluster.objects.filter(name="future").exists()


def test_the_api_offers_the_installed_versions_and_refuses_others(people) -> None:
    engines = people.org_admin.get("/api/v1/clusters/engines/").json()
    apache = next(each for each in engines if each["engine"] == "apache-kafka")
    assert apache["default_version"] == runtime.pinned_version()
    assert apache["versions"] == runtime.installed_versions()
    body = {"organization": people.organization.id, "name": "future", "engine": "apache-kafka"}
    refused = people.org_admin.post("/api/v1/clusters/", {**body, "engine_version": "9.9.9"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_engine_version"
    assert "9.9.9 is not installed" in refused.json()["error"]["message"]
    unknown = people.org_admin.post("/api/v1/clusters/", {**body, "engine": "redpanda"}, format="json")
    assert unknown.status_code == 400


def _alerts(cluster: Cluster, state: str) -> set[str]:
    return {
        f"{alert.rule.metric}/{alert.group_name}"
        for alert in Alert.objects.filter(cluster=cluster, state=state).select_related("rule")
    }


def _jmx_under_replicated(cluster: Cluster, node_ids: list[int]) -> int:
    """The sum over the nodes of the partitions each leads with a follower out of sync (JMX)."""
    counts = [
        node_metrics.read_node_metrics(
            cluster_id=cluster.pk, node_id=broker.node_id, port=broker.metrics_port
        ).under_replicated_partitions
        for broker in cluster.brokers.filter(node_id__in=node_ids)
    ]
    return sum(count or 0 for count in counts)


# Adding and removing a broker on Apache Kafka is proven through the console by
# tests/e2e/test_apache_kafka_journey.py, on its own 3-node cluster.
# Five JVM starts: ~3 minutes on a machine loaded to 20-35.
@pytest.mark.timeout(600)
def test_a_three_node_apache_kafka_cluster_alerts_on_a_killed_node_and_replaces_a_controller(
    organization, data_dir
) -> None:
    started = time.monotonic()
    cluster = _provision(organization, "trio", 3)
    print(f"provisioned a 3-node Apache Kafka cluster in {time.monotonic() - started:.1f}s")
    assert cluster.status == "running", cluster.status_reason
    assert all(broker.is_controller for broker in cluster.brokers.all())
    quorum = describe_quorum(connection_for(cluster))
    assert sorted(voter.node_id for voter in quorum.voters) == [1, 2, 3]
    assert all(voter.directory_id is not None for voter in quorum.voters), "a dynamic quorum"
    _create_topic(cluster, "payments", 3)
    _round_trip(cluster, "payments")

    # Cluster-health rules watch Apache Kafka nodes as they watch ours: a node killed outright fires
    # broker_down and under_replicated_partitions; the node restarted by the health check resolves both.
    team = tenancy.create_team(actor=SYSTEM, organization=organization, name="Platform")
    for metric in (Metric.BROKER_DOWN, Metric.UNDER_REPLICATED_PARTITIONS):
        alerts.create_rule(actor=SYSTEM, team=team, name=metric, metric=metric, cluster=cluster)
    cluster_health.sample_and_evaluate(cluster.pk)
    assert not Alert.objects.filter(cluster=cluster).exists()
    assert _jmx_under_replicated(cluster, [1, 2, 3]) == 0
    killed = cluster.brokers.get(node_id=3)
    os.kill(killed.pid, signal.SIGKILL)
    expected = {"broker_down/broker 3", "under_replicated_partitions/cluster"}
    wait_until(
        lambda: cluster_health.sample_and_evaluate(cluster.pk) and _alerts(cluster, "firing") >= expected,
        60,
        "broker_down and under_replicated_partitions to fire",
        interval=1,
    )
    # The nodes' own count (JMX, the broker page's number) sees what the alert saw through Metadata.
    wait_until(
        lambda: _jmx_under_replicated(cluster, [1, 2]) > 0,
        30,
        "the JVMs to count under-replicated partitions",
    )
    services.check_cluster_health(cluster=cluster)
    _run(cluster.operations.get(kind="restart_broker", state="pending"))
    wait_until(
        lambda: cluster_health.sample_and_evaluate(cluster.pk) and not _alerts(cluster, "firing"),
        90,
        "both alerts to resolve once node 3 is back in sync",
        interval=1,
    )
    assert _alerts(cluster, "resolved") == expected

    # The active controller is replaced (KIP-853): node 4 joins as an observer, becomes a voter, the
    # leader leaves the quorum and the cluster.
    leader = describe_quorum(connection_for(cluster)).leader_id
    _run(membership.request_controller_replacement(actor=SYSTEM, cluster=cluster, node_id=leader))
    cluster.refresh_from_db()
    voters = sorted(voter.node_id for voter in describe_quorum(connection_for(cluster)).voters)
    assert voters == sorted({1, 2, 3, 4} - {leader})
    assert sorted(cluster.brokers.values_list("node_id", flat=True)) == voters
    _round_trip(cluster, "payments", count=40)

    _run(services.request_cluster_deletion(actor=SYSTEM, cluster=cluster, confirm_name="trio"))
    assert not _apache_kafka_pids_under(data_dir)
    assert not (data_dir / "clusters" / str(cluster.id)).exists()
