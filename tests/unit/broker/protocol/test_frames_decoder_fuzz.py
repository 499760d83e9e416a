"""Property tests: whatever bytes arrive, the decoder either decodes or raises one of our two errors."""

import datetime
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_writer
from kio.static.primitive import i32Timedelta

from broker.protocol.frames import MalformedRequest, UnsupportedRequest, decode_body, decode_header
from tests.unit.broker.protocol.test_frames import metadata_v12_frame


def _frame(api_key: int, version: int, body: object) -> bytes:
    buffer = io.BytesIO()
    entity_writer(RequestHeader)(
        buffer,
        RequestHeader(request_api_key=api_key, request_api_version=version, correlation_id=1, client_id="c"),
    )
    entity_writer(type(body))(buffer, body)
    return buffer.getvalue()


VALID_FRAMES = [
    metadata_v12_frame(),
    _frame(18, 3, ApiVersionsRequest(client_software_name="x", client_software_version="1")),
    _frame(
        0,
        9,
        ProduceRequest(
            acks=1,
            timeout=i32Timedelta.parse(datetime.timedelta(milliseconds=100)),
            topic_data=(
                TopicProduceData(
                    name="t", partition_data=(PartitionProduceData(index=0, records=b"x" * 70),)
                ),
            ),
        ),
    ),
    _frame(
        1,
        12,
        FetchRequest(
            max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=100)),
            min_bytes=1,
            topics=(
                FetchTopic(
                    topic="t",
                    partitions=(FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1000),),
                ),
            ),
            forgotten_topics_data=(),
        ),
    ),
]


def decode_or_reject(frame: bytes) -> None:
    try:
        header = decode_header(frame)
        decode_body(header, frame)
    except (MalformedRequest, UnsupportedRequest):
        pass


def test_the_valid_seed_frames_decode():
    for frame in VALID_FRAMES:
        decode_body(decode_header(frame), frame)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_bytes_never_escape_as_another_exception(frame):
    decode_or_reject(frame)


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(VALID_FRAMES),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=6),
    st.integers(0, 10_000),
)
def test_mutated_valid_frames_never_escape_as_another_exception(frame, flips, cut):
    mutated = bytearray(frame)
    for position, value in flips:
        mutated[position % len(mutated)] = value
    decode_or_reject(bytes(mutated[: max(1, len(mutated) - cut % 8)]))
