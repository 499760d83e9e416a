"""Hostile and broken input: the right error codes, and the broker keeps serving everyone."""

import contextlib
import datetime
import random
import socket
import struct
import urllib.request

import pytest
from confluent_kafka import KafkaError, Producer
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.static.primitive import i32Timedelta

from broker.wire.records.records import Record, build_batch
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration


def produce_request(topic: str, records: bytes, acks: int = 1) -> ProduceRequest:
    return ProduceRequest(
        acks=acks,
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
        topic_data=(
            TopicProduceData(name=topic, partition_data=(PartitionProduceData(index=0, records=records),)),
        ),
    )


def produce_error(broker, topic: str, records: bytes) -> int:
    with WireClient(broker.bootstrap) as client:
        response = client.request(produce_request(topic, records))
    return int(response.responses[0].partition_responses[0].error_code.value)


def make_topic(broker, name: str, **config: str) -> None:
    create_topic(broker.bootstrap, name, **config)


def test_a_batch_with_a_bad_crc_is_rejected_as_corrupt(broker, topic_name):
    make_topic(broker, topic_name)
    batch = bytearray(build_batch([Record(key=b"k", value=b"v")]))
    batch[-1] ^= 0xFF
    assert produce_error(broker, topic_name, bytes(batch)) == 2  # CORRUPT_MESSAGE


def test_a_truncated_batch_is_no_batch_at_all(broker, topic_name):
    """Kafka reads whole batches only and finds none: INVALID_RECORD."""
    make_topic(broker, topic_name)
    batch = build_batch([Record(key=b"k", value=b"v" * 50)])
    assert produce_error(broker, topic_name, batch[:-10]) == 87


def test_a_keyless_record_on_a_compacted_topic_is_invalid(broker, topic_name):
    make_topic(broker, topic_name, **{"cleanup.policy": "compact"})
    assert (
        produce_error(broker, topic_name, build_batch([Record(key=None, value=b"v")])) == 87
    )  # INVALID_RECORD


def test_the_keyless_records_of_a_batch_are_named_and_only_they_fail_as_invalid(broker, topic_name):
    """KIP-467: the answer lists the offending records by batch index; librdkafka fails those with
    INVALID_RECORD and the rest of the batch with _INVALID_DIFFERENT_RECORD (retriable elsewhere)."""
    make_topic(broker, topic_name, **{"cleanup.policy": "compact"})
    records = [Record(key=None if n in (0, 5) else b"k%d" % n, value=b"v") for n in range(8)]
    with WireClient(broker.bootstrap) as client:
        response = client.request(produce_request(topic_name, build_batch(records)))
    answer = response.responses[0].partition_responses[0]
    assert int(answer.error_code.value) == 87
    assert [e.batch_index for e in answer.record_errors] == [0, 5]
    assert all("key" in e.batch_index_error_message for e in answer.record_errors)

    outcomes: list[int] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 200, "retries": 0})
    for n in range(8):
        producer.produce(
            topic_name,
            b"v",
            key=None if n in (0, 5) else b"k%d" % n,
            partition=0,
            on_delivery=lambda err, _msg: outcomes.append(err.code() if err else 0),
        )
    assert producer.flush(10) == 0
    assert outcomes.count(KafkaError.INVALID_RECORD) == 2
    assert outcomes.count(KafkaError._INVALID_DIFFERENT_RECORD) == 6


def test_a_batch_over_max_message_bytes_is_too_large(broker, topic_name):
    make_topic(broker, topic_name, **{"max.message.bytes": "1000"})
    assert produce_error(broker, topic_name, build_batch([Record(key=b"k", value=b"v" * 5000)])) == 10


def test_producing_to_an_unknown_topic_is_an_unknown_partition(broker):
    assert produce_error(broker, "no-such-topic-here", build_batch([Record(key=b"k", value=b"v")])) == 3


def test_metadata_for_an_invalid_topic_name_is_invalid_topic(broker):
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            MetadataRequest(
                topics=(MetadataRequestTopic(topic_id=None, name="bad name!"),),
                allow_auto_topic_creation=True,
                include_topic_authorized_operations=False,
            )
        )
    assert response.topics[0].error_code.value == 17


def test_metadata_auto_creates_only_when_asked(broker, topic_name):
    def metadata(allow: bool):
        with WireClient(broker.bootstrap) as client:
            return client.request(
                MetadataRequest(
                    topics=(MetadataRequestTopic(topic_id=None, name=topic_name),),
                    allow_auto_topic_creation=allow,
                    include_topic_authorized_operations=False,
                )
            )

    assert metadata(False).topics[0].error_code.value == 3
    created = metadata(True).topics[0]
    assert created.error_code.value == 0
    assert len(created.partitions) == 1
    assert created.topic_id is not None


