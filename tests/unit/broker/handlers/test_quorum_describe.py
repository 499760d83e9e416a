"""DescribeQuorum (55) on a single node, through the real dispatcher and broker state (ACLs on): the
ACL check, the partition check, and a single node's answer (the one voter of its own quorum). A
real Raft quorum is described on a cluster (tests/integration/cluster/test_describe_quorum.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.describe_quorum.v0 import request as v0
from kio.schema.describe_quorum.v2 import request as v2
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32

from broker.handlers.api_table import API_TABLE
from tests.unit.broker.server.test_dispatcher_replica_requests import AclBroker

ADMIN = "User:broker"  # a super user
METADATA = "__cluster_metadata"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclBroker]:
    broker = AclBroker(Path(tmp_path_factory.mktemp("quorum")))
    yield broker
    broker.close()


def request(module: Any, topic: str = METADATA, partition: int = 0) -> Any:
    return module.DescribeQuorumRequest(
        topics=(
            module.TopicData(
                topic_name=topic, partitions=(module.PartitionData(partition_index=i32(partition)),)
            ),
        )
    )


def test_served_at_kafka_4_versions() -> None:
    low, high, *_ = API_TABLE[55]
    assert (low, high) == (0, 2)


def test_it_needs_describe_on_the_cluster(broker: AclBroker) -> None:
    response = broker.send("User:alice", request(v2))
    assert response.error_code == ErrorCode.cluster_authorization_failed
    assert response.topics == ()


def test_a_single_node_is_the_one_voter_of_its_own_quorum(broker: AclBroker) -> None:
    before = broker.send(ADMIN, request(v2)).topics[0].partitions[0].high_watermark
    broker.create_topic("quorum-change", 1)  # a metadata change moves the offsets
    response = broker.send(ADMIN, request(v2))
    assert response.error_code == ErrorCode.none
    (partition,) = response.topics[0].partitions
    assert partition.error_code == ErrorCode.none
    node = broker.state.node_id
    # The term of the one voter's first election, as Kafka's (the quorum starts at epoch 0, unelected).
    assert (partition.leader_id, partition.leader_epoch) == (node, 1)
    assert partition.high_watermark > before
    (voter,) = partition.current_voters
    assert (voter.replica_id, voter.log_end_offset) == (node, partition.high_watermark)
    assert abs(voter.last_fetch_timestamp - time.time() * 1000) < 60_000
    assert partition.observers == ()
    # v2 names the voter's controller listener, as a combined node of Kafka does.
    ((voter_node_id, (listener,)),) = [(n.node_id, n.listeners) for n in response.nodes]
    assert (voter_node_id, listener.name, listener.port > 0) == (node, "CONTROLLER", True)
    old = broker.send(ADMIN, request(v0))  # v0: no timestamps, same quorum
    assert old.topics[0].partitions[0].current_voters[0].replica_id == node


@pytest.mark.parametrize(("topic", "partition"), [("orders", 0), (METADATA, 1)])
def test_only_the_metadata_partition_has_a_quorum(broker: AclBroker, topic: str, partition: int) -> None:
    response = broker.send(ADMIN, request(v2, topic, partition))
    (answered,) = response.topics[0].partitions
    assert (response.topics[0].topic_name, answered.partition_index) == (topic, partition)
    assert answered.error_code == ErrorCode.unknown_topic_or_partition
