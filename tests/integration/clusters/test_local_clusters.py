"""Acceptance for local clusters: created through the API, provisioned by a real worker into real broker
processes, healed after a kill -9, and deleted without leftovers."""

import os
import signal
import socket
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from controlplane.audit.models import AuditEvent
from controlplane.clusters import tasks
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster, Operation
from controlplane.clusters.provisioners.local import port_is_free
from tests.fixtures.servers import free_port, wait_until
from tests.integration.clusters.conftest import broker_pids_under

pytestmark = pytest.mark.integration


def _metadata_broker_ids(cluster: Cluster) -> list[int]:
    """Metadata as the control plane's super user sees it (local clusters listen with SASL)."""
    admin = AdminClient(connection_for(cluster).client_config(timeout_seconds=3))
    return sorted(admin.list_topics(timeout=5).brokers)


def _create(client, organization, name: str, **spec) -> dict:
    """A single-broker cluster unless the spec asks for more (replicated clusters: test_replicated_clusters)."""
    spec = {"broker_count": 1, **spec}
    response = client.post(
        "/api/v1/clusters/", {"organization": organization.id, "name": name, **spec}, format="json"
    )
    assert response.status_code == 202, response.json()
    return response.json()


def _provision(client, organization, name: str, wait_for_operation, **spec) -> Cluster:
    accepted = _create(client, organization, name, **spec)
    operation = wait_for_operation(accepted["operation"]["id"])
    assert operation.state == "succeeded", operation.error
    return Cluster.objects.get(pk=accepted["cluster"]["id"])


def test_it_provisions_a_cluster_whose_progress_shows_while_it_runs(
    people, worker, wait_for_operation
) -> None:
    accepted = _create(people.org_admin, people.organization, "events", broker_config={"num.partitions": "3"})
    operation_url = accepted["operation_url"]
    assert operation_url.endswith(f"/api/v1/operations/{accepted['operation']['id']}/")

    seen_steps = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        progress = people.org_admin.get(operation_url).json()
        if progress["state"] == "running":
            seen_steps.add((progress["step"], progress["step_count"], progress["step_name"]))
        if progress["state"] in ("succeeded", "failed"):
            break
        time.sleep(0.01)

    assert progress["state"] == "succeeded", progress["error"]
    assert seen_steps, "no progress was visible while the operation ran"
    assert all(count == 5 for _, count, _ in seen_steps)
    assert progress["steps"] == [
        "allocate ports",
        "write configs",
        "start brokers",
        "wait for Metadata",
        "verify",
    ]
    assert any("answers Metadata" in line["message"] for line in progress["log"])

    detail = people.org_admin.get(f"/api/v1/clusters/{accepted['cluster']['id']}/").json()
    assert detail["status"] == "running"
    assert detail["health"]["brokers_up"] == 1
    assert detail["health"]["controller_id"] == 1
    assert _metadata_broker_ids(Cluster.objects.get(pk=detail["id"])) == [1]
    (broker,) = detail["brokers"]
    assert broker["status"] == "running"
    assert broker["configs"]["num.partitions"]["value"] == "3"
    assert detail["configs_error"] == ""


def test_a_killed_broker_degrades_the_cluster_and_is_restarted(people, worker, wait_for_operation) -> None:
    cluster = _provision(people.org_admin, people.organization, "healing", wait_for_operation)
    broker = cluster.brokers.get()
    os.kill(broker.pid, signal.SIGKILL)
    wait_until(lambda: not Path(f"/proc/{broker.pid}").exists(), 10, "the killed broker to be reaped")

    tasks.check_health(cluster.id)  # what beat runs every 15 s

    cluster.refresh_from_db()
    assert cluster.status == "degraded"
    assert "Broker 1 is not running" in cluster.status_reason
    restart = cluster.operations.get(kind="restart_broker")
    assert wait_for_operation(restart.id).state == "succeeded"
    cluster.refresh_from_db()
    restarted = cluster.brokers.get()
    assert cluster.status == "running"
    assert restarted.pid != broker.pid
    assert restarted.restart_count == 1
    assert _metadata_broker_ids(cluster) == [1]


