"""Retention and compaction as a consumer sees them."""

import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
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


def test_gzip_batches_compact_to_the_latest_record_of_every_key(broker_factory, topic_name):
    """librdkafka's 0077 in small: gzip batches of three hot keys (one with tombstones) and unique keys,
    between two runs of large fill records that roll the segments. After compaction every key's latest
    record is read back at the offset its delivery report gave, tombstones within delete.retention.ms
    included, and nothing else of the compacted part remains."""
    broker = broker_factory(log_cleaner_backoff_ms=200)
    config = {
        "cleanup.policy": "compact",
        "segment.ms": "500",
        "segment.bytes": "1048576",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "86400000",
        "max.compaction.lag.ms": "100",
    }
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, 1, 1, config=config)])[topic_name].result(10)
    delivered: dict[int, tuple[bytes, bytes | None]] = {}

    def on_delivery(err, message) -> None:
        assert err is None
        delivered[message.offset()] = (message.key(), message.value())

    def fill() -> None:
        filler = Producer({"bootstrap.servers": broker.bootstrap, "batch.num.messages": 1})
        for i in range(20):
            filler.produce(
                topic_name, key=b"fill", value=None if i == 19 else bytes(60_000), on_delivery=on_delivery
            )
        filler.flush(30)

    fill()
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "compression.codec": "gzip",
            "message.max.bytes": 6000,
            "linger.ms": 10,
        }
    )
    count = 4000
    for n in range(count):
        slot = n % 4
        key = b"k%d" % slot if slot < 3 else b"u%d" % n
        tombstone = slot == 0 and (n % 7 == 0 or n >= count - 4)
        producer.produce(
            topic_name, key=key, value=None if tombstone else b"m%d" % n, on_delivery=on_delivery
        )
        producer.poll(0)
    producer.flush(30)
    fill()  # rolls the segment holding the keyed records: it becomes cleanable
    assert len(delivered) == count + 40

    latest: dict[bytes, int] = {}
    for offset in sorted(delivered):
        latest[delivered[offset][0]] = offset
    expected = {offset: delivered[offset] for offset in latest.values()}
    last_keyed = max(o for o, (k, _) in delivered.items() if k != b"fill")
    wanted = {o: r for o, r in expected.items() if o <= last_keyed}
    deadline = time.monotonic() + 20
    while True:
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": topic_name,
                "fetch.wait.max.ms": 50,
                "enable.partition.eof": True,
            }
        )
        consumer.assign([TopicPartition(topic_name, 0, 0)])
        read: dict[int, tuple[bytes, bytes | None]] = {}
        while (message := consumer.poll(10)) is not None and message.error() is None:
            read[message.offset()] = (message.key(), message.value())
        assert message is not None
        assert message.error().code() == KafkaError._PARTITION_EOF
        consumer.close()
        compacted = {o: r for o, r in read.items() if o <= last_keyed}
        if compacted == wanted or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert set(read) <= set(delivered)
    assert all(read[o] == delivered[o] for o in read), "a record changed"
    assert compacted == wanted
