"""Handlers answer kio entities: the dispatcher sends a well-formed one and refuses a dict. A dict tree (how
tests write a request or an answer once for every version) is checked against the schema of the version it
is built for: a misspelled field, a value of the wrong type or a required field left out is an error, never
a defaulted field sent as success. Real dispatcher and broker state (logs on disk), no sockets."""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.list_offsets.v7.request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kio.schema.list_offsets.v7.response import ListOffsetsPartitionResponse
from kio.schema.metadata.v12.response import MetadataResponseBroker
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_reader, entity_writer

from broker.protocol.responses import ResponseShapeError
from broker.server.dispatcher import Peer, dispatch
from broker.wire.schemas import response_class
from tests.fixtures.entity_trees import entity_from_tree
from tests.fixtures.stand_in_handler import serve_with
from tests.unit.broker.running_state import running_state

PEER = Peer(host="127.0.0.1", port=1, listener_name="PLAINTEXT")
TOPIC = "typed"
LIST_OFFSETS = 2


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_state(tmp_path_factory.mktemp("typed"), TOPIC) as running:
        yield running


def list_offsets_frame() -> bytes:
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=(
            ListOffsetsTopic(name=TOPIC, partitions=(ListOffsetsPartition(partition_index=0, timestamp=-1),)),
        ),
    )
    buffer = io.BytesIO()
    entity_writer(RequestHeader)(
        buffer,
        RequestHeader(
            request_api_key=LIST_OFFSETS, request_api_version=7, correlation_id=3, client_id="typed"
        ),
    )
    entity_writer(ListOffsetsRequest)(buffer, request)
    return buffer.getvalue()


def answering(answer: Any):
    """A ListOffsets handler answering `answer`."""

    async def handler(ctx: Any, request: Any) -> Any:
        return answer

    return handler


def call(broker, monkeypatch, answer: Any) -> list[bytes] | None:
    loop, state = broker
    serve_with(monkeypatch, LIST_OFFSETS, answering(answer))
    return loop.run_until_complete(dispatch(state, PEER, list_offsets_frame()))


def built(api_key: int, version: int, body: dict[str, Any]) -> Any:
    return entity_from_tree(response_class(api_key, version), body)


def checked(partition: dict[str, Any]) -> Any:
    """A ListOffsets v7 answer whose partition 0 is `partition`."""
    return built(
        LIST_OFFSETS, 7, {"throttle_time": 0, "topics": [{"name": TOPIC, "partitions": [partition]}]}
    )


GOOD = {"partition_index": 0, "error_code": ErrorCode.none, "timestamp": -1, "offset": 5, "leader_epoch": 0}


def test_a_well_formed_answer_goes_out(broker, monkeypatch):
    response = call(broker, monkeypatch, checked(GOOD))
    assert response is not None
    data = b"".join(response)
    entity, _ = entity_reader(response_class(LIST_OFFSETS, 7))(data, 4 + 4 + 1)
    assert entity.topics[0].partitions[0].offset == 5


def test_a_handler_answering_a_dict_fails_instead_of_answering(broker, monkeypatch):
    answer = {"throttle_time": 0, "topics": [{"name": TOPIC, "partitions": [GOOD]}]}
    with pytest.raises(ResponseShapeError, match="ListOffsetsResponse v7: a handler answered a dict"):
        call(broker, monkeypatch, answer)


def test_the_real_list_offsets_handler_answers_through_the_checks(broker):
    loop, state = broker
    response = loop.run_until_complete(dispatch(state, PEER, list_offsets_frame()))
    entity, _ = entity_reader(response_class(LIST_OFFSETS, 7))(b"".join(response), 4 + 4 + 1)
    assert entity.topics[0].partitions[0].error_code is ErrorCode.none


def test_a_misspelled_error_code_fails_instead_of_meaning_success():
    misspelled = {**GOOD}
    misspelled["eror_code"] = misspelled.pop("error_code")
    with pytest.raises(ResponseShapeError, match=r"partitions\.error_code: required and not given"):
        checked(misspelled)