def test_an_unknown_api_version_of_api_versions_gets_a_v0_answer(broker):
    with WireClient(broker.bootstrap) as client:
        client.send_raw(struct.pack(">hhih", 18, 99, 7, -1))
        frame = client.recv_frame()
    correlation_id, error_code, count = struct.unpack_from(">ihi", frame, 0)
    assert correlation_id == 7
    assert error_code == 35  # UNSUPPORTED_VERSION
    keys = {struct.unpack_from(">h", frame, 10 + 6 * i)[0] for i in range(count)}
    assert {0, 1, 3, 18}.issubset(keys)
    assert {68, 69}.issubset(keys)  # the consumer group protocol (KIP-848)
    assert {71, 72}.issubset(keys)  # client telemetry: advertised while its receiver is on (the default)


@pytest.mark.parametrize(
    "payload",
    [
        struct.pack(">hhih", 9999, 0, 1, -1),  # unknown api key
        struct.pack(">hhih", 3, 99, 1, -1),  # unknown metadata version
        struct.pack(">hhih", 3, 12, 1, 500) + b"short",  # client id past the end
        b"\x00\x03\x00",  # shorter than a header
    ],
)
def test_unparseable_requests_close_only_that_connection(broker, payload):
    with WireClient(broker.bootstrap) as bystander, WireClient(broker.bootstrap) as attacker:
        attacker.send_raw(payload)
        assert attacker.is_closed_by_peer()
        answer = bystander.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"))
        assert answer.error_code.value == 0


def test_an_oversized_frame_closes_the_connection_without_reading_it(broker_factory):
    broker = broker_factory(socket_request_max_bytes=10_000)
    with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as sock:
        sock.sendall(struct.pack(">i", 50_000_000))
        sock.settimeout(5)
        assert sock.recv(1) == b""


def test_the_broker_survives_a_storm_of_garbage_and_keeps_serving_a_real_client(broker, topic_name):
    make_topic(broker, topic_name)
    rng = random.Random(1234)
    valid = ApiVersionsRequest(client_software_name="fuzz", client_software_version="1")
    seeds = [
        struct.pack(">hhih", 3, 12, 1, 2) + b"ab\x00\x01\x00\x01",
        struct.pack(">hhih", 0, 9, 1, -1) + b"\x00" * 30,
        struct.pack(">hhih", 1, 12, 1, -1) + bytes(rng.randrange(256) for _ in range(60)),
        bytes(build_batch([Record(key=b"k", value=b"v")])),
    ]
    for i in range(300):
        payload = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 5)):
            payload[rng.randrange(len(payload))] = rng.randrange(256)
        if rng.random() < 0.3:
            payload = payload[: rng.randrange(1, len(payload) + 1)]
        try:
            with socket.create_connection(("127.0.0.1", broker.port), timeout=2) as sock:
                if i % 10 == 0:
                    sock.sendall(bytes(payload))  # no size prefix at all
                else:
                    sock.sendall(struct.pack(">i", len(payload)) + bytes(payload))
                sock.settimeout(0.2)
                with contextlib.suppress(TimeoutError, ConnectionError):
                    sock.recv(65536)
        except ConnectionError:
            pass
    with WireClient(broker.bootstrap) as client:
        assert client.request(valid).error_code.value == 0
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(topic_name, value=b"still alive")
    assert producer.flush(10) == 0
    metrics = (
        urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=5).read().decode()
    )
    closes = [line for line in metrics.splitlines() if line.startswith("kafka_broker_bad_input_closes_total")]
    assert int(closes[0].split()[-1]) > 0


def test_acks_all_fails_when_more_in_sync_replicas_are_required_than_exist(broker, topic_name):
    make_topic(broker, topic_name, **{"min.insync.replicas": "2"})
    batch = build_batch([Record(key=b"k", value=b"v")])
    with WireClient(broker.bootstrap) as client:
        strict = client.request(produce_request(topic_name, batch, acks=-1))
        relaxed = client.request(produce_request(topic_name, batch, acks=1))
    assert strict.responses[0].partition_responses[0].error_code.value == 19  # NOT_ENOUGH_REPLICAS
    assert relaxed.responses[0].partition_responses[0].error_code.value == 0


def test_invalid_acks_are_refused(broker, topic_name):
    make_topic(broker, topic_name)
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            produce_request(topic_name, build_batch([Record(key=b"k", value=b"v")]), acks=2)
        )
    assert response.responses[0].partition_responses[0].error_code.value == 21  # INVALID_REQUIRED_ACKS
