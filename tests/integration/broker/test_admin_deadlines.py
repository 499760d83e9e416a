"""CreateTopics, CreatePartitions and DeleteTopics with timeout_ms 0 answer as Apache Kafka does: a KRaft
controller takes the timeout as its deadline, so the request is REQUEST_TIMED_OUT for every topic and nothing
changes (validate_only too); a positive timeout goes through. Asked of our broker and of Apache Kafka alike."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest
from kio.schema.create_partitions.v3.request import CreatePartitionsRequest, CreatePartitionsTopic
from kio.schema.create_topics.v7.request import CreatableTopic, CreateTopicsRequest
from kio.schema.delete_topics.v6.request import DeleteTopicsRequest, DeleteTopicState
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.types import TopicName
from kio.static.primitive import i16, i32, i32Timedelta

from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

NOW = i32Timedelta.parse(datetime.timedelta(0))
LATER = i32Timedelta.parse(datetime.timedelta(seconds=10))


@pytest.fixture(
    params=[pytest.param("streamhub"), pytest.param("apache-kafka", marks=pytest.mark.apache_kafka)]
)
def bootstrap(request: pytest.FixtureRequest) -> str:
    node = request.getfixturevalue("broker" if request.param == "streamhub" else "apache_kafka")
    return node.bootstrap


def _create(name: str, timeout: i32Timedelta, *, validate_only: bool = False) -> CreateTopicsRequest:
    topic = CreatableTopic(
        name=TopicName(name), num_partitions=i32(1), replication_factor=i16(1), assignments=(), configs=()
    )
    return CreateTopicsRequest(topics=(topic,), timeout=timeout, validate_only=validate_only)


def _partitions(client: WireClient, name: str) -> int | None:
    """The topic's partition count in Metadata (None: unknown), once the answer has settled."""
    request = MetadataRequest(
        topics=(MetadataRequestTopic(name=TopicName(name), topic_id=None),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    time.sleep(0.5)  # Apache Kafka's brokers learn the controller's changes a moment later
    (topic,) = client.request(request).topics
    return None if topic.error_code != ErrorCode.none else len(topic.partitions)


def test_a_zero_timeout_changes_nothing_and_times_out_every_topic(bootstrap: str) -> None:
    name = f"deadline-{uuid.uuid4().hex[:8]}"
    with WireClient(bootstrap) as client:
        for validate_only in (True, False):
            (result,) = client.request(_create(name, NOW, validate_only=validate_only)).topics
            assert (result.error_code, result.error_message) == (ErrorCode.request_timed_out, None)
        assert _partitions(client, name) is None

        (created,) = client.request(_create(name, LATER)).topics
        assert created.error_code == ErrorCode.none
        assert _partitions(client, name) == 1

        grow = CreatePartitionsTopic(name=TopicName(name), count=i32(3), assignments=None)
        (grown,) = client.request(
            CreatePartitionsRequest(topics=(grow,), timeout=NOW, validate_only=False)
        ).results
        assert grown.error_code == ErrorCode.request_timed_out
        assert _partitions(client, name) == 1

        delete = (DeleteTopicState(name=TopicName(name), topic_id=None),)
        (kept,) = client.request(DeleteTopicsRequest(topics=delete, timeout=NOW)).responses
        assert kept.error_code == ErrorCode.request_timed_out
        assert _partitions(client, name) == 1
        (deleted,) = client.request(DeleteTopicsRequest(topics=delete, timeout=LATER)).responses
        assert deleted.error_code == ErrorCode.none
