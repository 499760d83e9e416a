"""Controller failover under load: take the active controller away and see what the new one decides.

Shared by tests/integration/cluster/test_controller_failover.py (a few rounds) and
`bench/cluster_failover.py` (many). A round kill -9s or SIGSTOPs one node while an idempotent acks=all
producer (fault_checker.AckedProducer) writes to every partition, holds the fault long enough for the
victim to be fenced, restores it, waits until every ISR is full again, and then reads what the controllers
committed meanwhile straight from the metadata log (the `fetch_metadata` controller RPC): a fencing of any
broker but the victim, or an ISR change that leaves out a broker other than the victim, is a failover
that hurt a healthy broker. The round's stall is the longest time one partition went without an
acknowledgement (fault_checker.AckedProducer.max_partition_stall_s).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from tests.fixtures.cluster import ClusterNode, LocalCluster
from tests.integration.cluster.fault_checker import AckedProducer, partition_states
from tests.integration.cluster.test_controller_quorum import rpc

FAULTS = ("controller-kill9", "controller-pause", "broker-kill9", "broker-pause")
HEAL_TIMEOUT_S = 60.0
HEAL_POLL_S = 0.25


def _reachable_controllers(cluster: LocalCluster) -> list[ClusterNode]:
    return [
        node
        for node in cluster.nodes.values()
        if node.controller_port is not None and node.is_running and not node.paused
    ]


def active_controller(cluster: LocalCluster, timeout_s: float = 30.0) -> int:
    """The node id of the active controller: the leader of the highest term a running controller reports."""
    deadline = time.monotonic() + timeout_s
    while True:
        best: tuple[int, int] | None = None  # (term, leader)
        for node in _reachable_controllers(cluster):
            assert node.controller_port is not None
            try:
                quorum = rpc(node.controller_port, "describe_quorum", timeout=2.0)["result"]
            except OSError:
                continue
            if quorum["leader_id"] is not None and (best is None or quorum["term"] > best[0]):
                best = (quorum["term"], quorum["leader_id"])
        if best is not None:
            return best[1]
        if time.monotonic() > deadline:
            raise TimeoutError(f"no active controller within {timeout_s}s\n{cluster.log_tails()}")
        time.sleep(0.1)


def committed_offset(cluster: LocalCluster) -> int:
    """The highest metadata offset a running controller has applied."""
    offsets = []
    for node in _reachable_controllers(cluster):
        assert node.controller_port is not None
        try:
            offsets.append(
                int(rpc(node.controller_port, "describe_quorum", timeout=2.0)["result"]["applied_offset"])
            )
        except OSError:
            continue
    if not offsets:
        raise RuntimeError("no controller answered describe_quorum")
    return max(offsets)


def committed_partitions(cluster: LocalCluster, topic: str) -> dict[int, tuple[list[int], list[int]]]:
    """partition -> (replicas, ISR) as the metadata log committed them, from the running controller that
    applied the most of the log (a controller resumed from SIGSTOP answers from the image it had before
    the pause until it has caught up)."""
    newest: dict[str, Any] | None = None
    for node in _reachable_controllers(cluster):
        assert node.controller_port is not None
        try:
            described = rpc(node.controller_port, "describe_cluster", timeout=2.0)["result"]
        except OSError:
            continue
        if newest is None or described["offset"] > newest["offset"]:
            newest = described
    if newest is None:
        raise RuntimeError("no controller answered describe_cluster")
    return {
        p["partition"]: (sorted(p["replicas"]), sorted(p["isr"]))
        for p in newest["partitions"]
        if p["topic"] == topic
    }


def committed_isrs(cluster: LocalCluster, topic: str) -> dict[int, list[int]]:
    """partition -> ISR as the metadata log committed it (see `committed_partitions`)."""
    return {partition: isr for partition, (_, isr) in committed_partitions(cluster, topic).items()}


def reported_isrs(cluster: LocalCluster, node: ClusterNode, topic: str) -> dict[int, list[int]] | str:
    """partition -> ISR in the Metadata `node` answers (a partition without a leader has none), or the
    error it answered."""
    admin = AdminClient(cluster.client_config(**{"bootstrap.servers": node.bootstrap}))
    try:
        described = admin.list_topics(topic, timeout=2).topics[topic]
    except KafkaException as error:
        return str(error)
    if described.error is not None:
        return str(described.error)
    return {p: sorted(meta.isrs) if meta.leader >= 0 else [] for p, meta in described.partitions.items()}


def fully_replicated(cluster: LocalCluster, topic: str) -> bool:
    """Every partition of `topic` has all its replicas in its ISR in the committed metadata AND in the
    Metadata of every running broker.

    Asking one broker is not enough to start a round on: a broker just resumed from SIGSTOP answers
    from the view it had before the pause (itself leading, every ISR full) for the ~0.2 s it takes to
    catch up with the metadata log. A round begun then kills the leader of partitions the previous
    victim has not rejoined yet, and the fencing's ISR change, which rightly leaves the previous victim
    out, was counted as a failover shrinking a running broker out of the ISR."""
    committed = committed_partitions(cluster, topic)
    full = {partition: replicas for partition, (replicas, _) in committed.items()}
    if not committed or any(isr != replicas for replicas, isr in committed.values()):
        return False
    return all(
        reported_isrs(cluster, node, topic) == full
        for node in cluster.brokers
        if node.is_running and not node.paused
    )


def wait_until_fully_replicated(cluster: LocalCluster, topic: str, timeout_s: float) -> bool:
    """True once `fully_replicated`; False after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if fully_replicated(cluster, topic):
                return True
        except (KafkaException, OSError, RuntimeError):
            pass
        time.sleep(HEAL_POLL_S)
    return False


