"""Random and mutated frames thrown at the real dispatcher (real logs on disk, no sockets)."""

import asyncio
import datetime
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.schema.delete_records.v2.request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.incremental_alter_configs.v1.request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from kio.schema.list_offsets.v7.request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.offset_for_leader_epoch.v4.request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.request_header.v2.header import RequestHeader
from kio.serial import entity_reader, entity_writer
from kio.static.primitive import i32Timedelta

from broker.protocol.frames import MalformedRequest, UnsupportedRequest
from broker.server.dispatcher import Peer, dispatch
from broker.wire.records.records import Record, build_batch
from broker.wire.schemas import response_class
from tests.unit.broker.running_state import running_state

PEER = Peer(host="127.0.0.1", port=1, listener_name="PLAINTEXT")
TOPIC = "fuzzed"
MS_100 = i32Timedelta.parse(datetime.timedelta(milliseconds=100))


def frame(body: object, correlation_id: int = 1) -> bytes:
    buffer = io.BytesIO()
    entity_writer(RequestHeader)(
        buffer,
        RequestHeader(
            request_api_key=body.__api_key__,
            request_api_version=body.__version__,
            correlation_id=correlation_id,
            client_id="fuzz",
        ),
    )
    entity_writer(type(body))(buffer, body)
    return buffer.getvalue()


def produce(records: bytes) -> ProduceRequest:
    return ProduceRequest(
        acks=1,
        timeout=MS_100,
        topic_data=(
            TopicProduceData(name=TOPIC, partition_data=(PartitionProduceData(index=0, records=records),)),
        ),
    )


def fetch(offset: int) -> FetchRequest:
    return FetchRequest(
        max_wait=i32Timedelta.parse(datetime.timedelta(0)),
        min_bytes=0,
        topics=(
            FetchTopic(
                topic=TOPIC,
                partitions=(FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20),),
            ),
        ),
        forgotten_topics_data=(),
    )


SEEDS = [
    frame(produce(build_batch([Record(key=b"k", value=b"v" * 40)]))),
    frame(fetch(0)),
    frame(
        MetadataRequest(
            topics=(MetadataRequestTopic(topic_id=None, name=TOPIC),),
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=True,
        )
    ),
    frame(
        ListOffsetsRequest(
            replica_id=-1,
            isolation_level=0,
            topics=(
                ListOffsetsTopic(
                    name=TOPIC, partitions=(ListOffsetsPartition(partition_index=0, timestamp=-1),)
                ),
            ),
        )
    ),
    frame(
        DescribeConfigsRequest(
            resources=(
                DescribeConfigsResource(resource_type=2, resource_name=TOPIC, configuration_keys=None),
            ),
            include_synonyms=True,
            include_documentation=False,
        )
    ),
    frame(
        IncrementalAlterConfigsRequest(
            resources=(
                AlterConfigsResource(
                    resource_type=2,
                    resource_name=TOPIC,
                    configs=(AlterableConfig(name="retention.ms", config_operation=0, value="86400000"),),
                ),
            ),
            validate_only=False,
        )
    ),
    frame(
        OffsetForLeaderEpochRequest(
            topics=(
                OffsetForLeaderTopic(
                    topic=TOPIC,
                    partitions=(
                        OffsetForLeaderPartition(partition=0, current_leader_epoch=0, leader_epoch=0),
                    ),
                ),
            )
        )
    ),
    frame(
        DeleteRecordsRequest(
            topics=(
                DeleteRecordsTopic(
                    name=TOPIC, partitions=(DeleteRecordsPartition(partition_index=0, offset=0),)
                ),
            ),
            timeout=MS_100,
        )
    ),
]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_state(tmp_path_factory.mktemp("fuzz"), TOPIC) as running:
        yield running


def run(broker, data: bytes):
    loop, state = broker
    try:
        response = loop.run_until_complete(asyncio.wait_for(dispatch(state, PEER, data), 0.2))
    except (MalformedRequest, UnsupportedRequest):
        return None
    except TimeoutError:
        # Only a Fetch may legitimately wait (a mutated max_wait can be very long).
        assert data[:2] == b"\x00\x01"
        return None
    assert response is None or all(isinstance(chunk, bytes | bytearray | memoryview) for chunk in response)
    return response


def decode(api_key: int, version: int, response: list) -> object:
    data = b"".join(bytes(c) for c in response)
    flexible = response_class(api_key, version).__flexible__
    entity, _ = entity_reader(response_class(api_key, version))(data, 8 + (1 if flexible else 0))
    return entity


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_random_frames_get_an_answer_or_a_clean_rejection(broker, data):
    run(broker, data)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(SEEDS),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_mutated_frames_get_an_answer_or_a_clean_rejection(broker, seed, flips):
    mutated = bytearray(seed)
    for position, value in flips:
        mutated[position % len(mutated)] = value
    run(broker, bytes(mutated))


def test_after_the_fuzzing_the_partition_still_round_trips(broker):
    _loop, state = broker
    before = state.logs.get(TOPIC, 0).log_end_offset
    produced = decode(0, 9, run(broker, frame(produce(build_batch([Record(key=b"after", value=b"fuzz")])))))
    partition = produced.responses[0].partition_responses[0]
    assert partition.error_code == ErrorCode.none
    assert partition.base_offset == before
    fetched = decode(1, 12, run(broker, frame(fetch(before))))
    records = fetched.responses[0].partitions[0].records
    assert b"after" in records
    assert b"fuzz" in records
