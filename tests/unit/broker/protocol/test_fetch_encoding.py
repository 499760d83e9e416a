import struct
import uuid

import pytest
from kio.serial import entity_reader

from broker.protocol.fetch_encoding import encode_fetch_response
from broker.wire.records.records import Record, build_batch
from broker.wire.schemas import response_class
from tests.fixtures.entity_trees import entity_from_tree

BATCH = build_batch([Record(key=b"k", value=b"v" * 300)])
ORDERS_ID = uuid.UUID("6f1d3c2e-59a4-4c55-9d0e-1b8f6a7c2d11")
EMPTY_ID = uuid.UUID("0c1e6a9b-3f2d-4e8a-8b7c-5d4e3f2a1b00")


def sample_body(with_aborted: bool) -> dict:
    return {
        "throttle_time": 3,
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {
                "topic": "orders",
                "topic_id": ORDERS_ID,
                "partitions": [
                    {
                        "partition_index": 0,
                        "error_code": 0,
                        "high_watermark": 10,
                        "last_stable_offset": 10,
                        "log_start_offset": 2,
                        "aborted_transactions": [{"producer_id": 7, "first_offset": 3}]
                        if with_aborted
                        else None,
                        "preferred_read_replica": -1,
                        "records": BATCH,
                    },
                    {
                        "partition_index": 1,
                        "error_code": 1,
                        "high_watermark": -1,
                        "last_stable_offset": -1,
                        "log_start_offset": -1,
                        "aborted_transactions": [] if with_aborted else None,
                        "preferred_read_replica": -1,
                        "records": b"",
                    },
                ],
            },
            {"topic": "empty", "topic_id": EMPTY_ID, "partitions": []},
        ],
    }


@pytest.mark.parametrize("version", range(4, 19))
@pytest.mark.parametrize("with_aborted", [False, True])
def test_hand_framed_fetch_decodes_like_kios_own_encoding(version, with_aborted):
    body = sample_body(with_aborted)
    frame = b"".join(encode_fetch_response(version, 99, body))
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    assert int.from_bytes(frame[4:8], "big") == 99
    offset = 8 + (1 if version >= 12 else 0)
    decoded, size = entity_reader(response_class(1, version))(frame, offset)
    assert offset + size == len(frame)
    assert decoded == entity_from_tree(response_class(1, version), body)


def test_record_bytes_are_passed_through_without_copying():
    chunks = encode_fetch_response(12, 1, sample_body(False))
    assert any(chunk is BATCH for chunk in chunks)


def test_versions_outside_the_hand_framed_range_are_refused():
    with pytest.raises(ValueError, match="v0-18"):
        encode_fetch_response(19, 1, sample_body(False))


def leader_hint_body() -> dict:
    body = sample_body(False)
    moved = body["responses"][0]["partitions"][1]
    moved["error_code"] = 6  # NOT_LEADER_OR_FOLLOWER
    moved["current_leader"] = {"leader_id": 2, "leader_epoch": 7}
    body["node_endpoints"] = [
        {"node_id": 2, "host": "broker-2.example", "port": 9093, "rack": "rack-b"},
        {"node_id": 3, "host": "broker-3.example", "port": 9094, "rack": None},
    ]
    return body


@pytest.mark.parametrize("version", [16, 17, 18])
def test_v16_carries_the_current_leader_and_its_endpoint(version):
    body = leader_hint_body()
    frame = b"".join(encode_fetch_response(version, 5, body))
    decoded, size = entity_reader(response_class(1, version))(frame, 9)
    assert 9 + size == len(frame)
    assert decoded == entity_from_tree(response_class(1, version), body)
    moved = decoded.responses[0].partitions[1]
    assert (moved.current_leader.leader_id, moved.current_leader.leader_epoch) == (2, 7)
    assert [(n.node_id, n.host, n.port, n.rack) for n in decoded.node_endpoints] == [
        (2, "broker-2.example", 9093, "rack-b"),
        (3, "broker-3.example", 9094, None),
    ]
    assert decoded.responses[0].topic_id == ORDERS_ID


@pytest.mark.parametrize("version", [12, 15])
def test_leader_hints_are_not_sent_before_v16(version):
    """KIP-951's fields exist in the schema before v16 (current_leader from v12) but Kafka fills them from v16."""
    frame = b"".join(encode_fetch_response(version, 5, leader_hint_body()))
    decoded, _ = entity_reader(response_class(1, version))(frame, 9)
    assert decoded.responses[0].partitions[1].current_leader.leader_id == -1


@pytest.mark.parametrize("version", range(4))
def test_versions_before_4_have_the_old_layout(version):
    """v0 has no throttle time; v0-3 partitions are index, error, high watermark and the message set."""
    frame = b"".join(encode_fetch_response(version, 99, sample_body(False)))
    position = 8
    if version >= 1:
        assert struct.unpack_from(">i", frame, position) == (3,)
        position += 4
    topics: list = []
    (topic_count,) = struct.unpack_from(">i", frame, position)
    position += 4
    for _ in range(topic_count):
        (length,) = struct.unpack_from(">h", frame, position)
        name = frame[position + 2 : position + 2 + length].decode()
        position += 2 + length
        (partition_count,) = struct.unpack_from(">i", frame, position)
        position += 4
        partitions = []
        for _ in range(partition_count):
            index, error, high_watermark, size = struct.unpack_from(">ihqi", frame, position)
            position += 18
            partitions.append((index, error, high_watermark, frame[position : position + size]))
            position += size
        topics.append((name, partitions))
    assert position == len(frame)
    assert topics == [("orders", [(0, 0, 10, BATCH), (1, 1, -1, b"")]), ("empty", [])]
