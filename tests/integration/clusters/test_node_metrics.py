"""Our broker's nodes serve the same metrics as Apache Kafka's (test_apache_kafka_clusters.py): a local
cluster's node gets a metrics port, and the broker page reads bytes in/out and requests from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Producer

from controlplane.clusters import brokers, services, workflows
from controlplane.clusters.models import Cluster
from controlplane.core.encryption import decrypt_secret
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor

pytestmark = pytest.mark.integration

SYSTEM = Actor.system()


def test_the_broker_page_shows_our_brokers_own_metrics(db, tmp_path: Path, settings) -> None:
    settings.DATA_DIR = tmp_path
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    operation = services.request_cluster(
        actor=SYSTEM, organization=organization, spec=services.ClusterSpec(name="ours", broker_count=1)
    )
    assert workflows.run_operation(operation.id) == "succeeded"
    cluster = Cluster.objects.get(pk=operation.cluster_id)
    try:
        (broker,) = cluster.brokers.all()
        assert broker.metrics_port
        assert (
            f"metrics.port={broker.metrics_port}\n"
            in (Path(broker.data_dir) / "broker.properties").read_text()
        )
        producer = Producer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": cluster.admin_username,
                "sasl.password": decrypt_secret(cluster.admin_password_encrypted),
            }
        )
        for _ in range(10):
            producer.produce("metered", value=b"x" * 100)
        assert producer.flush(30) == 0
        del producer
        page = brokers.describe_broker(cluster=cluster, node_id=broker.node_id)
        assert page["metrics_error"] == ""
        assert page["metrics"]["bytes_in_total"] >= 1000
        assert page["metrics"]["requests_total"] > 0
        assert page["metrics"]["under_replicated_partitions"] is None, "our broker does not count them itself"
    finally:
        deletion = services.request_cluster_deletion(actor=SYSTEM, cluster=cluster, confirm_name="ours")
        workflows.run_operation(deletion.id)
