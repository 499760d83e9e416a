"""A cluster registered by address is identified: our broker by the configs only it has, Apache Kafka by the
configs of its JVM implementation and its release line by the highest metadata.version it supports."""

from __future__ import annotations

import pytest

from controlplane.apache_kafka import runtime
from controlplane.clusters import services
from controlplane.kafka.cluster import describe_cluster
from controlplane.kafka.connection import Connection
from controlplane.kafka.engine import APACHE_KAFKA, STREAMHUB, detect_engine
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor

pytestmark = pytest.mark.integration

SYSTEM = Actor.system()


def _detect(bootstrap: str):
    connection = Connection(bootstrap_servers=bootstrap)
    (node,) = describe_cluster(connection).brokers
    return detect_engine(connection, node)


def test_it_tells_apache_kafka_and_its_release_line(apache_kafka) -> None:
    detected = _detect(apache_kafka.bootstrap)
    assert detected.engine == APACHE_KAFKA
    assert runtime.pinned_version().startswith(detected.version + ".")
    assert "kafka.metrics.reporters" in detected.evidence


def test_it_tells_our_broker(broker) -> None:
    detected = _detect(broker.bootstrap)
    assert detected.engine == STREAMHUB
    assert detected.version == ""
    assert "metrics.port" in detected.evidence


def test_a_registered_apache_kafka_cluster_shows_what_it_is(db, apache_kafka) -> None:
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")
    cluster = services.register_external_cluster(
        actor=SYSTEM, organization=organization, name="theirs", bootstrap_servers=apache_kafka.bootstrap
    )
    assert cluster.engine == "apache-kafka"
    assert cluster.engine_version == runtime.pinned_version().rsplit(".", 1)[0]
    assert cluster.engine_evidence
