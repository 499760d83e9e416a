"""Topic administration through any broker of a cluster reaches the controller and every broker."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from tests.fixtures.cluster import LocalCluster
from tests.integration.cluster.fault_checker import partition_states

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_explicit_replica_assignments_are_honoured_and_checked_against_the_registered_brokers(
    cluster3: LocalCluster,
) -> None:
    # Sent to broker 1 only: it forwards to whichever node is the active controller.
    admin = AdminClient(cluster3.client_config(**{"bootstrap.servers": cluster3.node(1).bootstrap}))
    placed = NewTopic("placed", num_partitions=2, replica_assignment=[[2, 3], [3, 1]])
    admin.create_topics([placed])["placed"].result(15)
    admin.create_partitions([NewPartitions("placed", 3, replica_assignment=[[1, 2]])])["placed"].result(15)

    states = partition_states(cluster3, "placed")
    assert {p: replicas for p, (_, replicas, _) in states.items()} == {0: [2, 3], 1: [3, 1], 2: [1, 2]}
    assert states[0][0] == 2  # the first replica leads

    with pytest.raises(Exception, match="unknown broker ids"):
        admin.create_topics([NewTopic("misplaced", num_partitions=1, replica_assignment=[[1, 7]])])[
            "misplaced"
        ].result(15)
    # Every broker answers Metadata with the new topic (not only the one that forwarded it).
    for node in cluster3.brokers:
        other = AdminClient({"bootstrap.servers": node.bootstrap})
        assert len(other.list_topics("placed", timeout=10).topics["placed"].partitions) == 3
