"""The controller quorum as real processes: failover after kill -9, durable metadata, broker fencing."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.broker import REPO_ROOT, BrokerProcess, free_port
from tests.fixtures.cluster import start_cluster
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration

SESSION_TIMEOUT_MS = 1500
HEARTBEAT_MS = 200


def rpc(port: int, method: str, params: dict[str, Any] | None = None, timeout: float = 5.0) -> dict[str, Any]:
    """One controller RPC over a fresh connection (the wire format of broker/raft/wire.py)."""
    body = json.dumps({"t": "rpc", "id": 1, "method": method, "params": params or {}}).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">I", len(body)) + body)
        header = _read_exactly(sock, 4)
        return json.loads(_read_exactly(sock, struct.unpack(">I", header)[0]))


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("controller closed the connection")
        data += chunk
    return data


class ControllerProcess:
    def __init__(self, node_id: int, port: int, voters: str, data_dir: Path) -> None:
        self.node_id, self.port, self.data_dir = node_id, port, data_dir
        self.properties = {
            "process.roles": "controller",
            "node.id": str(node_id),
            "controller.quorum.voters": voters,
            "listeners": f"CONTROLLER://127.0.0.1:{port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "log.dirs": str(data_dir),
            "controller.quorum.election.timeout.ms": "500",
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "num.partitions": "1",
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [sys.executable, "-m", "broker"]
        for key, value in self.properties.items():
            args += ["--override", f"{key}={value}"]
        with open(self.data_dir / "controller.log", "ab") as log_file:
            self.process = subprocess.Popen(
                args,
                cwd=REPO_ROOT,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    def kill9(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()

    def quorum(self) -> dict[str, Any] | None:
        try:
            return rpc(self.port, "describe_quorum", timeout=1.0)["result"]
        except OSError:
            return None

    def cluster(self) -> dict[str, Any]:
        return rpc(self.port, "describe_cluster")["result"]


class Quorum:
    def __init__(self, base: Path, size: int = 3) -> None:
        ports = {i: free_port() for i in range(1, size + 1)}
        self.voters = ",".join(f"{i}@127.0.0.1:{port}" for i, port in ports.items())
        self.controllers = {
            i: ControllerProcess(i, port, self.voters, base / f"controller-{i}") for i, port in ports.items()
        }

    def start(self) -> None:
        for controller in self.controllers.values():
            controller.start()

    def stop(self) -> None:
        for controller in self.controllers.values():
            controller.stop()

    def leader(self, among: list[int] | None = None) -> ControllerProcess | None:
        """The active controller, once every running controller asked agrees on it."""
        answers = [c.quorum() for i, c in self.controllers.items() if among is None or i in among]
        leaders = {a["leader_id"] for a in answers if a is not None}
        if len(leaders) != 1 or None in leaders or any(a is None for a in answers):
            return None
        leader = self.controllers[leaders.pop()]
        state = leader.quorum()
        return leader if state is not None and state["role"] == "leader" else None

    def wait_for_leader(self, among: list[int] | None = None, timeout: float = 20.0) -> ControllerProcess:
        found: list[ControllerProcess] = []

        def elected() -> bool:
            leader = self.leader(among)
            if leader is not None:
                found[:] = [leader]
            return leader is not None

        try:
            wait_until(elected, timeout=timeout, what="the quorum to elect a leader")
        except TimeoutError:
            states = {i: c.quorum() for i, c in self.controllers.items() if among is None or i in among}
            raise TimeoutError(f"no agreed leader after {timeout}s: {states}") from None
        return found[0]


@pytest.fixture
def quorum(tmp_path: Path) -> Iterator[Quorum]:
    started = Quorum(tmp_path)
    started.start()
    yield started
    started.stop()


def create_topic(port: int, name: str, partitions: int, replication_factor: int) -> dict[str, Any]:
    topic = {"name": name, "partitions": partitions, "replication_factor": replication_factor}
    reply = rpc(port, "create_topics", {"topics": [topic]})
    assert reply["error_code"] == 0, reply
    (result,) = reply["result"]["results"]
    return result


def register_test_broker(port: int, broker_id: int) -> int:
    """Register and unfence a broker the way a broker process would; returns its epoch."""
    registration = {
        "broker_id": broker_id,
        "incarnation_id": str(uuid.uuid4()),
        "endpoints": [["PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"]],
        "rack": None,
    }
    reply = rpc(port, "register_broker", registration)
    assert reply["error_code"] == 0, reply
    epoch = int(reply["result"]["broker_epoch"])
    heartbeat = {"broker_id": broker_id, "broker_epoch": epoch, "metadata_offset": epoch}
    assert rpc(port, "broker_heartbeat", heartbeat)["result"]["is_fenced"] is False
    return epoch


def test_a_killed_active_controller_is_replaced_and_committed_metadata_survives(quorum: Quorum) -> None:
    first = quorum.wait_for_leader()
    first_term = first.quorum()["term"]  # type: ignore[index]
    assert (
        create_topic(first.port, "orders", partitions=1, replication_factor=1)["error_code"] == 38
    )  # no broker yet
    register_test_broker(first.port, 7)
    created = create_topic(first.port, "orders", partitions=2, replication_factor=1)
    assert created["error_code"] == 0
    assert (
        create_topic(first.port, "orders", partitions=2, replication_factor=1)["error_code"] == 36
    )  # exists

    first.kill9()
    survivors = [i for i in quorum.controllers if i != first.node_id]
    second = quorum.wait_for_leader(among=survivors)
    assert second.quorum()["term"] > first_term  # type: ignore[index]
    image = second.cluster()
    assert image["topics"]["orders"]["topic_id"] == created["topic_id"]
    assert [p["leader"] for p in image["partitions"]] == [7, 7]

    # A follower sends writes back, naming the active controller.
    follower = next(quorum.controllers[i] for i in survivors if i != second.node_id)
    change = {"resource_type": "topic", "resource_name": "orders", "changes": {"retention.ms": "1000"}}
    refused = rpc(follower.port, "alter_configs", change)
    assert refused["error_code"] == 41  # NOT_CONTROLLER
    assert refused["leader_id"] == second.node_id
    assert rpc(second.port, "alter_configs", change)["error_code"] == 0

    first.start()
    target = second.cluster()["offset"]
    wait_until(
        lambda: (q := first.quorum()) is not None and q["applied_offset"] >= target,
        timeout=20,
        what="the restarted controller to catch up",
    )
    caught_up = first.cluster()
    assert caught_up["topics"]["orders"] == {
        "topic_id": created["topic_id"],
        "configs": {"retention.ms": "1000"},
    }


@pytest.fixture
def cluster_brokers(tmp_path: Path, quorum: Quorum) -> Iterator[Callable[[int], BrokerProcess]]:
    started: list[BrokerProcess] = []

    def start(node_id: int) -> BrokerProcess:
        broker = BrokerProcess(
            tmp_path / f"broker-{node_id}",
            {
                "process.roles": "broker",
                "node.id": str(node_id),
                "controller.quorum.voters": quorum.voters,
                "broker.heartbeat.interval.ms": str(HEARTBEAT_MS),
                "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            },
        )
        broker.start()
        started.append(broker)
        return broker

    yield start
    for broker in started:
        if broker.process is not None and broker.process.poll() is None:
            broker.process.send_signal(signal.SIGCONT)
        broker.kill9()


def brokers_state(leader: ControllerProcess) -> dict[int, bool]:
    """broker id -> fenced, as the active controller's committed image says."""
    return {b["broker_id"]: b["fenced"] for b in leader.cluster()["brokers"]}


