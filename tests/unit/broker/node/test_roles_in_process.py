"""`open_single_node`: a single node's controller and joined broker inside the caller's event loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from broker.node.roles import open_single_node, single_node_config
from tests.unit.broker.running_state import create_topic

PROPERTIES = {
    "node.id": "3",
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.num.partitions": "1",
}


def test_it_is_the_one_voter_combined_node_python_m_broker_runs() -> None:
    config = single_node_config(PROPERTIES | {"log.dirs": "/tmp/unused"})
    assert config.get_str("process.roles") == "broker,controller"
    assert config.get_str("controller.quorum.voters").startswith("3@127.0.0.1:")
    assert "CONTROLLER" in config.controller_listener_names


def test_its_admin_writes_go_through_its_quorum_and_survive_a_restart(tmp_path: Path) -> None:
    properties = PROPERTIES | {"log.dirs": str(tmp_path)}

    async def first() -> tuple[int, str]:
        node = await open_single_node(single_node_config(properties))
        try:
            state = node.state
            # The broker's controller link reaches its own controller: one voter, led by itself.
            assert node.controller.image.brokers.keys() == {3}
            await create_topic(state, "orders", 2)
            return state.cluster.image.offset, state.cluster_id
        finally:
            await node.close()

    async def second() -> tuple[int, str, int]:
        node = await open_single_node(single_node_config(properties))
        try:
            state = node.state
            topic = state.metadata.get("orders")
            assert topic is not None
            return state.cluster.image.offset, state.cluster_id, topic.partitions
        finally:
            await node.close()

    offset, cluster_id = asyncio.run(first())
    later_offset, same_id, partitions = asyncio.run(second())
    assert (same_id, partitions) == (cluster_id, 2)
    assert later_offset > offset  # the metadata log kept everything and grew (the new registration)
    # No side file: a single node keeps its metadata in its metadata log, as every node does.
    assert not (tmp_path / "dynamic-configs.json").exists()
    assert not (tmp_path / "finalized-features.json").exists()
    assert not (tmp_path / "producer-ids.json").exists()
