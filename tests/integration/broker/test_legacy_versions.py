"""The old versions Kafka 3.9 served and 4.0 dropped: Fetch v0-3 (answered in the old message format) and
ListOffsets v0, on by default, off with `legacy.api.versions.enable=false` (Kafka 4.0's answer)."""

from __future__ import annotations

import io
import struct
import time
import zlib
from datetime import timedelta

import pytest
from confluent_kafka import Producer
from kio.schema.api_versions.v0.request import ApiVersionsRequest
from kio.serial import entity_writer
from kio.static.primitive import i32, i64

from broker.wire.legacy_schemas import LEGACY_REQUESTS
from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH = 1, 2, 8, 9


def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": "lz4", "linger.ms": 50})
    for value in values:
        producer.produce(topic, value, key=b"k")
    assert producer.flush(15) == 0


def _fetch(client: WireClient, version: int, topic: str, offset: int) -> bytes:
    """A raw Fetch v0-3 (kio has no class to decode the answer with); the partition's message set."""
    request_type = LEGACY_REQUESTS[(FETCH, version)]
    topic_type = _item_type(request_type, "topics")
    partition_type = _item_type(topic_type, "partitions")
    topic_entry = topic_type(
        topic=topic,
        partitions=(
            partition_type(partition=i32(0), fetch_offset=i64(offset), partition_max_bytes=i32(1 << 20)),
        ),
    )
    extra = {"max_bytes": i32(1 << 20)} if version >= 3 else {}
    body = request_type(
        replica_id=i32(-1),
        max_wait=timedelta(milliseconds=100),
        min_bytes=i32(1),
        topics=(topic_entry,),
        **extra,
    )
    client.correlation_id += 1
    header = struct.pack(">hhih", FETCH, version, client.correlation_id, 4) + b"test"

    buffer = io.BytesIO()
    entity_writer(request_type)(buffer, body)
    client.send_raw(header + buffer.getvalue())
    frame = client.recv_frame()
    position = 4 + (4 if version >= 1 else 0)  # correlation id, throttle time
    (topics,) = struct.unpack_from(">i", frame, position)
    assert topics == 1
    (name_length,) = struct.unpack_from(">h", frame, position + 4)
    position += 6 + name_length + 4  # topic name, partition count
    _index, error, high_watermark, size = struct.unpack_from(">ihqi", frame, position)
    assert (error, high_watermark) == (0, 3)
    position += 18
    return frame[position : position + size]


def _item_type(entity_type: type, field_name: str) -> type:
    """The entity class of an array field (`tuple[Item, ...]`)."""
    return entity_type.__dataclass_fields__[field_name].type.__args__[0]


def _magics_and_values(message_set: bytes) -> list[tuple[int, int, bytes]]:
    found, position = [], 0
    while position < len(message_set):
        offset, size = struct.unpack_from(">qi", message_set, position)
        message = message_set[position + 12 : position + 12 + size]
        assert struct.unpack_from(">I", message)[0] == zlib.crc32(message[4:])
        magic = message[4]
        cursor = 6 + (8 if magic == 1 else 0)
        (key_length,) = struct.unpack_from(">i", message, cursor)
        cursor += 4 + key_length
        (value_length,) = struct.unpack_from(">i", message, cursor)
        found.append((offset, magic, message[cursor + 4 : cursor + 4 + value_length]))
        position += 12 + size
    return found


def test_old_fetch_versions_get_old_format_messages_and_list_offsets_v0_answers(
    broker: BrokerProcess,
) -> None:
    topic = create_topic(broker.bootstrap, "legacy-readers")
    _produce(broker.bootstrap, topic, [b"one", b"two", b"three"])
    with WireClient(broker.bootstrap) as client:
        for version in range(4):
            magic = 0 if version < 2 else 1
            assert _magics_and_values(_fetch(client, version, topic, 1)) == [
                (1, magic, b"two"),
                (2, magic, b"three"),
            ]
        request_type = LEGACY_REQUESTS[(LIST_OFFSETS, 0)]
        topic_type = _item_type(request_type, "topics")
        partition_type = _item_type(topic_type, "partitions")

        def list_offsets(timestamp: int) -> tuple[int, ...]:
            request = request_type(
                replica_id=i32(-1),
                topics=(
                    topic_type(
                        name=topic,
                        partitions=(
                            partition_type(
                                partition_index=i32(0), timestamp=i64(timestamp), max_num_offsets=i32(1)
                            ),
                        ),
                    ),
                ),
            )
            (partition,) = client.request(request).topics[0].partitions
            assert partition.error_code == 0
            return tuple(partition.old_style_offsets)

        assert list_offsets(-1) == (3,)
        assert list_offsets(-2) == (0,)


