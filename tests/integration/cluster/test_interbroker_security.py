"""Replication between brokers whose only listeners need SASL (and TLS), with ACLs on.

Followers authenticate to leaders with the broker's own login (`listener.name.<l>.<mech>.sasl.jaas.config`)
and fetch as a super user; a client that is not allowed CLUSTER_ACTION cannot pose as a follower.
The clusters are real controller quorums (tests/fixtures/cluster.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kio.schema.errors import ErrorCode
from kio.schema.offset_for_leader_epoch.v4 import request as epoch_v4
from kio.static.primitive import i32

from broker.auth.jaas import SCRAM_LOGIN_MODULE, SaslCredentials
from broker.replication.peer_connection import PeerConnection
from tests.fixtures.broker import SecureBrokerProcess
from tests.fixtures.cluster import ClusterNode, LocalCluster, start_cluster
from tests.fixtures.servers import wait_until
from tests.integration.broker_security.clients import add_scram_user, admin, grant, unique
from tests.unit.broker.replication.test_manager import TOPIC, fetch_request

pytestmark = pytest.mark.integration

ADMIN_PASSWORD = "admin-inter-broker-secret"
ALICE_PASSWORD = "alice-secret"
MECHANISM = "SCRAM-SHA-512"


def broker_login(password: str = ADMIN_PASSWORD) -> str:
    return f'{SCRAM_LOGIN_MODULE} required username="admin" password="{password}";'


def security_properties(listener: str) -> dict[str, str]:
    """What the control plane's local provisioner writes, plus the broker's own inter-broker login."""
    return {
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
        "sasl.bootstrap.users": f"admin:{MECHANISM}:{ADMIN_PASSWORD};alice:{MECHANISM}:{ALICE_PASSWORD}",
        "super.users": "User:admin",
        "authorizer.class.name": "acl",
        "allow.everyone.if.no.acl.found": "false",
        "sasl.mechanism.inter.broker.protocol": MECHANISM,
        f"listener.name.{listener.lower()}.{MECHANISM.lower()}.sasl.jaas.config": broker_login(),
    }


def client_settings(user: str = "admin", password: str = ADMIN_PASSWORD) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": MECHANISM,
        "sasl.username": user,
        "sasl.password": password,
    }


def produce(bootstrap: str, values: list[bytes], **config: Any) -> list[KafkaError | None]:
    """Produce `values` to partition 0 in order; each delivery's error (None: acknowledged)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            **client_settings(),
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": 30000,
            **config,
        }
    )
    errors: list[KafkaError | None] = [None] * len(values)

    def report(index: int) -> Any:
        def on_delivery(error: KafkaError | None, _message: object) -> None:
            errors[index] = error

        return on_delivery

    for index, value in enumerate(values):
        producer.produce(TOPIC, value, partition=0, on_delivery=report(index))
        producer.poll(0)
    assert producer.flush(60) == 0
    return errors


def partition_isr(bootstrap: str, **settings: str) -> tuple[int, list[int]]:
    admin = AdminClient({"bootstrap.servers": bootstrap, **client_settings(), **settings})
    info = admin.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions[0]
    return info.leader, sorted(info.isrs)


def epoch_request(replica_id: int) -> epoch_v4.OffsetForLeaderEpochRequest:
    return epoch_v4.OffsetForLeaderEpochRequest(
        replica_id=i32(replica_id),
        topics=(
            epoch_v4.OffsetForLeaderTopic(
                topic=TOPIC,
                partitions=(
                    epoch_v4.OffsetForLeaderPartition(
                        partition=i32(0), current_leader_epoch=i32(-1), leader_epoch=i32(0)
                    ),
                ),
            ),
        ),
    )


def send_as(bootstrap: str, user: str, password: str, *requests: Any) -> list[Any]:
    """Send requests over one SCRAM-authenticated connection (the broker's own client)."""
    host, port = bootstrap.rsplit(":", 1)

    async def exchange() -> list[Any]:
        connection = PeerConnection(
            host, int(port), client_id=user, timeout_s=15, sasl=SaslCredentials(MECHANISM, user, password)
        )
        try:
            return [await connection.request(request) for request in requests]
        finally:
            await connection.close()

    return asyncio.run(exchange())


