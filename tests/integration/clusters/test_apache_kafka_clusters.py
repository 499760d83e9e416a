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

from controlplane.apache_kafka import runtime
from controlplane.clusters import membership, services, workflows
from controlplane.clusters.encryption import decrypt_secret
from controlplane.clusters.models import Cluster, Operation
from controlplane.kafka.quorum import describe_quorum
from controlplane.clusters.connections import connection_for
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor

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


def test_a_one_node_apache_kafka_cluster_is_provisioned_operated_and_deleted(organization) -> None:
    started = time.monotonic()
    cluster = _provision(organization, "solo", 1)
    provisioned_in = time.monotonic() - started
    assert cluster.status == "running", cluster.status_reason
    assert cluster.engine == "apache-kafka"
    assert cluster.engine_version == runtime.pinned_version()
    (broker,) = cluster.brokers.all()
    assert broker.is_controller and broker.metrics_port
    _create_topic(cluster, "orders", 1)
    _round_trip(cluster, "orders")
    print(f"provisioned a 1-node Apache Kafka cluster in {provisioned_in:.1f}s")

    metrics = urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=10).read()
    assert b'kafka_broker_topic_bytes_in_total{topic="orders"' in metrics