def _list_offsets_v0(client: WireClient, topic: str, timestamp: int, max_num_offsets: int) -> tuple[int, ...]:
    request_type = LEGACY_REQUESTS[(LIST_OFFSETS, 0)]
    topic_type = _item_type(request_type, "topics")
    partition_type = _item_type(topic_type, "partitions")
    wanted = partition_type(
        partition_index=i32(0), timestamp=i64(timestamp), max_num_offsets=i32(max_num_offsets)
    )
    request = request_type(replica_id=i32(-1), topics=(topic_type(name=topic, partitions=(wanted,)),))
    (partition,) = client.request(request).topics[0].partitions
    assert partition.error_code == 0
    return tuple(partition.old_style_offsets)


def test_list_offsets_v0_answers_segment_base_offsets_as_kafka_did(broker: BrokerProcess) -> None:
    """Several segments: latest lists the high watermark then every segment's base offset, newest
    first; a timestamp lists the segments last modified by then (none before the topic existed)."""
    topic = create_topic(broker.bootstrap, "legacy-segments", **{"segment.bytes": "1024"})
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for number in range(20):  # one batch each: segments roll between batches
        producer.produce(topic, b"%d" % number + b"x" * 300)
        assert producer.flush(15) == 0
    with WireClient(broker.bootstrap) as client:
        everything = _list_offsets_v0(client, topic, -1, 100)
        assert everything[0] == 20
        assert everything[-1] == 0
        assert len(everything) >= 4, "segment.bytes 1024 holds a few 300-byte records each"
        assert list(everything) == sorted(set(everything), reverse=True)
        assert _list_offsets_v0(client, topic, -1, 2) == everything[:2]
        assert _list_offsets_v0(client, topic, -2, 10) == (0,)
        in_an_hour = int(time.time() * 1000) + 3_600_000
        assert _list_offsets_v0(client, topic, in_an_hour, 3) == everything[:3]
        assert _list_offsets_v0(client, topic, 1000, 10) == ()


def test_with_legacy_versions_off_the_broker_answers_as_kafka_4(broker_factory) -> None:
    broker = broker_factory(properties={"legacy.api.versions.enable": "false"})
    with WireClient(broker.bootstrap) as client:
        keys = {
            k.api_key: (k.min_version, k.max_version) for k in client.request(ApiVersionsRequest()).api_keys
        }
    assert {key: keys[key][0] for key in (FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH)} == {
        FETCH: 4,
        LIST_OFFSETS: 1,
        OFFSET_COMMIT: 2,
        OFFSET_FETCH: 1,
    }
    with WireClient(broker.bootstrap) as client:
        client.send_raw(struct.pack(">hhih", FETCH, 2, 1, -1) + b"\x00" * 16)
        assert client.is_closed_by_peer(), "an unsupported version closes the connection, as Kafka does"


def test_legacy_versions_are_advertised_by_default(broker: BrokerProcess) -> None:
    with WireClient(broker.bootstrap) as client:
        keys = {
            k.api_key: (k.min_version, k.max_version) for k in client.request(ApiVersionsRequest()).api_keys
        }
    assert {key: keys[key][0] for key in (FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH)} == {
        FETCH: 0,
        LIST_OFFSETS: 0,
        OFFSET_COMMIT: 0,
        OFFSET_FETCH: 0,
    }


def test_offset_commit_v0_v1_and_offset_fetch_v0_keep_a_groups_offsets(broker: BrokerProcess) -> None:
    topic = create_topic(broker.bootstrap, "legacy-commits")
    with WireClient(broker.bootstrap) as client:
        for version, offset in ((0, 5), (1, 7)):
            request_type = LEGACY_REQUESTS[(OFFSET_COMMIT, version)]
            topic_type = _item_type(request_type, "topics")
            partition_type = _item_type(topic_type, "partitions")
            fields = {"partition_index": i32(0), "committed_offset": i64(offset), "committed_metadata": "m"}
            if version == 1:
                fields["commit_timestamp"] = i64(-1)
            extra = {"generation_id_or_member_epoch": i32(-1), "member_id": ""} if version == 1 else {}
            commit = request_type(
                group_id="legacy-group",
                topics=(topic_type(name=topic, partitions=(partition_type(**fields),)),),
                **extra,
            )
            (answer,) = client.request(commit).topics[0].partitions
            assert answer.error_code == 0

            fetch_type = LEGACY_REQUESTS[(OFFSET_FETCH, 0)]
            fetch_topic = _item_type(fetch_type, "topics")(name=topic, partition_indexes=(i32(0),))
            (fetched,) = (
                client.request(fetch_type(group_id="legacy-group", topics=(fetch_topic,)))
                .topics[0]
                .partitions
            )
            assert (fetched.error_code, fetched.committed_offset, fetched.metadata) == (0, offset, "m")
