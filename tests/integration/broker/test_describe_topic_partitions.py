"""DescribeTopicPartitions (75) from a real client against a broker process: kafka-python's paged
`describe_topic_partitions`. (librdkafka 2.16's `describe_topics` still asks through Metadata even
when API 75 is advertised, so it does not exercise this API.)"""

import pytest
from kafka import KafkaAdminClient

from tests.integration.broker.helpers import create_topic

pytestmark = pytest.mark.integration

PARTITIONS = 30


def test_kafka_python_pages_through_a_topic(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, PARTITIONS)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        pages, cursor = [], None
        while True:
            page = admin.describe_topic_partitions([topic_name], response_partition_limit=12, cursor=cursor)
            pages.append(page)
            cursor = page["next_cursor"]
            if cursor is None or len(pages) > 10:
                break
        unknown = admin.describe_topic_partitions(["no-such-" + topic_name])
    finally:
        admin.close()
    assert [len(p["topics"][0]["partitions"]) for p in pages] == [12, 12, 6]
    assert [p["next_cursor"] for p in pages[:2]] == [
        {"topic_name": topic_name, "partition_index": 12},
        {"topic_name": topic_name, "partition_index": 24},
    ]
    indexes = [part["partition_index"] for p in pages for part in p["topics"][0]["partitions"]]
    assert indexes == list(range(PARTITIONS))
    assert all(part["leader_id"] == 1 for p in pages for part in p["topics"][0]["partitions"])
    assert unknown["topics"][0]["error_code"] == 3  # UNKNOWN_TOPIC_OR_PARTITION
