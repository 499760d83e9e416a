"""Incremental fetch sessions (KIP-227) against a real broker: raw Fetch v12 requests, and real clients.

kafka-python opens sessions (its FetchSessionHandler); librdkafka (confluent-kafka) sends sessionless
fetches (session id 0, epoch -1), which must keep working next to them.
"""

from __future__ import annotations

import datetime
import struct
import time
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic, ForgottenTopic
from kio.static.primitive import i32, i32Timedelta, i64

from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

PARTITIONS = 4


def fetch(
    client: WireClient,
    *,
    session_id: int,
    epoch: int,
    positions: dict[tuple[str, int], int] | None = None,
    forgotten: dict[str, list[int]] | None = None,
    max_wait_ms: int = 300,
    max_bytes: int = 50 << 20,
) -> Any:
    by_topic: dict[str, list[FetchPartition]] = {}
    for (topic, partition), offset in (positions or {}).items():
        by_topic.setdefault(topic, []).append(
            FetchPartition(
                partition=i32(partition), fetch_offset=i64(offset), partition_max_bytes=i32(1 << 20)
            )
        )
    request = FetchRequest(
        max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=max_wait_ms)),
        min_bytes=i32(1),
        max_bytes=i32(max_bytes),
        session_id=i32(session_id),
        session_epoch=i32(epoch),
        topics=tuple(FetchTopic(topic=t, partitions=tuple(p)) for t, p in by_topic.items()),
        forgotten_topics_data=tuple(
            ForgottenTopic(topic=t, partitions=tuple(i32(p) for p in parts))
            for t, parts in (forgotten or {}).items()
        ),
    )
    return client.request(request)


def answered(response: Any) -> dict[tuple[str, int], Any]:
    return {(t.topic, p.partition_index): p for t in response.responses for p in t.partitions}


def produce(bootstrap: str, topic: str, partition: int, count: int = 1) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for n in range(count):
        producer.produce(topic, f"record-{n}".encode(), partition=partition)
    assert producer.flush(10) == 0


def test_a_session_answers_only_partitions_with_news(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, partitions=PARTITIONS)
    produce(broker.bootstrap, topic_name, 1, count=3)
    everything = {(topic_name, p): 0 for p in range(PARTITIONS)}
    with WireClient(broker.bootstrap, timeout=10) as client:
        full = fetch(client, session_id=0, epoch=0, positions=everything)
        assert full.error_code == ErrorCode.none
        session_id = full.session_id
        assert session_id > 0
        # The full answer carries every partition, records where there are some.
        parts = answered(full)
        assert set(parts) == set(everything)
        assert parts[(topic_name, 1)].high_watermark == 3
        assert parts[(topic_name, 1)].records

        # We now read partition 1 up to 3: naming only it, nothing else changed, nothing to say.
        started = time.monotonic()
        idle = fetch(client, session_id=session_id, epoch=1, positions={(topic_name, 1): 3})
        assert idle.error_code == ErrorCode.none
        assert idle.session_id == session_id
        assert answered(idle) == {}
        assert time.monotonic() - started >= 0.25  # it long-polled the whole session

        # A record on partition 2 (never named since the full fetch) wakes the session up.
        produce(broker.bootstrap, topic_name, 2)
        news = fetch(client, session_id=session_id, epoch=2, max_wait_ms=5000)
        assert set(answered(news)) == {(topic_name, 2)}
        assert answered(news)[(topic_name, 2)].high_watermark == 1
        assert answered(news)[(topic_name, 2)].records

        # Forgotten partitions are no longer followed: a record there is no news.
        fetch(
            client,
            session_id=session_id,
            epoch=3,
            positions={(topic_name, 2): 1},
            forgotten={topic_name: [0]},
        )
        produce(broker.bootstrap, topic_name, 0)
        after_forget = fetch(client, session_id=session_id, epoch=4)
        assert answered(after_forget) == {}

        # Epoch -1 closes the session; its id is then unknown.
        closing = fetch(client, session_id=session_id, epoch=-1, positions={(topic_name, 0): 0})
        assert closing.session_id == 0
        assert answered(closing)[(topic_name, 0)].high_watermark == 1
        gone = fetch(client, session_id=session_id, epoch=5)
        assert gone.error_code == ErrorCode.fetch_session_id_not_found


def next_offset(records: bytes) -> int:
    """The offset after the last record of these v2 record batches."""
    position, after = 0, -1
    while position + 27 <= len(records):
        base_offset, length = struct.unpack_from(">qi", records, position)
        (last_offset_delta,) = struct.unpack_from(">i", records, position + 23)
        after = base_offset + last_offset_delta + 1
        position += 12 + length
    return after


