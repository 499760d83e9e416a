"""Produce of batches whose records do not parse (valid CRC, garbage inside), sent to Apache Kafka 4.2 and to our
broker: the same answer (error code, and record errors and message where Kafka gives them), the batch refused
whole, and a consumer reading every good record before and after them."""

from __future__ import annotations

import datetime
import re
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.static.primitive import i32Timedelta

from broker.wire.records.codecs import Codec
from broker.wire.records.records import Record, build_batch
from tests.fixtures.poison_batches import HOUR_MS, accepted_oddities, poison_batches
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

UNKNOWN_SERVER_ERROR, CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, UNSUPPORTED_COMPRESSION, INVALID_RECORD = (
    -1,
    2,
    10,
    76,
    87,
)
# Where we answer otherwise than Kafka 4.2, on purpose (README, "What Produce checks"): (ours, Kafka's).
DIFFERENCES = {
    # Kafka lets the codec's exception through unmapped (an ERROR with a stack trace in its log).
    "gzip of random bytes": (CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR),
    "snappy of random bytes": (CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR),
    "lz4 of random bytes": (CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR),
    "zstd of random bytes": (CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR),
    "truncated gzip stream": (CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR),
    "truncated zstd stream": (CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR),
    "codec 5": (UNSUPPORTED_COMPRESSION, UNKNOWN_SERVER_ERROR),
    # Kafka stores uncompressed records whose offset deltas are not 0, 1, …: two records then share an offset.
    "offset deltas 0, 2": (INVALID_RECORD, 0),
    "offset deltas 0, 0": (INVALID_RECORD, 0),
    "gzip: offset deltas 0, 0": (INVALID_RECORD, UNKNOWN_SERVER_ERROR),
    # Kafka reads a length below -1 as null; librdkafka's consumer stops at such a record, silently, for good.
    "key length -2": (INVALID_RECORD, 0),
    "value length -7": (INVALID_RECORD, 0),
    "header value length -3": (INVALID_RECORD, 0),
    "key length -2 on a compacted topic": (INVALID_RECORD, INVALID_RECORD),  # Kafka's message: no key there
    # Kafka stops at the first record (length 0); we stop at the bound on a batch's decompressed size.
    "1 GiB of zeros in zstd": (MESSAGE_TOO_LARGE, INVALID_RECORD),
}
TOPIC_CONFIGS = {
    "plain": {
        "message.timestamp.before.max.ms": str(HOUR_MS),
        "message.timestamp.after.max.ms": str(HOUR_MS),
    },
    "compacted": {"cleanup.policy": "compact"},
    "log_append_time": {"message.timestamp.type": "LogAppendTime"},
}


def produce(bootstrap: str, topic: str, records: bytes) -> tuple[int, str | None, list[tuple[int, str]], int]:
    request = ProduceRequest(
        acks=1,
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
        topic_data=(
            TopicProduceData(name=topic, partition_data=(PartitionProduceData(index=0, records=records),)),
        ),
    )
    with WireClient(bootstrap, timeout=30) as client:
        answer = client.request(request).responses[0].partition_responses[0]
    record_errors = [(e.batch_index, e.batch_index_error_message) for e in answer.record_errors]
    return int(answer.error_code.value), answer.error_message, record_errors, int(answer.base_offset)


def without_clock(text: str | None) -> str | None:
    """Timestamp messages name the broker's clock: compare them without their numbers."""
    return None if text is None else re.sub(r"\d{10,}", "<ms>", text)


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field}")


def test_poison_batches_get_kafkas_answers_and_a_consumer_reads_past_them(apache_kafka, broker):
    run = uuid.uuid4().hex[:8]
    topics = {kind: f"poison-{kind.replace('_', '-')}-{run}" for kind in TOPIC_CONFIGS}
    for bootstrap in (apache_kafka.bootstrap, broker.bootstrap):
        for kind, name in topics.items():
            create_topic(bootstrap, name, **TOPIC_CONFIGS[kind])

    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for n in range(5):
        producer.produce(topics["plain"], key=b"before", value=b"good %d" % n)
    assert producer.flush(10) == 0

    rss_before = rss_mb(broker.process.pid)
    differences = []
    for case in poison_batches():
        topic = topics[case.topic]
        ours = produce(broker.bootstrap, topic, case.batch)
        kafkas = produce(apache_kafka.bootstrap, topic, case.batch)
        assert ours[3] == -1, f"{case.name}: stored at offset {ours[3]}"
        if case.name in DIFFERENCES:
            assert (ours[0], kafkas[0]) == DIFFERENCES[case.name], case.name
            continue
        if ours[0] != kafkas[0]:
            differences.append(f"{case.name}: ours {ours[0]}, Kafka {kafkas[0]}")
        elif kafkas[1] is not None and without_clock(ours[1]) != without_clock(kafkas[1]):
            differences.append(f"{case.name}: message {ours[1]!r}, Kafka {kafkas[1]!r}")
        elif [(i, without_clock(m)) for i, m in ours[2]] != [(i, without_clock(m)) for i, m in kafkas[2]]:
            differences.append(f"{case.name}: record errors {ours[2]}, Kafka {kafkas[2]}")
    assert not differences, "\n".join(differences)
    # The decompression bomb was decompressed no further than the bound (32 MiB), and given back.
    assert rss_mb(broker.process.pid) < rss_before + 40

    oddities = accepted_oddities()
    for name, batch in oddities.items():
        # confluent-kafka-python cannot hand out a header key that is not UTF-8: keep that one out of its way.
        topic = topics["compacted"] if "UTF-8" in name else topics["plain"]
        assert produce(apache_kafka.bootstrap, topic, batch)[0] == 0, f"Kafka refused {name}"
        assert produce(broker.bootstrap, topic, batch)[0] == 0, f"we refused {name}"
    consumable = len(oddities) - 1
    # What our broker compresses (a topic's compression.type) Kafka reads too: LZ4 with independent blocks.
    ours_lz4 = build_batch([Record(b"k", b"v" * 100)] * 3, codec=Codec.LZ4)
    assert produce(apache_kafka.bootstrap, topics["compacted"], ours_lz4)[0] == 0
    for n in range(5):
        producer.produce(topics["plain"], key=b"after", value=b"good %d" % n)
    assert producer.flush(10) == 0

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": f"poison-{run}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topics["plain"]])
    read: list[tuple[bytes | None, bytes | None]] = []
    deadline = time.monotonic() + 30
    try:
        while len(read) < 10 + consumable and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            read.append((message.key(), message.value()))
    finally:
        consumer.close()
    good = [(key, value) for key, value in read if key in (b"before", b"after")]
    assert good == [(b"before", b"good %d" % n) for n in range(5)] + [
        (b"after", b"good %d" % n) for n in range(5)
    ]
    assert len(read) == 10 + consumable
