"""Acceptance 2 of issue #33: data directories written by the release (tests/fixtures/upgrade/<ref>/, made
by scripts/make_upgrade_fixtures.py) open under this tree's broker, which serves everything the manifest
recorded (records by digest, topic ids, offsets, configs, users, ACLs, quotas, group offsets, producers),
enforces the old SCRAM users and ACLs, accepts writes and keeps them over a restart.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from tests.fixtures.broker import BrokerProcess
from tests.fixtures.cluster import LocalCluster
from tests.fixtures.rolling_upgrade import full_isr
from tests.fixtures.upgrade import (
    ADMIN_PASSWORD,
    ADMIN_USER,
    FIXTURES_ROOT,
    RELEASE_COMMIT,
    TIMEOUT_S,
    USERS,
    Target,
    client_settings,
    create_topics,
    observe,
    read_partitions,
    unpack,
    wait_until,
)

pytestmark = pytest.mark.integration

FIXTURE = FIXTURES_ROOT / RELEASE_COMMIT[:7]


def manifest() -> dict[str, Any]:
    return json.loads((FIXTURE / "manifest.json").read_text())


def assert_served(target: Target, expected: dict[str, Any]) -> None:
    """Every part of the observation equals the manifest's, compared part by part for a readable diff."""
    observed = observe(target)
    assert sorted(observed) == sorted(expected)
    for part in expected:
        assert observed[part] == expected[part], f"{part} differs from what the release served"


@pytest.fixture
def single_node(tmp_path: Path) -> Iterator[tuple[BrokerProcess, Target]]:
    fixture = manifest()["single"]
    unpack(FIXTURE / fixture["archives"]["1"], tmp_path / "logs")
    node = BrokerProcess(tmp_path, fixture["properties"])
    node.properties["listeners"] = f"SASL_PLAINTEXT://127.0.0.1:{node.port}"
    node.start()
    try:
        yield node, Target(node.bootstrap, [1], 1)
    finally:
        node.kill9()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[LocalCluster, Target]]:
    fixture = manifest()["cluster"]
    nodes = LocalCluster(
        tmp_path,
        len(fixture["archives"]),
        properties=fixture["properties"],
        client_protocol="SASL_PLAINTEXT",
        client_settings=client_settings(),
    )
    for node_id, archive in fixture["archives"].items():
        unpack(FIXTURE / archive, nodes.node(int(node_id)).data_dir / "logs")
    try:
        nodes.start()
        nodes.wait_ready()
        target = Target(nodes.bootstrap, sorted(nodes.nodes), len(nodes.nodes))
        # Every partition led and in sync, as when the release stopped: else per-leader answers (producer
        # state) would leave partitions out.
        wait_until(lambda: full_isr(target), "every partition in full ISR", 60)
        yield nodes, target
    except BaseException:
        print(nodes.log_tails(60))
        raise
    finally:
        nodes.stop()


def test_a_single_node_serves_the_release_data_and_takes_writes(
    single_node: tuple[BrokerProcess, Target],
) -> None:
    node, target = single_node
    expected = manifest()["single"]["observed"]
    assert_served(target, expected)
    check_security(target, expected)
    write_after_upgrade(target)
    before = observe(target)
    node.restart()
    wait_until(lambda: full_isr(target), "leaders after the restart")
    assert_served(target, before)


def test_a_cluster_serves_the_release_data_and_takes_writes(cluster: tuple[LocalCluster, Target]) -> None:
    nodes, target = cluster
    expected = manifest()["cluster"]["observed"]
    assert_served(target, expected)
    check_security(target, expected)
    write_after_upgrade(target)
    before = observe(target)
    nodes.stop()
    nodes.start()
    nodes.wait_ready()
    wait_until(lambda: full_isr(target), "every partition back in full ISR after the restart", 60)
    assert_served(target, before)


# --- the checks ------------------------------------------------------------------------------------


def read_as(target: Target, user: str, password: str, topic: str) -> tuple[int, int | None]:
    """(records read, error code or None) for `user` reading every partition of `topic` from the start."""
    partitions = target.admin().list_topics(topic, timeout=10).topics[topic].partitions
    consumer = Consumer(
        target.config(
            **client_settings(user, password),
            **{
                "group.id": f"alice-{uuid.uuid4()}",
                "enable.partition.eof": True,
                "enable.auto.commit": False,
            },
        )
    )
    consumer.assign([TopicPartition(topic, number, 0) for number in partitions])
    count, at_end = 0, set()
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while at_end != set(partitions):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{user} reading {topic}: {count} records, at the end of {sorted(at_end)}")
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(message.partition())
                    continue
                return count, message.error().code()
            at_end.discard(message.partition())
            count += 1
        return count, None
    finally:
        consumer.close()


