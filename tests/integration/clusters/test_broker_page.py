"""A broker's page on a real broker: hosted replicas and leaders, log dirs with sizes, controller role,
and messages per second from the lag sampler's log-end history."""

import time

import pytest
import redis
from confluent_kafka import Producer

from controlplane.audit.models import AuditEvent
from controlplane.clusters import connections
from controlplane.clusters.models import Cluster
from controlplane.kafka.topics import create_topic
from controlplane.lag import history
from tests.fixtures.cluster import start_cluster
from tests.integration.clusters.test_external_clusters import _register

pytestmark = pytest.mark.integration


def test_a_broker_page_shows_its_replicas_disks_role_and_rate(
    people, fresh_broker, redis_url, settings
) -> None:
    settings.REDIS_URL = redis_url
    registered = _register(people.org_admin, people.organization, "one", fresh_broker.bootstrap).json()
    connection = connections.connection_for(Cluster.objects.get(pk=registered["id"]))
    create_topic(connection, name="orders", partitions=3, replication_factor=1, configs={})
    producer = Producer({"bootstrap.servers": fresh_broker.bootstrap})
    for index in range(30):
        producer.produce("orders", value=b"x" * 100, partition=index % 3)
    assert producer.flush(10) == 0
    del producer  # its threads would keep calling the broker after the test stops it
    # Two sampler runs 10 s apart, 60 messages appended in between: 6 per second on partitions it leads.
    now = time.time()
    client = redis.Redis.from_url(redis_url)
    for at, end in ((now - 10, 10), (now, 30)):
        history.record_samples(
            client,
            cluster_id=registered["id"],
            time=at,
            groups={},
            log_ends={("orders", p): end for p in range(3)},
        )

    page = people.org_admin.get(f"/api/v1/clusters/{registered['id']}/brokers/1/")

    assert page.status_code == 200, page.json()
    body = page.json()
    assert (body["listed"], body["is_active_controller"]) == (True, True)
    # A single broker hosts and leads every replica (orders and the internal topics).
    assert body["replica_count"] == body["leader_count"] == len(body["replicas"]) >= 3
    assert body["out_of_sync_count"] == body["under_replicated_count"] == 0
    orders = [r for r in body["replicas"] if r["topic"] == "orders"]
    assert [r["partition"] for r in orders] == [0, 1, 2]
    assert all(r["is_leader"] and r["in_sync"] and r["size_bytes"] > 1000 for r in orders)
    (log_dir,) = body["log_dirs"]
    assert log_dir["error"] is None
    assert log_dir["size_bytes"] >= sum(r["size_bytes"] for r in orders)
    assert log_dir["total_bytes"] > log_dir["usable_bytes"] > 0
    assert body["messages_in_per_second"] == pytest.approx(6.0, rel=0.01)


def test_an_unknown_broker_is_a_clear_404_like_refusal(people, fresh_broker) -> None:
    registered = _register(people.org_admin, people.organization, "two", fresh_broker.bootstrap).json()
    response = people.org_admin.get(f"/api/v1/clusters/{registered['id']}/brokers/7/")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "unknown_broker"
    assert people.outsider.get(f"/api/v1/clusters/{registered['id']}/brokers/1/").status_code == 404


@pytest.fixture
def one_node_cluster(tmp_path):
    """A one-node cluster with a controller quorum: the broker takes dynamic configs."""
    cluster = start_cluster(tmp_path / "cluster", 1)
    yield cluster
    cluster.stop()


def test_an_org_admin_changes_a_brokers_dynamic_config_and_read_only_ones_are_refused(
    people, one_node_cluster
) -> None:
    registered = _register(people.org_admin, people.organization, "dyn", one_node_cluster.bootstrap).json()
    node_id = registered["health"]["controller_id"]
    url = f"/api/v1/clusters/{registered['id']}/brokers/{node_id}/configs/"
    throttle = "leader.replication.throttled.rate"

    changed = people.org_admin.patch(url, {"configs": {throttle: "10485760"}}, format="json")

    assert changed.status_code == 200, changed.json()
    entry = changed.json()["configs"][throttle]
    assert (entry["value"], entry["source"], entry["unit"]) == (
        "10485760",
        "DYNAMIC_BROKER_CONFIG",
        "bytes_per_second",
    )
    assert AuditEvent.objects.filter(action="cluster.update_broker_configs", result="success").exists()

    fixed = people.org_admin.patch(url, {"configs": {"num.partitions": "3"}}, format="json")
    assert fixed.status_code == 400
    assert fixed.json()["error"]["details"]["read_only"] == ["num.partitions"]
    assert "config file" in fixed.json()["error"]["message"]
    assert people.developer.patch(url, {"configs": {throttle: "1"}}, format="json").status_code == 403

    reset = people.org_admin.patch(url, {"configs": {throttle: None}}, format="json")
    assert reset.json()["configs"][throttle]["source"] != "DYNAMIC_BROKER_CONFIG"
