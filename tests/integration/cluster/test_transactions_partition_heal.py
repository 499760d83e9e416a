"""A transaction whose abort falls in a network partition completes once the partition heals.

Node 3 of a three-node cluster runs in a network namespace of its own (tests/fixtures/netns.py)
and coordinates the producer's transactional id. It is cut off (both ways, still running) with the
transaction open; the transaction times out meanwhile, the other nodes take the coordinator's
partition over, and the link comes back, leadership returning to node 3 (preferred leader). A new
producer with the same id must get its producer id within the transaction timeout + 30 s of the
abort — before the fix the abort stayed in PrepareAbort and InitProducerId answered
CONCURRENT_TRANSACTIONS for minutes — and the aborted records stay invisible to read_committed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from kio.schema.find_coordinator.v4 import request as find_v4
from kio.static.primitive import i8

from tests.fixtures.cluster import LocalCluster
from tests.fixtures.netns import IsolatedNetwork, NetnsUnavailable, isolated_network
from tests.fixtures.servers import wait_until
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.transactions_wire import consume_values
from tests.integration.cluster.fault_checker import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TRANSACTION_TIMEOUT_MS = 5_000
CUT_OFF_S = 10.0  # long enough for node 3 to be fenced and the transaction to time out


@pytest.fixture
def network() -> Iterator[IsolatedNetwork]:
    try:
        with isolated_network() as network:
            yield network
    except NetnsUnavailable as why:
        pytest.skip(f"network namespaces unavailable: {why}")


def coordinator_of(cluster: LocalCluster, transactional_id: str) -> int:
    with WireClient(cluster.node(1).bootstrap) as wire:
        answer = wire.request(
            find_v4.FindCoordinatorRequest(key_type=i8(1), coordinator_keys=(transactional_id,))
        ).coordinators[0]
    return int(answer.node_id) if answer.error_code == 0 else -1


def transactional_id_coordinated_by(cluster: LocalCluster, node_id: int) -> str:
    prefix = uuid.uuid4().hex[:8]
    for attempt in range(200):
        candidate = f"heal-{prefix}-{attempt}"
        wait_until(lambda c=candidate: coordinator_of(cluster, c) >= 0, timeout=30, what="a coordinator")
        if coordinator_of(cluster, candidate) == node_id:
            return candidate
    raise AssertionError(f"no transactional id is coordinated by node {node_id}")


def test_an_abort_during_a_network_partition_completes_after_it_heals(
    cluster_factory, network: IsolatedNetwork
) -> None:
    cluster: LocalCluster = cluster_factory(
        3,
        properties={
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
            "leader.imbalance.check.interval.seconds": "2",
        },
        node_hosts={1: network.outer_ip, 2: network.outer_ip, 3: network.inner_ip},
        node_command_prefixes={3: network.command_prefix},
    )
    topic = f"heal-{uuid.uuid4().hex[:8]}"
    create_topic(cluster, topic, 1)
    transactional_id = transactional_id_coordinated_by(cluster, 3)
    settings = cluster.client_config(
        **{"transactional.id": transactional_id, "transaction.timeout.ms": str(TRANSACTION_TIMEOUT_MS)}
    )
    producer = Producer(settings)
    producer.init_transactions(30)
    producer.begin_transaction()
    started = time.monotonic()
    for index in range(10):
        producer.produce(topic, f"aborted-{index}".encode())
    producer.flush(30)

    network.cut()
    time.sleep(CUT_OFF_S)
    network.heal()
    healed = time.monotonic()
    cluster.wait_ready(timeout_s=60)

    # The abort's deadline: the transaction timed out TRANSACTION_TIMEOUT_MS after it started.
    deadline = started + TRANSACTION_TIMEOUT_MS / 1000 + 30
    successor = Producer(settings)
    successor.init_transactions(max(1.0, deadline - time.monotonic()))
    initialised = time.monotonic()
    successor.begin_transaction()
    successor.produce(topic, b"committed")
    successor.commit_transaction(30)
    print(
        f"healed {healed - started:.1f} s after the transaction began; "
        f"InitProducerId succeeded {initialised - healed:.1f} s after the heal"
    )
    assert consume_values(cluster.bootstrap, topic, "read_committed", 1) == [b"committed"]
    del producer  # fenced: it must not be used again
    for node in cluster.nodes.values():
        node.kill9()  # nothing to keep: spares the controlled shutdowns of a cluster losing its quorum
