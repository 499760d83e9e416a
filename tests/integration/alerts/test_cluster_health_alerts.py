"""Cluster-health rules on a real three-broker cluster: a broker killed with SIGKILL fires `broker_down` and
`under_replicated_partitions` to a signed webhook within two sampling intervals, and both resolve once the
broker is back. The test plays Celery beat (one `alerts.sample_cluster_health` run per interval, in this
process); a real Celery worker delivers the notices to a real HTTP receiver allowlisted for the test."""

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controlplane.alerts import cluster_health
from controlplane.alerts.models import Alert, ClusterHealthSample
from controlplane.alerts.tasks import sample_cluster_health
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.kafka.topics import create_topic
from tests.fixtures.cluster import LocalCluster, start_cluster
from tests.integration.alerts.conftest import WebhookReceiver, World, created

pytestmark = pytest.mark.integration

INTERVAL = 5.0  # the shortest LAG_SAMPLING_INTERVAL_SECONDS allowed


@pytest.fixture
def three_brokers(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = start_cluster(tmp_path / "cluster", 3)
    try:
        yield cluster
    finally:
        cluster.stop()


def _received(receiver: WebhookReceiver, secret: str) -> list[dict]:
    return receiver.signed_by(secret)


def _sample_until(condition, deadline: float, cluster_id: int) -> float | None:
    """Runs one sampling per INTERVAL (like beat) until `condition()`; returns when it first held."""
    while time.monotonic() < deadline:
        next_run = time.monotonic() + INTERVAL
        sample_cluster_health(cluster_id)
        while time.monotonic() < min(next_run, deadline):
            if condition():
                return time.monotonic()
            time.sleep(0.1)
    return time.monotonic() if condition() else None


def test_broker_kill_fires_and_restart_resolves(
    delivery_worker: World, webhook_receiver: WebhookReceiver, three_brokers: LocalCluster
) -> None:
    world = delivery_worker
    registered = created(
        world.admin.post(
            "/api/v1/clusters/register/",
            {
                "organization": world.team.organization_id,
                "name": "triple",
                "bootstrap_servers": three_brokers.bootstrap,
            },
            format="json",
        )
    )
    cluster = Cluster.objects.get(pk=registered["id"])
    create_topic(
        connection_for(cluster), name="payments-orders", partitions=3, replication_factor=3, configs={}
    )
    channel = created(
        world.developer.post(
            "/api/v1/alert-channels/",
            {"team": world.team.pk, "name": "oncall", "kind": "webhook", "url": webhook_receiver.url},
            format="json",
        )
    )
    for metric in ("broker_down", "under_replicated_partitions"):
        rule = created(
            world.developer.post(
                "/api/v1/alert-rules/",
                {"team": world.team.pk, "name": metric, "metric": metric, "cluster": cluster.pk,
                 "severity": "critical", "channels": [channel["id"]]},
                format="json",
            )
        )  # fmt: skip
        assert rule["threshold"] == 0  # the metric's default: any
    assert cluster.pk in cluster_health.clusters_to_sample()

    # Healthy: two looks, nothing fires.
    sample_cluster_health(cluster.pk)
    sample_cluster_health(cluster.pk)
    sample = ClusterHealthSample.objects.get(cluster=cluster)
    assert sample.reachable is True
    assert sample.values["broker_down"] == {"1": 0.0, "2": 0.0, "3": 0.0}
    assert sample.values["under_replicated_partitions"] == 0
    assert all(0 < used < 100 for used in sample.values["disk_usage_percent"].values())
    assert not Alert.objects.exists()
    assert webhook_receiver.received == []

    three_brokers.node(3).kill9()
    killed_at = time.monotonic()

    def fired() -> set[str]:
        return {
            f"{body['rule']['name']}/{body['alert']['group']}"
            for body in _received(webhook_receiver, channel["secret"])
            if body["kind"] == "firing"
        }

    expected = {"broker_down/broker 3", "under_replicated_partitions/cluster"}
    seen_at = _sample_until(lambda: fired() >= expected, killed_at + 4 * INTERVAL, cluster.pk)
    assert seen_at is not None, f"fired: {fired()}"
    assert seen_at - killed_at <= 2 * INTERVAL, f"{seen_at - killed_at:.1f} s after the kill"
    print(f"firing notices received {seen_at - killed_at:.1f} s after the kill (interval {INTERVAL} s)")
    broker_alert = Alert.objects.get(rule__name="broker_down", state="firing")
    assert broker_alert.group_name == "broker 3"
    assert "not listed" in broker_alert.reason

    three_brokers.node(3).start()
    three_brokers.node(3).wait_answering()

    def resolved() -> set[str]:
        return {
            f"{body['rule']['name']}/{body['alert']['group']}"
            for body in _received(webhook_receiver, channel["secret"])
            if body["kind"] == "resolved"
        }

    # The ISR takes the restarted replica back once it has caught up: allow a few intervals for that.
    restarted_at = time.monotonic()
    resolved_at = _sample_until(lambda: resolved() >= expected, restarted_at + 12 * INTERVAL, cluster.pk)
    assert resolved_at is not None, f"resolved: {resolved()}"
    print(f"resolved notices received {resolved_at - restarted_at:.1f} s after the restart")
    assert not Alert.objects.filter(state__in=["pending", "firing"]).exists()
    assert sorted(body["kind"] for body in _received(webhook_receiver, channel["secret"])) == [
        "firing", "firing", "resolved", "resolved",
    ]  # fmt: skip


@pytest.mark.apache_kafka
@pytest.mark.apache_kafka_slow  # two JVMs and a restart: about a minute, over CI's budget (-m apache_kafka runs it)
def test_an_apache_kafka_broker_killed_fires_broker_down_and_its_restart_resolves_it(
    world: World, apache_kafka_factory
) -> None:
    """The same on Apache Kafka, registered by address: a KRaft controller+broker and a broker-only node of
    its cluster (their own JVMs, not the session's node); kill -9 of the broker-only node."""
    # The controller fences a broker that stopped heartbeating after this long (Kafka's default is 9 s).
    controller = apache_kafka_factory(
        **{"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}
    )
    broker = apache_kafka_factory(joins=controller, node_id=2, **{"broker.heartbeat.interval.ms": "500"})
    registered = created(
        world.admin.post(
            "/api/v1/clusters/register/",
            {
                "organization": world.team.organization_id,
                "name": "apache",
                "bootstrap_servers": f"{controller.bootstrap},{broker.bootstrap}",
            },
            format="json",
        )
    )
    assert registered["health"]["brokers_up"] == 2, registered
    cluster = Cluster.objects.get(pk=registered["id"])
    rule = created(
        world.developer.post(
            "/api/v1/alert-rules/",
            {"team": world.team.pk, "name": "down", "metric": "broker_down", "cluster": cluster.pk},
            format="json",
        )
    )
    sample_cluster_health(cluster.pk)
    assert ClusterHealthSample.objects.get(cluster=cluster).values["broker_down"] == {"1": 0.0, "2": 0.0}
    assert not Alert.objects.exists()

    broker.kill9()
    killed_at = time.monotonic()

    def state() -> str | None:
        alert = Alert.objects.filter(rule_id=rule["id"], group_name="broker 2").first()
        return None if alert is None else alert.state

    assert _sample_until(lambda: state() == "firing", killed_at + 6 * INTERVAL, cluster.pk), state()
    print(f"broker_down fired {time.monotonic() - killed_at:.1f} s after the kill")
    assert "not listed" in Alert.objects.get(rule_id=rule["id"]).reason

    broker.start()
    restarted_at = time.monotonic()
    assert _sample_until(lambda: state() == "resolved", restarted_at + 6 * INTERVAL, cluster.pk), state()
    print(f"broker_down resolved {time.monotonic() - restarted_at:.1f} s after the restart")
