"""Client frames (broker.wire.frames) against the broker's own server-side framing (broker.protocol.frames)."""

from datetime import timedelta

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.api_versions.v3.response import ApiVersionsResponse
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.metadata.v12.response import MetadataResponse
from kio.static.primitive import i32Timedelta

from broker.protocol.frames import decode_body, decode_header, encode_response
from broker.wire.frames import FRAME_SIZE, UnexpectedCorrelation, decode_response, encode_request


def test_a_client_request_frame_is_what_the_broker_decodes() -> None:
    body = MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name="orders"),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    frame = encode_request(body, 41, "unit")
    (size,) = FRAME_SIZE.unpack_from(frame, 0)
    assert size == len(frame) - 4
    header = decode_header(frame[4:])
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        3,
        12,
        41,
        "unit",
    )
    assert decode_body(header, frame[4:]) == body


def test_a_broker_response_decodes_and_must_answer_the_request_waited_for() -> None:
    answer = MetadataResponse(
        throttle_time=i32Timedelta.parse(timedelta(0)),
        brokers=(),
        cluster_id="c1",
        controller_id=1,
        topics=(),
    )
    frame = encode_response(3, 12, 41, answer)[4:]
    assert decode_response(frame, 3, 12, 41) == answer
    with pytest.raises(UnexpectedCorrelation, match="expected correlation id 42, got 41"):
        decode_response(frame, 3, 12, 42)


def test_api_versions_answers_with_a_header_without_tagged_fields() -> None:
    # KIP-511: a flexible ApiVersions response still has response header v0, so clients can parse it blind.
    assert ApiVersionsRequest.__flexible__
    answer = ApiVersionsResponse(
        error_code=ErrorCode.none, api_keys=(), throttle_time=i32Timedelta.parse(timedelta(0))
    )
    frame = encode_response(18, 3, 7, answer)[4:]
    assert decode_response(frame, 18, 3, 7) == answer