# --- a real controller quorum ------------------------------------------------------------------


@pytest.fixture
def sasl_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = start_cluster(
        tmp_path / "cluster",
        3,
        properties=security_properties("SASL_PLAINTEXT"),
        client_protocol="SASL_PLAINTEXT",
        client_settings=client_settings(),
    )
    try:
        yield cluster
    finally:
        # pytest shows this only when the test failed.
        print(f"\n=== node logs ===\n{cluster.log_tails(60)}")
        cluster.stop()


def test_a_sasl_cluster_with_acls_replicates_and_keeps_acknowledged_records_when_the_leader_dies(
    sasl_cluster: LocalCluster,
) -> None:
    admin = AdminClient(sasl_cluster.client_config())
    admin.create_topics([NewTopic(TOPIC, 1, 3)])[TOPIC].result(30)
    grants = [
        (ResourceType.TOPIC, TOPIC, ResourcePatternType.LITERAL, operation)
        for operation in (AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)
    ] + [(ResourceType.GROUP, "alice-", ResourcePatternType.PREFIXED, AclOperation.READ)]
    acls = [
        AclBinding(kind, name, pattern, "User:alice", "*", operation, AclPermissionType.ALLOW)
        for kind, name, pattern, operation in grants
    ]
    for future in admin.create_acls(acls).values():
        future.result(30)
    alice = client_settings("alice", ALICE_PASSWORD)
    wait_until(
        lambda: partition_isr(sasl_cluster.bootstrap, **alice)[1] == [1, 2, 3],
        30,
        "all three replicas in the ISR",
    )

    values = [f"acknowledged-{i}".encode() for i in range(100)]
    assert produce(sasl_cluster.bootstrap, values, **alice) == [None] * len(values)
    leader, _isr = partition_isr(sasl_cluster.bootstrap, **alice)
    sasl_cluster.node(leader).kill9()
    survivors = ",".join(node.bootstrap for node in sasl_cluster.brokers if node.node_id != leader)
    wait_until(
        lambda: partition_isr(survivors, **alice)[0] not in (leader, -1), 30, "a new leader from the ISR"
    )

    # A follower that is not allowed CLUSTER_ACTION: alice may read the topic, not pose as broker 1.
    new_leader = next(
        node for node in sasl_cluster.brokers if node.node_id == partition_isr(survivors, **alice)[0]
    )
    (fetch,) = send_as(new_leader.bootstrap, "alice", ALICE_PASSWORD, fetch_request(0, 1))
    assert fetch.error_code == ErrorCode.cluster_authorization_failed

    consumer = Consumer(
        {
            "bootstrap.servers": survivors,
            **alice,
            "group.id": "alice-reader",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    read: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(read) < len(values) and time.monotonic() < deadline:
            for message in consumer.consume(500, timeout=0.5):
                assert message.error() is None, message.error()
                read.append(message.value())
    finally:
        consumer.close()
    assert read == values


def two_node_cluster(base: Path, node_properties: dict[int, dict[str, str]] | None = None) -> LocalCluster:
    """Two combined nodes with SASL_PLAINTEXT between brokers and ACLs on; `TOPIC` led by node 1, node 2 its
    follower (the preferred leader is the first replica)."""
    cluster = start_cluster(
        base,
        2,
        properties={
            "replica.lag.time.max.ms": "2000",
            "connection.failed.authentication.delay.ms": "10",
            **security_properties("SASL_PLAINTEXT"),
        },
        client_protocol="SASL_PLAINTEXT",
        client_settings=client_settings(),
        node_properties=node_properties,
    )
    try:
        admin_client = AdminClient(cluster.client_config())
        admin_client.create_topics([NewTopic(TOPIC, num_partitions=1, replica_assignment=[[1, 2]])])[
            TOPIC
        ].result(30)
        wait_until(lambda: partition_isr(cluster.bootstrap)[0] == 1, 30, "node 1 to lead the topic")
    except BaseException:
        print(f"\n=== node logs ===\n{cluster.log_tails(60)}")
        cluster.stop()
        raise
    return cluster


def partition_bytes(node: ClusterNode) -> bytes:
    directory = node.data_dir / "logs" / f"{TOPIC}-0"
    return b"".join(path.read_bytes() for path in sorted(directory.glob("*.log")))


def test_a_follower_with_a_wrong_password_falls_out_of_the_isr_and_never_logs_it(tmp_path: Path) -> None:
    wrong = "not-the-inter-broker-password"
    login = f"listener.name.sasl_plaintext.{MECHANISM.lower()}.sasl.jaas.config"
    cluster = two_node_cluster(tmp_path / "cluster", {2: {login: broker_login(wrong)}})
    try:
        follower = cluster.node(2)
        assert produce(cluster.bootstrap, [b"unreplicated"], acks="1", **{"enable.idempotence": False}) == [
            None
        ]
        wait_until(
            lambda: partition_isr(cluster.bootstrap) == (1, [1]), 30, "the ISR to shrink to the leader"
        )
        wait_until(lambda: "cannot authenticate" in follower.log_text(), 10, "the follower to log why")
        assert "refused SCRAM-SHA-512 login as 'admin'" in follower.log_text()
        for text in (follower.log_text(), cluster.node(1).log_text()):
            assert wrong not in text
            assert ADMIN_PASSWORD not in text
        assert partition_bytes(follower) == b""
    finally:
        cluster.stop()


def test_followers_re_authenticate_before_their_sasl_session_expires(tmp_path: Path) -> None:
    # Leaders announce a 3 s session lifetime; a follower that missed it would be cut off.
    reauth = {"connections.max.reauth.ms": "3000"}
    cluster = two_node_cluster(tmp_path / "cluster", {1: reauth, 2: reauth})
    try:
        leader, follower = cluster.node(1), cluster.node(2)
        follower_log_before = ""
        for round_ in range(2):
            values = [f"round-{round_}-{i}".encode() for i in range(20)]
            assert produce(cluster.bootstrap, values) == [None] * len(values)
            wait_until(lambda: partition_bytes(follower) == partition_bytes(leader), 30, "node 2 to catch up")
            if not follower_log_before:
                follower_log_before = follower.log_text()
                time.sleep(4)  # past the first session's end: the follower must have re-authenticated
        assert "SASL session expired" not in leader.log_text()
        # Once connected, the follower's connection lasted: it never had to reconnect.
        assert "replica fetcher for broker 1" not in follower.log_text()[len(follower_log_before) :]
        assert partition_isr(cluster.bootstrap) == (1, [1, 2])
    finally:
        cluster.stop()


def test_a_single_broker_refuses_replica_requests_from_a_client_without_cluster_action(
    secure_broker: SecureBrokerProcess,
) -> None:
    """No replication here, yet replica_id >= 0 still needs CLUSTER_ACTION, even from a topic reader."""
    user, password, topic = unique("reader"), "reader-secret", unique("plain-topic")
    add_scram_user(secure_broker, user, password, MECHANISM)
    client = admin(secure_broker)  # alive until the future resolves
    client.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    grant(secure_broker, user, ResourceType.TOPIC, topic, AclOperation.READ)
    as_consumer = fetch_request(0, -1)
    as_consumer = dataclasses.replace(
        as_consumer, topics=(dataclasses.replace(as_consumer.topics[0], topic=topic),)
    )
    as_replica = dataclasses.replace(as_consumer, replica_id=i32(0))
    epochs = epoch_request(0)
    epochs = dataclasses.replace(epochs, topics=(dataclasses.replace(epochs.topics[0], topic=topic),))

    consumer_fetch, replica_fetch, replica_epochs = send_as(
        secure_broker.bootstrap, user, password, as_consumer, as_replica, epochs
    )
    assert consumer_fetch.error_code == ErrorCode.none
    assert [p.error_code for t in consumer_fetch.responses for p in t.partitions] == [ErrorCode.none]
    assert replica_fetch.error_code == ErrorCode.cluster_authorization_failed
    assert [p.error_code for t in replica_epochs.topics for p in t.partitions] == [
        ErrorCode.cluster_authorization_failed
    ]
