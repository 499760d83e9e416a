"""A rolling broker-config change on a replicated cluster of our broker (the same workflow as Apache Kafka's,
test_apache_kafka_clusters.py): every node's config is rewritten and the nodes restart one at a time, the
active controller last, while an acks=all producer keeps getting every record acknowledged."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters import services, workflows
from controlplane.clusters.models import Cluster, Operation
from controlplane.core.encryption import decrypt_secret
from controlplane.core.errors import ServiceError
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor

pytestmark = pytest.mark.integration

SYSTEM = Actor.system()


def test_a_config_change_restarts_the_nodes_one_at_a_time_while_producers_carry_on(
    db, tmp_path: Path, settings
) -> None:
    settings.DATA_DIR = tmp_path
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    operation = services.request_cluster(
        actor=SYSTEM, organization=organization, spec=services.ClusterSpec(name="rolled", broker_count=3)
    )
    assert workflows.run_operation(operation.id) == "succeeded"
    cluster = Cluster.objects.get(pk=operation.cluster_id)
    client = {
        "bootstrap.servers": cluster.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": cluster.admin_username,
        "sasl.password": decrypt_secret(cluster.admin_password_encrypted),
    }
    try:
        admin = AdminClient(client)  # kept: a collected client cancels its futures
        admin.create_topics([NewTopic("steady", 3, 3)])["steady"].result(timeout=30)
        with pytest.raises(ServiceError):
            services.request_broker_config_change(
                actor=SYSTEM, cluster=cluster, broker_config={"listeners": "PLAINTEXT://0.0.0.0:9092"}
            )
        pids = dict(cluster.brokers.values_list("node_id", "pid"))
        active = Cluster.objects.get(pk=cluster.pk).health["controller_id"]

        producer = Producer({**client, "acks": "all", "message.timeout.ms": 60000})
        failures: list[str] = []
        stop = threading.Event()

        def produce() -> None:
            sent = 0
            while not stop.is_set():
                producer.produce(
                    "steady",
                    value=str(sent).encode(),
                    on_delivery=lambda error, _: failures.append(str(error)) if error else None,
                )
                producer.poll(0.02)
                sent += 1

        writer = threading.Thread(target=produce)
        writer.start()
        change = services.request_broker_config_change(
            actor=SYSTEM, cluster=cluster, broker_config={"log.retention.hours": "48"}
        )
        state = workflows.run_operation(change.id)
        stop.set()
        writer.join()
        assert producer.flush(60) == 0
        change = Operation.objects.get(pk=change.id)
        assert state == "succeeded", change.error
        assert failures == []

        cluster.refresh_from_db()
        assert cluster.broker_config == {"log.retention.hours": "48"}
        restarted = [line["message"] for line in change.log if line["message"].endswith(": stopped")]
        assert len(restarted) == 3
        assert restarted[-1] == f"broker {active}: stopped", "the active controller restarts last"
        for broker in cluster.brokers.all():
            assert broker.pid != pids[broker.node_id]
            assert "log.retention.hours=48\n" in (Path(broker.data_dir) / "broker.properties").read_text()
    finally:
        deletion = services.request_cluster_deletion(actor=SYSTEM, cluster=cluster, confirm_name="rolled")
        workflows.run_operation(deletion.id)
