"""A real single node (its one-voter controller and its broker state, logs on disk, no client listeners) on
an event loop, for dispatcher-level tests: the node `python -m broker` runs, minus the sockets clients use."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from broker.context import BrokerState
from broker.node.roles import InProcessNode, open_single_node, single_node_config

LED_POLL_S = 0.005
LED_TIMEOUT_S = 30.0


async def start_node(properties: Mapping[str, str]) -> InProcessNode:
    """A single node of `properties`, with one partition per internal topic unless they say otherwise."""
    # The controller listener takes a free port unless a client listener is on 9092 (single_node.py).
    small = {
        "listeners": "PLAINTEXT://127.0.0.1:0",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1",
    }
    return await open_single_node(single_node_config({"node.id": "1", **small, **properties}))


async def create_topic(state: BrokerState, name: str, partitions: int = 1, **configs: str) -> None:
    """CreateTopics through the quorum, then wait until this node leads every partition of `name`."""
    await state.topics.create(name, partitions, 1, dict(configs))
    await _until(state, name, partitions)


async def grow_topic(state: BrokerState, name: str, partitions: int) -> None:
    """CreatePartitions through the quorum, then wait until this node leads the new ones."""
    await state.topics.grow(name, partitions)
    await _until(state, name, partitions)


async def delete_topic(state: BrokerState, name: str) -> None:
    """DeleteTopics through the quorum, then wait until this node dropped the topic's partitions."""
    await state.topics.delete(name)
    await _until(state, name, 0)


async def _until(state: BrokerState, name: str, partitions: int) -> None:
    """Until the node's image has exactly `partitions` partitions of `name`."""
    deadline = asyncio.get_running_loop().time() + LED_TIMEOUT_S
    partitions_of = state.partitions
    while not (
        all(partitions_of.is_leader(name, index) for index in range(partitions))
        and not partitions_of.knows(name, partitions)
    ):
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"node {state.node_id} does not lead {partitions} partitions of {name}")
        await asyncio.sleep(LED_POLL_S)


@contextlib.contextmanager
def running_node(properties: Mapping[str, str]) -> Iterator[tuple[asyncio.AbstractEventLoop, BrokerState]]:
    """A single node of `properties` on its own loop; yields (the loop, the broker's state), closes both."""
    loop = asyncio.new_event_loop()
    node = loop.run_until_complete(start_node(properties))
    try:
        yield loop, node.state
    finally:
        loop.run_until_complete(node.close())
        loop.close()


@contextlib.contextmanager
def running_state(log_dir: Path, topic: str) -> Iterator[tuple[asyncio.AbstractEventLoop, BrokerState]]:
    """Node 1 with one single-partition `topic`; yields (its loop, its state) and closes both."""
    with running_node({"log.dirs": str(log_dir)}) as (loop, state):
        loop.run_until_complete(create_topic(state, topic))
        yield loop, state
