"""Transaction version 2 across brokers: the partition leaders that are not the transaction coordinator add
their partition with AddPartitionsToTxn v5 (`verify_only` false) to the coordinator's broker, EndTxn v5 bumps
the epoch, and read_committed consumers see exactly the committed transactions."""

from __future__ import annotations

import pytest

from tests.fixtures.cluster import LocalCluster
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.test_transactions_v2 import V2Producer
from tests.integration.broker.transactions_wire import _coordinator_of, consume_values
from tests.integration.cluster.fault_checker import create_topic, partition_states

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_leaders_add_their_partitions_through_the_coordinator(cluster3: LocalCluster) -> None:
    create_topic(cluster3, "tv2-spread", 3)
    leaders = {p: state[0] for p, state in partition_states(cluster3, "tv2-spread").items()}
    assert len(set(leaders.values())) > 1, f"the leaders are not spread: {leaders}"
    connections = {node.node_id: WireClient(node.bootstrap, timeout=20) for node in cluster3.brokers}
    try:
        any_client = next(iter(connections.values()))
        coordinator = _coordinator_of(any_client, "tv2-cluster-id")
        producer = V2Producer(any_client, coordinator, "tv2-cluster-id")
        producer.init()
        first_epoch = producer.epoch
        for commit in (True, False, True):
            for partition, leader in sorted(leaders.items()):
                producer.client = connections[leader]
                value = f"{'committed' if commit else 'aborted'}-{producer.epoch}".encode()
                assert producer.produce("tv2-spread", partition, value) == 0
            producer.end_and_follow(commit)
        assert producer.epoch == first_epoch + 3
        coordinator.close()
    finally:
        for client in connections.values():
            client.close()
    wanted = [f"committed-{first_epoch}".encode(), f"committed-{first_epoch + 2}".encode()]
    for partition in leaders:
        seen = consume_values(cluster3.bootstrap, "tv2-spread", "read_committed", 2, partition=partition)
        assert seen == wanted, f"partition {partition}"
