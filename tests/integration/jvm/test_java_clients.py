"""The Java client (kafka-clients 4.2.0) against our broker with SASL/SCRAM and ACLs on, on one node and on three:
the idempotent producer, consumers of both group protocols (classic and KIP-848's `consumer`), transactions read
committed, consume-transform-produce exactly once with a KIP-848 member, and the admin client.

The scenarios are Java (jvm/ecosystem/src/streamhub/ecosystem/ClientChecks.java) run in the session's JVM
driver; they return what they read and the checks here are exact: every record once, in order per partition.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import pytest

from tests.fixtures.jvm_ecosystem import JVM_TARGETS, JvmDriver, SecureTarget
from tests.integration.jvm.test_kafka_tools import create_topic

pytestmark = pytest.mark.integration


@pytest.fixture(params=JVM_TARGETS, scope="module")
def target(request: pytest.FixtureRequest) -> SecureTarget:
    return request.getfixturevalue(f"secure_{request.param}_target")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def assert_exactly_once_in_order(read: dict[str, list[list[Any]]], expected_values: list[str]) -> None:
    """Every expected value read once; per partition offsets rise and each key's values keep their order."""
    values = [row[1] for rows in read.values() for row in rows]
    duplicates = [value for value, seen in Counter(values).items() if seen > 1]
    assert not duplicates, f"read more than once: {duplicates[:10]}"
    assert sorted(values) == sorted(expected_values)
    for partition, rows in read.items():
        offsets = [row[0] for row in rows]
        assert offsets == sorted(offsets), f"partition {partition} read out of order"
        by_key: dict[str, list[int]] = {}
        for row in rows:
            key, index = row[1].split(":")
            by_key.setdefault(key, []).append(int(index))
        for key, indexes in by_key.items():
            assert indexes == sorted(indexes), f"key {key} out of order in partition {partition}"
    keys_in = {row[1].split(":")[0]: partition for partition, rows in read.items() for row in rows}
    for partition, rows in read.items():
        assert all(keys_in[row[1].split(":")[0]] == partition for row in rows), "a key in two partitions"


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_idempotent_producer_and_a_consumer_read_everything_once_in_order(
    jvm_driver: JvmDriver, target: SecureTarget, protocol: str
) -> None:
    topic = unique(f"java-{protocol}")
    create_topic(jvm_driver, target, topic, 4)
    sent = jvm_driver.check(
        "produce", properties=target.client_properties(), topic=topic, count=1000, keys=8
    ).ok()
    offsets: dict[int, list[int]] = {}
    for record in sent.result:
        offsets.setdefault(record["partition"], []).append(record["offset"])
    # Idempotent and acks=all: each partition's offsets are 0..n-1, one per record.
    assert all(sorted(found) == list(range(len(found))) for found in offsets.values())
    read = jvm_driver.check(
        "consume",
        properties=target.client_properties(),
        extra={"group.protocol": protocol},
        topic=topic,
        group=unique("java-group"),
        count=1000,
    ).ok()
    assert_exactly_once_in_order(read.result, [f"k{index % 8}:{index}" for index in range(1000)])


def test_transactions_read_committed_and_exactly_once_copy_with_a_consumer_protocol_member(
    jvm_driver: JvmDriver, target: SecureTarget
) -> None:
    source, copy, group = unique("java-txn"), unique("java-txn-copy"), unique("java-eos-group")
    create_topic(jvm_driver, target, source, 3)
    create_topic(jvm_driver, target, copy, 3)
    committed = jvm_driver.check(
        "transactional_produce",
        properties=target.client_properties(),
        topic=source,
        transactional_id=unique("java-txn-id"),
        transactions=6,
        per_transaction=40,
    ).ok()
    assert len(committed.result) == 160  # 4 of 6 transactions committed, 2 aborted
    read = jvm_driver.check(
        "consume",
        properties=target.client_properties(),
        extra={"isolation.level": "read_committed", "group.protocol": "consumer"},
        topic=source,
        group=unique("java-rc-group"),
        count=160,
    ).ok()
    assert_exactly_once_in_order(read.result, committed.result)

    copied = jvm_driver.check(
        "copy_exactly_once",
        properties=target.client_properties(),
        extra={"group.protocol": "consumer"},
        source=source,
        target=copy,
        group=group,
        transactional_id=unique("java-copier"),
        count=160,
    ).ok()
    assert copied.result["copied"] == 160
    read_copy = jvm_driver.check(
        "consume",
        properties=target.client_properties(),
        extra={"isolation.level": "read_committed"},
        topic=copy,
        group=unique("java-copy-reader"),
        count=160,
    ).ok()
    assert sorted(row[1] for rows in read_copy.result.values() for row in rows) == sorted(committed.result)

    described = jvm_driver.check(
        "admin",
        properties=target.client_properties(),
        topic=unique("java-admin"),
        replication=min(target.nodes, 3),
        group=group,
    ).ok()
    assert described.result["group_type"] == "Consumer"
    assert described.result["group_state"] in {"Empty", "EMPTY"}
    # The offsets sent in the copier's transactions are the group's: one per source partition.
    assert described.result["group_committed_partitions"] == 3
    assert described.result["nodes"] == target.nodes
    assert described.result["partitions"] == 2
    assert described.result["replicas"] == min(target.nodes, 3)
    assert described.result["earliest"] == 4
    assert described.result["latest"] == 10


def test_a_kafka_share_consumer_accepts_releases_and_rejects_with_delivery_counts(
    jvm_driver: JvmDriver, target: SecureTarget
) -> None:
    """KIP-932 with the Java KafkaShareConsumer: explicit ACCEPT / RELEASE / REJECT and commitSync. Every record
    is delivered until accepted, a rejected one never again, a released one once more with delivery count 2."""
    topic = unique("java-share")
    create_topic(jvm_driver, target, topic, 2)
    count = 60
    jvm_driver.check("produce", properties=target.client_properties(), topic=topic, count=count, keys=4).ok()
    deliveries = jvm_driver.check(
        "share_consume",
        properties=target.client_properties(),
        topic=topic,
        group=unique("java-share-group"),
        count=count,
        settle_ms=1500,
    ).ok()
    counts: dict[int, list[int]] = {}
    for value, delivery, _partition, _offset in deliveries.result:
        counts.setdefault(int(value.split(":")[1]), []).append(delivery)
    assert sorted(counts) == list(range(count))
    for index, seen in counts.items():
        assert seen == ([1, 2] if index % 3 == 2 else [1]), (index, seen)