def test_a_misspelled_field_that_has_a_default_fails_too():
    misspelled = {**GOOD}
    misspelled["leader_epok"] = misspelled.pop("leader_epoch")
    with pytest.raises(ResponseShapeError, match=r"partitions: no version has field\(s\) leader_epok"):
        checked(misspelled)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("offset", "5", "expected int, got str"),
        ("offset", None, "expected int, got NoneType"),
        ("offset", True, "expected int, got bool"),
        ("error_code", "none", "expected ErrorCode, got str"),
        ("error_code", 9999, "expected a Kafka error code"),
        ("timestamp", 1.5, "expected int, got float"),
    ],
)
def test_a_wrong_type_fails(field, value, expected):
    with pytest.raises(ResponseShapeError, match=rf"partitions\.{field}: {expected}"):
        checked({**GOOD, field: value})


@pytest.mark.parametrize("field", ["error_code", "partition_index"])
def test_a_required_field_left_out_fails(field):
    incomplete = {key: value for key, value in GOOD.items() if key != field}
    with pytest.raises(
        ResponseShapeError, match=rf"ListOffsetsResponse v7\.topics\.partitions\.{field}: required"
    ):
        checked(incomplete)


def test_a_field_with_a_schema_default_may_be_left_out():
    # ListOffsets' offset defaults to -1 in Kafka's schema: leaving it out is an explicit answer.
    entity = checked({key: value for key, value in GOOD.items() if key != "offset"})
    assert entity.topics[0].partitions[0].offset == -1


def test_a_field_of_another_version_is_dropped():
    # ListOffsets v1 has neither leader_epoch nor throttle_time: one dict tree for every version is
    # versioning, not a mistake.
    entity = built(LIST_OFFSETS, 1, {"throttle_time": 0, "topics": [{"name": TOPIC, "partitions": [GOOD]}]})
    assert not hasattr(entity.topics[0].partitions[0], "leader_epoch")
    assert entity.topics[0].partitions[0].offset == 5


def test_a_nested_entity_passes_rebuilt_for_another_version_and_of_another_api_fails():
    partition = ListOffsetsPartitionResponse(
        partition_index=0, error_code=ErrorCode.none, timestamp=-1, offset=5, leader_epoch=0
    )
    body = {"throttle_time": 0, "topics": [{"name": TOPIC, "partitions": [partition]}]}
    assert built(LIST_OFFSETS, 7, body).topics[0].partitions[0] is partition
    older = built(LIST_OFFSETS, 6, body).topics[0].partitions[0]
    assert type(older) is not type(partition)
    assert (older.partition_index, older.offset) == (0, 5)
    broker = MetadataResponseBroker(node_id=1, host="h", port=9092, rack=None)
    body = {"throttle_time": 0, "topics": [{"name": TOPIC, "partitions": [broker]}]}
    with pytest.raises(ResponseShapeError, match="expected dict or ListOffsetsPartitionResponse"):
        built(LIST_OFFSETS, 6, body)


def test_wrong_types_inside_lists_and_nested_entities_are_found():
    broker = {"node_id": 1, "host": "h", "port": 9092, "rack": None}
    body = {
        "throttle_time": 0,
        "error_code": 0,
        "brokers": [broker],
        "topics": [{"error_code": 0, "name": "t", "topic_id": uuid.uuid4(), "partitions": []}],
    }
    assert isinstance(built(3, 12, body).brokers[0], MetadataResponseBroker)
    with pytest.raises(ResponseShapeError, match=r"brokers\.port: expected int, got str"):
        built(3, 12, {**body, "brokers": [{**broker, "port": "9092"}]})
    with pytest.raises(ResponseShapeError, match=r"topic_id: expected UUID, got str"):
        built(3, 12, {**body, "topics": [{**body["topics"][0], "topic_id": "not-a-uuid"}]})
    with pytest.raises(ResponseShapeError, match=r"MetadataResponse v12\.brokers: expected list, got dict"):
        built(3, 12, {**body, "brokers": broker})
