"""A node started with no cluster settings is a KRaft combined node whose quorum is itself (as Kafka's
quickstart node): DescribeQuorum names it as the one voter and the leader. A data directory written by the
release that ran single nodes outside a quorum (d32902d) is adopted once: same topic ids, records, configs
and SCRAM users, its side files renamed."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kafka import KafkaAdminClient

from tests.fixtures.broker import REPO_ROOT, BrokerProcess, _api_versions_answers, free_port

pytestmark = pytest.mark.integration

# The release whose single nodes ran outside a quorum (JSON side files, no metadata log).
RELEASE = "d32902d"


def describe_quorum(bootstrap: str) -> dict[str, Any]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        return admin.describe_metadata_quorum()
    finally:
        admin.close()


def test_a_single_node_is_the_one_voter_and_leader_of_its_quorum(broker: BrokerProcess) -> None:
    answer = describe_quorum(broker.bootstrap)
    (topic,) = answer["topics"]
    (partition,) = topic["partitions"]
    assert topic["topic_name"] == "__cluster_metadata"
    assert partition["leader_id"] == 1
    assert partition["leader_epoch"] >= 1
    assert [voter["replica_id"] for voter in partition["current_voters"]] == [1]
    assert partition["observers"] == []
    (node,) = answer["nodes"]
    # The controller listener of the one voter is bound on 127.0.0.1 only.
    assert [(listener["name"], listener["host"]) for listener in node["listeners"]] == [
        ("CONTROLLER", "127.0.0.1")
    ]


@pytest.fixture(scope="module")
def release_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's `broker` package (all `python -m broker` needs besides the shared dependencies)."""
    tree = tmp_path_factory.mktemp("release")
    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", RELEASE, "broker"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    return tree


@pytest.fixture
def release_broker(release_tree: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path, int]]:
    """The release's single node on a fresh data directory: (its process, its log dir, its port)."""
    log_dir, port = tmp_path / "logs", free_port()
    command = [sys.executable, "-m", "broker", "--log-level", "WARNING"]
    for key, value in {
        "node.id": "1",
        "listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "log.dirs": str(log_dir),
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1",
    }.items():
        command += ["--override", f"{key}={value}"]
    process = subprocess.Popen(command, cwd=release_tree)
    try:
        deadline = time.monotonic() + 30
        while not _api_versions_answers(port):
            assert process.poll() is None, "the release's broker exited"
            assert time.monotonic() < deadline, "the release's broker did not answer"
            time.sleep(0.05)
        yield process, log_dir, port
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)


def topic_ids(admin: AdminClient, names: list[str]) -> dict[str, str]:
    described = admin.describe_topics(TopicCollection(names))
    return {name: str(future.result(30).topic_id) for name, future in described.items()}


def broker_config(admin: AdminClient, name: str) -> str:
    resource = ConfigResource(ResourceType.BROKER, "1")
    return admin.describe_configs([resource])[resource].result(30)[name].value  # type: ignore[no-any-return]


def consume_all(bootstrap: str, topic: str, partitions: int, count: int) -> list[bytes]:
    """Every record from the start of each partition (assigned: no group to join)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, index, OFFSET_BEGINNING) for index in range(partitions)])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    return values


def test_a_release_data_directory_is_adopted_once(
    release_broker: tuple[subprocess.Popen[bytes], Path, int], tmp_path: Path
) -> None:
    release_process, log_dir, release_port = release_broker
    release = AdminClient({"bootstrap.servers": f"127.0.0.1:{release_port}"})
    created = release.create_topics([NewTopic("adopted", 3, 1, config={"retention.ms": "123456789"})])
    created["adopted"].result(30)
    default = ConfigResource(
        ResourceType.BROKER,
        "1",
        incremental_configs=[
            ConfigEntry("log.retention.bytes", "987654321", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    release.incremental_alter_configs([default])[default].result(30)
    upsert = UserScramCredentialUpsertion(
        "adopted-user", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"adopted-secret"
    )
    release.alter_user_scram_credentials([upsert])["adopted-user"].result(30)
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{release_port}", "enable.idempotence": True})
    for index in range(30):
        producer.produce("adopted", f"before-{index}".encode(), partition=index % 3)
    assert producer.flush(30) == 0
    ids_before = topic_ids(release, ["adopted", "__consumer_offsets"])
    release_process.terminate()
    assert release_process.wait(30) == 0
    assert not (log_dir / "__cluster_metadata").exists()

    node = BrokerProcess(tmp_path / "after", {"log.dirs": str(log_dir)})
    try:
        for start in range(2):  # adopted on the first start; the second finds the quorum's records only
            node.start()
            admin = AdminClient({"bootstrap.servers": node.bootstrap})
            assert topic_ids(admin, ["adopted", "__consumer_offsets"]) == ids_before
            resource = ConfigResource(ResourceType.TOPIC, "adopted")
            assert (
                admin.describe_configs([resource])[resource].result(30)["retention.ms"].value == "123456789"
            )
            assert broker_config(admin, "log.retention.bytes") == "987654321"
            described = admin.describe_user_scram_credentials(["adopted-user"])["adopted-user"].result(30)
            assert [info.mechanism for info in described.scram_credential_infos] == [
                ScramMechanism.SCRAM_SHA_256
            ]
            producer = Producer({"bootstrap.servers": node.bootstrap, "enable.idempotence": True})
            for index in range(3):
                producer.produce("adopted", f"after-{start}-{index}".encode(), partition=index)
            assert producer.flush(30) == 0
            values = consume_all(node.bootstrap, "adopted", 3, 33 + 3 * start)
            assert sorted(values) == sorted(
                [f"before-{index}".encode() for index in range(30)]
                + [f"after-{run}-{index}".encode() for run in range(start + 1) for index in range(3)]
            )
            assert sorted(path.name for path in log_dir.glob("*.adopted")) == [
                "dynamic-configs.json.adopted",
                "finalized-features.json.adopted",
                "producer-ids.json.adopted",
            ]
            assert not (log_dir / "dynamic-configs.json").exists()
            node.stop()
        assert node.log_text().count("adopted " + str(log_dir)) == 1
    finally:
        node.kill9()
