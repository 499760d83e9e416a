"""Exactly-once consume-transform-produce on a three-broker cluster while the transaction
coordinator's broker is killed with SIGKILL (issue #22).

The input topic's records are read by a read_committed consumer in a group; each batch is written to
the output topic and its offsets committed in one transaction (the partitions' leaders are spread over
the brokers, so markers go to other brokers than the coordinator). A third of the way in, the broker
leading the transactional id's `__transaction_state` partition is killed: the producer finds the new
coordinator, aborts what was open and carries on from the committed offsets. A checker then reads the
output with read_committed and counts lost, duplicated and reordered records.
"""

from __future__ import annotations

import itertools
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from broker.transactions.state_format import partition_for_transactional_id
from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.fault_checker import create_topic, partition_states

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

SOURCE, SINK, GROUP, TRANSACTIONAL_ID = "eos-in", "eos-out", "eos-app", "eos-app-1"
PARTITIONS = 3
RECORDS = 900
STATE_PARTITIONS = 3  # transaction.state.log.num.partitions in the test defaults
RUN_LIMIT_S = 60.0


def fill_source(cluster: LocalCluster) -> None:
    producer = Producer(cluster.client_config(acks="all", **{"enable.idempotence": "true"}))
    for number in range(RECORDS):
        partition = number % PARTITIONS
        producer.produce(SOURCE, value=b"%d:%d" % (partition, number), partition=partition)
    assert producer.flush(30) == 0


def new_producer(cluster: LocalCluster) -> Producer:
    producer = Producer(
        cluster.client_config(
            **{"transactional.id": TRANSACTIONAL_ID, "transaction.timeout.ms": "10000", "linger.ms": "5"}
        )
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            producer.init_transactions(10)
            return producer
        except KafkaException as exc:
            if time.monotonic() > deadline or exc.args[0].fatal():
                raise
            time.sleep(0.2)


def rewind_to_committed(consumer: Consumer) -> None:
    """After an aborted transaction the consumer goes back to what the group has committed."""
    deadline = time.monotonic() + 30
    while True:
        try:
            assignment = consumer.assignment()
            for tp in consumer.committed(assignment, 5):
                consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))
            return
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def coordinator_broker(cluster: LocalCluster) -> int:
    partition = partition_for_transactional_id(TRANSACTIONAL_ID, STATE_PARTITIONS)
    return partition_states(cluster, "__transaction_state")[partition][0]


def test_exactly_once_while_the_transaction_coordinator_is_killed(cluster3: LocalCluster) -> None:
    create_topic(cluster3, SOURCE, PARTITIONS)
    create_topic(cluster3, SINK, PARTITIONS)
    fill_source(cluster3)
    consumer = Consumer(
        cluster3.client_config(
            **{
                "group.id": GROUP,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": "false",
                "isolation.level": "read_committed",
                "session.timeout.ms": "6000",
                "heartbeat.interval.ms": "500",
                "topic.metadata.refresh.interval.ms": "1000",
            }
        )
    )
    consumer.subscribe([SOURCE])
    producer = new_producer(cluster3)
    committed_records = 0
    killed: int | None = None
    aborts = 0
    started = time.monotonic()
    try:
        while committed_records < RECORDS:
            assert time.monotonic() - started < RUN_LIMIT_S, f"only {committed_records} committed in time"
            if killed is None and committed_records >= RECORDS // 3:
                killed = coordinator_broker(cluster3)
                cluster3.node(killed).kill9()
            batch = [m for m in consumer.consume(50, 0.5) if m.error() is None]
            if not batch:
                continue
            try:
                producer.begin_transaction()
                for message in batch:
                    producer.produce(SINK, value=message.value(), partition=message.partition())
                positions = consumer.position(consumer.assignment())
                producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 20)
                producer.commit_transaction(20)
                committed_records += len(batch)
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                aborts += 1
                if error.fatal():
                    producer = new_producer(cluster3)  # fences the failed instance and aborts its work
                else:
                    producer.abort_transaction(30)
                rewind_to_committed(consumer)
                # Records of the aborted batch counted before: recount from the group's offsets.
                committed_records = sum(
                    max(tp.offset, 0) for tp in consumer.committed(consumer.assignment(), 10)
                )
    finally:
        consumer.close()
    assert killed is not None
    print(f"killed broker {killed} (the coordinator) after {RECORDS // 3} records; {aborts} batches retried")
    # The coordinator moved: another broker loaded the transactional id's state partition.
    assert "coordinating the 1 transactional ids" in "".join(
        node.log_text() for node in cluster3.brokers if node.node_id != killed
    )

    lost, duplicated, reordered = check_output(cluster3)
    assert (lost, duplicated, reordered) == (0, 0, 0), f"aborted batches: {aborts}"


def check_output(cluster: LocalCluster) -> tuple[int, int, int]:
    """(lost, duplicated, reordered) input records in the read_committed output."""
    reader = Consumer(
        cluster.client_config(
            **{"group.id": "eos-checker", "isolation.level": "read_committed", "enable.partition.eof": "true"}
        )
    )
    reader.assign([TopicPartition(SINK, p, 0) for p in range(PARTITIONS)])
    seen: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}
    at_end: set[int] = set()
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and (
            len(at_end) < PARTITIONS or sum(map(len, seen.values())) < RECORDS
        ):
            message = reader.poll(0.5)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(message.partition())
                continue
            at_end.discard(message.partition())
            partition, number = (int(x) for x in message.value().split(b":"))
            seen[partition].append(number)
    finally:
        reader.close()
    numbers = [n for values in seen.values() for n in values]
    lost = RECORDS - len(set(numbers))
    duplicated = len(numbers) - len(set(numbers))
    reordered = sum(
        1 for values in seen.values() for earlier, later in itertools.pairwise(values) if later < earlier
    )
    return lost, duplicated, reordered
