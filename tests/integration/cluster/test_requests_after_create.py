"""Produce and ListOffsets right after CreateTopics answered: the leader must not refuse a partition its own
metadata says it leads while that partition's new log is still being created.

The broker creates new partitions' logs in a worker thread after the metadata naming it leader is applied. A
producer that learnt the leader in between was answered NOT_LEADER_OR_FOLLOWER; librdkafka's producer (not
idempotent, its default) then retries that batch after the later ones, so its records landed out of order
(librdkafka 0011 "Delivered msg 10000, expected 0", 0077's gzip variant). A consumer resetting its position
was refused the same way (aiokafka's test_create_consumer_no_running_loop: its retried ListOffsets for
"latest" came after the test's records, which it then never read), and a long-polling Fetch was answered at
once with that error (aiokafka's test_concurrent_send_on_different_connection_groups). Apache Kafka makes the leader's log in the
same step it applies the metadata, so its window is too short to see; ours now waits for the log.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable

import pytest
from kio.schema.create_topics.v7.request import CreatableTopic, CreateTopicsRequest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.list_offsets.v7.request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.static.primitive import i16, i32, i32Timedelta

from broker.wire.records.records import Record, build_batch
from tests.fixtures.cluster import LocalCluster
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

# Enough partitions that their logs take several worker batches to create on a loaded machine.
PARTITIONS = 300
LATEST = -1


def _create_topic(client: WireClient) -> str:
    topic = f"after-create-{uuid.uuid4().hex[:8]}"
    created = client.request(
        CreateTopicsRequest(
            topics=(
                CreatableTopic(
                    name=topic,
                    num_partitions=i32(PARTITIONS),
                    replication_factor=i16(1),
                    assignments=(),
                    configs=(),
                ),
            ),
            timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)),
            validate_only=False,
        )
    )
    assert created.topics[0].error_code == ErrorCode.none
    return topic


def test_produce_right_after_create_topics_is_appended_not_refused(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    # One node: it is the controller that committed the topic and the leader of every partition.
    cluster = cluster_factory(size=1)
    batch = build_batch([Record(key=b"k", value=b"v")])
    with WireClient(cluster.bootstrap, timeout=60) as client:
        topic = _create_topic(client)
        # The last partitions are the last logs the worker creates.
        produced = client.request(
            ProduceRequest(
                acks=1,
                timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)),
                topic_data=(
                    TopicProduceData(
                        name=topic,
                        partition_data=tuple(
                            PartitionProduceData(index=i32(index), records=batch)
                            for index in reversed(range(PARTITIONS))
                        ),
                    ),
                ),
            )
        )
    errors = {
        part.error_code
        for part in produced.responses[0].partition_responses
        if part.error_code != ErrorCode.none
    }
    assert errors == set()


def test_list_offsets_right_after_create_topics_is_answered_not_refused(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(size=1)
    with WireClient(cluster.bootstrap, timeout=60) as client:
        topic = _create_topic(client)
        listed = client.request(
            ListOffsetsRequest(
                replica_id=-1,
                isolation_level=0,
                topics=(
                    ListOffsetsTopic(
                        name=topic,
                        partitions=tuple(
                            ListOffsetsPartition(partition_index=i32(index), timestamp=LATEST)
                            for index in reversed(range(PARTITIONS))
                        ),
                    ),
                ),
            )
        )
    answers = {(part.error_code, part.offset) for part in listed.topics[0].partitions}
    assert answers == {(ErrorCode.none, 0)}


def test_fetch_right_after_create_topics_long_polls_not_refused(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(size=1)
    with WireClient(cluster.bootstrap, timeout=60) as client:
        topic = _create_topic(client)
        fetched = client.request(
            FetchRequest(
                max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=500)),
                min_bytes=1,
                topics=(
                    FetchTopic(
                        topic=topic,
                        partitions=tuple(
                            FetchPartition(partition=i32(index), fetch_offset=0, partition_max_bytes=1000)
                            for index in reversed(range(PARTITIONS))
                        ),
                    ),
                ),
                forgotten_topics_data=(),
            )
        )
    errors = {
        part.error_code for part in fetched.responses[0].partitions if part.error_code != ErrorCode.none
    }
    assert errors == set()
