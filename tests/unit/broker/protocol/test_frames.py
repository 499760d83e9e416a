import struct

import pytest
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_writer

from broker.protocol.frames import MalformedRequest, UnsupportedRequest, decode_body, decode_header


def metadata_v12_frame(topics=("orders",), client_id="cli") -> bytes:
    import io

    buffer = io.BytesIO()
    entity_writer(RequestHeader)(
        buffer,
        RequestHeader(request_api_key=3, request_api_version=12, correlation_id=77, client_id=client_id),
    )
    entity_writer(MetadataRequest)(
        buffer,
        MetadataRequest(
            topics=tuple(MetadataRequestTopic(topic_id=None, name=t) for t in topics),
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        ),
    )
    return buffer.getvalue()


def test_it_decodes_a_flexible_header_and_body():
    frame = metadata_v12_frame()
    header = decode_header(frame)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (3, 12, 77, "cli")
    body = decode_body(header, frame)
    assert body.topics[0].name == "orders"
    assert body.allow_auto_topic_creation is False


def test_it_accepts_a_null_client_id():
    header = decode_header(metadata_v12_frame(client_id=None))
    assert header.client_id is None


def test_it_rejects_a_frame_shorter_than_a_header():
    with pytest.raises(MalformedRequest):
        decode_header(b"\x00\x03\x00")


def test_it_rejects_a_client_id_running_past_the_frame():
    with pytest.raises(MalformedRequest):
        decode_header(struct.pack(">hhih", 3, 1, 1, 100) + b"abc")


def test_it_rejects_a_truncated_body():
    frame = metadata_v12_frame()
    header = decode_header(frame)
    with pytest.raises(MalformedRequest):
        decode_body(header, frame[:-3])


def test_it_ignores_trailing_bytes_after_the_body_as_kafka_does():
    frame = metadata_v12_frame() + b"\x01\x00\x00"
    assert decode_body(decode_header(frame), frame).topics[0].name == "orders"


def test_an_unknown_api_key_is_unsupported_not_malformed():
    frame = struct.pack(">hhih", 9999, 0, 5, -1)
    header = decode_header(frame)
    with pytest.raises(UnsupportedRequest) as raised:
        decode_body(header, frame)
    assert raised.value.correlation_id == 5
