"""Fetch v16+ on a cluster (KIP-951): a broker that does not lead the partition answers NOT_LEADER_OR_FOLLOWER
with the current leader and that leader's endpoint, so a consumer goes straight there; by topic id, the id
every broker serves for the topic."""

from __future__ import annotations

import time
import uuid

from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12 import request as metadata_v12

from tests.fixtures.cluster import LocalCluster
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.test_fetch_topic_ids import fetch_request

TOPIC = "hinted"


def served_topic_id(bootstrap: str, deadline: float) -> uuid.UUID:
    """The id `bootstrap`'s broker serves for TOPIC, once it knows the topic."""
    request = metadata_v12.MetadataRequest(
        topics=(metadata_v12.MetadataRequestTopic(topic_id=None, name=TOPIC),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    while True:
        with WireClient(bootstrap) as client:
            (topic,) = client.request(request).topics
        if topic.error_code == ErrorCode.none and topic.topic_id is not None and topic.partitions:
            return topic.topic_id
        assert time.monotonic() < deadline, f"{bootstrap} does not serve {TOPIC}: {topic}"
        time.sleep(0.2)


def test_a_follower_or_bystander_names_the_leader_and_its_endpoint(cluster3: LocalCluster) -> None:
    admin = AdminClient(cluster3.client_config())
    admin.create_topics([NewTopic(TOPIC, num_partitions=1, replica_assignment=[[2]])])[TOPIC].result(15)
    deadline = time.monotonic() + 20
    ids = {node.node_id: served_topic_id(node.bootstrap, deadline) for node in cluster3.brokers}
    assert len(set(ids.values())) == 1  # one id, the metadata image's, on every broker
    topic_id = ids[1]
    leader = cluster3.node(2)

    with WireClient(cluster3.node(1).bootstrap) as client:
        response = client.request(fetch_request(17, topic_id))
    (topic,) = response.responses
    (partition,) = topic.partitions
    assert topic.topic_id == topic_id
    assert partition.error_code == ErrorCode.not_leader_or_follower
    assert int(partition.current_leader.leader_id) == 2
    assert int(partition.current_leader.leader_epoch) >= 0
    endpoints = [(int(n.node_id), f"{n.host}:{n.port}") for n in response.node_endpoints]
    assert endpoints == [(2, leader.bootstrap)]

    # Before v16 the same answer carries no hints.
    with WireClient(cluster3.node(1).bootstrap) as client:
        (old_topic,) = client.request(fetch_request(15, topic_id)).responses
    assert old_topic.partitions[0].error_code == ErrorCode.not_leader_or_follower
    assert int(old_topic.partitions[0].current_leader.leader_id) == -1

    # The leader itself serves the same id.
    with WireClient(leader.bootstrap) as client:
        (served,) = client.request(fetch_request(17, topic_id)).responses
    assert served.partitions[0].error_code == ErrorCode.none
