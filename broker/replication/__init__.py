"""Replication: leaders, followers, the ISR and the high watermark (see manager.py).

Every broker runs a `ReplicaManager`: a cluster member's is fed the controller's metadata image
(`broker.controller.api.MetadataListener`), a single node's the image of a cluster of one
(`broker.partitions.single_node`). The test/bootstrap `replication.static.assignments` file
(static_assignments.py) overrides the single node's image for the topics it names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.replication.config import ReplicationConfig

if TYPE_CHECKING:
    from broker.replication.manager import ReplicaManager
    from broker.replication.static_assignments import StaticAssignmentsSource
    from broker.server.context import BrokerState


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
    from broker.partitions.single_node import SingleNodeImage
    from broker.replication.producer_ids import NodeScopedProducerIds
    from broker.replication.static_assignments import StaticAlterPartition, StaticAssignmentsSource

    state.producer_ids = NodeScopedProducerIds(state.producer_ids, config.node_id)  # type: ignore[assignment]
    manager = state.replication
    manager.alter_partition = StaticAlterPartition(manager)
    listener_name = state.config.listeners[0].name
    image = SingleNodeImage(state.metadata, manager, config.node_id)
    state.topics.on_topic_changed = image.topic_changed
    source = StaticAssignmentsSource(config.static_assignments, manager, listener_name, image)
    source.load()
    source.start_watching()
    return Replication(manager, source)
