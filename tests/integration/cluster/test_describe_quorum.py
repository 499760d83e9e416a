"""DescribeQuorum (55) on a real cluster: three controller+broker nodes and one broker-only node (an
observer), asked with kafka-python's `describe_metadata_quorum` through a broker, which forwards to
the active controller; after kill -9 of that controller the answer names its successor."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaAdminClient

from tests.fixtures.cluster import LocalCluster

pytestmark = pytest.mark.integration


def describe(bootstrap: str) -> dict[str, Any]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        return admin.describe_metadata_quorum()
    finally:
        admin.close()


def first_answer(ask: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """The first answer of `ask` that is not None, asking again until `timeout_s` is up."""
    deadline = time.monotonic() + timeout_s
    while (answer := ask()) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.2)
    return answer


def metadata_partition(answer: dict[str, Any]) -> dict[str, Any]:
    (topic,) = answer["topics"]
    assert topic["topic_name"] == "__cluster_metadata"
    (partition,) = topic["partitions"]
    return partition


def test_describe_quorum_through_a_broker(cluster_factory: Callable[..., LocalCluster]) -> None:
    cluster = cluster_factory(4, controllers=3)
    observer = cluster.node(4)
    started_ms = time.time() * 1000 - 120_000

    # Right after start a voter may not have answered the newest leader yet: wait for all three.
    def settled() -> dict[str, Any] | None:
        answer = describe(observer.bootstrap)
        partition = metadata_partition(answer)
        voters = partition["current_voters"]
        if (
            partition["error"]
            or any(v["last_fetch_timestamp"] < 0 for v in voters)
            or not partition["observers"]
        ):
            return None
        return answer

    answer = first_answer(settled, 30, "every voter and the observer in the quorum")
    partition = metadata_partition(answer)
    leader, epoch = partition["leader_id"], partition["leader_epoch"]
    assert leader in (1, 2, 3)
    assert epoch >= 1
    assert partition["high_watermark"] > 0
    voters = {v["replica_id"]: v for v in partition["current_voters"]}
    assert sorted(voters) == [1, 2, 3]
    assert voters[leader]["log_end_offset"] >= partition["high_watermark"]
    for voter in voters.values():
        assert 0 < voter["log_end_offset"] <= voters[leader]["log_end_offset"]
        assert started_ms < voter["last_fetch_timestamp"] <= time.time() * 1000 + 1000
        assert voter["last_caught_up_timestamp"] > started_ms
    (observed,) = partition["observers"]
    assert observed["replica_id"] == 4
    assert 0 < observed["log_end_offset"] <= voters[leader]["log_end_offset"]
    assert observed["last_fetch_timestamp"] > started_ms
    endpoints = {
        n["node_id"]: [(e["name"], e["host"], e["port"]) for e in n["listeners"]] for n in answer["nodes"]
    }
    assert endpoints == {i: [("CONTROLLER", "127.0.0.1", cluster.node(i).controller_port)] for i in (1, 2, 3)}

    cluster.node(leader).kill9()
    survivor = cluster.node(next(i for i in (1, 2, 3) if i != leader))

    def new_leader() -> dict[str, Any] | None:
        try:
            moved = metadata_partition(describe(survivor.bootstrap))
        except Exception:  # the client may still be talking to the dead node
            return None
        return moved if not moved["error"] and moved["leader_id"] not in (-1, leader) else None

    moved = first_answer(new_leader, 30, "a new quorum leader")
    assert moved["leader_epoch"] > epoch
    assert moved["high_watermark"] >= partition["high_watermark"]
