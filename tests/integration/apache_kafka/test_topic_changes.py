"""Topic changes the control plane sends reach Apache Kafka: its KRaft controller drops a CreateTopics or
DeleteTopics whose operation timeout is 0 as already expired, while librdkafka reports success."""

from __future__ import annotations

import pytest

from controlplane.kafka.connection import Connection
from controlplane.kafka.topics import create_topic, delete_topic, list_topics
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration


def test_a_created_topic_exists_and_a_deleted_one_is_gone(apache_kafka) -> None:
    connection = Connection(bootstrap_servers=apache_kafka.bootstrap)
    create_topic(connection, name="changes.created", partitions=2, replication_factor=1, configs={})
    assert "changes.created" in list_topics(connection), "created as soon as CreateTopics answered"
    delete_topic(connection, name="changes.created")
    wait_until(lambda: "changes.created" not in list_topics(connection), 10, "the deleted topic to be gone")
