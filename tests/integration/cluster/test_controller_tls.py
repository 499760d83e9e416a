"""A cluster whose controller listeners are mutual TLS: real processes, real certificates.

The quorum forms and fails over over TLS; a connection without a certificate from the cluster's
CA gets nothing from a controller, whatever it sends.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker.config import ControllerTls, parse_voters
from broker.controller.client import ControllerClient
from broker.controller.rpc.quorum import DescribeQuorumRequest
from broker.raft.wire import encode_frame
from controlplane.clusters.provisioners.certificates import issue_cluster_certificates
from tests.fixtures.cluster import LocalCluster
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration

RPC_FRAME = encode_frame({"t": "rpc", "id": 1, "method": "describe_quorum", "params": {}})


def _controller_client(cluster: LocalCluster, as_node: int = 1) -> ControllerClient:
    """Dials the quorum with `as_node`'s certificate, as that node's broker would."""
    files = cluster.controller_certificates[as_node]
    tls = ControllerTls("CONTROLLER", files.keystore, files.truststore)
    return ControllerClient(parse_voters(cluster.voters), request_timeout_s=5, ssl=tls.client_context())


def _quorum_leaders(cluster: LocalCluster, node_ids: list[int]) -> dict[int, Any]:
    """Each controller's answer to describe_quorum: the leader it knows of (None: no answer)."""

    async def ask() -> dict[int, Any]:
        client = _controller_client(cluster, node_ids[0])
        answers: dict[int, Any] = {}
        try:
            for node_id in node_ids:
                try:
                    reply = await client.call_node(node_id, DescribeQuorumRequest(), timeout_s=3.0)
                    answers[node_id] = reply.answer().leader_id
                except (OSError, TimeoutError, asyncio.IncompleteReadError):
                    answers[node_id] = None
        finally:
            client.close()
        return answers

    return asyncio.run(ask())


def _agreed_leader(cluster: LocalCluster, node_ids: list[int]) -> int | None:
    leaders = set(_quorum_leaders(cluster, node_ids).values())
    return leaders.pop() if len(leaders) == 1 and None not in leaders else None


def _produce(cluster: LocalCluster, topic: str, values: list[bytes]) -> None:
    producer = Producer(cluster.client_config(acks="all", **{"message.timeout.ms": "20000"}))
    failures: list[Any] = []
    for value in values:
        producer.produce(
            topic, value, on_delivery=lambda error, _m: failures.append(error) if error else None
        )
    assert producer.flush(30) == 0
    assert failures == []


def _consume(cluster: LocalCluster, topic: str, count: int) -> list[bytes]:
    consumer = Consumer(
        cluster.client_config(
            **{
                "group.id": f"g-{uuid.uuid4().hex[:6]}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": "false",
            }
        )
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    return values


def _create_topic(cluster: LocalCluster, topic: str) -> None:
    admin = AdminClient(cluster.client_config())
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=3)])[topic].result(30)


def _reply(port: int, wrap: Callable[[socket.socket], socket.socket] | None) -> bytes:
    """What a controller sends back to one RPC frame (b"" when it closes the connection instead)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        sock = wrap(raw) if wrap is not None else raw
        try:
            sock.sendall(RPC_FRAME)
            return sock.recv(65536)
        except (ssl.SSLError, ConnectionError):
            return b""


@pytest.fixture
def tls_cluster(cluster_factory: Callable[..., LocalCluster]) -> LocalCluster:
    return cluster_factory(3, controller_tls=True)


def test_a_tls_quorum_serves_a_replicated_topic_fails_over_after_kill_9_and_admits_a_new_broker(
    tls_cluster: LocalCluster,
) -> None:
    cluster = tls_cluster
    for node in cluster.nodes.values():
        assert "(mutual TLS)" in node.log_text()
    _create_topic(cluster, "before")
    _produce(cluster, "before", [b"a", b"b", b"c"])
    # Also creates __consumer_offsets (RF 3) while all three brokers run.
    assert _consume(cluster, "before", 3) == [b"a", b"b", b"c"]

    wait_until(lambda: _agreed_leader(cluster, [1, 2, 3]) is not None, 20, "an agreed active controller")
    active = _agreed_leader(cluster, [1, 2, 3])
    assert active is not None
    cluster.node(active).kill9()
    survivors = [node_id for node_id in cluster.nodes if node_id != active]

    wait_until(
        lambda: _agreed_leader(cluster, survivors) not in (None, active), 30, "a new active controller"
    )
    # The new active controller decides (a topic) and the brokers follow it over TLS.
    _create_topic(cluster, "after")
    _produce(cluster, "after", [b"x", b"y"])
    _produce(cluster, "before", [b"d"])
    assert _consume(cluster, "before", 4) == [b"a", b"b", b"c", b"d"]
    assert _consume(cluster, "after", 2) == [b"x", b"y"]
    # A broker-only node dials the controllers with TLS too (the map's CONTROLLER:SSL says so).
    cluster.add_broker(4)
    cluster.wait_ready()


def test_a_controller_answers_only_peers_with_a_certificate_from_the_cluster_ca(
    tls_cluster: LocalCluster, tmp_path: Path
) -> None:
    cluster = tls_cluster
    port = cluster.node(2).controller_port
    assert port is not None
    files = cluster.controller_certificates[1]
    stranger = issue_cluster_certificates(tmp_path / "other-ca", [1], ["127.0.0.1"])[1]

    def with_certificate(keystore: Path) -> Callable[[socket.socket], socket.socket]:
        context = ssl.create_default_context(cafile=str(files.truststore))
        context.load_cert_chain(str(keystore))
        return lambda raw: context.wrap_socket(raw, server_hostname="127.0.0.1")

    anonymous = ssl.create_default_context(cafile=str(files.truststore))

    # The same frame, answered for a cluster member: the refusals below are not a broken listener.
    assert len(_reply(port, with_certificate(files.keystore))) > 4
    assert _reply(port, lambda raw: anonymous.wrap_socket(raw, server_hostname="127.0.0.1")) == b""
    assert _reply(port, with_certificate(stranger.keystore)) == b""
    assert _reply(port, None) == b""
    # Nobody's refused connection disturbed the quorum.
    assert _agreed_leader(cluster, [1, 2, 3]) is not None
