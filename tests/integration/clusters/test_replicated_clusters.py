"""Replicated local clusters through the API: three brokers provisioned by a real worker, a broker lost and
back, a fourth broker joining and a partition moving onto it while clients produce and consume."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

from controlplane.clusters import services
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.models import Team
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration

# The copy of a moving replica is throttled so its progress can be watched (bytes/s; the quota windows
# let about 11 s worth through at once, so the topic holds more than that).
FOLLOWER_THROTTLE = 200_000


def _provision(people, wait_for_operation, name: str, **spec: Any) -> Cluster:
    accepted = people.org_admin.post(
        "/api/v1/clusters/", {"organization": people.organization.id, "name": name, **spec}, format="json"
    )
    assert accepted.status_code == 202, accepted.json()
    operation = wait_for_operation(accepted.json()["operation"]["id"], timeout=120)
    assert operation.state == "succeeded", operation.error
    return Cluster.objects.get(pk=accepted.json()["cluster"]["id"])


def _create_topic(people, cluster: Cluster, name: str, partitions: int, **extra: Any) -> dict:
    team = Team.objects.get(organization=people.organization, name="Payments")
    if not team.prefixes.exists():
        tenancy.add_prefix(actor=Actor.system(), team=team, resource_type="topic", prefix="payments.")
    body = {"cluster": cluster.id, "team": team.id, "name": name, "partitions": partitions, **extra}
    response = people.developer.post("/api/v1/topics/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def _partitions(people, topic_id: int) -> list[dict]:
    response = people.developer.get(f"/api/v1/topics/{topic_id}/")
    assert response.status_code == 200, response.json()
    return response.json()["live"]["partitions"]


def _check_health(people, cluster: Cluster) -> dict:
    response = people.org_admin.post(f"/api/v1/clusters/{cluster.id}/check-health/")
    assert response.status_code == 200, response.json()
    return response.json()


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not Path(f"/proc/{pid}").exists(), 10, f"broker process {pid} to be reaped")


def test_a_three_broker_cluster_replicates_new_topics_and_survives_a_lost_broker(
    people, worker, wait_for_operation
) -> None:
    cluster = _provision(people, wait_for_operation, "replicated")
    detail = people.org_admin.get(f"/api/v1/clusters/{cluster.id}/").json()
    assert detail["status"] == "running"
    assert detail["broker_count"] == 3
    assert detail["health"]["brokers_up"] == 3
    assert detail["health"]["under_replicated_partitions"] == 0
    assert [(b["node_id"], b["roles"], b["health"]) for b in detail["brokers"]] == [
        (node_id, ["broker", "controller"], "up") for node_id in (1, 2, 3)
    ]
    # Each broker reports its own configs (librdkafka asks one BROKER resource per call).
    assert detail["configs_error"] == ""
    assert [b["configs"]["min.insync.replicas"]["value"] for b in detail["brokers"]] == ["2", "2", "2"]
    assert [b["configs"]["broker.session.timeout.ms"]["value"] for b in detail["brokers"]] == ["2000"] * 3
    operation = cluster.operations.get(kind="provision")
    assert {f"broker {n}: registered and listed in Metadata" for n in (1, 2, 3)} <= {
        line["message"] for line in operation.log
    }

    topic = _create_topic(people, cluster, "payments.orders", partitions=3)
    assert topic["replication_factor"] == 3
    live = people.developer.get(f"/api/v1/topics/{topic['id']}/").json()["live"]
    assert live["configs"]["min.insync.replicas"]["value"] == "2"
    assert all(len(p["replicas"]) == 3 and not p["under_replicated"] for p in live["partitions"])

    lost = cluster.brokers.get(node_id=3)
    _kill(lost.pid)

    def broker_left_the_isr() -> bool:
        partitions = _partitions(people, topic["id"])
        return all(3 not in p["isr"] and p["under_replicated"] for p in partitions)

    wait_until(broker_left_the_isr, 30, "broker 3 to leave every ISR")
    partitions = _partitions(people, topic["id"])
    assert all(p["offline_replicas"] == [3] and not p["offline"] for p in partitions)

    degraded = _check_health(people, cluster)
    assert degraded["status"] == "degraded"
    assert degraded["health"]["under_replicated_partitions"] >= 3
    assert degraded["health"]["dead_broker_ids"] == [3]

    # The health check restarts the dead broker; once it has caught up the cluster is running again.
    restart = cluster.operations.get(kind="restart_broker")
    assert wait_for_operation(restart.id, timeout=90).state == "succeeded"

    def healthy() -> bool:
        return _check_health(people, cluster)["status"] == "running"

    wait_until(healthy, 60, "the cluster to be running again", interval=1)
    assert all(sorted(p["isr"]) == [1, 2, 3] for p in _partitions(people, topic["id"]))

    # The stack's Ctrl-C and next start: every node stops, then all come back together.
    assert services.stop_local_clusters() == ["cluster replicated: stopped"]
    assert services.start_local_clusters() == [f"cluster replicated: running at {cluster.bootstrap_servers}"]
    wait_until(healthy, 60, "the restarted cluster to be running", interval=1)
    assert _check_health(people, cluster)["health"]["brokers_up"] == 3


class Traffic:
    """An acks=all producer and a group consumer running until stopped; counts what got through."""

    def __init__(self, cluster: Cluster, topic: str) -> None:
        self.config = connection_for(cluster).client_config(timeout_seconds=5)
        self.topic = topic
        self.acknowledged = 0
        self.consumed: set[bytes] = set()
        self.errors: list[str] = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._produce), threading.Thread(target=self._consume)]

    def __enter__(self) -> Traffic:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(30)

    def _produce(self) -> None:
        producer = Producer({**self.config, "acks": "all", "enable.idempotence": True, "linger.ms": 5})

        def delivered(error: Any, message: Any) -> None:
            if error is None:
                self.acknowledged += 1
            else:
                self.errors.append(str(error))

        number = 0
        while not self.stopping.is_set():
            producer.produce(self.topic, value=f"live-{number}".encode(), on_delivery=delivered)
            number += 1
            producer.poll(0.01)
        producer.flush(20)

    def _consume(self) -> None:
        consumer = Consumer(
            {
                **self.config,
                "group.id": f"watcher-{uuid.uuid4().hex[:6]}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([self.topic])
        try:
            while not self.stopping.is_set():
                message = consumer.poll(0.2)
                if message is not None and message.error() is None and message.value().startswith(b"live-"):
                    self.consumed.add(message.value())
        finally:
            consumer.close()


def _fill(cluster: Cluster, topic: str, megabytes: int) -> None:
    producer = Producer({**connection_for(cluster).client_config(timeout_seconds=5), "acks": "all"})
    chunk = os.urandom(50_000)
    for _ in range(megabytes * 20):
        producer.produce(topic, value=chunk, partition=0)
        producer.poll(0)
    assert producer.flush(60) == 0


def test_a_fourth_broker_joins_and_a_partition_moves_onto_it_while_clients_run(
    people, worker, wait_for_operation
) -> None:
    cluster = _provision(
        people,
        wait_for_operation,
        "growing",
        broker_config={"follower.replication.throttled.rate": str(FOLLOWER_THROTTLE)},
    )
    topic = _create_topic(people, cluster, "payments.ledger", partitions=1)
    _fill(cluster, "payments.ledger", megabytes=4)

    refused = people.org_admin.delete(
        f"/api/v1/clusters/{cluster.id}/brokers/1/", {"confirm_node_id": 1}, format="json"
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "controller_voter"

    added = people.org_admin.post(f"/api/v1/clusters/{cluster.id}/brokers/")
    assert added.status_code == 202, added.json()
    assert wait_for_operation(added.json()["operation"]["id"], timeout=90).state == "succeeded"
    detail = people.org_admin.get(f"/api/v1/clusters/{cluster.id}/").json()
    assert [(b["node_id"], b["roles"]) for b in detail["brokers"]][-1] == (4, ["broker"])
    assert detail["broker_count"] == 4

    wide = _create_topic(people, cluster, "payments.wide", partitions=1, replication_factor=4)
    crowded = people.org_admin.delete(
        f"/api/v1/clusters/{cluster.id}/brokers/4/", {"confirm_node_id": 4}, format="json"
    )
    assert crowded.status_code == 409
    assert crowded.json()["error"]["code"] == "not_enough_brokers"
    dropped = people.developer.delete(
        f"/api/v1/topics/{wide['id']}/", {"confirm_name": "payments.wide"}, format="json"
    )
    assert dropped.status_code == 204

    with Traffic(cluster, "payments.ledger") as traffic:
        started = people.org_admin.post(
            f"/api/v1/clusters/{cluster.id}/reassignments/",
            {"topic": "payments.ledger", "onto_broker": 4},
            format="json",
        )
        assert started.status_code == 202, started.json()
        (requested,) = started.json()["requested"]
        assert 4 in requested["replicas"]
        assert len(requested["replicas"]) == 3

        observed: list[float] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            view = people.org_admin.get(f"/api/v1/clusters/{cluster.id}/reassignments/").json()
            if not view["partitions"]:
                break
            (moving,) = view["partitions"]
            assert moving["adding"] == [4]
            observed.append(moving["percent"])
            time.sleep(0.3)
        assert not view["partitions"], f"the reassignment did not complete: {view}"
        time.sleep(1)  # the clients keep going after the move

    # Progress is seen while the copy runs (it can dip: the leader grows under the live producer too).
    assert any(percent < 100 for percent in observed), observed
    (partition,) = _partitions(people, topic["id"])
    assert sorted(partition["replicas"]) == sorted(requested["replicas"])
    assert sorted(partition["isr"]) == sorted(requested["replicas"])
    assert traffic.errors == []
    assert traffic.acknowledged > 0
    assert len(traffic.consumed) > 0

    removed = people.org_admin.delete(
        f"/api/v1/clusters/{cluster.id}/brokers/4/", {"confirm_node_id": 4}, format="json"
    )
    assert removed.status_code == 202, removed.json()
    removal = wait_for_operation(removed.json()["operation"]["id"], timeout=150)
    assert removal.state == "succeeded", removal.error
    (partition,) = _partitions(people, topic["id"])
    assert 4 not in partition["replicas"]
    assert len(partition["replicas"]) == 3
    assert sorted(cluster.brokers.values_list("node_id", flat=True)) == [1, 2, 3]
