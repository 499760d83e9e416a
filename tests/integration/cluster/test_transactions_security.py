"""Transactions on a three-broker cluster whose listeners all need SASL, with ACLs on: the coordinator
sends markers, and partition leaders verify transactional batches with it (KIP-890), over the brokers'
own authenticated connections; a client needs Write on the TransactionalId."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.test_interbroker_security import ALICE_PASSWORD, client_settings, sasl_cluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

__all__ = ["sasl_cluster"]  # the fixture, used below

TOPIC, TRANSACTIONAL_ID, PARTITIONS = "alice-txn", "alice-tx", 3


def test_transactions_across_brokers_with_sasl_and_acls(sasl_cluster: LocalCluster) -> None:
    admin = AdminClient(sasl_cluster.client_config())
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3)])[TOPIC].result(30)
    grants = [
        (ResourceType.TOPIC, TOPIC, operation)
        for operation in (AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)
    ] + [
        (ResourceType.TRANSACTIONAL_ID, TRANSACTIONAL_ID, AclOperation.WRITE),
        (ResourceType.GROUP, "alice-", AclOperation.READ),
    ]
    acls = [
        AclBinding(
            kind,
            name,
            ResourcePatternType.PREFIXED if kind == ResourceType.GROUP else ResourcePatternType.LITERAL,
            "User:alice",
            "*",
            operation,
            AclPermissionType.ALLOW,
        )
        for kind, name, operation in grants
    ]
    for future in admin.create_acls(acls).values():
        future.result(30)
    alice = client_settings("alice", ALICE_PASSWORD)

    refused = Producer({"bootstrap.servers": sasl_cluster.bootstrap, **alice, "transactional.id": "not-hers"})
    with pytest.raises(KafkaException, match="TRANSACTIONAL_ID_AUTHORIZATION_FAILED"):
        refused.init_transactions(20)

    producer = Producer(
        {"bootstrap.servers": sasl_cluster.bootstrap, **alice, "transactional.id": TRANSACTIONAL_ID}
    )
    producer.init_transactions(60)
    producer.begin_transaction()
    for i in range(30):
        producer.produce(TOPIC, value=b"committed-%d" % i, partition=i % PARTITIONS)
    producer.commit_transaction(60)
    producer.begin_transaction()
    for i in range(30):
        producer.produce(TOPIC, value=b"aborted-%d" % i, partition=i % PARTITIONS)
    assert producer.flush(30) == 0
    producer.abort_transaction(60)

    consumer = Consumer(
        {
            "bootstrap.servers": sasl_cluster.bootstrap,
            **alice,
            "group.id": "alice-reader",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    read: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(read) < 30 and time.monotonic() < deadline:
            for message in consumer.consume(100, timeout=0.5):
                assert message.error() is None, message.error()
                read.append(message.value())
        time.sleep(1)
        read.extend(m.value() for m in consumer.consume(100, timeout=1) if m.error() is None)
    finally:
        consumer.close()
    assert sorted(read) == sorted(b"committed-%d" % i for i in range(30))
