"""Retention and compaction as a consumer sees them."""

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

pytestmark = pytest.mark.integration


def watermarks(bootstrap: str, topic: str) -> tuple[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wm"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        consumer.close()


def test_retention_moves_the_log_start_offset(broker_factory, topic_name):
    broker = broker_factory(log_retention_check_interval_ms=200)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    config = {"segment.bytes": "1024", "retention.ms": "1000", "file.delete.delay.ms": "0"}
    admin.create_topics([NewTopic(topic_name, 1, 1, config=config)])[topic_name].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "batch.num.messages": 1})
    for i in range(40):
        producer.produce(topic_name, value=b"x" * 200 + str(i).encode())
        producer.flush(5)
    assert watermarks(broker.bootstrap, topic_name) == (0, 40)
    deadline = time.monotonic() + 15
    low = 0
    while time.monotonic() < deadline and low == 0:
        time.sleep(0.3)
        low, high = watermarks(broker.bootstrap, topic_name)
    assert low > 0
    assert high == 40


def test_compaction_keeps_the_latest_value_per_key(broker_factory, topic_name):
    broker = broker_factory(log_cleaner_backoff_ms=200)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    config = {
        "cleanup.policy": "compact",
        "segment.bytes": "2048",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "0",
        "file.delete.delay.ms": "0",
    }
    admin.create_topics([NewTopic(topic_name, 1, 1, config=config)])[topic_name].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for round_number in range(10):
        for key in range(5):
            producer.produce(topic_name, key=b"k%d" % key, value=b"r%d-" % round_number + b"y" * 100)
        producer.flush(5)
    deadline = time.monotonic() + 20
    values: dict[bytes, bytes] = {}
    count = 50
    while time.monotonic() < deadline:
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": f"{topic_name}-{time.monotonic()}",
                "fetch.wait.max.ms": 50,
            }
        )
        consumer.assign([TopicPartition(topic_name, 0, 0)])
        seen = []
        idle = time.monotonic()
        while time.monotonic() - idle < 1.0:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                seen.append(message)
                idle = time.monotonic()
        consumer.close()
        count = len(seen)
        values = {m.key(): m.value() for m in seen}
        if count < 50:
            break
        time.sleep(0.5)
    assert count < 50, "the cleaner never compacted the topic"
    assert values == {b"k%d" % key: b"r9-" + b"y" * 100 for key in range(5)}
