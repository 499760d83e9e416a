"""A topic change's read-back asks the cluster about that one topic (a thousand creates in a row used to list
every topic each time), and never creates it: both engines auto-create topics by default, for a client whose
Metadata request allows it."""

from __future__ import annotations

import pytest

from controlplane.kafka.connection import Connection
from controlplane.kafka.topics import create_topic, describe_topic, list_topics
from tests.fixtures.engines import ManagedCluster

pytestmark = pytest.mark.integration


def _connection(cluster: ManagedCluster) -> Connection:
    config = cluster.registration()
    return Connection(
        bootstrap_servers=config["bootstrap_servers"],
        security_protocol=config["security_protocol"],
        sasl_mechanism=config["sasl_mechanism"],
        username=config["username"],
        password=config["password"],
    )


def test_reading_one_topic_back_describes_it_and_never_creates_a_missing_one(
    managed_cluster: ManagedCluster,
) -> None:
    connection = _connection(managed_cluster)
    create_topic(connection, name="read-back.present", partitions=3, replication_factor=1, configs={})

    present = describe_topic(connection, "read-back.present")
    absent = describe_topic(connection, "read-back.absent")

    assert present is not None
    assert [p.partition for p in present.partitions] == [0, 1, 2]
    assert present.replication_factor == 1
    assert absent is None
    assert "read-back.absent" not in list_topics(connection), "the read-back created the topic it looked for"
