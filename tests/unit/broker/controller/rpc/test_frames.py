"""Controller RPC frames: d32902d's frames read as version 0, unknown versions refused with the
versions spoken, the version both sides know chosen, replies decoded (broker/controller/rpc/frames.py)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from broker.controller.rpc import admin, brokers, quorum
from broker.controller.rpc.base import Empty, RpcError
from broker.controller.rpc.catalog import LEGACY_VERSIONS, VERSIONS, common_version
from broker.controller.rpc.frames import (
    ReplyHeader,
    decode_reply,
    decode_request,
    encode_reply,
    encode_request,
)
from broker.raft.wire import FrameError

INCARNATION = str(uuid.uuid4())
TOPIC_ID = str(uuid.uuid4())

# Request frames exactly as d32902d's broker sends them (broker/controller/client.py and
# broker_lifecycle.py of that release): no version.
D32902D_FRAMES: list[tuple[dict[str, Any], Any]] = [
    (
        {
            "t": "rpc",
            "id": 1,
            "method": "register_broker",
            "params": {
                "broker_id": 2,
                "incarnation_id": INCARNATION,
                "endpoints": [["PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"]],
                "rack": None,
            },
        },
        brokers.RegisterBrokerRequest(2, INCARNATION, (("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"),)),
    ),
    (
        {
            "t": "rpc",
            "id": 2,
            "method": "broker_heartbeat",
            "params": {
                "broker_id": 2,
                "broker_epoch": 17,
                "metadata_offset": 40,
                "want_fence": False,
                "want_shutdown": True,
            },
        },
        brokers.BrokerHeartbeatRequest(2, 17, 40, want_shutdown=True),
    ),
    (
        {
            "t": "rpc",
            "id": 3,
            "method": "fetch_metadata",
            "params": {"after_offset": 40, "broker_id": 2, "max_wait_ms": 500, "entry_encoding": "base64"},
        },
        brokers.FetchMetadataRequest(40, 2, 500, "base64"),
    ),
    (
        {
            "t": "rpc",
            "id": 4,
            "method": "alter_partitions",
            "params": {
                "requests": [
                    {
                        "broker_id": 2,
                        "broker_epoch": 17,
                        "topic_id": TOPIC_ID,
                        "partition": 0,
                        "leader_epoch": 3,
                        "partition_epoch": 5,
                        "new_isr": [2, 3],
                    }
                ]
            },
        },
        brokers.AlterPartitionsRequest((brokers.AlterPartitionItem(2, 17, TOPIC_ID, 0, 3, 5, (2, 3)),)),
    ),
    (
        {
            "t": "rpc",
            "id": 5,
            "method": "create_topics",
            "params": {
                "validate_only": False,
                "topics": [
                    {
                        "name": "orders",
                        "partitions": 3,
                        "replication_factor": 2,
                        "configs": {"retention.ms": "1000"},
                        "internal": False,
                        "assignments": None,
                    }
                ],
            },
        },
        admin.CreateTopicsRequest((admin.NewTopic("orders", 3, 2, {"retention.ms": "1000"}),)),
    ),
    (
        {
            "t": "rpc",
            "id": 6,
            "method": "elect_leaders",
            "params": {"election_type": 0, "partitions": [["t", 1]]},
        },
        admin.ElectLeadersRequest(0, (("t", 1),)),
    ),
    (
        {
            "t": "rpc",
            "id": 7,
            "method": "alter_partition_reassignments",
            "params": {
                "reassignments": [["t", 0, [1, 2]], ["t", 1, None]],
                "allow_replication_factor_change": True,
            },
        },
        admin.AlterPartitionReassignmentsRequest((("t", 0, (1, 2)), ("t", 1, None))),
    ),
    ({"t": "rpc", "id": 8, "method": "describe_quorum", "params": {}}, quorum.DescribeQuorumRequest()),
]


def test_d32902d_request_frames_are_version_0_of_the_typed_requests() -> None:
    for frame, expected in D32902D_FRAMES:
        incoming = decode_request(json.loads(json.dumps(frame)))
        assert incoming.error is None, frame
        assert (incoming.id, incoming.version, incoming.request) == (frame["id"], 0, expected)
        # And version 0 writes them back in d32902d's shape (what a d32902d controller reads).
        assert expected.to_json(0) == {**expected.to_json(0), **frame["params"]}


def test_a_reply_in_version_0_has_d32902d_shape() -> None:
    incoming = decode_request(D32902D_FRAMES[1][0])
    header = ReplyHeader(leader_id=1, leader_address=("127.0.0.1", 9093), term=4, applied_offset=41)
    answer = brokers.BrokerHeartbeatResponse(
        is_fenced=False, in_controlled_shutdown=True, should_shutdown=False
    )
    assert json.loads(encode_reply(incoming, header, answer)[4:]) == {
        "t": "reply",
        "id": 2,
        "error_code": 0,
        "message": "",
        "result": {"is_fenced": False, "in_controlled_shutdown": True, "should_shutdown": False},
        "leader_id": 1,
        "leader_address": ["127.0.0.1", 9093],
        "term": 4,
        "applied_offset": 41,
    }


def test_an_unknown_version_is_refused_with_the_versions_spoken() -> None:
    incoming = decode_request({"t": "rpc", "id": 9, "method": "fetch_metadata", "v": 7, "params": {}})
    assert incoming.request is None
    assert incoming.error is not None
    assert incoming.error.code == ErrorCode.unsupported_version
    frame = json.loads(encode_reply(incoming, ReplyHeader(None, None, 1, 0), error=incoming.error)[4:])
    assert (frame["error_code"], frame["supported"]) == (ErrorCode.unsupported_version.value, [0, 1])
    reply = decode_reply(frame, brokers.FetchMetadataRequest(0), 7)
    assert (reply.result, reply.supported) == (None, (0, 1))


def test_unknown_rpcs_and_malformed_requests_are_invalid_requests() -> None:
    unknown = decode_request({"t": "rpc", "id": 1, "method": "become_leader"})
    malformed = decode_request(
        {"t": "rpc", "id": 2, "method": "register_broker", "params": {"broker_id": "x"}}
    )
    bad_version = decode_request({"t": "rpc", "id": 3, "method": "describe_quorum", "v": "1"})
    for incoming in (unknown, malformed, bad_version):
        assert incoming.request is None
        assert isinstance(incoming.error, RpcError)
        assert incoming.error.code == ErrorCode.invalid_request


def test_the_highest_common_version_is_chosen() -> None:
    assert common_version((0, 1), (0, 1)) == 1
    assert common_version((0, 1), (0, 0)) == 0  # a d32902d controller
    assert common_version((0, 0), (0, 3)) == 0  # a newer controller
    assert common_version((2, 3), (0, 1)) is None  # nothing in common: refused before sending
    assert common_version((0, 1), None) is None  # the controller does not know the RPC
    # A d32902d controller knows every RPC but api_versions, in version 0 only.
    assert set(LEGACY_VERSIONS) == set(VERSIONS) - {"api_versions"}
    assert {common_version(VERSIONS[name], LEGACY_VERSIONS[name]) for name in LEGACY_VERSIONS} == {0}


def test_a_request_frame_carries_its_rpc_and_version() -> None:
    frame = json.loads(encode_request(12, brokers.FetchMetadataRequest(3, 1, 500), 1)[4:])
    assert frame == {
        "t": "rpc",
        "id": 12,
        "method": "fetch_metadata",
        "v": 1,
        "params": {"after_offset": 3, "broker_id": 1, "max_wait_ms": 500},
    }


def test_a_reply_that_does_not_match_its_response_type_is_a_frame_error() -> None:
    bad = {"t": "reply", "id": 1, "error_code": 0, "result": {"broker_epoch": "x"}, "applied_offset": 0}
    with pytest.raises(FrameError, match="broker_epoch"):
        decode_reply(bad, brokers.RegisterBrokerRequest(1, INCARNATION, ()), 0)
    with pytest.raises(FrameError, match="results is missing"):
        decode_reply({"error_code": 0, "applied_offset": 3}, admin.DeleteTopicsRequest(("t",)), 0)
    # An answer with nothing to say decodes from d32902d's `{}` (or no result at all).
    done = decode_reply({"error_code": 0, "result": {}}, admin.CreatePartitionsRequest("t", 4), 0)
    assert done.answer() == Empty()
