"""Transactions driven by real clients against one broker process: confluent-kafka (librdkafka
2.16), aiokafka 0.14 and kafka-python 3.0 transactional producers, read_committed consumers,
consume-transform-produce with offsets in the transaction, and zombie fencing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.broker import BrokerProcess

pytestmark = pytest.mark.integration


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_topics(bootstrap: str, partitions: int, *names: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1) for name in names]).values():
        future.result(10)


def transactional_producer(bootstrap: str, transactional_id: str, **extra: object) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, **extra})
    producer.init_transactions(30)
    return producer


def read_all(
    bootstrap: str, topic: str, partitions: int, *, isolation: str, expect_at_least: int, wait_s: float = 10
) -> list[bytes]:
    """Every value of the topic from the start, as a consumer with that isolation level sees it."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("reader"),
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    at_end: set[int] = set()
    deadline = time.monotonic() + wait_s
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(message.partition())
                    if len(at_end) == partitions and len(values) >= expect_at_least:
                        break
                    continue
                raise KafkaException(message.error())
            at_end.discard(message.partition())
            values.append(message.value())
    finally:
        consumer.close()
    return values


def produce_values(producer: Producer, topic: str, values: Iterable[bytes], partitions: int) -> None:
    for index, value in enumerate(values):
        producer.produce(topic, value=value, partition=index % partitions)


def test_confluent_commit_and_abort_as_read_committed_sees_them(broker: BrokerProcess) -> None:
    topic = unique("txn")
    create_topics(broker.bootstrap, 2, topic)
    producer = transactional_producer(broker.bootstrap, unique("tid"))
    producer.begin_transaction()
    produce_values(producer, topic, [b"c%d" % i for i in range(10)], 2)
    producer.commit_transaction(30)
    producer.begin_transaction()
    produce_values(producer, topic, [b"a%d" % i for i in range(5)], 2)
    assert producer.flush(10) == 0  # the aborted records are in the log
    producer.abort_transaction(30)
    producer.begin_transaction()
    produce_values(producer, topic, [b"last"], 2)
    producer.commit_transaction(30)

    committed = read_all(broker.bootstrap, topic, 2, isolation="read_committed", expect_at_least=11)
    assert sorted(committed) == sorted([b"c%d" % i for i in range(10)] + [b"last"])
    uncommitted = read_all(broker.bootstrap, topic, 2, isolation="read_uncommitted", expect_at_least=16)
    assert sorted(uncommitted) == sorted(
        [b"c%d" % i for i in range(10)] + [b"a%d" % i for i in range(5)] + [b"last"]
    )


def test_read_committed_does_not_see_an_open_transaction(broker: BrokerProcess) -> None:
    topic = unique("txn-open")
    create_topics(broker.bootstrap, 1, topic)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    producer = transactional_producer(broker.bootstrap, unique("tid"))
    producer.begin_transaction()
    produce_values(producer, topic, [b"pending"], 1)
    assert producer.flush(10) == 0
    plain.produce(topic, value=b"after", partition=0)
    assert plain.flush(10) == 0
    # The open transaction holds back the last stable offset: "after" is not readable either.
    assert read_all(broker.bootstrap, topic, 1, isolation="read_committed", expect_at_least=0, wait_s=3) == []
    producer.commit_transaction(30)
    assert read_all(broker.bootstrap, topic, 1, isolation="read_committed", expect_at_least=2) == [
        b"pending",
        b"after",
    ]


def test_consume_transform_produce_commits_offsets_with_the_output(broker: BrokerProcess) -> None:
    source, sink, group = unique("in"), unique("out"), unique("ctp")
    create_topics(broker.bootstrap, 2, source, sink)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    produce_values(plain, source, [b"%d" % i for i in range(40)], 2)
    assert plain.flush(10) == 0

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([source])
    producer = transactional_producer(broker.bootstrap, unique("ctp-tid"))
    processed = 0
    aborted_once = False
    deadline = time.monotonic() + 40
    try:
        while processed < 40 and time.monotonic() < deadline:
            batch = [m for m in consumer.consume(10, 1.0) if not m.error()]
            if not batch:
                continue
            producer.begin_transaction()
            for message in batch:
                producer.produce(sink, value=b"x" + message.value(), partition=message.partition())
            positions = consumer.position(consumer.assignment())
            producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
            if not aborted_once:
                # The first batch is aborted: neither its output nor its offsets count, so the
                # consumer rewinds to the committed offsets and processes it again.
                producer.abort_transaction(30)
                aborted_once = True
                committed = consumer.committed(consumer.assignment(), 10)
                for tp in committed:
                    tp.offset = tp.offset if tp.offset >= 0 else 0
                    consumer.seek(tp)
                continue
            producer.commit_transaction(30)
            processed += len(batch)
    finally:
        consumer.close()
    assert processed == 40
    output = read_all(broker.bootstrap, sink, 2, isolation="read_committed", expect_at_least=40)
    assert sorted(output) == sorted(b"x%d" % i for i in range(40))

    checker = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        offsets = checker.committed([TopicPartition(source, 0), TopicPartition(source, 1)], 10)
    finally:
        checker.close()
    assert sorted(tp.offset for tp in offsets) == [20, 20]


def test_a_second_producer_with_the_same_transactional_id_fences_the_first(broker: BrokerProcess) -> None:
    topic, transactional_id = unique("fence"), unique("tid")
    create_topics(broker.bootstrap, 1, topic)
    zombie = transactional_producer(broker.bootstrap, transactional_id)
    zombie.begin_transaction()
    produce_values(zombie, topic, [b"zombie"], 1)
    assert zombie.flush(10) == 0

    # The new instance aborts the zombie's open transaction while it initialises.
    successor = transactional_producer(broker.bootstrap, transactional_id)
    successor.begin_transaction()
    produce_values(successor, topic, [b"successor"], 1)
    successor.commit_transaction(30)

    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(30)
    error = raised.value.args[0]
    assert error.fatal() or error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED)
    assert read_all(broker.bootstrap, topic, 1, isolation="read_committed", expect_at_least=1) == [
        b"successor"
    ]


def test_aiokafka_transactional_producer(broker: BrokerProcess) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic = unique("aio-txn")
    create_topics(broker.bootstrap, 1, topic)

    async def scenario() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id=unique("aio-tid"))
        await producer.start()
        try:
            async with producer.transaction():
                await producer.send_and_wait(topic, b"kept-1", partition=0)
                await producer.send_and_wait(topic, b"kept-2", partition=0)
            await producer.begin_transaction()
            await producer.send_and_wait(topic, b"dropped", partition=0)
            await producer.abort_transaction()
            async with producer.transaction():
                await producer.send_and_wait(topic, b"kept-3", partition=0)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=broker.bootstrap,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        seen: list[bytes] = []
        try:
            deadline = time.monotonic() + 10
            while len(seen) < 3 and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                seen.extend(m.value for records in batches.values() for m in records)
        finally:
            await consumer.stop()
        return seen

    assert asyncio.run(scenario()) == [b"kept-1", b"kept-2", b"kept-3"]


def test_kafka_python_transactional_producer(broker: BrokerProcess) -> None:
    from kafka import KafkaProducer

    topic = unique("kp-txn")
    create_topics(broker.bootstrap, 1, topic)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id=unique("kp-tid"))
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"one", partition=0)
        producer.send(topic, b"two", partition=0)
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send(topic, b"never", partition=0).get(10)
        producer.abort_transaction()
    finally:
        producer.close(5)
    committed = read_all(broker.bootstrap, topic, 1, isolation="read_committed", expect_at_least=2)
    assert committed == [b"one", b"two"]