def metadata_records_after(cluster: LocalCluster, offset: int) -> list[tuple[int, dict[str, Any]]]:
    """(log index, record) of every record committed after `offset`, read from a running controller."""
    node = _reachable_controllers(cluster)[0]
    assert node.controller_port is not None
    found: list[tuple[int, dict[str, Any]]] = []
    after = offset
    while True:
        reply = rpc(node.controller_port, "fetch_metadata", {"after_offset": after, "max_wait_ms": 0})
        result = reply["result"]
        if "snapshot" in result:
            raise RuntimeError(f"the metadata log after offset {offset} was compacted away; cannot audit it")
        if not result["entries"]:
            return found
        for index, records in result["entries"]:
            found.extend((index, record) for record in records)
            after = index


@dataclass
class RoundResult:
    fault: str
    victim: int
    was_controller: bool
    partitions_led: int
    stall_s: float
    healthy_brokers_fenced: list[int] = field(default_factory=list)
    isr_shrinks_of_healthy_brokers: list[tuple[str, int, list[int]]] = field(default_factory=list)
    isr_restored: bool = True

    @property
    def hurt_healthy_brokers(self) -> bool:
        return bool(self.healthy_brokers_fenced or self.isr_shrinks_of_healthy_brokers)

    def describe(self) -> str:
        role = "the active controller, " if self.was_controller else ""
        victim = f"node {self.victim} ({role}leading {self.partitions_led} partitions)"
        text = f"{self.fault} of {victim}: longest partition stall {self.stall_s:.2f} s"
        if self.healthy_brokers_fenced:
            text += f", FENCED running brokers {self.healthy_brokers_fenced}"
        if self.isr_shrinks_of_healthy_brokers:
            text += f", {len(self.isr_shrinks_of_healthy_brokers)} ISR shrinks leaving out running brokers"
        if not self.isr_restored:
            text += ", ISR NOT restored"
        return text


def audit(
    records: list[tuple[int, dict[str, Any]]], victim: int, brokers: set[int]
) -> tuple[list[int], list]:
    """Fencings of brokers other than `victim`, and ISR changes leaving out one of them (every partition
    has a replica on each of `brokers`)."""
    healthy = brokers - {victim}
    fenced = [r["broker_id"] for _, r in records if r["type"] == "fence_broker" and r["broker_id"] in healthy]
    shrinks = [
        (r["topic_id"], r["partition"], r["isr"])
        for _, r in records
        if r["type"] in ("partition_change", "partition") and "isr" in r and not healthy <= set(r["isr"])
    ]
    return fenced, shrinks


def run_round(
    cluster: LocalCluster,
    producer: AckedProducer,
    topic: str,
    fault: str,
    *,
    hold_s: float,
    log: Callable[[str], None] = lambda line: None,
) -> RoundResult:
    """One fault (see FAULTS) with `hold_s` before the victim is restored; returns what it cost."""
    if not wait_until_fully_replicated(cluster, topic, HEAL_TIMEOUT_S):
        raise RuntimeError(f"{topic}: ISR not full before the round\n{cluster.log_tails()}")
    controller = active_controller(cluster)
    led = Counter(leader for leader, _, _ in partition_states(cluster, topic).values())
    if fault.startswith("controller-"):
        victim = controller
    else:
        # The broker leading the most partitions: a failure that moves leaders, like most controller ones.
        others = [node.node_id for node in cluster.brokers if node.node_id != controller]
        victim = max(others, key=lambda node_id: (led[node_id], -node_id))
    node = cluster.node(victim)
    before = committed_offset(cluster)
    started = time.monotonic()
    log(f"{time.strftime('%H:%M:%S')} {fault} of node {victim} (active controller {controller})")
    if fault.endswith("pause"):
        node.pause()
        time.sleep(hold_s)
        node.resume()
    else:
        node.kill9()
        time.sleep(hold_s)
        node.start()
    cluster.wait_ready(HEAL_TIMEOUT_S)
    restored = wait_until_fully_replicated(cluster, topic, HEAL_TIMEOUT_S)
    ended = time.monotonic()
    fenced, shrinks = audit(
        metadata_records_after(cluster, before), victim, {b.node_id for b in cluster.brokers}
    )
    result = RoundResult(
        fault=fault,
        victim=victim,
        was_controller=victim == controller,
        partitions_led=led[victim],
        stall_s=producer.max_partition_stall_s(started, ended),
        healthy_brokers_fenced=fenced,
        isr_shrinks_of_healthy_brokers=shrinks,
        isr_restored=restored,
    )
    log(result.describe())
    return result
