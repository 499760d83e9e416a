"""Replication flows (MirrorMaker 2) as a managed service, our broker to another of our brokers: a team asks
for its topics and groups to be replicated, a producer and a consumer group run on the source meanwhile, the
replica and the group's translated offsets follow; the group then fails over to the replica with the offsets
the control plane commits from MM2's checkpoints, and the test counts the records it skipped (must be 0) and
read again. One Connect cluster (one worker) on the target serves every step: a worker's start is the cost.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.alerts.models import Alert
from controlplane.audit.models import AuditEvent
from controlplane.clusters import services as clusters
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.connect.models import ConnectCluster
from controlplane.kafka.acls import describe_acls
from controlplane.lag.sampler import sample_cluster
from controlplane.replication.models import ReplicationFlow
from controlplane.tenancy.access import Actor
from tests.fixtures.engines import STREAMHUB, ManagedCluster
from tests.fixtures.servers import wait_until
from tests.integration.topics.world import KafkaWorld

pytestmark = pytest.mark.integration

CHECKPOINT_SECONDS = 1
# The Connect workers' offset.flush.interval.ms: MM2 flushes delayed offset syncs when Connect commits.
OFFSET_FLUSH_SECONDS = 1
PARTITIONS = 2


@pytest.fixture
def engine() -> str:
    """The source is the session's SASL broker of ours; the target a second one (Apache Kafka as a target is
    measured by bench/mirror_flow.py)."""
    return STREAMHUB


@dataclass
class ReplicationWorld:
    world: KafkaWorld
    target: ManagedCluster
    target_cluster: Cluster
    connect_cluster_id: int
    flows: list[int] = field(default_factory=list)

    def body(self, **overrides: Any) -> dict[str, Any]:
        world = self.world
        return {
            "team": world.team_a.id,
            "name": f"dr-{uuid.uuid4().hex[:6]}",
            "source_cluster": world.cluster.id,
            "target_cluster": self.target_cluster.id,
            "connect_cluster": self.connect_cluster_id,
            "topics_pattern": world.topic_prefix_a.replace(".", r"\.") + "orders.*",
            "groups_pattern": world.group_prefix_a.replace(".", r"\.") + ".*",
            "checkpoint_interval_seconds": CHECKPOINT_SECONDS,
            # An offset sync per record: translated offsets are then exact (MM2's default is every 100).
            "offset_lag_max": 0,
            **overrides,
        }


@pytest.fixture
def replication_world(
    kafka_world: KafkaWorld, secure_broker_factory: Any, settings: Any, tmp_path: Path
) -> Iterator[ReplicationWorld]:
    settings.DATA_DIR = tmp_path / "data"
    world = kafka_world
    target = ManagedCluster.of_streamhub(secure_broker_factory())
    target_cluster = clusters.register_external_cluster(
        actor=Actor.system(),
        organization=world.team_a.organization,
        name=f"dr-site-{uuid.uuid4().hex[:6]}",
        **target.registration(),
    )
    started = time.monotonic()
    answer = world.org_admin.post(
        "/api/v1/connect-clusters/",
        {"cluster": target_cluster.id, "name": "mirror", "worker_count": 1},
        format="json",
    )
    print(f"\nConnect cluster attached to the target in {time.monotonic() - started:.1f} s")
    assert answer.status_code == 201, answer.json()
    assert answer.json()["status"] == "running", answer.json()["status_reason"]
    replication = ReplicationWorld(world, target, target_cluster, answer.json()["id"])
    try:
        yield replication
    finally:
        for flow in ReplicationFlow.objects.filter(team__organization=world.team_a.organization).exclude(
            state="deleted"
        ):
            world.org_admin.delete(f"/api/v1/replication-flows/{flow.pk}/")
        for connect_cluster in ConnectCluster.objects.filter(pk=answer.json()["id"]).exclude(
            status="deleted"
        ):
            world.org_admin.delete(f"/api/v1/connect-clusters/{connect_cluster.pk}/")


class SourceTraffic:
    """A producer of numbered records and a consumer group reading them, both on the source, in threads."""

    def __init__(self, world: KafkaWorld, topic: str, group: str) -> None:
        self.world, self.topic, self.group = world, topic, group
        self.produced = 0
        self.started = time.monotonic()
        self.produce_seconds = 0.0
        self.consumed: list[str] = []
        self.producing, self.consuming = threading.Event(), threading.Event()
        self.threads = [
            threading.Thread(target=self._produce, daemon=True),
            threading.Thread(target=self._consume, daemon=True),
        ]
        self.producing.set()
        self.consuming.set()
        for thread in self.threads:
            thread.start()

    def _produce(self) -> None:
        producer = self.world.producer(**{"enable.idempotence": True})
        while self.producing.is_set():
            for _ in range(20):
                producer.produce(
                    self.topic, key=str(self.produced % 8).encode(), value=str(self.produced).encode()
                )
                self.produced += 1
            producer.flush(10)
            time.sleep(0.05)
        assert producer.flush(30) == 0
        self.produce_seconds = time.monotonic() - self.started

    def rate(self) -> float:
        return self.produced / max(self.produce_seconds, 0.001)

    def _consume(self) -> None:
        consumer = self.world.consumer(self.group)
        consumer.subscribe([self.topic])
        while self.consuming.is_set():
            messages = consumer.consume(100, timeout=0.5)
            batch = [message.value().decode() for message in messages if not message.error()]
            if batch:
                consumer.commit(asynchronous=False)
                self.consumed += batch
        consumer.close()

    def stop_consumer(self) -> None:
        self.consuming.clear()
        self.threads[1].join(30)

    def stop_producer(self) -> None:
        self.producing.clear()
        self.threads[0].join(30)


def worker_log_tail(rw: ReplicationWorld, lines: int = 80) -> str:
    worker = ConnectCluster.objects.get(pk=rw.connect_cluster_id).workers.first()
    log = Path(worker.directory) / "worker.log"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""


def end_offsets(config: dict[str, str], topic: str) -> dict[int, int]:
    consumer = Consumer({**config, "group.id": f"probe-{uuid.uuid4().hex}"})
    try:
        return {
            partition: consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1]
            for partition in range(PARTITIONS)
        }
    finally:
        consumer.close()


def committed(config: dict[str, str], group: str, topic: str) -> dict[int, int]:
    consumer = Consumer({**config, "group.id": group})
    try:
        return {
            tp.partition: tp.offset
            for tp in consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
        }
    finally:
        consumer.close()


def test_a_flow_replicates_a_teams_topic_and_group_and_the_group_fails_over(
    replication_world: ReplicationWorld, lag_redis: str
) -> None:
    rw, world = replication_world, replication_world.world
    bad_input_is_refused(rw)
    topic, group = f"{world.topic_prefix_a}orders-{uuid.uuid4().hex[:6]}", f"{world.group_prefix_a}billing"
    source_admin = AdminClient(world.broker.client_config())
    source_admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    traffic = SourceTraffic(world, topic, group)
    wait_until(lambda: len(traffic.consumed) > 200, timeout=60, what="the source group to consume")

    started = time.monotonic()
    created = world.developer_a.post("/api/v1/replication-flows/", rw.body(name="dr"), format="json")
    assert created.status_code == 201, created.json()
    flow = created.json()
    assert flow["state"] == "running", flow["state_reason"]
    print(f"flow created in {time.monotonic() - started:.1f} s")
    rw.flows.append(flow["id"])
    replica = f"dr.{topic}"
    target_admin = rw.target.client_config()

    def connectors_running() -> bool:
        detail = world.developer_a.get(f"/api/v1/replication-flows/{flow['id']}/").json()
        return all(
            detail["connectors"][kind]["state"] == "RUNNING"
            and [task["state"] for task in detail["connectors"][kind]["tasks"]] == ["RUNNING"]
            for kind in ("source", "checkpoint")
        )

    try:
        wait_until(connectors_running, timeout=90, what="the flow's connectors to run", interval=1)
    except TimeoutError:
        traffic.stop_consumer()
        traffic.stop_producer()
        print(json.dumps(world.developer_a.get(f"/api/v1/replication-flows/{flow['id']}/").json(), indent=1))
        print(worker_log_tail(rw))
        raise
    the_flows_users_are_read_only_on_the_source(rw, flow)

    # Under the producer: the replica follows the source, the group's offsets follow on the target.
    wait_until(
        lambda: sum(end_offsets(target_admin, replica).values()) > traffic.produced // 2,
        timeout=90,
        what="the replica to fill",
        interval=1,
    )
    lag = world.viewer_a.get(f"/api/v1/replication-flows/{flow['id']}/lag/")
    assert lag.status_code == 200, lag.json()
    assert [(row["topic"], row["partition"], row["replica_topic"]) for row in lag.json()] == [
        (topic, partition, replica) for partition in range(PARTITIONS)
    ]
    print(f"lag under the producer: {[(row['lag_records'], row['lag_ms']) for row in lag.json()]}")

    def group_synced() -> bool:
        offsets = committed(target_admin, group, replica)
        return sum(offset for offset in offsets.values() if offset > 0) > 200

    wait_until(group_synced, timeout=60, what="the group's offsets to reach the target", interval=1)

    # Disaster: the group's consumer and the producer stop; the flow catches up; the group fails over.
    traffic.stop_consumer()
    traffic.stop_producer()
    source_ends = end_offsets(world.broker.client_config(), topic)
    wait_until(
        lambda: end_offsets(target_admin, replica) == source_ends,
        timeout=90,
        what="the replica to catch up",
        interval=1,
    )
    caught_up = world.viewer_a.get(f"/api/v1/replication-flows/{flow['id']}/lag/").json()
    assert [row["lag_records"] for row in caught_up] == [0] * PARTITIONS, caught_up
    assert (
        world.viewer_a.post(
            f"/api/v1/replication-flows/{flow['id']}/fail-over-group/", {"group": group}, format="json"
        ).status_code
        == 403
    )
    failed_over = world.developer_a.post(
        f"/api/v1/replication-flows/{flow['id']}/fail-over-group/", {"group": group}, format="json"
    )
    assert failed_over.status_code == 200, failed_over.json()
    assert {row["topic"] for row in failed_over.json()["offsets"]} == {replica}
    consumer = Consumer(
        {**target_admin, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    consumer.subscribe([replica])
    after: list[str] = []
    replica_ends = end_offsets(target_admin, replica)
    deadline = time.monotonic() + 60
    positions: dict[int, int] = {}
    while time.monotonic() < deadline:
        for message in consumer.consume(500, timeout=0.5):
            if not message.error():
                after.append(message.value().decode())
                positions[message.partition()] = message.offset() + 1
        if all(positions.get(p, replica_ends[p]) >= replica_ends[p] for p in range(PARTITIONS)) and (
            consumer.assignment()
        ):
            break
    start_offsets = {row["partition"]: row["offset"] for row in failed_over.json()["offsets"]}
    consumer.close()
    produced = {str(index) for index in range(traffic.produced)}
    read_on_source, read_on_target = set(traffic.consumed), set(after)
    skipped = produced - read_on_source - read_on_target
    reread = read_on_source & read_on_target
    print(
        f"failover: {traffic.produced} produced, {len(read_on_source)} read on the source, "
        f"{len(read_on_target)} on the replica from {start_offsets}; skipped {len(skipped)}, "
        f"read again {len(reread)} (checkpoint interval {CHECKPOINT_SECONDS} s)"
    )
    assert not skipped
    assert len(read_on_target) == len(after), "a record arrived twice on the replica"
    # MM2 checkpoints the group's committed offsets every interval, translated through the newest offset sync
    # the task has flushed (Connect commits every second here): what the group read since is read again.
    bound = traffic.rate() * (CHECKPOINT_SECONDS + OFFSET_FLUSH_SECONDS) * 2
    print(f"re-read bound: {bound:.0f} records ({traffic.rate():.0f} records/s)")
    assert len(reread) <= bound

    paused_flow_copies_nothing_until_resumed(rw, flow, topic, replica)
    tenancy_holds(rw, flow)
    deleting_keeps_the_replica_and_removes_users_acls_and_connectors(rw, flow, replica)


def bad_input_is_refused(rw: ReplicationWorld) -> None:
    world = rw.world
    cases = [
        (rw.body(topics_pattern=world.topic_prefix_b.replace(".", r"\.") + ".*"), 400, "topics_outside_team"),
        (
            rw.body(topics_pattern=world.topic_prefix_a.replace(".", r"\.") + "x|.*"),
            400,
            "topics_outside_team",
        ),
        (rw.body(topics_pattern=".*"), 400, "topics_outside_team"),
        (rw.body(topics_pattern=world.topic_prefix_a.replace(".", r"\.") + "(("), 400, "invalid_pattern"),
        (rw.body(groups_pattern=world.group_prefix_b + ".*"), 400, "groups_outside_team"),
        (rw.body(target_cluster=world.cluster.id), 400, "same_cluster"),
        (rw.body(source_cluster=999999), 404, "not_found"),
        (rw.body(name="Bad Name"), 400, "invalid_name"),
    ]
    for body, status, code in cases:
        answer = world.developer_a.post("/api/v1/replication-flows/", body, format="json")
        assert answer.status_code == status, (body, answer.json())
        if code is not None:
            assert answer.json()["error"]["code"] == code, answer.json()
    # A Connect cluster attached elsewhere, a team that is not the caller's, ACL sync by a developer.
    other = rw.body(team=world.team_b.id)
    assert world.developer_a.post("/api/v1/replication-flows/", other, format="json").status_code == 403
    acl_sync = world.developer_a.post(
        "/api/v1/replication-flows/", rw.body(sync_topic_acls=True), format="json"
    )
    assert acl_sync.status_code == 403, acl_sync.json()
    assert not ReplicationFlow.objects.filter(team=world.team_a).exists()


def the_flows_users_are_read_only_on_the_source(rw: ReplicationWorld, flow: dict[str, Any]) -> None:
    world = rw.world
    mine = [
        acl
        for acl in describe_acls(connection_for(world.cluster))
        if acl.principal == f"User:{flow['source_principal']}"
    ]
    assert mine
    assert {acl.operation for acl in mine} <= {"READ", "DESCRIBE", "DESCRIBE_CONFIGS"}
    # Nothing on the cluster: DescribeCluster needs no grant, and this flow does not sync ACLs.
    assert {acl.resource_name for acl in mine} == {world.topic_prefix_a, world.group_prefix_a}
    # Passwords live only in the Connect cluster's 0600 secrets files: not in configs, answers or audit.
    detail = world.developer_a.get(f"/api/v1/replication-flows/{flow['id']}/").json()
    secrets_dir = Path(ConnectCluster.objects.get(pk=rw.connect_cluster_id).workers.first().directory).parent
    secret_files = list((secrets_dir / "secrets").glob("streamhub-replication-*.properties"))
    assert len(secret_files) == 3
    for secret_file in secret_files:
        assert secret_file.stat().st_mode & 0o077 == 0
        for line in secret_file.read_text().splitlines():
            password = line.split('password="', 1)[1].split('"', 1)[0]
            assert password not in json.dumps(detail)
            assert password not in json.dumps(list(AuditEvent.objects.values()), default=str)
    # The flow's connectors are not the team's to edit through the connectors API.
    listed = world.developer_a.get("/api/v1/connectors/").json()["results"]
    assert not [row for row in listed if row["name"].startswith("streamhub-replication-")]
    assert "rest_port" not in json.dumps(detail)
    assert "127.0.0.1:" not in json.dumps(detail).replace(rw.target.bootstrap, "")


def paused_flow_copies_nothing_until_resumed(
    rw: ReplicationWorld, flow: dict[str, Any], topic: str, replica: str
) -> None:
    """Paused under a producer, the flow copies nothing and its lag alert fires; resumed, it copies what it
    missed and the alert resolves (real lag sampling runs of the target, the alerting app's state machine)."""
    world, target_admin = rw.world, rw.target.client_config()
    url = f"/api/v1/replication-flows/{flow['id']}/"
    sampling_seconds: list[float] = []

    def sample_target() -> None:
        started = time.monotonic()
        sample_cluster(rw.target_cluster)
        sampling_seconds.append(time.monotonic() - started)

    assert world.viewer_a.patch(url, {"lag_alert_records": 10}, format="json").status_code == 403
    assert world.developer_a.patch(url, {"lag_alert_records": -1}, format="json").status_code == 400
    edited = world.developer_a.patch(url, {"lag_alert_records": 10}, format="json")
    assert edited.status_code == 200, edited.json()
    assert edited.json()["lag_alert_records"] == 10
    rule = world.developer_a.post(
        "/api/v1/alert-rules/",
        {
            "team": world.team_a.id,
            "name": "replica behind",
            "metric": "replication_lag_records",
            "comparison": "gt",
            "for_seconds": 0,
            "group_pattern": flow["name"],
        },
        format="json",
    )
    assert rule.status_code == 201, rule.json()
    sample_target()
    detail = world.viewer_a.get(url).json()
    assert detail["alert_state"] == "ok", detail["alerts"]
    assert [sample["lag_records"] for sample in detail["lag_history"]] == [0], detail["lag_history"]

    paused = world.developer_a.post(f"{url}pause/")
    assert paused.status_code == 200, paused.json()
    assert paused.json()["state"] == "paused"

    def source_paused() -> bool:
        source = world.developer_a.get(url).json()["connectors"]["source"]
        return [source["state"], *(task["state"] for task in source["tasks"])] == ["PAUSED", "PAUSED"]

    wait_until(source_paused, timeout=30, what="the source connector and its task to pause")
    before = end_offsets(target_admin, replica)
    producer = world.producer()
    for index in range(50):
        # Keyed alike: all 50 on one partition, which is then 50 records behind (the threshold is 10).
        producer.produce(topic, key=b"paused", value=f"paused-{index}".encode())
    assert producer.flush(10) == 0
    time.sleep(3)  # a running flow copies within a second here; nothing may arrive while paused
    assert end_offsets(target_admin, replica) == before
    lag = world.viewer_a.get(f"{url}lag/").json()
    assert sum(row["lag_records"] for row in lag) == 50
    assert all(row["lag_ms"] >= 3000 for row in lag if row["lag_records"])
    sample_target()
    alert = Alert.objects.get(rule_id=rule.json()["id"])
    assert (alert.state, alert.group_name, alert.value) == ("firing", flow["name"], 50.0), alert.reason
    detail = world.viewer_a.get(url).json()
    assert detail["alert_state"] == "firing"
    assert [(row["id"], row["state"]) for row in detail["alerts"]] == [(alert.pk, "firing")]
    assert detail["lag_history"][-1]["lag_records"] == 50
    assert detail["lag_history"][-1]["max_partition_lag_records"] == 50
    listed = world.developer_a.get("/api/v1/alerts/", {"kind": "replication", "active": "true"}).json()
    assert [row["id"] for row in listed["results"]] == [alert.pk], listed

    assert world.developer_a.post(f"{url}resume/").status_code == 200
    wait_until(
        lambda: sum(end_offsets(target_admin, replica).values()) == sum(before.values()) + 50,
        timeout=60,
        what="the resumed flow to copy",
        interval=0.5,
    )
    sample_target()
    alert.refresh_from_db()
    assert alert.state == "resolved", alert.reason
    detail = world.viewer_a.get(url).json()
    assert detail["alert_state"] == "ok"
    assert [sample["lag_records"] for sample in detail["lag_history"]] == [0, 50, 0]
    print(f"lag sampling runs of the target (flow sampled, alerts judged): {sampling_seconds} s")


def tenancy_holds(rw: ReplicationWorld, flow: dict[str, Any]) -> None:
    world, url = rw.world, f"/api/v1/replication-flows/{flow['id']}/"
    assert world.admin_b.get(url).status_code == 404
    assert world.admin_b.get(f"{url}lag/").status_code == 404
    assert world.admin_b.post(f"{url}pause/").status_code == 404
    assert world.admin_b.post(f"{url}fail-over-group/", {"group": "x"}, format="json").status_code == 404
    assert world.admin_b.delete(url).status_code == 404
    assert world.admin_b.get("/api/v1/replication-flows/").json()["results"] == []
    assert world.viewer_a.post(f"{url}pause/").status_code == 403
    assert [row["id"] for row in world.viewer_a.get("/api/v1/replication-flows/").json()["results"]] == [
        flow["id"]
    ]
    # A group outside the flow's groups pattern (another team's) is not failed over.
    refused = world.developer_a.post(
        f"{url}fail-over-group/", {"group": f"{world.group_prefix_b}x"}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "group_not_replicated"
    assert world.developer_a.get("/api/v1/replication-flows/", {"colour": "red"}).status_code == 400


def deleting_keeps_the_replica_and_removes_users_acls_and_connectors(
    rw: ReplicationWorld, flow: dict[str, Any], replica: str
) -> None:
    world = rw.world
    assert (
        world.developer_a.delete(
            f"/api/v1/replication-flows/{flow['id']}/?delete_replica_topics=yes"
        ).status_code
        == 400
    )
    assert world.developer_a.delete(f"/api/v1/replication-flows/{flow['id']}/").status_code == 204
    assert world.developer_a.get(f"/api/v1/replication-flows/{flow['id']}/").status_code == 404
    assert replica in AdminClient(rw.target.client_config()).list_topics(timeout=10).topics
    principals = {f"User:{flow['source_principal']}", f"User:{flow['target_principal']}"}
    for cluster in (world.cluster, rw.target_cluster):
        assert not [acl for acl in describe_acls(connection_for(cluster)) if acl.principal in principals]
    health = world.org_admin.get(f"/api/v1/connect-clusters/{rw.connect_cluster_id}/health/").json()
    assert health["connectors"] == 0, health
