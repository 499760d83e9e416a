"""Fetch v13-17 against a real broker: librdkafka negotiates its highest (v16, by topic id) and consumes, topic ids come from the
metadata the broker serves, a topic deleted and re-created under its name gets a new id and a fetch by
the old id is refused."""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12 import request as metadata_v12

from broker.wire.schemas import request_class
from tests.fixtures.entity_trees import entity_from_tree
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

LIBRDKAFKA_MAX_FETCH = 16


def topic_id_of(bootstrap: str, name: str) -> uuid.UUID:
    request = metadata_v12.MetadataRequest(
        topics=(metadata_v12.MetadataRequestTopic(topic_id=None, name=name),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    with WireClient(bootstrap) as client:
        response = client.request(request)
    (topic,) = response.topics
    assert topic.error_code == ErrorCode.none
    assert topic.topic_id is not None
    return topic.topic_id


def fetch_request(version: int, topic_id: uuid.UUID) -> Any:
    """Fetch `version` of partition 0 of the topic `topic_id` names, from offset 0."""
    body = {
        "max_wait": 100,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
            }
        ],
        "forgotten_topics_data": [],
    }
    return entity_from_tree(request_class(1, version), body)


def fetch_by_id(
    bootstrap: str, version: int, topic_id: uuid.UUID
) -> tuple[uuid.UUID | None, ErrorCode, bytes]:
    with WireClient(bootstrap) as client:
        response = client.request(fetch_request(version, topic_id))
    (topic,) = response.responses
    (partition,) = topic.partitions
    return topic.topic_id, partition.error_code, bytes(partition.records or b"")


def produce(bootstrap: str, topic: str, *values: bytes) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value)
    assert producer.flush(10) == 0


@pytest.mark.parametrize("version", range(13, 18))
def test_every_id_version_reads_by_the_id_metadata_serves(broker, version):
    topic = create_topic(broker.bootstrap, f"fetch-ids-v{version}")
    produce(broker.bootstrap, topic, b"by-id")
    tid = topic_id_of(broker.bootstrap, topic)
    answered_id, error, records = fetch_by_id(broker.bootstrap, version, tid)
    assert (answered_id, error) == (tid, ErrorCode.none)
    assert b"by-id" in records


def test_a_recreated_topic_has_a_new_id_and_a_fetch_by_the_old_one_is_refused(broker):
    name = "fetch-ids-recreated"
    create_topic(broker.bootstrap, name)
    produce(broker.bootstrap, name, b"first-life")
    old = topic_id_of(broker.bootstrap, name)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.delete_topics([name])[name].result(10)
    deadline = time.monotonic() + 10
    while True:  # the name is free once DeleteTopics answered; retry only a lagging create
        try:
            create_topic(broker.bootstrap, name)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    produce(broker.bootstrap, name, b"second-life")
    new = topic_id_of(broker.bootstrap, name)
    assert new != old
    assert fetch_by_id(broker.bootstrap, 17, old) == (old, ErrorCode.unknown_topic_id, b"")
    answered_id, error, records = fetch_by_id(broker.bootstrap, 17, new)
    assert (answered_id, error) == (new, ErrorCode.none)
    assert b"second-life" in records
    assert b"first-life" not in records


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_librdkafka_negotiates_its_highest_fetch_and_consumes_by_topic_id(broker):
    topic = create_topic(broker.bootstrap, "fetch-ids-librdkafka", partitions=2)
    values = [f"m{i}".encode() for i in range(50)]
    produce(broker.bootstrap, topic, *values)
    lines = _Lines()
    logger = logging.getLogger("fetch-ids-librdkafka")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(lines)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "fetch-ids-librdkafka",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 50,
            "debug": "protocol,fetch,feature",
            "logger": logger,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in (0, 1)])
        got: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(got) < len(values) and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            assert message.error() is None, message.error()
            got.append(message.value())
        # A few more polls: incremental fetches of the session (by id) answer nothing new and no error.
        for _ in range(5):
            assert consumer.poll(0.1) is None
    finally:
        consumer.close()
        logger.removeHandler(lines)
    assert sorted(got) == sorted(values)
    advertised = {
        m for line in lines.lines for m in re.findall(r"ApiKey Fetch \(1\) Versions (\d+\.\.\d+)", line)
    }
    assert {v.split("..")[1] for v in advertised} == {"18"}  # Kafka 4.2's Fetch v18
    sent = {int(v) for line in lines.lines for v in re.findall(r"Sent FetchRequest \(v(\d+)", line)}
    # librdkafka 2.16 knows Fetch up to v16 (topic ids and KIP-951 leader hints; v17 adds only a
    # follower's directory id): it negotiates the highest both sides know, by id.
    assert sent == {LIBRDKAFKA_MAX_FETCH}, [line for line in lines.lines if "Fetch" in line][:20]
