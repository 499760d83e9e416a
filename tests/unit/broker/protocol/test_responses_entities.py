"""Handlers answer with a kio entity of the newest version they serve; `build_response` passes it
through for that version and rebuilds it, under the same strict rules as a dict answer, for any other."""

from __future__ import annotations

import datetime

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v3.response import FindCoordinatorResponse as FindCoordinatorV3
from kio.schema.find_coordinator.v6.response import Coordinator, FindCoordinatorResponse
from kio.schema.metadata.v13.response import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kio.serial import entity_reader

from broker.protocol.frames import encode_response
from broker.protocol.responses import ResponseShapeError, build_response
from broker.wire.schemas import response_class

NO_THROTTLE = datetime.timedelta(0)


def metadata_v13() -> MetadataResponse:
    return MetadataResponse(
        throttle_time=NO_THROTTLE,
        brokers=(MetadataResponseBroker(node_id=1, host="localhost", port=9092, rack="r1"),),
        cluster_id="cluster",
        controller_id=1,
        topics=(
            MetadataResponseTopic(
                error_code=ErrorCode.none,
                name="orders",
                topic_id=None,
                is_internal=False,
                partitions=(
                    MetadataResponsePartition(
                        error_code=ErrorCode.none,
                        partition_index=0,
                        leader_id=1,
                        leader_epoch=4,
                        replica_nodes=(1,),
                        isr_nodes=(1,),
                        offline_replicas=(),
                    ),
                ),
            ),
        ),
        error_code=ErrorCode.none,
    )


def test_the_newest_version_passes_through_untouched():
    entity = metadata_v13()
    assert build_response(3, 13, entity) is entity


@pytest.mark.parametrize("version", range(13))
def test_an_entity_is_rebuilt_as_every_older_version_and_encodes(version):
    entity = build_response(3, version, metadata_v13())
    assert type(entity) is response_class(3, version)
    partition = entity.topics[0].partitions[0]
    assert type(partition).__module__ == response_class(3, version).__module__
    assert (partition.partition_index, partition.leader_id, partition.replica_nodes) == (0, 1, (1,))
    frame = encode_response(3, version, 7, entity)
    header_size = 4 + (1 if version >= 9 else 0)
    decoded, _ = entity_reader(response_class(3, version))(frame[4:], header_size)
    assert decoded == entity


def test_a_misspelt_or_missing_field_fails_where_the_answer_is_built():
    with pytest.raises(TypeError, match="error_cod"):
        Coordinator(key="g", node_id=1, host="h", port=1, error_cod=ErrorCode.none, error_message=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="error_code"):
        Coordinator(key="g", node_id=1, host="h", port=1, error_message=None)  # type: ignore[call-arg]


def test_a_field_only_older_versions_have_is_required_when_the_newest_entity_is_served_to_them():
    newest = FindCoordinatorResponse(
        throttle_time=NO_THROTTLE,
        coordinators=(
            Coordinator(
                key="g", node_id=1, host="h", port=9092, error_code=ErrorCode.none, error_message=None
            ),
        ),
    )
    with pytest.raises(ResponseShapeError, match=r"FindCoordinatorResponse v2\.error_code: required"):
        build_response(10, 2, newest)


def test_an_older_versions_entity_gives_the_fields_only_older_versions_have():
    v3 = FindCoordinatorV3(
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.coordinator_not_available,
        error_message=None,
        node_id=-1,
        host="",
        port=-1,
    )
    v0 = build_response(10, 0, v3)
    assert (v0.error_code, v0.node_id) == (ErrorCode.coordinator_not_available, -1)


def test_an_entity_of_another_api_is_refused():
    with pytest.raises(
        ResponseShapeError, match="v6: expected FindCoordinatorResponse, got MetadataResponse"
    ):
        build_response(10, 6, metadata_v13())


def test_an_older_versions_entity_without_throttle_time_is_served_as_not_throttled_where_it_is_required():
    from broker.wire.legacy_schemas import (
        ListOffsetsPartitionResponseV0,
        ListOffsetsResponseV0,
        ListOffsetsTopicResponseV0,
    )

    v0 = ListOffsetsResponseV0(
        topics=(
            ListOffsetsTopicResponseV0(
                name="t",
                partitions=(
                    ListOffsetsPartitionResponseV0(
                        partition_index=0, error_code=ErrorCode.none, old_style_offsets=(5,)
                    ),
                ),
            ),
        )
    )
    v2 = build_response(2, 2, v0)
    assert v2.throttle_time == NO_THROTTLE
    assert (v2.topics[0].partitions[0].partition_index, v2.topics[0].partitions[0].offset) == (0, -1)
