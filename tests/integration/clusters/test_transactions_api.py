"""A cluster's transactions through the REST API, against the real broker with real transactional clients:
teams see the open transactions under their transactional-id prefixes only; an org admin aborts a
producer's open transaction on a partition and read_committed consumers move past it."""

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer

from tests.integration.topics.world import KafkaWorld, create_topic

pytestmark = pytest.mark.integration


def _transactions(client, world: KafkaWorld) -> list[dict]:  # type: ignore[no-untyped-def]
    response = client.get(f"/api/v1/clusters/{world.cluster.id}/transactions/")
    assert response.status_code == 200, response.json()
    return response.json()


def _open_transaction(world: KafkaWorld, topic: str, transactional_id: str) -> Producer:
    producer = world.producer(**{"transactional.id": transactional_id, "transaction.timeout.ms": 60000})
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce(topic, b"never committed")
    producer.flush(10)
    return producer


def _read_committed(world: KafkaWorld, topic: str) -> Consumer:
    consumer = world.consumer(f"audit-{uuid.uuid4().hex[:6]}", **{"isolation.level": "read_committed"})
    consumer.subscribe([topic])
    return consumer


def _first_value(consumer: Consumer, timeout: float = 15.0) -> bytes | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            return message.value()
    return None


def test_teams_see_their_own_open_transactions_and_an_org_admin_aborts_one(kafka_world: KafkaWorld) -> None:
    world = kafka_world
    topic = world.topic_prefix_a + "ledger"
    create_topic(world, world.developer_a, topic)
    transactional_id = world.transactional_id_prefix_a + "ledger-writer"
    # Left open, as a producer that died mid-transaction leaves it.
    _open_transaction(world, topic, transactional_id)

    # Initialized and idle: Kafka describes it with no start time (-1 on the wire).
    idle_id = world.transactional_id_prefix_a + "idle"
    world.producer(**{"transactional.id": idle_id}).init_transactions(20)

    seen_by_team = {t["transactional_id"]: t for t in _transactions(world.developer_a, world)}
    assert set(seen_by_team) == {transactional_id, idle_id}
    assert seen_by_team[idle_id]["state"] == "Empty"
    assert seen_by_team[idle_id]["started_at"] is None
    assert seen_by_team[idle_id]["partitions"] == []
    listed = seen_by_team[transactional_id]
    assert listed["state"] == "Ongoing"
    assert listed["partitions"] == [{"topic": topic, "partition": 0}]
    assert listed["team"] == "Payments"
    assert listed["started_at"] is not None
    assert transactional_id not in {t["transactional_id"] for t in _transactions(world.admin_b, world)}
    assert transactional_id in {t["transactional_id"] for t in _transactions(world.org_admin, world)}

    # The open transaction holds read_committed consumers before its first record.
    reader = _read_committed(world, topic)
    try:
        committed = world.producer()
        committed.produce(topic, b"after the transaction")
        committed.flush(10)
        assert _first_value(reader, timeout=3) is None

        abort = {"topic": topic, "partition": 0, "producer_id": listed["producer_id"]}
        url = f"/api/v1/clusters/{world.cluster.id}/transactions/abort/"
        assert world.developer_a.post(url, abort, format="json").status_code == 403
        response = world.org_admin.post(url, abort, format="json")
        assert response.status_code == 204, response.content

        assert _first_value(reader) == b"after the transaction"
        again = world.org_admin.post(url, abort, format="json")
        assert again.status_code == 400
        assert again.json()["error"]["code"] == "no_open_transaction"
    finally:
        reader.close()

    hanging = world.org_admin.get(f"/api/v1/clusters/{world.cluster.id}/transactions/hanging/")
    assert hanging.status_code == 200
    assert hanging.json() == []
    assert (
        world.developer_a.get(f"/api/v1/clusters/{world.cluster.id}/transactions/hanging/").status_code == 403
    )
