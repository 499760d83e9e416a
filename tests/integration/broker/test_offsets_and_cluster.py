"""ListOffsets by time, OffsetForLeaderEpoch, DescribeCluster and DescribeLogDirs with real clients."""

import datetime
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kio.schema.list_offsets.v7.request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kio.schema.offset_for_leader_epoch.v4.request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)

from broker.wire.schemas import request_class
from tests.fixtures.entity_trees import entity_from_tree
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration


def produce_at(bootstrap: str, topic: str, timestamps: list[int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for index, timestamp in enumerate(timestamps):
        producer.produce(topic, value=b"%d" % index, timestamp=timestamp)
        producer.flush(5)


def test_offsets_for_times_finds_the_first_record_at_or_after(broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    base = int(time.time() * 1000) - 100_000
    produce_at(broker.bootstrap, topic_name, [base, base + 10_000, base + 20_000, base + 5_000])
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": topic_name})
    try:
        found = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 9_000)], timeout=10)
        assert found[0].offset == 1
        after_all = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 50_000)], timeout=10)
        assert after_all[0].offset == -1
    finally:
        consumer.close()


def test_list_offsets_answers_earliest_latest_and_max_timestamp(broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    base = int(time.time() * 1000) - 100_000
    produce_at(broker.bootstrap, topic_name, [base, base + 30_000, base + 10_000])

    def ask(timestamp: int):
        with WireClient(broker.bootstrap) as client:
            response = client.request(
                ListOffsetsRequest(
                    replica_id=-1,
                    isolation_level=0,
                    topics=(
                        ListOffsetsTopic(
                            name=topic_name,
                            partitions=(ListOffsetsPartition(partition_index=0, timestamp=timestamp),),
                        ),
                    ),
                )
            )
        return response.topics[0].partitions[0]

    assert ask(-2).offset == 0
    assert ask(-1).offset == 3
    newest = ask(-3)
    assert (newest.offset, newest.timestamp) == (1, base + 30_000)
    assert newest.leader_epoch == 0


def test_offset_for_leader_epoch_returns_the_log_end_for_the_current_epoch(broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    produce_at(broker.bootstrap, topic_name, [int(time.time() * 1000)] * 3)
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            OffsetForLeaderEpochRequest(
                topics=(
                    OffsetForLeaderTopic(
                        topic=topic_name,
                        partitions=(
                            OffsetForLeaderPartition(partition=0, current_leader_epoch=0, leader_epoch=0),
                        ),
                    ),
                )
            )
        )
        fenced = client.request(
            OffsetForLeaderEpochRequest(
                topics=(
                    OffsetForLeaderTopic(
                        topic=topic_name,
                        partitions=(
                            OffsetForLeaderPartition(partition=0, current_leader_epoch=5, leader_epoch=0),
                        ),
                    ),
                )
            )
        )
    partition = response.topics[0].partitions[0]
    assert (partition.error_code.value, partition.leader_epoch, partition.end_offset) == (0, 0, 3)
    assert fenced.topics[0].partitions[0].error_code.value == 75  # UNKNOWN_LEADER_EPOCH


def test_describe_cluster_names_this_broker(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    cluster = admin.describe_cluster(request_timeout=10).result(10)
    assert [node.id for node in cluster.nodes] == [1]
    assert cluster.nodes[0].port == broker.port
    assert cluster.controller.id == 1
    assert cluster.cluster_id


def test_describe_log_dirs_reports_partition_sizes(broker, topic_name):
    from kafka import KafkaAdminClient

    create_topic(broker.bootstrap, topic_name, 2)
    produce_at(broker.bootstrap, topic_name, [int(time.time() * 1000)] * 2)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        response = admin.describe_log_dirs()
    finally:
        admin.close()
    text = repr(response)
    assert topic_name in text
    assert str(broker.log_dir) in text


def test_a_long_poll_returns_after_max_wait_when_nothing_arrives(broker, topic_name):
    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
    from kio.static.primitive import i32Timedelta

    create_topic(broker.bootstrap, topic_name)
    request = FetchRequest(
        max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=300)),
        min_bytes=1,
        topics=(
            FetchTopic(
                topic=topic_name,
                partitions=(FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1000),),
            ),
        ),
        forgotten_topics_data=(),
    )
    with WireClient(broker.bootstrap) as client:
        started = time.monotonic()
        response = client.request(request)
        elapsed = time.monotonic() - started
    assert 0.25 < elapsed < 2
    assert response.responses[0].partitions[0].records in (b"", None)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_cluster_answers_every_served_version(broker, version):
    body = {"include_cluster_authorized_operations": False}
    if version >= 2:
        body["include_fenced_brokers"] = True
    with WireClient(broker.bootstrap) as client:
        response = client.request(entity_from_tree(request_class(60, version), body))
    assert response.error_code == 0
    (entry,) = response.brokers
    assert entry.broker_id == 1
    if version >= 2:
        assert entry.is_fenced is False  # a single node is never fenced