def test_deleting_a_cluster_stops_its_processes_and_frees_its_port_and_data(
    people, worker, wait_for_operation, cluster_data_dir
) -> None:
    cluster = _provision(people.org_admin, people.organization, "doomed", wait_for_operation)
    broker = cluster.brokers.get()
    assert Path(broker.data_dir).exists()

    refused = people.org_admin.delete(
        f"/api/v1/clusters/{cluster.id}/", {"confirm_name": "dom"}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "confirmation_mismatch"

    accepted = people.org_admin.delete(
        f"/api/v1/clusters/{cluster.id}/", {"confirm_name": "doomed"}, format="json"
    )
    assert accepted.status_code == 202
    assert wait_for_operation(accepted.json()["operation"]["id"]).state == "succeeded"

    cluster.refresh_from_db()
    assert cluster.status == "deleted"
    assert broker_pids_under(cluster_data_dir / "clusters") == []
    assert port_is_free(broker.port)
    assert not (cluster_data_dir / "clusters" / str(cluster.id)).exists()
    listed = people.org_admin.get("/api/v1/clusters/").json()["results"]
    assert [item["name"] for item in listed] == []
    actions = set(AuditEvent.objects.filter(resource_type="cluster").values_list("action", flat=True))
    assert {"cluster.create", "cluster.delete", "cluster.status_change"} <= actions


def test_a_port_in_use_fails_the_operation_with_the_reason(people, worker, wait_for_operation) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        accepted = _create(people.org_admin, people.organization, "squatted", port=port)
        operation = wait_for_operation(accepted["operation"]["id"])

    assert operation.state == "failed"
    assert operation.error == f"Port {port} on 127.0.0.1 is already in use."
    assert operation.current_step_name == "allocate ports"
    cluster = Cluster.objects.get(pk=accepted["cluster"]["id"])
    assert cluster.status == "failed"
    assert cluster.status_reason == operation.error


def test_a_broker_that_cannot_start_fails_the_operation_with_its_log(
    people, worker, wait_for_operation
) -> None:
    # A value our broker refuses at startup: the failure must come back with the broker's own words.
    accepted = _create(
        people.org_admin, people.organization, "broken", broker_config={"log.cleanup.policy": "sometimes"}
    )
    operation = wait_for_operation(accepted["operation"]["id"])

    assert operation.state == "failed"
    assert "exited during startup" in operation.error
    assert "log.cleanup.policy" in operation.error
    assert Cluster.objects.get(pk=accepted["cluster"]["id"]).status == "failed"


def test_only_org_admins_create_clusters_and_bad_specs_are_refused(people, cluster_data_dir) -> None:
    spec = {"organization": people.organization.id, "name": "events", "broker_count": 1}
    assert people.developer.post("/api/v1/clusters/", spec, format="json").status_code == 403
    # Not its organization: an object it cannot see, answered as one that does not exist.
    assert people.outsider.post("/api/v1/clusters/", spec, format="json").status_code == 404

    bad_config = people.org_admin.post(
        "/api/v1/clusters/",
        {**spec, "broker_config": {"listeners": "x", "num.partitions": "many"}},
        format="json",
    )
    assert bad_config.status_code == 400
    assert bad_config.json()["error"]["details"]["problems"] == [
        "listeners is set by the provisioner and cannot be overridden.",
        "num.partitions must be an integer, not 'many'.",
    ]
    assert people.org_admin.post("/api/v1/clusters/", spec, format="json").status_code == 202
    duplicate = people.org_admin.post("/api/v1/clusters/", spec, format="json")
    assert duplicate.status_code == 409
    assert Operation.objects.count() == 1
    assert people.outsider.get("/api/v1/clusters/").json()["results"] == []


def test_a_second_cluster_never_gets_a_port_reserved_by_a_stopped_one(
    people, worker, wait_for_operation
) -> None:
    port = free_port()
    first = _provision(people.org_admin, people.organization, "first", wait_for_operation, port=port)
    broker = first.brokers.get()
    os.kill(broker.pid, signal.SIGTERM)
    wait_until(lambda: port_is_free(port), 20, "the first broker to stop")

    accepted = _create(people.org_admin, people.organization, "second", port=port)

    operation = wait_for_operation(accepted["operation"]["id"])
    assert operation.state == "failed"
    assert "already in use" in operation.error


def test_brokers_outlive_the_worker_that_started_them(people, worker, wait_for_operation) -> None:
    cluster = _provision(people.org_admin, people.organization, "durable", wait_for_operation)

    worker.terminate()
    worker.wait(timeout=20)

    assert _metadata_broker_ids(cluster) == [1]
    tasks.check_health(cluster.id)
    cluster.refresh_from_db()
    assert cluster.status == "running"
    assert cluster.operations.filter(kind="restart_broker").count() == 0


def test_a_port_whose_broker_closed_its_clients_is_free_again_once_the_broker_stops() -> None:
    # A SASL broker closes unauthenticated connections itself, which leaves TIME_WAIT entries on its port.
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _address = listener.accept()
    assert not port_is_free(port)  # listening

    accepted.close()  # the server closes first
    client.recv(1)
    client.close()
    listener.close()

    assert port_is_free(port)
