"""Local clusters are secure by default: SASL_PLAINTEXT with SCRAM and ACLs on, and a control-plane super user
whose password the control plane keeps only encrypted and never shows, logs or puts on a command line."""

import io
import json
import stat
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from django.core.management import call_command
from django.core.management.base import CommandError

from controlplane.audit.models import AuditEvent
from controlplane.clusters import connections, services, workflows
from controlplane.clusters.choices import OPERATION_STEPS, OperationKind
from controlplane.clusters.models import Cluster, Operation
from controlplane.core.encryption import decrypt_secret
from controlplane.core.errors import ServiceError
from controlplane.tenancy.access import Actor
from tests.integration.clusters.conftest import broker_pids_under

pytestmark = pytest.mark.integration

CLIENT_TIMEOUTS = {"socket.timeout.ms": 2000, "socket.connection.setup.timeout.ms": 2000}


def _provision(client, organization, name: str, wait_for_operation) -> tuple[Cluster, dict]:
    response = client.post(
        "/api/v1/clusters/", {"organization": organization.id, "name": name, "broker_count": 1}, format="json"
    )
    assert response.status_code == 202, response.json()
    operation = wait_for_operation(response.json()["operation"]["id"])
    assert operation.state == "succeeded", operation.error
    return Cluster.objects.get(pk=response.json()["cluster"]["id"]), response.json()


def _metadata(config: dict) -> list[int]:
    return sorted(AdminClient({**CLIENT_TIMEOUTS, **config}).list_topics(timeout=15).brokers)


def _sasl(cluster: Cluster, username: str, password: str, mechanism: str = "SCRAM-SHA-512") -> dict:
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": username,
        "sasl.password": password,
    }


def _credentials_from_command(name: str) -> dict[str, str]:
    output = io.StringIO()
    call_command("cluster_credentials", name, stdout=output)
    return dict(line.split("=", 1) for line in output.getvalue().splitlines())


def test_a_provisioned_cluster_refuses_unauthenticated_clients_and_accepts_its_super_user(
    people, worker, wait_for_operation
) -> None:
    cluster, _accepted = _provision(people.org_admin, people.organization, "secure", wait_for_operation)
    password = decrypt_secret(cluster.admin_password_encrypted)

    assert (cluster.security_protocol, cluster.sasl_mechanism) == ("SASL_PLAINTEXT", "SCRAM-SHA-512")
    with pytest.raises(KafkaException):
        _metadata({"bootstrap.servers": cluster.bootstrap_servers})  # PLAINTEXT, no credentials
    with pytest.raises(KafkaException):
        _metadata(_sasl(cluster, cluster.admin_username, "not-the-password"))
    assert _metadata(_sasl(cluster, cluster.admin_username, password)) == [1]
    assert _metadata(_sasl(cluster, cluster.admin_username, password, "SCRAM-SHA-256")) == [1]
    with pytest.raises(KafkaException):
        _metadata(_sasl(cluster, cluster.admin_username, password, "PLAIN"))  # not enabled


def test_acls_are_on_so_a_user_without_grants_sees_no_topic(people, worker, wait_for_operation) -> None:
    cluster, _accepted = _provision(people.org_admin, people.organization, "guarded", wait_for_operation)
    admin = AdminClient({**CLIENT_TIMEOUTS, **connections.connection_for(cluster).client_config(3)})
    admin.create_topics([NewTopic("orders", 1, 1)])["orders"].result(timeout=5)
    upsert = UserScramCredentialUpsertion(
        "reader", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"reader-password"
    )
    admin.alter_user_scram_credentials([upsert])["reader"].result(timeout=5)

    as_reader = AdminClient({**CLIENT_TIMEOUTS, **_sasl(cluster, "reader", "reader-password")})
    topic = as_reader.list_topics(topic="orders", timeout=4).topics["orders"]

    assert topic.error is not None
    assert topic.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert "orders" in admin.list_topics(timeout=15).topics  # the super user is above the ACLs


