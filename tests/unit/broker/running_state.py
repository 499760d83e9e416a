"""A real broker state (logs on disk, no sockets) on its own event loop, for dispatcher-level tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

from broker.config import BrokerConfig
from broker.context import BrokerState
from broker.server.app import close_broker_state, open_broker_state


@contextlib.contextmanager
def running_state(log_dir: Path, topic: str) -> Iterator[tuple[asyncio.AbstractEventLoop, BrokerState]]:
    """Node 1 with one single-partition `topic`; yields (its loop, its state) and closes both."""
    loop = asyncio.new_event_loop()
    config = BrokerConfig.from_properties(
        {"log.dirs": str(log_dir), "offsets.topic.num.partitions": "1", "node.id": "1"}
    )
    state = loop.run_until_complete(open_broker_state(config))
    state.topics.create_topic(topic, 1)
    try:
        yield loop, state
    finally:
        loop.run_until_complete(close_broker_state(state))
        loop.close()
