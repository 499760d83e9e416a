"""The Apache Kafka that scripts/bootstrap.sh installs from Maven Central starts and serves real clients."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.apache_kafka import runtime
from tests.fixtures.apache_kafka import ApacheKafkaNode
from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER

pytestmark = pytest.mark.integration


def test_the_pinned_version_is_installed() -> None:
    installed = runtime.installation()
    assert installed.version == runtime.pinned_version() in runtime.installed_versions()
    assert any(installed.libs.glob(f"kafka-tools-{installed.version}.jar"))
    assert any(installed.plugins.glob("connect-file/connect-file-*.jar"))
    assert installed.jmx_exporter_agent.is_file()


def test_a_scram_client_produces_and_consumes_on_apache_kafka(apache_kafka: ApacheKafkaNode) -> None:
    sasl = {
        "bootstrap.servers": apache_kafka.sasl_bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": ADMIN_USER,
        "sasl.password": ADMIN_PASSWORD,
    }
    topic = f"installed-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(sasl)
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(30)
    producer = Producer({**sasl, "enable.idempotence": True})
    for index in range(100):
        producer.produce(topic, key=str(index % 2), value=f"record-{index}")
    assert producer.flush(30) == 0
    consumer = Consumer({**sasl, "group.id": topic, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values: set[str] = set()
    try:
        for _ in range(300):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.add(message.value().decode())
            if len(values) == 100:
                break
    finally:
        consumer.close()
    assert values == {f"record-{index}" for index in range(100)}