def test_a_session_serves_the_partition_the_byte_budget_left_out_first(broker, topic_name):
    """A response budget smaller than two batches: Kafka's session moves a partition that returned
    records to the end, so the next fetch serves the other one; in a fixed order one would starve."""
    create_topic(broker.bootstrap, topic_name, partitions=2)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for n in range(6):
        for partition in (0, 1):  # one batch per record: flushed one by one
            producer.produce(topic_name, b"v" * 100 + str(n).encode(), partition=partition)
            assert producer.flush(10) == 0
    positions = {(topic_name, 0): 0, (topic_name, 1): 0}
    served = []
    with WireClient(broker.bootstrap, timeout=10) as client:
        response = fetch(client, session_id=0, epoch=0, positions=positions, max_bytes=300)
        session_id = response.session_id
        assert session_id > 0
        for epoch in range(1, 6):
            with_records = {key: p for key, p in answered(response).items() if p.records}
            assert len(with_records) == 1, with_records  # the budget holds one batch of ~170 bytes
            ((key, part),) = with_records.items()
            served.append(key[1])
            positions[key] = next_offset(part.records)
            response = fetch(
                client, session_id=session_id, epoch=epoch, positions={key: positions[key]}, max_bytes=300
            )
    assert served == [0, 1, 0, 1, 0]
    assert positions == {(topic_name, 0): 3, (topic_name, 1): 2}


def test_session_errors_unknown_id_and_out_of_order_epoch(broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    with WireClient(broker.bootstrap, timeout=10) as client:
        unknown = fetch(client, session_id=123456, epoch=1)
        assert unknown.error_code == ErrorCode.fetch_session_id_not_found
        assert unknown.responses == ()
        session_id = fetch(client, session_id=0, epoch=0, positions={(topic_name, 0): 0}).session_id
        assert session_id > 0
        replayed = fetch(client, session_id=session_id, epoch=3)
        assert replayed.error_code == ErrorCode.invalid_fetch_session_epoch
        # The session survives a bad epoch: the right one still works.
        assert fetch(client, session_id=session_id, epoch=1).error_code == ErrorCode.none
        assert (
            fetch(client, session_id=session_id, epoch=1).error_code == ErrorCode.invalid_fetch_session_epoch
        )


def test_a_full_cache_answers_a_new_fetcher_without_a_session(broker_factory, topic_name):
    broker = broker_factory(properties={"max.incremental.fetch.session.cache.slots": "2"})
    create_topic(broker.bootstrap, topic_name)
    positions = {(topic_name, 0): 0}
    with WireClient(broker.bootstrap, timeout=10) as client:
        first = fetch(client, session_id=0, epoch=0, positions=positions, max_wait_ms=0).session_id
        second = fetch(client, session_id=0, epoch=0, positions=positions, max_wait_ms=0).session_id
        assert first > 0
        assert second > 0
        assert first != second
        # Both slots are taken by sessions in use: a third fetcher gets no session, but its data.
        third = fetch(client, session_id=0, epoch=0, positions=positions, max_wait_ms=0)
        assert third.error_code == ErrorCode.none
        assert third.session_id == 0
        assert answered(third)[(topic_name, 0)].error_code == ErrorCode.none
        assert fetch(client, session_id=first, epoch=1, max_wait_ms=0).error_code == ErrorCode.none


def test_kafka_python_consumes_through_a_session_and_confluent_kafka_without(broker, topic_name):
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaPythonPartition

    create_topic(broker.bootstrap, topic_name, partitions=PARTITIONS)
    for partition in range(PARTITIONS):
        produce(broker.bootstrap, topic_name, partition, count=5)
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, enable_auto_commit=False, fetch_max_wait_ms=200
    )
    consumer.assign([KafkaPythonPartition(topic_name, p) for p in range(PARTITIONS)])
    consumer.seek_to_beginning()
    try:
        seen = _drain(consumer, PARTITIONS * 5)
        # More records while the session is open: incremental fetches must bring them.
        produce(broker.bootstrap, topic_name, 3, count=2)
        seen += _drain(consumer, 2)
        handlers = consumer._fetcher._session_handlers
        assert any(handler.next_metadata.session_id > 0 for handler in handlers.values())
    finally:
        consumer.close()
    assert len(seen) == PARTITIONS * 5 + 2

    confluent = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"{topic_name}-c"})
    confluent.assign([TopicPartition(topic_name, p, 0) for p in range(PARTITIONS)])
    try:
        read = 0
        deadline = time.monotonic() + 20
        while read < PARTITIONS * 5 + 2 and time.monotonic() < deadline:
            read += sum(1 for m in confluent.consume(100, timeout=0.5) if m.error() is None)
    finally:
        confluent.close()
    assert read == PARTITIONS * 5 + 2


def _drain(consumer: Any, count: int) -> list[Any]:
    seen: list[Any] = []
    deadline = time.monotonic() + 20
    while len(seen) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=200).values():
            seen.extend(records)
    return seen
