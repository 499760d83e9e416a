"""A cluster in the middle of a rolling upgrade: node 3 runs the released code (tests/fixtures/upgrade.py's
RELEASE_COMMIT, exported with `git archive`), nodes 1 and 2 this code. They speak the controller RPCs
to each other in version 0 (d32902d's frames) and Raft as before: brokers of both codes register, topics
are created and replicated across both codes, and an idempotent acks=all producer loses nothing, with
each code as the active controller in turn."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.cluster import LocalCluster
from tests.fixtures.upgrade import export_release
from tests.integration.cluster.controller_failover import active_controller, committed_partitions
from tests.integration.cluster.test_controller_quorum import rpc

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def release_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The released code, exported with `git archive` (a clone without the commit fails with a message)."""
    return export_release(tmp_path_factory.mktemp("release"))


OLD_NODE = 3
MESSAGES = 200


def create_and_produce(cluster: LocalCluster, topic: str) -> None:
    admin = AdminClient(cluster.client_config())
    futures = admin.create_topics([NewTopic(topic, num_partitions=6, replication_factor=3)])
    futures[topic].result(timeout=60)
    deadline = time.monotonic() + 30
    # Every replica on all three nodes, old and new: acks=all needs the old node's follower too.
    while sorted(len(replicas) for replicas, _ in committed_partitions(cluster, topic).values()) != [3] * 6:
        assert time.monotonic() < deadline, committed_partitions(cluster, topic)
        time.sleep(0.1)
    failures: list[KafkaError] = []
    acked: list[tuple[int, int]] = []

    def delivered(error: KafkaError | None, message: Message) -> None:
        if error is not None:
            failures.append(error)
        else:
            acked.append((message.partition() or 0, message.offset() or 0))

    producer = Producer(
        cluster.client_config(**{"enable.idempotence": "true", "acks": "all", "message.timeout.ms": "60000"})
    )
    for i in range(MESSAGES):
        producer.produce(topic, key=str(i).encode(), value=f"{topic}-{i}".encode(), on_delivery=delivered)
        producer.poll(0)
    assert producer.flush(90) == 0
    assert failures == []
    assert len(acked) == len(set(acked)) == MESSAGES


def test_a_cluster_with_one_node_of_the_released_code_creates_topics_and_takes_writes(
    cluster_factory: Callable[..., LocalCluster], release_tree: Path
) -> None:
    # `python -m broker` imports the broker package of its working directory: the released tree's.
    released = ["sh", "-c", f'cd "{release_tree}" && exec "$0" "$@"']
    cluster = cluster_factory(3, node_command_prefixes={OLD_NODE: released})
    old_process = cluster.node(OLD_NODE).process
    assert old_process is not None
    assert Path(f"/proc/{old_process.pid}/cwd").resolve() == release_tree.resolve()
    assert release_tree.resolve() != Path(__file__).resolve().parents[3]

    brokers = rpc(cluster.node(1).controller_port or 0, "describe_cluster")["result"]["brokers"]
    assert sorted(b["broker_id"] for b in brokers) == [1, 2, 3]

    leaders = []
    for round_number in range(2):
        if round_number:
            hand_the_quorum_to_the_other_code(cluster, leaders[-1] == OLD_NODE)
        leaders.append(active_controller(cluster))
        create_and_produce(cluster, f"mixed-{round_number}-{uuid.uuid4().hex[:6]}")
    assert {leader == OLD_NODE for leader in leaders} == {True, False}, leaders


def hand_the_quorum_to_the_other_code(cluster: LocalCluster, old_leads: bool) -> None:
    """Stop the active controller so that a node of the other code takes over. A stopping leader hands
    over to its most caught-up peer (lowest id on a tie): the two new nodes hand over to each other, so
    the other new node is paused meanwhile — the stopping node's controlled shutdown writes records it
    then lacks, and node 3 is the one to take over."""
    leader = cluster.node(active_controller(cluster))
    others = [node for node in cluster.nodes.values() if node.node_id not in (leader.node_id, OLD_NODE)]
    if not old_leads:
        others[0].pause()
    try:
        leader.stop()
    finally:
        others[0].resume()
    leader.start()
    cluster.wait_ready()
    assert (active_controller(cluster) == OLD_NODE) != old_leads, cluster.log_tails()