def produce_as(
    target: Target, user: str, password: str, topic: str, count: int = 1, *, idempotent: bool = False
) -> int | None:
    """The first delivery error code of `count` records `user` sends to `topic`, None when all landed.
    (An idempotent producer needs more rights: without them librdkafka fails it as a whole.)"""
    errors: list[int] = []
    producer = Producer(
        target.config(**client_settings(user, password), **{"enable.idempotence": idempotent, "acks": "all"})
    )
    for index in range(count):
        producer.produce(
            topic,
            key=f"after-{index}".encode(),
            value=b"written after the upgrade",
            on_delivery=lambda error, _m: errors.append(error.code()) if error else None,
        )
    producer.flush(TIMEOUT_S)
    return errors[0] if errors else None


def login_errors(target: Target, user: str, password: str) -> set[int]:
    """The errors librdkafka reports while `user` logs in with `password` and asks for metadata."""
    errors: set[int] = set()
    admin = AdminClient(
        target.config(**client_settings(user, password), error_cb=lambda error: errors.add(error.code()))
    )
    try:
        admin.list_topics(timeout=5)
    except KafkaException as error:
        errors.add(error.args[0].code())
        admin.poll(1)  # error_cb runs only here
    return errors


def committed_count(target: Target, topic: str) -> int:
    admin = target.admin()
    partitions = admin.list_topics(topic, timeout=10).topics[topic].partitions
    read = read_partitions(target, [TopicPartition(topic, p) for p in partitions], "read_committed")
    return sum(answer["count"] for answer in read.values())


def check_security(target: Target, expected: dict[str, Any]) -> None:
    """The release's SCRAM users log in (and a wrong password does not), its ACLs decide."""
    alice, bob = USERS["alice"][0], USERS["bob"][0]
    readable = sum(
        answer["count"] for p, answer in expected["read_uncommitted"].items() if p.startswith("codec-none/")
    )
    assert read_as(target, "alice", alice, "codec-none") == (readable, None)
    # bob may only describe codec-none and has no group: the client reports whichever refusal comes first, its
    # Fetch (no READ on the topic) or its FindCoordinator (no DESCRIBE on the group); both are the ACLs deciding.
    assert read_as(target, "bob", bob, "codec-none")[1] in (
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
    )
    assert produce_as(target, "bob", bob, "codec-none") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert produce_as(target, "alice", alice, "codec-snappy") is None
    assert produce_as(target, "alice", alice, "codec-zstd") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert KafkaError._AUTHENTICATION in login_errors(target, "alice", "not-her-password")


def write_after_upgrade(target: Target) -> None:
    """Produce, create a topic, commit an offset, run a transaction, add a SCRAM user."""
    admin = target.admin()
    assert produce_as(target, ADMIN_USER, ADMIN_PASSWORD, "codec-none", 10, idempotent=True) is None
    create_topics(target, {"after-upgrade": (2, {})})
    assert produce_as(target, ADMIN_USER, ADMIN_PASSWORD, "after-upgrade", 10, idempotent=True) is None

    offsets = [TopicPartition("codec-none", 0, 160)]
    group = ConsumerGroupTopicPartitions("classic-group", offsets)
    admin.alter_consumer_group_offsets([group])["classic-group"].result(TIMEOUT_S)

    # The release's transactional id goes on: its producer id and epoch come from __transaction_state.
    committed_before = committed_count(target, "transactional")
    producer = Producer(target.config(**{"transactional.id": "upgrade-txn"}))
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    for index in range(4):
        producer.produce("transactional", partition=index % 2, value=f"after-{index}".encode())
    producer.commit_transaction(TIMEOUT_S)
    assert committed_count(target, "transactional") == committed_before + 4

    carol = UserScramCredentialUpsertion(
        "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"carol-secret"
    )
    admin.alter_user_scram_credentials([carol])["carol"].result(TIMEOUT_S)
    wait_until(lambda: not login_errors(target, "carol", "carol-secret"), "carol's first login")