def test_the_super_users_password_is_shown_nowhere_but_to_the_operators_command(
    people, worker, wait_for_operation, cluster_data_dir
) -> None:
    cluster, accepted = _provision(people.org_admin, people.organization, "quiet", wait_for_operation)
    password = decrypt_secret(cluster.admin_password_encrypted)
    broker = cluster.brokers.get()
    config_path = Path(broker.data_dir) / "broker.properties"

    assert len(password) >= 32
    assert password not in cluster.admin_password_encrypted
    assert stat.S_IMODE(config_path.stat().st_mode) == 0o600
    assert password in config_path.read_text()  # where the broker reads it from
    (pid,) = broker_pids_under(cluster_data_dir / "clusters")
    assert password not in Path(f"/proc/{pid}/cmdline").read_bytes().decode()
    assert password not in (Path(broker.data_dir) / "broker.log").read_text()

    detail = people.org_admin.get(f"/api/v1/clusters/{cluster.id}/").json()
    operation = people.org_admin.get(accepted["operation_url"]).json()
    listed = people.org_admin.get("/api/v1/clusters/").json()
    audit = list(AuditEvent.objects.values("before", "after", "reason"))
    for shown in (accepted, detail, operation, listed, audit):
        text = json.dumps(shown, default=str)
        assert password not in text
        assert cluster.admin_password_encrypted not in text
    assert any(
        line["message"] == f"listeners: SASL_PLAINTEXT, ACLs on, super user {services.LOCAL_SUPER_USER}"
        for line in operation["log"]
    )
    assert detail["admin_username"] == services.LOCAL_SUPER_USER
    assert detail["has_admin_credentials"] is True
    assert detail["configs_error"] == ""
    bootstrap_users = detail["brokers"][0]["configs"]["sasl.bootstrap.users"]
    assert (bootstrap_users["value"], bootstrap_users["sensitive"]) == (None, True)

    printed = _credentials_from_command("quiet")

    assert printed == {
        "bootstrap.servers": cluster.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": services.LOCAL_SUPER_USER,
        "sasl.password": password,
    }
    assert _metadata(printed) == [1]  # what it prints is a working librdkafka config
    read = AuditEvent.objects.get(action="cluster.credentials_read")
    assert read.resource_name == "quiet"
    assert password not in json.dumps(read.after)


def test_the_credentials_command_names_what_it_cannot_find(people) -> None:
    with pytest.raises(CommandError, match="No cluster named 'nowhere'"):
        call_command("cluster_credentials", "nowhere", stdout=io.StringIO())


def test_an_existing_plaintext_cluster_is_still_provisioned_and_watched_with_plaintext(
    people, cluster_data_dir
) -> None:
    # A row written before local clusters had security: it keeps its protocol and has no credentials.
    legacy = Cluster.objects.create(
        organization=people.organization, name="legacy", provider="local", security_protocol="PLAINTEXT"
    )
    operation = Operation.objects.create(
        cluster=legacy, kind=OperationKind.PROVISION, steps=OPERATION_STEPS[OperationKind.PROVISION]
    )

    assert workflows.run_operation(operation.id) == "succeeded", Operation.objects.get(pk=operation.id).error

    legacy.refresh_from_db()
    assert legacy.status == "running"
    assert _metadata({"bootstrap.servers": legacy.bootstrap_servers}) == [1]
    services.check_cluster_health(cluster=legacy)
    legacy.refresh_from_db()
    assert (legacy.status, legacy.health["brokers_up"]) == ("running", 1)
    with pytest.raises(CommandError, match="no stored credentials: it listens with PLAINTEXT"):
        call_command("cluster_credentials", "legacy", stdout=io.StringIO())


@pytest.mark.parametrize(
    ("protocol", "mechanism"),
    [("PLAINTEXT", ""), ("SASL_SSL", "SCRAM-SHA-512"), ("SSL", ""), ("SASL_PLAINTEXT", "PLAIN")],
)
def test_unsupported_security_for_a_local_cluster_is_refused_with_a_clear_reason(
    people, protocol: str, mechanism: str
) -> None:
    spec = services.ClusterSpec(
        name="events", broker_count=1, security_protocol=protocol, sasl_mechanism=mechanism
    )

    with pytest.raises(ServiceError) as refused:
        services.request_cluster(actor=Actor.system(), organization=people.organization, spec=spec)

    assert type(refused.value) is ServiceError  # a plain refusal: HTTP 400
    assert refused.value.code == "unsupported_security"
    assert "SASL_PLAINTEXT" in refused.value.message
    assert Cluster.objects.count() == 0


def test_scram_sha_256_is_a_supported_choice_and_each_cluster_gets_its_own_password(people) -> None:
    first = services.request_cluster(
        actor=Actor.system(),
        organization=people.organization,
        spec=services.ClusterSpec(name="first", broker_count=1, sasl_mechanism="SCRAM-SHA-256"),
    ).cluster
    second = services.request_cluster(
        actor=Actor.system(),
        organization=people.organization,
        spec=services.ClusterSpec(name="second", broker_count=1),
    ).cluster

    assert (first.security_protocol, first.sasl_mechanism) == ("SASL_PLAINTEXT", "SCRAM-SHA-256")
    assert decrypt_secret(first.admin_password_encrypted) != decrypt_secret(second.admin_password_encrypted)


def test_the_default_cluster_is_defined_with_sasl_and_an_encrypted_super_user_password(people) -> None:
    cluster = services.ensure_default_cluster(organization_name="Acme", cluster_name="local", port=0)

    assert cluster is not None
    assert (cluster.security_protocol, cluster.sasl_mechanism) == ("SASL_PLAINTEXT", "SCRAM-SHA-512")
    assert cluster.admin_username == services.LOCAL_SUPER_USER
    assert decrypt_secret(cluster.admin_password_encrypted)
