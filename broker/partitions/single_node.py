"""A single node is a cluster of one: this module feeds the ReplicaManager the metadata image in which
this node leads every partition of its topic registry, replication factor 1, ISR {self}.

Nothing else differs from a cluster member: appends move the high watermark by the ISR rule (the
ISR's smallest log end is the leader's own), min.insync.replicas is checked against that ISR, and
Fetch, ListOffsets and Metadata read leaders and epochs from the same assignments.
"""

from __future__ import annotations

import uuid

from broker.controller.api import BrokerRegistration, PartitionAssignment
from broker.metadata.topic_registry import MetadataStore, TopicRecord
from broker.replication.manager import ReplicaManager


def single_node_assignments(topic: TopicRecord, node_id: int) -> list[PartitionAssignment]:
    return [
        PartitionAssignment(
            topic=topic.name,
            partition=index,
            topic_id=topic.topic_id,
            leader=node_id,
            leader_epoch=topic.leader_epoch(index),
            partition_epoch=0,
            replicas=(node_id,),
            isr=(node_id,),
        )
        for index in range(topic.partitions)
    ]


def single_node_registration(node_id: int) -> BrokerRegistration:
    """This broker, unfenced. Its own endpoints come from its listeners, not from here."""
    return BrokerRegistration(
        broker_id=node_id, incarnation_id=uuid.UUID(int=0), epoch=0, endpoints=(), fenced=False
    )


class SingleNodeImage:
    """Keeps the ReplicaManager's image equal to the topic registry (TopicManager calls
    `topic_changed` after every create, delete and partition increase)."""

    def __init__(self, metadata: MetadataStore, manager: ReplicaManager, node_id: int) -> None:
        self.metadata = metadata
        self.manager = manager
        self.node_id = node_id

    def partitions(self, exclude: frozenset[str] = frozenset()) -> list[PartitionAssignment]:
        return [
            assignment
            for topic in self.metadata.topics()
            if topic.name not in exclude
            for assignment in single_node_assignments(topic, self.node_id)
        ]

    def load(self) -> None:
        self.manager.on_image_loaded(self.partitions(), [single_node_registration(self.node_id)])

    def topic_changed(self, name: str) -> None:
        topic = self.metadata.get(name)
        manager = self.manager
        wanted = single_node_assignments(topic, self.node_id) if topic is not None else []
        for key in [k for k in manager.assignments if k[0] == name and k[1] >= len(wanted)]:
            manager.on_partition_removed(manager.assignments[key])
        for assignment in wanted:
            manager.apply(assignment)