def test_a_broker_that_stops_heartbeating_is_fenced_and_its_leaderships_move(
    quorum: Quorum, cluster_brokers: Callable[[int], BrokerProcess]
) -> None:
    leader = quorum.wait_for_leader()
    brokers = {node_id: cluster_brokers(node_id) for node_id in (1, 2)}
    wait_until(
        lambda: brokers_state(leader) == {1: False, 2: False}, timeout=20, what="both brokers to be unfenced"
    )

    created = create_topic(leader.port, "payments", partitions=4, replication_factor=2)
    assert created["error_code"] == 0
    partitions = leader.cluster()["partitions"]
    assert sorted(p["leader"] for p in partitions) == [1, 1, 2, 2]

    paused = brokers[1].process
    assert paused is not None
    paused.send_signal(signal.SIGSTOP)
    try:
        wait_until(
            lambda: brokers_state(leader)[1] is True, timeout=15, what="the silent broker to be fenced"
        )
        moved = leader.cluster()["partitions"]
        assert all(p["leader"] == 2 for p in moved)
        assert all(p["isr"] == [2] for p in moved)
        assert all(p["leader_epoch"] == 1 for p in moved if p["replicas"][0] == 1)
    finally:
        paused.send_signal(signal.SIGCONT)
    # Back: it heartbeats again with the same epoch and is unfenced (leadership stays put until
    # preferred-leader election, and the ISR waits for the replica fetcher to catch it up).
    wait_until(
        lambda: brokers_state(leader)[1] is False, timeout=15, what="the resumed broker to be unfenced"
    )


def test_combined_nodes_form_a_quorum_serve_clients_and_shut_down_in_a_controlled_way(tmp_path: Path) -> None:
    cluster = start_cluster(
        tmp_path,
        3,
        properties={
            "broker.heartbeat.interval.ms": str(HEARTBEAT_MS),
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
        },
    )
    controller_ports = [node.controller_port for node in cluster.nodes.values()]
    try:

        def fenced_by_id() -> dict[int, bool]:
            for port in controller_ports:
                reply = rpc(port, "describe_cluster")["result"]
                if reply["brokers"]:
                    return {b["broker_id"]: b["fenced"] for b in reply["brokers"]}
            return {}

        wait_until(
            lambda: fenced_by_id() == {1: False, 2: False, 3: False},
            timeout=30,
            what="three unfenced brokers",
        )
        endpoints = {
            b["broker_id"]: b["endpoints"]
            for b in rpc(controller_ports[0], "describe_cluster")["result"]["brokers"]
        }
        assert endpoints[2] == [["PLAINTEXT", "127.0.0.1", cluster.node(2).broker_port, "PLAINTEXT"]]
        # The metadata log sits beside the partition logs and survives the broker's start-up scan.
        assert (cluster.node(1).data_dir / "logs" / "__cluster_metadata" / "log").exists()

        assert cluster.node(3).stop(timeout=20) == 0
        assert "controlled shutdown complete" in cluster.node(3).log_text()
        wait_until(lambda: fenced_by_id()[3] is True, timeout=15, what="the stopped broker to be fenced")
    finally:
        cluster.stop()
