import dataclasses
import datetime
import uuid

import pytest
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader

from broker.protocol.frames import encode_response
from broker.protocol.responses import ResponseShapeError, build_response
from broker.wire.schemas import response_class
from tests.fixtures.entity_trees import entity_from_tree


def built(api_key: int, version: int, body: dict):
    """A response entity from a dict tree, written once for every version."""
    return entity_from_tree(response_class(api_key, version), body)


def test_a_dict_answer_is_refused_by_build_response():
    with pytest.raises(ResponseShapeError, match="a handler answered a dict, not a kio entity"):
        build_response(2, 7, {"topics": []})


def decode(api_key: int, version: int, frame: bytes, flexible_header: bool):
    header_size = 4 + (1 if flexible_header else 0)
    entity, size = entity_reader(response_class(api_key, version))(frame, header_size)
    assert header_size + size == len(frame)
    return entity


def test_it_fills_defaults_and_converts_kafka_types():
    entity = built(
        0,
        9,
        {
            "responses": [
                {
                    "name": "t",
                    "partition_responses": [
                        {"index": 2, "error_code": 10, "base_offset": 7, "record_errors": []}
                    ],
                }
            ],
            "throttle_time_ms": 5,
        },
    )
    partition = entity.responses[0].partition_responses[0]
    assert partition.error_code is ErrorCode.message_too_large
    assert partition.record_errors == ()
    assert partition.log_start_offset == -1
    assert entity.throttle_time == datetime.timedelta(milliseconds=5)


def test_it_drops_keys_the_version_lacks():
    body = {
        "throttle_time": 0,
        "brokers": [{"node_id": 1, "host": "h", "port": 9092, "rack": "r"}],
        "cluster_id": "c",
        "controller_id": 1,
        "topics": [
            {
                "error_code": 0,
                "name": "t",
                "topic_id": uuid.uuid4(),
                "is_internal": False,
                "partitions": [{"error_code": 0, "partition_index": 0, "leader_id": 1, "leader_epoch": 3}],
            }
        ],
    }
    old = built(3, 0, body)
    assert not hasattr(old, "cluster_id")
    assert not hasattr(old.topics[0].partitions[0], "leader_epoch")
    new = built(3, 12, body)
    assert new.topics[0].partitions[0].leader_epoch == 3
    assert new.topics[0].topic_id == body["topics"][0]["topic_id"]


@pytest.mark.parametrize("version", range(14))
def test_every_metadata_version_round_trips_through_kio(version):
    partition = {"error_code": 0, "partition_index": 0, "leader_id": 1, "replica_nodes": [1]}
    body = {
        "error_code": 0,
        "brokers": [{"node_id": 1, "host": "localhost", "port": 9092}],
        "controller_id": 1,
        "topics": [{"error_code": 0, "name": "orders", "topic_id": None, "partitions": [partition]}],
    }
    entity = built(3, version, body)
    frame = encode_response(3, version, 42, entity)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    assert int.from_bytes(frame[4:8], "big") == 42
    decoded = decode(3, version, frame[4:], flexible_header=version >= 9)
    assert decoded == entity


def test_api_versions_always_uses_response_header_v0():
    entity = built(
        18, 3, {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}]}
    )
    frame = encode_response(18, 3, 9, entity)
    decoded = decode(18, 3, frame[4:], flexible_header=False)
    assert decoded.api_keys[0].max_version == 4


def test_log_append_time_minus_one_means_none_and_a_time_means_that_time():
    def produced(log_append_time: int) -> dict:
        partition = {"index": 0, "error_code": 0, "base_offset": 0, "record_errors": []}
        return {
            "responses": [
                {"name": "t", "partition_responses": [{**partition, "log_append_time": log_append_time}]}
            ]
        }

    none = built(0, 9, produced(-1))
    assert none.responses[0].partition_responses[0].log_append_time is None
    stamped = built(0, 9, produced(1_700_000_000_123))
    when = stamped.responses[0].partition_responses[0].log_append_time
    assert round(when.timestamp() * 1000) == 1_700_000_000_123


def _served_versions():
    from broker.handlers.api_table import API_TABLE

    return [
        (key, version)
        for key, (low, high, *_) in sorted(API_TABLE.items())
        for version in range(low, high + 1)
    ]


@pytest.mark.parametrize(("api_key", "version"), _served_versions())
def test_every_served_response_refuses_an_empty_body_or_encodes_it_and_decodes_back(api_key, version):
    """Every served version's plan can be derived from kio's schema; an empty answer is refused
    with the first field it lacks, unless every field of that version has a schema default."""
    required = [
        field.name
        for field in dataclasses.fields(response_class(api_key, version))
        if field.default is dataclasses.MISSING
        and field.default_factory is dataclasses.MISSING
        and field.name != "throttle_time"
    ]
    if required:
        with pytest.raises(ResponseShapeError, match=f"{required[0]}: required and not given"):
            built(api_key, version, {})
        return
    entity = built(api_key, version, {})
    frame = encode_response(api_key, version, 1, entity)
    flexible = response_class(api_key, version).__flexible__ and api_key != 18
    assert decode(api_key, version, frame[4:], flexible_header=flexible) == entity
