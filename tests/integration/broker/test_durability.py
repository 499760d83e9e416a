"""Crash and restart: acknowledged data and metadata survive."""

import datetime
import threading
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.init_producer_id.v4.request import InitProducerIdRequest
from kio.static.primitive import i32Timedelta

from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration


def read_partition(
    bootstrap: str, topic: str, partition: int, until: int, timeout: float = 20
) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"{topic}-check",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 50,
        }
    )
    consumer.assign([TopicPartition(topic, partition, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(values) < until and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    return values


def test_every_acked_message_survives_kill_9_in_order(fresh_broker, topic_name):
    broker = fresh_broker
    create_topic(broker.bootstrap, topic_name, 2)
    acked: dict[int, list[tuple[int, bytes]]] = {0: [], 1: []}
    stop = threading.Event()

    def produce() -> None:
        producer = Producer(
            {
                "bootstrap.servers": broker.bootstrap,
                "enable.idempotence": True,
                "linger.ms": 1,
                "message.timeout.ms": 3000,
                "retries": 0 if False else 2,
            }
        )

        def on_delivery(error, message) -> None:
            if error is None:
                acked[message.partition()].append((message.offset(), message.value()))

        i = 0
        while not stop.is_set():
            try:
                producer.produce(topic_name, value=b"m-%d" % i, partition=i % 2, on_delivery=on_delivery)
                i += 1
            except BufferError:
                pass
            producer.poll(0)
        producer.flush(5)

    thread = threading.Thread(target=produce)
    thread.start()
    time.sleep(1.5)
    broker.kill9()
    stop.set()
    thread.join()
    assert len(acked[0]) + len(acked[1]) > 100
    broker.start()
    for partition, entries in acked.items():
        entries.sort()
        stored = read_partition(broker.bootstrap, topic_name, partition, until=entries[-1][0] + 1)
        # Every acked offset holds the acked value; offsets are dense because nothing was compacted.
        for offset, value in entries:
            assert stored[offset] == value
        # Order per partition follows the produce order.
        numbers = [int(v.split(b"-")[1]) for v in stored]
        assert numbers == sorted(numbers)


def test_topics_configs_and_ids_survive_a_graceful_restart(fresh_broker, topic_name):
    broker = fresh_broker
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, 3, 1, config={"retention.ms": "123456"})])[topic_name].result(
        10
    )
    before = admin.describe_topics(TopicCollection([topic_name]))[topic_name].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(topic_name, value=b"kept", partition=1)
    producer.flush(10)
    assert broker.stop() == 0
    assert "broker stopped" in broker.log_text()
    broker.start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    after = admin.describe_topics(TopicCollection([topic_name]))[topic_name].result(10)
    assert str(after.topic_id) == str(before.topic_id)
    assert len(after.partitions) == 3
    from confluent_kafka.admin import ConfigResource

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic_name)
    assert admin.describe_configs([resource])[resource].result(10)["retention.ms"].value == "123456"
    assert read_partition(broker.bootstrap, topic_name, 1, until=1) == [b"kept"]


def test_a_deletion_answered_before_a_kill_9_stays_deleted(broker_factory, topic_name):
    # Retention passes remove the renamed `*.delete` directories: a short interval to see them go.
    broker = broker_factory(log_retention_check_interval_ms=100)
    create_topic(broker.bootstrap, topic_name, 3)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for partition in range(3):
        producer.produce(topic_name, value=b"deleted", partition=partition)
    assert producer.flush(10) == 0
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.delete_topics([topic_name], operation_timeout=10)[topic_name].result(10)
    # At once: the broker's topic registry writes deletions later (the metadata log holds them).
    broker.restart(hard=True)

    def topic_dirs() -> list[str]:
        return sorted(
            path.name for path in broker.log_dir.iterdir() if path.name.startswith(f"{topic_name}-")
        )

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert topic_name not in admin.list_topics(timeout=10).topics
    assert all(name.endswith(".delete") for name in topic_dirs()), topic_dirs()
    deadline = time.monotonic() + 10
    while topic_dirs() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert topic_dirs() == []
    # The name is free again, and nothing of the deleted topic's data comes back with it.
    create_topic(broker.bootstrap, topic_name, 3)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"{topic_name}-check"})
    try:
        for partition in range(3):
            assert consumer.get_watermark_offsets(TopicPartition(topic_name, partition), 10) == (0, 0)
    finally:
        consumer.close()


def test_producer_ids_never_repeat_across_restarts(fresh_broker):
    request = InitProducerIdRequest(
        transactional_id=None, transaction_timeout=i32Timedelta.parse(datetime.timedelta(seconds=60))
    )
    seen = set()
    for _ in range(2):
        with WireClient(fresh_broker.bootstrap) as client:
            for _ in range(5):
                response = client.request(request)
                assert response.error_code == 0
                seen.add(response.producer_id)
        fresh_broker.restart(hard=True)
    assert len(seen) == 10
