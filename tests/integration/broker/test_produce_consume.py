"""Produce and consume with every real client we support."""

import asyncio
import subprocess

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

pytestmark = pytest.mark.integration


def make_topic(broker, name: str, partitions: int = 1, **config: str) -> str:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config)])[name].result(10)
    return name


def consume_all(broker, topic: str, expected: int, timeout: float = 15.0, **extra) -> list:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"{topic}-reader",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 50,
            **extra,
        }
    )
    consumer.assign(
        [TopicPartition(topic, p, 0) for p in consumer.list_topics(topic, 10).topics[topic].partitions]
    )
    messages = []
    import time

    deadline = time.monotonic() + timeout
    while len(messages) < expected and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is None:
            continue
        assert message.error() is None, message.error()
        messages.append(message)
    consumer.close()
    return messages


@pytest.mark.parametrize(("acks", "idempotent"), [("0", False), ("1", False), ("all", False), ("all", True)])
def test_confluent_producer_round_trips_with_each_acks_setting(broker, topic_name, acks, idempotent):
    make_topic(broker, topic_name)
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "acks": acks,
            "enable.idempotence": idempotent,
            "linger.ms": 2,
        }
    )
    delivered = []
    for i in range(200):
        producer.produce(
            topic_name,
            key=str(i).encode(),
            value=f"v{i}".encode(),
            on_delivery=lambda e, m: delivered.append(e),
        )
    assert producer.flush(15) == 0
    assert delivered.count(None) == 200
    messages = consume_all(broker, topic_name, 200)
    assert [m.value() for m in messages] == [f"v{i}".encode() for i in range(200)]
    if acks != "0":
        assert [m.offset() for m in messages] == list(range(200))


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_are_stored_and_served(broker, topic_name, codec):
    make_topic(broker, topic_name)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": codec, "linger.ms": 5})
    for i in range(500):
        producer.produce(topic_name, value=(f"{codec}-{i}-" * 10).encode(), headers={"n": str(i)})
    assert producer.flush(15) == 0
    messages = consume_all(broker, topic_name, 500)
    assert len(messages) == 500
    assert messages[499].value() == (f"{codec}-499-" * 10).encode()
    assert messages[7].headers() == [("n", b"7")]


def test_a_consumer_long_poll_is_woken_by_a_produce(broker, topic_name):
    import threading
    import time

    make_topic(broker, topic_name)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": topic_name,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 5000,
        }
    )
    consumer.assign([TopicPartition(topic_name, 0, 0)])
    consumer.poll(0.5)  # let the first (empty) fetch start waiting

    def produce_later() -> None:
        time.sleep(0.5)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce(topic_name, value=b"wake")
        producer.flush(5)

    thread = threading.Thread(target=produce_later)
    started = time.monotonic()
    thread.start()
    message = None
    while message is None and time.monotonic() - started < 4:
        message = consumer.poll(0.1)
    elapsed = time.monotonic() - started
    thread.join()
    consumer.close()
    assert message is not None
    assert message.value() == b"wake"
    # Woken by the append, not by the 5 s max wait.
    assert elapsed < 3


def test_consumer_group_commits_and_resumes(broker, topic_name):
    make_topic(broker, topic_name, partitions=2)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(20):
        producer.produce(topic_name, value=str(i).encode(), partition=i % 2)
    producer.flush(10)
    config = {
        "bootstrap.servers": broker.bootstrap,
        "group.id": f"{topic_name}-group",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 6000,
    }
    consumer = Consumer(config)
    consumer.subscribe([topic_name])
    seen = []
    import time

    deadline = time.monotonic() + 20
    while len(seen) < 10 and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            seen.append(message)
    consumer.commit(asynchronous=False)
    consumer.close()
    committed_total = len(seen)

    consumer = Consumer(config)
    consumer.subscribe([topic_name])
    rest = []
    deadline = time.monotonic() + 20
    while committed_total + len(rest) < 20 and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            rest.append(message)
    consumer.close()
    values = sorted(int(m.value()) for m in seen + rest)
    assert values == list(range(20))


def test_kafka_python_producer_consumer_and_admin(broker, topic_name):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic as KpNewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([KpNewTopic(topic_name, 2, 1)])
    assert topic_name in admin.list_topics()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type="gzip")
    futures = [producer.send(topic_name, key=str(i).encode(), value=b"kp-%d" % i) for i in range(50)]
    producer.flush()
    assert all(f.get(10).offset >= 0 for f in futures)
    producer.close()
    consumer = KafkaConsumer(
        topic_name,
        bootstrap_servers=broker.bootstrap,
        group_id=f"{topic_name}-kp",
        auto_offset_reset="earliest",
        consumer_timeout_ms=8000,
    )
    values = set()
    for message in consumer:
        values.add(message.value)
        if len(values) == 50:
            break
    consumer.close()
    admin.delete_topics([topic_name])
    admin.close()
    assert values == {b"kp-%d" % i for i in range(50)}


def test_aiokafka_producer_and_consumer(broker, topic_name):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    make_topic(broker, topic_name)

    async def scenario() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=True)
        await producer.start()
        try:
            for i in range(30):
                await producer.send_and_wait(topic_name, b"aio-%d" % i)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            topic_name, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest", group_id=None
        )
        await consumer.start()
        values = []
        try:
            while len(values) < 30:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 10)
                for records in batch.values():
                    values.extend(r.value for r in records)
        finally:
            await consumer.stop()
        return values

    assert asyncio.run(scenario()) == [b"aio-%d" % i for i in range(30)]


def test_kcat_produces_consumes_and_queries_offsets(broker, topic_name, kcat):
    make_topic(broker, topic_name)
    lines = "\n".join(f"k{i}:line-{i}" for i in range(25)) + "\n"
    subprocess.run(
        [kcat, "-b", broker.bootstrap, "-P", "-t", topic_name, "-K", ":", "-z", "lz4"],
        input=lines,
        text=True,
        timeout=30,
        check=True,
    )
    consumed = subprocess.run(
        [kcat, "-b", broker.bootstrap, "-C", "-t", topic_name, "-o", "beginning", "-e", "-f", "%k=%s@%o\n"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.splitlines()
    assert consumed[0] == "k0=line-0@0"
    assert consumed[-1] == "k24=line-24@24"
    queried = subprocess.run(
        [kcat, "-b", broker.bootstrap, "-Q", "-t", f"{topic_name}:0:-1"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert "offset 25" in queried
