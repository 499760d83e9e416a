"""Debian's Burrow 1.2.1 (sarama, configured as a Kafka 0.8.2 or 0.10.0 client: ListOffsets v0, Fetch v0 or v2 with
old-format messages) follows a group through `__consumer_offsets` on our broker and reports the lag our lag API
reports."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters import services as clusters
from controlplane.lag.sampler import sample_cluster
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from tests.fixtures.broker import BrokerProcess, free_port
from tests.integration.topics.world import api_client

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

BURROW = "/usr/bin/Burrow"  # Debian's package names the binary so
ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")  # Debian's zookeeper package
# Burrow 1.2.1 keeps its own state in ZooKeeper and will not start without one.
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"


def _wait_for_port(port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on port {port} after {timeout_s} s")


@pytest.fixture
def zookeeper(tmp_path: Path) -> Iterator[int]:
    if not ZOOKEEPER_JAR.exists() or shutil.which("java") is None:
        pytest.fail("ZooKeeper is not installed (scripts/bootstrap.sh --test installs Debian's zookeeper)")
    port = free_port()
    log = (tmp_path / "zookeeper.log").open("wb")
    process = subprocess.Popen(
        [
            "java",
            "-Dzookeeper.admin.enableServer=false",
            "-cp",
            str(ZOOKEEPER_JAR),
            ZOOKEEPER_MAIN,
            str(port),
            str(tmp_path / "zk"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_for_port(port, 60)
        yield port
    finally:
        process.kill()
        process.wait()
        log.close()


@pytest.fixture
def burrow(tmp_path: Path, zookeeper: int) -> Iterator[Callable[[str, str], int]]:
    """Starts Burrow on a broker; returns its HTTP port."""
    if not Path(BURROW).exists():
        pytest.fail("Burrow is not installed (scripts/bootstrap.sh --test installs Debian's burrow)")
    started: list[subprocess.Popen[bytes]] = []

    def start(bootstrap: str, kafka_version: str) -> int:
        http_port = free_port()
        config_dir = tmp_path / "burrow"
        config_dir.mkdir()
        (config_dir / "burrow.toml").write_text(
            f"""
[general]
pidfile="{config_dir}/burrow.pid"
[logging]
level="info"
[zookeeper]
servers=["127.0.0.1:{zookeeper}"]
timeout=6
root-path="/burrow"
[client-profile.old]
client-id="burrow"
kafka-version="{kafka_version}"
[cluster.local]
class-name="kafka"
servers=["{bootstrap}"]
client-profile="old"
topic-refresh=5
offset-refresh=1
[consumer.local]
class-name="kafka"
cluster="local"
servers=["{bootstrap}"]
client-profile="old"
start-latest=false
[httpserver.default]
address="127.0.0.1:{http_port}"
[storage.default]
class-name="inmemory"
workers=2
intervals=10
"""
        )
        log = (tmp_path / "burrow.log").open("wb")
        started.append(
            subprocess.Popen(
                [BURROW, "--config-dir", str(config_dir)],
                cwd=config_dir,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        log.close()
        _wait_for_port(http_port, 30)
        return http_port

    yield start
    for process in started:
        process.kill()
        process.wait()


def _burrow_lag(port: int, group: str) -> dict | None:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/v3/kafka/local/consumer/{group}/lag", timeout=5
        ) as r:
            answer = json.load(r)
    except urllib.error.HTTPError:
        return None  # 404 until Burrow has read the group's offsets
    return None if answer.get("error") else answer["status"]


def _requests_served(broker: BrokerProcess) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=5) as response:
        return response.read().decode()


# sarama's requests by the Kafka version it is told: Fetch v0 (magic 0 messages) before 0.10, v2 (magic 1) from it.
@pytest.mark.parametrize(("kafka_version", "fetch_version"), [("0.8.2", 0), ("0.10.0", 2)])
def test_burrow_reports_the_lag_our_lag_api_reports(
    db, lag_redis: str, fresh_broker: BrokerProcess, burrow, kafka_version: str, fetch_version: int
) -> None:
    uid = uuid.uuid4().hex[:8]
    topic, group = f"orders-{uid}", f"billing-{uid}"
    admin = AdminClient({"bootstrap.servers": fresh_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": fresh_broker.bootstrap})
    for index in range(11):
        producer.produce(topic, f"record {index}".encode(), partition=index % 2)
    assert producer.flush(15) == 0  # 6 records in partition 0, 5 in partition 1
    consumer = Consumer(
        {"bootstrap.servers": fresh_broker.bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    consumer.commit(offsets=[TopicPartition(topic, 0, 2), TopicPartition(topic, 1, 4)], asynchronous=False)
    consumer.close()

    organization = tenancy.create_organization(actor=Actor.system(), name=f"Burrow {uid}")
    cluster = clusters.register_external_cluster(
        actor=Actor.system(),
        organization=organization,
        name=f"burrow-{uid}",
        bootstrap_servers=fresh_broker.bootstrap,
    )
    user, org_admin = api_client(f"olga-{uid}")
    tenancy.add_org_member(actor=Actor.system(), organization=organization, user=user, is_org_admin=True)
    sample_cluster(cluster)
    rows = org_admin.get("/api/v1/lag/groups/", {"cluster": cluster.id}).json()["results"]
    ours = next(row for row in rows if row["name"] == group)
    detail = org_admin.get(f"/api/v1/lag/groups/{ours['group']}/").json()
    our_partitions = {
        p["partition"]: p["log_end_offset"] - p["committed_offset"] for p in detail["partitions"]
    }
    assert (ours["lag_messages"], our_partitions) == (5, {0: 4, 1: 1})

    port = burrow(fresh_broker.bootstrap, kafka_version)
    deadline = time.monotonic() + 60
    status = None
    while time.monotonic() < deadline:
        status = _burrow_lag(port, group)
        if status is not None and sum(p["current_lag"] for p in status["partitions"]) == ours["lag_messages"]:
            break
        time.sleep(1)
    assert status is not None, "Burrow never reported the group"
    assert status["totallag"] == ours["lag_messages"]
    assert {p["partition"]: p["current_lag"] for p in status["partitions"]} == our_partitions

    # Burrow got there with the old versions: ListOffsets v0 and Fetch v0 or v2 (old-format messages).
    served = _requests_served(fresh_broker)
    assert 'api="list_offsets",version="0"' in served
    assert f'api="fetch",version="{fetch_version}"' in served
