"""Applies the committed metadata image to a broker's local state.

The broker's request handlers read the local topic registry (`MetadataStore`), partition logs
and `SecurityStore`; those follow the controller's metadata log: this listener keeps them in step and then hands each change on to the data path
(the ReplicaManager, then the group coordinator). Order matters both ways: a topic exists
locally before a follower opens its partitions, and its logs are deleted only after every
follower has stopped using them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence

from broker.context import BrokerState
from broker.controller.api import (
    BrokerRegistration,
    MetadataListener,
    PartitionAssignment,
    TopicConfigChange,
)
from broker.controller.image import MetadataImage, TopicImage
from broker.metadata.security_records import SecurityRecord, security_state_records
from broker.metadata.topic_registry import TopicRecord

log = logging.getLogger("broker.node.applier")


class MetadataApplier:
    """The one MetadataListener of a broker's lifecycle; fans out to `followers`."""

    def __init__(
        self,
        state: BrokerState,
        image: Callable[[], MetadataImage],
        followers: Sequence[MetadataListener] = (),
    ) -> None:
        self.state = state
        self.image = image
        self.followers = list(followers)
        self._removed_partitions: dict[uuid.UUID, set[int]] = {}

    # --- MetadataListener --------------------------------------------------------------------

    def on_image_loaded(
        self, partitions: Sequence[PartitionAssignment], brokers: Sequence[BrokerRegistration]
    ) -> None:
        image = self.image()
        stale = [t for t in self.state.metadata.topics() if not self._matches(t, image)]
        for topic in stale:
            # Deleted (or deleted and re-created) while this broker was away.
            self._drop_topic(topic.name)
        for topic_image in image.topics.values():
            self._ensure_topic(topic_image)
        for follower in self.followers:
            follower.on_image_loaded(partitions, brokers)
        self.state.security.replace_all(security_state_records(image))

    def on_partition_changed(
        self, previous: PartitionAssignment | None, current: PartitionAssignment
    ) -> None:
        local = self.state.metadata.get(current.topic)
        if local is None or local.topic_id != current.topic_id or local.partitions <= current.partition:
            # Only then: `_ensure_topic` looks at every partition of the topic.
            topic_image = self.image().topics.get(current.topic_id)
            if topic_image is not None:
                self._ensure_topic(topic_image)
        for follower in self.followers:
            follower.on_partition_changed(previous, current)

    def on_partition_removed(self, previous: PartitionAssignment) -> None:
        for follower in self.followers:
            follower.on_partition_removed(previous)
        local = self.state.metadata.get(previous.topic)
        if local is None or local.topic_id != previous.topic_id or previous.topic_id in self.image().topics:
            return
        # A deleted topic's partitions are removed one call at a time (the publisher lets the event
        # loop run in between): each log goes with its partition, once every follower let go of it,
        # and the topic with the last (deleting 10,000 logs in one go would stall the broker).
        self.state.logs.delete_partition(previous.topic, previous.partition)
        removed = self._removed_partitions.setdefault(previous.topic_id, set())
        removed.add(previous.partition)
        if len(removed) >= local.partitions:
            del self._removed_partitions[previous.topic_id]
            self._drop_topic(previous.topic)

    def on_topic_configs_changed(self, change: TopicConfigChange) -> None:
        local = self.state.metadata.get(change.topic)
        if local is not None and local.topic_id == change.topic_id and local.configs != change.configs:
            updated = self.state.metadata.set_topic_configs(change.topic, dict(change.configs))
            log_config = self.state.topics.log_config(updated)
            for partition in range(updated.partitions):
                partition_log = self.state.logs.get(change.topic, partition)
                if partition_log is not None:
                    partition_log.update_config(log_config)
        for follower in self.followers:
            follower.on_topic_configs_changed(change)

    def on_broker_changed(self, broker: BrokerRegistration) -> None:
        for follower in self.followers:
            follower.on_broker_changed(broker)

    def on_broker_configs_changed(self, resource_name: str, configs: Mapping[str, str]) -> None:
        self.state.dynamic_config.set_layer(resource_name, configs)
        for follower in self.followers:
            follower.on_broker_configs_changed(resource_name, configs)

    def on_security_records(self, records: Sequence[SecurityRecord]) -> None:
        self.state.security.apply_records(records)
        for follower in self.followers:
            follower.on_security_records(records)

    # --- the local topic registry ------------------------------------------------------------

    @staticmethod
    def _matches(local: TopicRecord, image: MetadataImage) -> bool:
        topic_image = image.topics.get(local.topic_id)
        return topic_image is not None and topic_image.name == local.name

    def _ensure_topic(self, topic_image: TopicImage) -> None:
        metadata = self.state.metadata
        count = max(topic_image.partitions, default=-1) + 1
        local = metadata.get(topic_image.name)
        if local is not None and local.topic_id != topic_image.topic_id:
            self._drop_topic(local.name)
            local = None
        if local is None:
            first = topic_image.partitions.get(0)
            record = TopicRecord(
                name=topic_image.name,
                topic_id=topic_image.topic_id,
                partitions=count,
                replication_factor=len(first.replicas) if first is not None else 1,
                configs=dict(topic_image.configs),
                leader_epochs=(0,) * count,
                internal=topic_image.internal,
            )
            metadata.add_topic(record)
            log.info("topic %s (%d partitions) from the metadata log", topic_image.name, count)
        elif local.partitions < count:
            metadata.add_partitions(topic_image.name, count)

    def _drop_topic(self, name: str) -> None:
        self.state.metadata.delete_topic(name)
        self.state.logs.delete_topic(name)
        log.info("topic %s removed: deleted its local logs", name)
