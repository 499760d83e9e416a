"""Metadata image: epochs derived from the log, snapshots, listeners; rack-aware placement."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from broker.controller import records as rec
from broker.controller.api import BrokerRegistration, PartitionAssignment, TopicConfigChange
from broker.controller.image import MetadataImage, publish, publish_image
from broker.controller.placement import Candidate, place_partitions
from broker.metadata.security_records import (
    CreateAclRecord,
    DeleteAclRecord,
    DeleteTokenRecord,
    SecurityRecord,
    UpsertTokenRecord,
)


def sample_image() -> MetadataImage:
    image = MetadataImage()
    topic_id = uuid.uuid4()
    image.apply_entry(
        1,
        [
            rec.RegisterBrokerRecord(1, uuid.uuid4(), (), "a"),
            rec.RegisterBrokerRecord(2, uuid.uuid4(), (), "b"),
        ],
    )
    image.apply_entry(2, [rec.UnfenceBrokerRecord(1, 1)])
    image.apply_entry(
        3,
        [
            rec.TopicRecord("orders", topic_id),
            rec.PartitionRecord(topic_id, 0, (1, 2), (1, 2), 1),
            rec.ConfigRecord("topic", "orders", "retention.ms", "1000"),
        ],
    )
    image.apply_entry(4, [CreateAclRecord((2, "orders", 3, "User:alice", "*", 3, 3))])
    image.apply_entry(5, [rec.ProducerIdsRecord(1, 1000)])
    return image


def test_a_partition_change_bumps_the_leader_epoch_only_when_the_leader_changes() -> None:
    image = sample_image()
    topic_id = image.topic_ids["orders"]
    image.apply_entry(6, [rec.PartitionChangeRecord(topic_id, 0, isr=(1,))])
    shrunk = image.topics[topic_id].partitions[0]
    assert (shrunk.leader_epoch, shrunk.partition_epoch, shrunk.isr) == (0, 1, (1,))
    image.apply_entry(7, [rec.PartitionChangeRecord(topic_id, 0, leader=2, isr=(2,))])
    moved = image.topics[topic_id].partitions[0]
    assert (moved.leader, moved.leader_epoch, moved.partition_epoch) == (2, 1, 2)


def test_fencing_records_for_an_earlier_registration_change_nothing() -> None:
    image = sample_image()
    image.apply_entry(6, [rec.RegisterBrokerRecord(1, uuid.uuid4(), (), "a")])  # restarted: epoch 6
    image.apply_entry(7, [rec.UnfenceBrokerRecord(1, 1)])
    assert image.brokers[1].fenced
    assert image.brokers[1].epoch == 6


def test_a_snapshot_rebuilds_the_same_image() -> None:
    image = sample_image()
    copy = MetadataImage.from_snapshot(image.to_snapshot())
    assert copy.offset == image.offset
    assert copy.brokers == image.brokers
    assert copy.partitions() == image.partitions()
    assert copy.topic_by_name("orders").configs == {"retention.ms": "1000"}  # type: ignore[union-attr]
    assert copy.acls == image.acls
    assert copy.next_producer_id == 1000
    assert copy.to_snapshot() == image.to_snapshot()


class RecordingListener:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def on_image_loaded(
        self, partitions: list[PartitionAssignment], brokers: list[BrokerRegistration]
    ) -> None:
        self.calls.append(("image", (len(partitions), len(brokers))))

    def on_partition_changed(
        self, previous: PartitionAssignment | None, current: PartitionAssignment
    ) -> None:
        self.calls.append(("partition", (previous.leader if previous else None, current.leader)))

    def on_partition_removed(self, previous: PartitionAssignment) -> None:
        self.calls.append(("removed", previous.partition))

    def on_topic_configs_changed(self, change: TopicConfigChange) -> None:
        self.calls.append(("configs", dict(change.configs)))

    def on_broker_changed(self, broker: BrokerRegistration) -> None:
        self.calls.append(("broker", (broker.broker_id, broker.fenced)))

    def on_security_records(self, records: list[SecurityRecord]) -> None:
        self.calls.append(("security", [r.TYPE for r in records]))


def test_listeners_hear_every_change_in_log_order() -> None:
    image = sample_image()
    listener = RecordingListener()
    publish_image(image, listener)
    topic_id = image.topic_ids["orders"]
    publish(image.apply_entry(6, [rec.PartitionChangeRecord(topic_id, 0, leader=2)]), listener)
    publish(image.apply_entry(7, [rec.ConfigRecord("topic", "orders", "retention.ms", None)]), listener)
    publish(image.apply_entry(8, [rec.FenceBrokerRecord(1, 1)]), listener)
    publish(
        image.apply_entry(9, [DeleteAclRecord((2, "orders", 3, "User:alice", "*", 3, 3))]),
        listener,
    )
    publish(image.apply_entry(10, [rec.RemoveTopicRecord(topic_id)]), listener)
    assert listener.calls == [
        ("image", (1, 2)),
        ("configs", {"retention.ms": "1000"}),
        ("security", ["create_acl"]),
        ("partition", (1, 2)),
        ("configs", {}),
        ("broker", (1, True)),
        ("security", ["delete_acl"]),
        ("removed", 0),
    ]


def test_placement_puts_each_partitions_replicas_on_distinct_racks() -> None:
    brokers = [Candidate(i, rack) for i, rack in enumerate("aabbcc", start=1)]
    placements = place_partitions(brokers, 12, 3)
    racks = {b.broker_id: b.rack for b in brokers}
    for replicas in placements:
        assert len({racks[b] for b in replicas}) == 3
    assert Counter(r[0] for r in placements) == dict.fromkeys(range(1, 7), 2)
    assert Counter(b for r in placements for b in r) == dict.fromkeys(range(1, 7), 6)


def test_placement_counts_existing_partitions_as_load() -> None:
    brokers = [Candidate(i, None) for i in (1, 2, 3)]
    topic_id = uuid.uuid4()
    existing = [PartitionAssignment("t", i, topic_id, 1, 0, 0, (1,), (1,)) for i in range(4)]
    assert place_partitions(brokers, 2, 1, existing) == [(2,), (3,)]


def test_delegation_tokens_are_security_records_the_image_keeps_and_snapshots() -> None:
    token = {
        "token_id": "tok1",
        "owner": "User:alice",
        "requester": "User:alice",
        "renewers": [],
        "issue_ms": 1,
        "expiry_ms": 2,
        "max_ms": 3,
    }
    image = MetadataImage()
    image.apply_entry(1, [UpsertTokenRecord(token)])
    assert UpsertTokenRecord(token) in image.snapshot_records()
    rebuilt = MetadataImage()
    rebuilt.apply_entry(1, image.snapshot_records())
    assert rebuilt.tokens == {"tok1": token}
    image.apply_entry(2, [DeleteTokenRecord("tok1")])
    assert image.tokens == {}
