"""Transaction version 2 across brokers: the partition leaders that are not the transaction coordinator add
their partition with AddPartitionsToTxn v5 (`verify_only` false) to the coordinator's broker, EndTxn v5 bumps
the epoch, and read_committed consumers see exactly the committed transactions; after a kill -9 of the
coordinator right after the commit, the new one (which finishes the transaction if its markers were not all
written) answers the retried EndTxn with the bumped epoch, and the producer carries on with it."""

from __future__ import annotations

import time

import pytest
from kio.schema.find_coordinator.v4 import request as find_v4
from kio.static.primitive import i8

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


def _find_coordinator(client: WireClient, transactional_id: str, not_on: int | None = None) -> int:
    """The node id of the transactional id's coordinator (waiting for one other than `not_on`)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            answer = client.request(
                find_v4.FindCoordinatorRequest(key_type=i8(1), coordinator_keys=(transactional_id,))
            ).coordinators[0]
            if answer.error_code == 0 and answer.node_id != not_on:
                return int(answer.node_id)
        except (OSError, ConnectionError):
            pass
        assert time.monotonic() < deadline, "no coordinator"
        time.sleep(0.2)


# COORDINATOR_LOAD_IN_PROGRESS and CONCURRENT_TRANSACTIONS.
RETRIABLE_END_TXN_ERRORS = (14, 51)


def test_a_new_coordinator_finishes_an_ended_transaction_with_the_bumped_epoch(
    cluster3: LocalCluster,
) -> None:
    create_topic(cluster3, "tv2-failover", 3)
    leaders = {p: state[0] for p, state in partition_states(cluster3, "tv2-failover").items()}
    nodes = {node.node_id: node for node in cluster3.brokers}
    bootstrap_client = WireClient(nodes[1].bootstrap, timeout=20)
    coordinator_id = _find_coordinator(bootstrap_client, "tv2-failover-id")
    bootstrap_client.close()
    survivor = next(n for n in nodes if n != coordinator_id)
    connections = {node_id: WireClient(node.bootstrap, timeout=20) for node_id, node in nodes.items()}
    try:
        coordinator = WireClient(nodes[coordinator_id].bootstrap, timeout=20)
        producer = V2Producer(connections[survivor], coordinator, "tv2-failover-id")
        producer.init()
        first_epoch = producer.epoch
        for partition, leader in sorted(leaders.items()):
            producer.client = connections[leader]
            assert producer.produce("tv2-failover", partition, b"before-failover") == 0
        # The commit is decided (PrepareCommit written with the bumped epoch), then its coordinator dies
        # (before or after the markers are out: both must end the same).
        ended = producer.end(True)
        assert ended == (0, producer.producer_id, first_epoch + 1)
        nodes[coordinator_id].kill9()
        coordinator.close()
        connections.pop(coordinator_id).close()

        new_id = _find_coordinator(connections[survivor], "tv2-failover-id", not_on=coordinator_id)
        producer.coordinator = WireClient(nodes[new_id].bootstrap, timeout=20)
        # The producer's retry of the lost EndTxn answer is answered by the new coordinator once it has
        # finished the transaction, with the epoch the prepare record carried.
        # A new coordinator is found as soon as it leads the state partition, and answers
        # COORDINATOR_LOAD_IN_PROGRESS / CONCURRENT_TRANSACTIONS until it has loaded and finished the
        # transaction: a client retries those, so does this one.
        deadline = time.monotonic() + 30
        while (retried := producer.end(True, epoch=first_epoch))[0] in RETRIABLE_END_TXN_ERRORS:
            assert time.monotonic() < deadline, f"EndTxn still answered {retried[0]!r}"
            time.sleep(0.2)
        assert retried == (0, producer.producer_id, first_epoch + 1)
        producer.epoch, producer.sequences = first_epoch + 1, {}
        leaders = {p: state[0] for p, state in partition_states(cluster3, "tv2-failover").items()}
        for partition, leader in sorted(leaders.items()):
            producer.client = connections[leader]
            assert producer.produce("tv2-failover", partition, b"after-failover") == 0
        producer.end_and_follow(commit=True)
        producer.coordinator.close()
    finally:
        for client in connections.values():
            client.close()
    for partition in leaders:
        seen = consume_values(cluster3.bootstrap, "tv2-failover", "read_committed", 2, partition=partition)
        assert seen == [b"before-failover", b"after-failover"], f"partition {partition}"
