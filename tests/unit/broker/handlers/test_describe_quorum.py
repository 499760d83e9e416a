"""DescribeQuorum (55) on a single node, through the real dispatcher and broker state (ACLs on): the
ACL check, the partition check, and the answer of a node without a metadata quorum. The quorum
itself is answered on a cluster (tests/integration/cluster/test_describe_quorum.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.describe_quorum.v0 import request as v0
from kio.schema.describe_quorum.v2 import request as v2
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32

from broker.handlers.api_table import registry
from broker.handlers.quorum import NO_QUORUM
from tests.unit.broker.replication.test_replica_request_authorization import AclBroker

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
    low, high, _ = registry()[55]
    assert (low, high) == (0, 2)


def test_it_needs_describe_on_the_cluster(broker: AclBroker) -> None:
    response = broker.send("User:alice", request(v2))
    assert response.error_code == ErrorCode.cluster_authorization_failed
    assert response.topics == ()


def test_a_single_node_says_it_has_no_metadata_quorum(broker: AclBroker) -> None:
    response = broker.send(ADMIN, request(v2))
    assert response.error_code == ErrorCode.none
    (partition,) = response.topics[0].partitions
    assert partition.error_code == ErrorCode.unknown_topic_or_partition
    assert partition.error_message == NO_QUORUM
    assert partition.leader_id == -1
    assert partition.current_voters == ()
    old = broker.send(ADMIN, request(v0))  # v0 has no error message: the code alone
    assert old.topics[0].partitions[0].error_code == ErrorCode.unknown_topic_or_partition


@pytest.mark.parametrize(("topic", "partition"), [("orders", 0), (METADATA, 1)])
def test_only_the_metadata_partition_has_a_quorum(broker: AclBroker, topic: str, partition: int) -> None:
    response = broker.send(ADMIN, request(v2, topic, partition))
    (answered,) = response.topics[0].partitions
    assert (response.topics[0].topic_name, answered.partition_index) == (topic, partition)
    assert answered.error_code == ErrorCode.unknown_topic_or_partition
