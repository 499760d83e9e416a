"""Registering an existing Kafka-compatible cluster by bootstrap address, and watching its health."""

import pytest

from controlplane.audit.models import AuditEvent
from controlplane.clusters import connections
from controlplane.clusters.models import Cluster
from controlplane.core.encryption import decrypt_secret, encrypt_secret
from tests.fixtures.engines import ManagedCluster
from tests.fixtures.servers import free_port

pytestmark = pytest.mark.integration


def _register(client, organization, name: str, bootstrap: str, **credentials):
    body = {"organization": organization.id, "name": name, "bootstrap_servers": bootstrap, **credentials}
    return client.post("/api/v1/clusters/register/", body, format="json")


def test_it_registers_a_reachable_cluster_and_shows_its_health(people, fresh_broker) -> None:
    response = _register(people.org_admin, people.organization, "legacy", fresh_broker.bootstrap)

    assert response.status_code == 201, response.json()
    registered = response.json()
    assert registered["provider"] == "external"
    assert registered["status"] == "running"
    assert registered["health"]["brokers_up"] == 1
    assert registered["health"]["controller_id"] == 1
    assert registered["health"]["reachable"] is True

    detail = people.org_admin.get(f"/api/v1/clusters/{registered['id']}/").json()
    (broker,) = detail["brokers"]
    assert broker["port"] == fresh_broker.port
    assert broker["configs"]["node.id"]["value"] == "1"
    retention = broker["configs"]["log.retention.hours"]
    # Kafka's type for it (INT), as DescribeConfigs v3+ reports it.
    assert (retention["type"], retention["unit"], retention["read_only"]) == ("int", "hours", True)
    assert retention["documentation"]
    assert broker["configs"]["log.cleanup.policy"]["choices"] == ["delete", "compact"]


def test_an_external_cluster_that_goes_away_becomes_degraded_and_comes_back(people, fresh_broker) -> None:
    registered = _register(people.org_admin, people.organization, "flaky", fresh_broker.bootstrap).json()
    fresh_broker.stop()

    degraded = people.org_admin.post(f"/api/v1/clusters/{registered['id']}/check-health/").json()

    assert degraded["status"] == "degraded"
    assert degraded["health"]["reachable"] is False
    assert "unreachable" in degraded["status_reason"]
    assert people.org_admin.get(f"/api/v1/clusters/{registered['id']}/").json()["configs_error"]

    fresh_broker.start()
    recovered = people.org_admin.post(f"/api/v1/clusters/{registered['id']}/check-health/").json()
    assert recovered["status"] == "running"
    assert recovered["health"]["brokers_up"] == 1


def test_an_unreachable_cluster_is_refused_with_the_kafka_error_and_audited(people) -> None:
    response = _register(people.org_admin, people.organization, "nowhere", f"127.0.0.1:{free_port()}")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "cluster_unreachable"
    assert error["details"]["kafka_error"] == "_TRANSPORT"
    assert not Cluster.objects.exists()
    attempt = AuditEvent.objects.get(action="cluster.register")
    assert attempt.result == "failure"
    assert "did not answer Metadata" in attempt.reason


@pytest.mark.parametrize("bootstrap", ["localhost", "a b:9092", "host:99999", ","])
def test_malformed_bootstrap_servers_are_refused_before_any_connection(people, bootstrap: str) -> None:
    response = _register(people.org_admin, people.organization, "bad", bootstrap)

    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("invalid_bootstrap_servers", "invalid")


def test_admin_credentials_are_stored_encrypted_and_never_returned(people) -> None:
    cluster = Cluster.objects.create(
        organization=people.organization,
        name="secured",
        provider="external",
        bootstrap_servers="127.0.0.1:1",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        admin_username="streamhub",
        admin_password_encrypted=encrypt_secret("hunter2-admin"),
        status="running",
    )

    body = people.org_admin.get(f"/api/v1/clusters/{cluster.id}/").content.decode()

    assert "hunter2-admin" not in body
    assert cluster.admin_password_encrypted not in body
    assert '"has_admin_credentials":true' in body
    assert "hunter2-admin" not in cluster.admin_password_encrypted
    assert decrypt_secret(cluster.admin_password_encrypted) == "hunter2-admin"
    assert connections.connection_for(cluster).password == "hunter2-admin"
    assert "hunter2-admin" not in repr(connections.connection_for(cluster))


def test_sasl_registration_needs_complete_credentials(people) -> None:
    response = _register(
        people.org_admin,
        people.organization,
        "half",
        "127.0.0.1:9092",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        username="admin",
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_credentials"


@pytest.mark.apache_kafka
def test_it_registers_an_apache_kafka_cluster_by_address_over_scram(people, apache_kafka) -> None:
    """Apache Kafka started outside StreamHub, registered with its SCRAM super user through the REST API;
    the kafka_world tests then manage it like our broker (topics, ACLs, groups, lag: tests/fixtures/engines.py)."""
    cluster = ManagedCluster.of_apache_kafka(apache_kafka)
    body = {key: value for key, value in cluster.registration().items() if key != "bootstrap_servers"}
    response = _register(people.org_admin, people.organization, "apache", cluster.bootstrap, **body)

    assert response.status_code == 201, response.json()
    registered = response.json()
    assert (registered["provider"], registered["status"]) == ("external", "running")
    assert registered["health"]["brokers_up"] == 1
    assert registered["health"]["reachable"] is True
    detail = people.org_admin.get(f"/api/v1/clusters/{registered['id']}/").json()
    (broker,) = detail["brokers"]
    assert broker["port"] == apache_kafka.sasl_port
    retention = broker["configs"]["log.retention.hours"]
    assert (retention["value"], retention["read_only"]) == ("168", True)
    assert retention["documentation"]
