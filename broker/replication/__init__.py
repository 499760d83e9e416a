"""Replication: leaders, followers, the ISR and the high watermark (see manager.py).

A broker without replication configured is a single-node broker: every partition is led by it and
its ISR is itself, and none of this package runs. Today replication is switched on by the
test/bootstrap `replication.static.assignments` file (static_assignments.py); the controller
quorum will drive the same `ReplicaManager` through `broker.controller.api.MetadataListener`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.replication.config import ReplicationConfig

if TYPE_CHECKING:
    from broker.context import BrokerState
    from broker.replication.manager import ReplicaManager
    from broker.replication.static_assignments import StaticAssignmentsSource


class Replication:
    """What the broker process starts and stops: the manager and what feeds it assignments."""

    def __init__(self, manager: ReplicaManager, source: StaticAssignmentsSource) -> None:
        self.manager = manager
        self.source = source

    async def close(self) -> None:
        await self.source.close()
        await self.manager.close()


def start_replication(state: BrokerState) -> Replication | None:
    """Start replication when the broker's properties ask for it (None: single-node broker)."""
    config = ReplicationConfig.from_broker_config(state.config)
    if config.static_assignments is None:
        return None
    from broker.replication.manager import ReplicaManager
    from broker.replication.producer_ids import NodeScopedProducerIds
    from broker.replication.static_assignments import StaticAlterPartition, StaticAssignmentsSource

    state.producer_ids = NodeScopedProducerIds(state.producer_ids, config.node_id)  # type: ignore[assignment]
    manager = ReplicaManager(state, config)
    manager.alter_partition = StaticAlterPartition(manager)
    listener_name = state.config.listeners[0].name
    source = StaticAssignmentsSource(config.static_assignments, manager, listener_name)
    source.load()
    manager.start()
    source.start_watching()
    state.replication = manager
    return Replication(manager, source)
