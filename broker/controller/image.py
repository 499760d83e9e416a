"""The cluster metadata as the committed log describes it: the replicated state machine.

Every controller and every broker folds the same records, in log order, into a
`MetadataImage`. `apply_entry` returns a `MetadataDelta` naming what changed, which
`publish` hands to a `MetadataListener`. A snapshot is the list of records that rebuilds
the image, so loading one goes through the same code as following the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from broker.controller import records as rec
from broker.controller.api import (
    BrokerRegistration,
    MetadataListener,
    PartitionAssignment,
    TopicConfigChange,
)
from broker.controller.records import MetadataRecord, SecurityRecord
from broker.metadata.metadata_records import RECORD_TYPES, RecordJson, UnsupportedRecordError, decode_record
from broker.metadata.security_records import AclTuple, QuotaEntity, security_state_records

log = logging.getLogger("broker.controller.image")

# Record type -> the image's method that applies it: one per record type (the security records share
# theirs, which hands them to their own `apply_to`).
_APPLIERS: dict[type[MetadataRecord], Callable[..., None]] = {}

F = TypeVar("F", bound=Callable[..., None])


def _applies(*types: type[MetadataRecord]) -> Callable[[F], F]:
    def register(method: F) -> F:
        for record_type in types:
            _APPLIERS[record_type] = method
        return method

    return register


T = TypeVar("T")


def _or(value: tuple[int, ...] | None, unchanged: tuple[int, ...]) -> tuple[int, ...]:
    return unchanged if value is None else value


@dataclass(slots=True)
class TopicImage:
    name: str
    topic_id: uuid.UUID
    internal: bool = False
    configs: dict[str, str] = field(default_factory=dict)
    partitions: dict[int, PartitionAssignment] = field(default_factory=dict)


@dataclass(slots=True)
class MetadataDelta:
    """What one entry changed, in the order it happened."""

    partitions: list[tuple[PartitionAssignment | None, PartitionAssignment]] = field(default_factory=list)
    removed_partitions: list[PartitionAssignment] = field(default_factory=list)
    topic_configs: list[TopicConfigChange] = field(default_factory=list)
    # Dynamic broker configs that changed: (resource name — a broker id or "" for the cluster
    # default, all of that resource's dynamic configs afterwards).
    broker_configs: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    brokers: list[BrokerRegistration] = field(default_factory=list)
    security: list[SecurityRecord] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(
            self.partitions
            or self.removed_partitions
            or self.topic_configs
            or self.broker_configs
            or self.brokers
            or self.security
        )


# Config resources kept as name -> configs, dropped when their last config is deleted.
_NAMED_CONFIG_KINDS = ("group", "client_metrics")


class MetadataImage:
    def __init__(self) -> None:
        self.offset = 0  # index of the last applied Raft entry
        self.brokers: dict[int, BrokerRegistration] = {}
        self.topics: dict[uuid.UUID, TopicImage] = {}
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.broker_configs: dict[str, dict[str, str]] = {}
        # Group configs (KIP-848's consumer.session.timeout.ms, ...) by group id; brokers read them here.
        self.group_configs: dict[str, dict[str, str]] = {}
        # CLIENT_METRICS subscriptions (KIP-714) by name.
        self.client_metrics_configs: dict[str, dict[str, str]] = {}
        # The security state (`broker.metadata.security_records.SecurityState`), as a broker's SecurityStore.
        self.acls: set[AclTuple] = set()
        self.scram: dict[str, dict[str, dict[str, Any]]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}  # delegation tokens by id (no HMAC)
        self.quotas: dict[QuotaEntity, dict[str, float]] = {}
        self.next_producer_id = 0
        # Finalized feature levels (broker.metadata.features) as recorded; empty until the first broker
        # registers in a fresh cluster, which records the defaults.
        self.features: dict[str, int] = {}
        # Topics this image shares with the image it was copied from (`copy_for_update`): copied
        # before their first change, so the original stays as it was.
        self._shared_topics: set[uuid.UUID] = set()

    def copy_for_update(self) -> MetadataImage:
        """A copy to apply an entry to while readers keep this one. Cheap: containers are copied,
        a topic's partitions only when the entry changes that topic."""
        copy = MetadataImage()
        copy.offset = self.offset
        copy.brokers = dict(self.brokers)
        copy.topics = dict(self.topics)
        copy.topic_ids = dict(self.topic_ids)
        copy.broker_configs = {name: dict(configs) for name, configs in self.broker_configs.items()}
        copy.group_configs = {name: dict(configs) for name, configs in self.group_configs.items()}
        copy.client_metrics_configs = {
            name: dict(configs) for name, configs in self.client_metrics_configs.items()
        }
        copy.acls = set(self.acls)
        copy.scram = {user: dict(mechanisms) for user, mechanisms in self.scram.items()}
        copy.tokens = dict(self.tokens)
        copy.quotas = dict(self.quotas)
        copy.next_producer_id = self.next_producer_id
        copy.features = dict(self.features)
        copy._shared_topics = set(self.topics)
        return copy

    def _own_topic(self, topic_id: uuid.UUID) -> TopicImage | None:
        """The topic, safe to change in place (copied first if shared with the original image)."""
        topic = self.topics.get(topic_id)
        if topic is not None and topic_id in self._shared_topics:
            topic = TopicImage(
                topic.name, topic_id, topic.internal, dict(topic.configs), dict(topic.partitions)
            )
            self.topics[topic_id] = topic
            self._shared_topics.discard(topic_id)
        return topic

    # --- queries -----------------------------------------------------------------------------

    def topic_by_name(self, name: str) -> TopicImage | None:
        topic_id = self.topic_ids.get(name)
        return self.topics.get(topic_id) if topic_id else None

    def partitions(self) -> list[PartitionAssignment]:
        return [p for t in self.topics.values() for p in t.partitions.values()]

    def unfenced_brokers(self) -> list[BrokerRegistration]:
        return [b for b in self.brokers.values() if not b.fenced and not b.in_controlled_shutdown]

    def is_usable(self, broker_id: int) -> bool:
        broker = self.brokers.get(broker_id)
        return broker is not None and not broker.fenced and not broker.in_controlled_shutdown

    # --- applying the log --------------------------------------------------------------------

    def apply_entry(self, offset: int, records: Iterable[MetadataRecord]) -> MetadataDelta:
        delta = MetadataDelta()
        for record in records:
            self._apply(record, offset, delta)
        self.offset = offset
        return delta

    def _apply(self, record: MetadataRecord, offset: int, delta: MetadataDelta) -> None:
        _APPLIERS[type(record)](self, record, offset, delta)

    @_applies(*(t for t in RECORD_TYPES.values() if issubclass(t, SecurityRecord)))
    def _apply_security(self, record: SecurityRecord, offset: int, delta: MetadataDelta) -> None:
        record.apply_to(self)
        delta.security.append(record)

    @_applies(rec.RegisterBrokerRecord)
    def _apply_register_broker(
        self, record: rec.RegisterBrokerRecord, offset: int, delta: MetadataDelta
    ) -> None:
        broker = BrokerRegistration(
            broker_id=record.broker_id,
            incarnation_id=record.incarnation_id,
            epoch=offset,
            endpoints=record.endpoints,
            rack=record.rack,
            fenced=True,
        )
        self.brokers[broker.broker_id] = broker
        delta.brokers.append(broker)

    @_applies(rec.BrokerStateRecord)
    def _apply_broker_state(self, record: rec.BrokerStateRecord, offset: int, delta: MetadataDelta) -> None:
        self.brokers[record.broker_id] = BrokerRegistration(
            broker_id=record.broker_id,
            incarnation_id=record.incarnation_id,
            epoch=record.epoch,
            endpoints=record.endpoints,
            rack=record.rack,
            fenced=record.fenced,
            in_controlled_shutdown=record.in_controlled_shutdown,
        )

    def _registration(self, broker_id: int, epoch: int) -> BrokerRegistration | None:
        """The broker's registration a fencing record is about; None if it registered again since."""
        broker = self.brokers.get(broker_id)
        return broker if broker is not None and broker.epoch == epoch else None

    @_applies(rec.FenceBrokerRecord, rec.UnfenceBrokerRecord)
    def _apply_fencing(
        self, record: rec.FenceBrokerRecord | rec.UnfenceBrokerRecord, offset: int, delta: MetadataDelta
    ) -> None:
        broker = self._registration(record.broker_id, record.epoch)
        if broker is not None:
            fenced = isinstance(record, rec.FenceBrokerRecord)
            broker = replace(broker, fenced=fenced, in_controlled_shutdown=False)
            self.brokers[broker.broker_id] = broker
            delta.brokers.append(broker)

    @_applies(rec.BeginControlledShutdownRecord)
    def _apply_controlled_shutdown(
        self, record: rec.BeginControlledShutdownRecord, offset: int, delta: MetadataDelta
    ) -> None:
        broker = self._registration(record.broker_id, record.epoch)
        if broker is not None:
            broker = replace(broker, in_controlled_shutdown=True)
            self.brokers[broker.broker_id] = broker
            delta.brokers.append(broker)

    @_applies(rec.UnregisterBrokerRecord)
    def _apply_unregister(
        self, record: rec.UnregisterBrokerRecord, offset: int, delta: MetadataDelta
    ) -> None:
        broker = self.brokers.pop(record.broker_id, None)
        if broker is not None:
            delta.brokers.append(replace(broker, fenced=True))

    @_applies(rec.TopicRecord)
    def _apply_topic(self, record: rec.TopicRecord, offset: int, delta: MetadataDelta) -> None:
        self.topics[record.topic_id] = TopicImage(record.name, record.topic_id, record.internal)
        self.topic_ids[record.name] = record.topic_id
        self._shared_topics.discard(record.topic_id)

    @_applies(rec.RemoveTopicRecord)
    def _apply_remove_topic(self, record: rec.RemoveTopicRecord, offset: int, delta: MetadataDelta) -> None:
        topic = self.topics.pop(record.topic_id)
        del self.topic_ids[topic.name]
        delta.removed_partitions.extend(topic.partitions.values())

    @_applies(rec.PartitionRecord)
    def _apply_partition(self, record: rec.PartitionRecord, offset: int, delta: MetadataDelta) -> None:
        topic = self._own_topic(record.topic_id)
        if topic is None:
            raise KeyError(f"partition record of unknown topic {record.topic_id}")
        previous = topic.partitions.get(record.partition)
        current = PartitionAssignment(
            topic=topic.name,
            partition=record.partition,
            topic_id=topic.topic_id,
            leader=record.leader,
            leader_epoch=record.leader_epoch,
            partition_epoch=record.partition_epoch,
            replicas=record.replicas,
            isr=record.isr,
            adding_replicas=record.adding_replicas,
            removing_replicas=record.removing_replicas,
        )
        topic.partitions[current.partition] = current
        delta.partitions.append((previous, current))

    @_applies(rec.PartitionChangeRecord)
    def _apply_partition_change(
        self, record: rec.PartitionChangeRecord, offset: int, delta: MetadataDelta
    ) -> None:
        found = self.topics.get(record.topic_id)
        if found is None or record.partition not in found.partitions:
            return  # the topic was deleted after the change was decided
        topic = self._own_topic(found.topic_id)
        assert topic is not None
        previous = topic.partitions[record.partition]
        leader = previous.leader if record.leader is None else record.leader
        current = replace(
            previous,
            leader=leader,
            leader_epoch=previous.leader_epoch + (1 if leader != previous.leader else 0),
            partition_epoch=previous.partition_epoch + 1,
            isr=_or(record.isr, previous.isr),
            replicas=_or(record.replicas, previous.replicas),
            adding_replicas=_or(record.adding_replicas, previous.adding_replicas),
            removing_replicas=_or(record.removing_replicas, previous.removing_replicas),
        )
        topic.partitions[current.partition] = current
        delta.partitions.append((previous, current))

    @_applies(rec.ConfigRecord)
    def _apply_config(self, record: rec.ConfigRecord, offset: int, delta: MetadataDelta) -> None:
        if record.resource_type == "topic":
            topic_id = self.topic_ids.get(record.resource_name)
            topic = self._own_topic(topic_id) if topic_id is not None else None
            if topic is None:
                return
            configs = topic.configs
        elif record.resource_type in _NAMED_CONFIG_KINDS:
            configs = self._named_configs(record.resource_type).setdefault(record.resource_name, {})
        else:
            configs = self.broker_configs.setdefault(record.resource_name, {})
        if record.value is None:
            configs.pop(record.name, None)
        else:
            configs[record.name] = record.value
        if record.resource_type == "topic":
            delta.topic_configs.append(TopicConfigChange(topic.name, topic.topic_id, dict(configs)))
        elif record.resource_type in _NAMED_CONFIG_KINDS:
            if not configs:
                del self._named_configs(record.resource_type)[record.resource_name]
        else:
            delta.broker_configs.append((record.resource_name, dict(configs)))

    def _named_configs(self, resource_type: str) -> dict[str, dict[str, str]]:
        return self.group_configs if resource_type == "group" else self.client_metrics_configs

    @_applies(rec.FeatureLevelRecord)
    def _apply_feature_level(self, record: rec.FeatureLevelRecord, offset: int, delta: MetadataDelta) -> None:
        self.features[record.name] = record.level

    @_applies(rec.ProducerIdsRecord)
    def _apply_producer_ids(self, record: rec.ProducerIdsRecord, offset: int, delta: MetadataDelta) -> None:
        self.next_producer_id = max(self.next_producer_id, record.next_producer_id)

    # --- snapshots ---------------------------------------------------------------------------

    def snapshot_records(self) -> list[MetadataRecord]:
        """Records that rebuild this image from an empty one (broker epochs included)."""
        return list(self._snapshot_records())

    def _snapshot_records(self) -> Iterator[MetadataRecord]:
        for broker in self.brokers.values():
            yield rec.BrokerStateRecord(
                broker.broker_id,
                broker.incarnation_id,
                broker.epoch,
                broker.endpoints,
                broker.rack,
                broker.fenced,
                broker.in_controlled_shutdown,
            )
        for topic in self.topics.values():
            yield rec.TopicRecord(topic.name, topic.topic_id, topic.internal)
            for p in topic.partitions.values():
                yield rec.PartitionRecord(
                    p.topic_id,
                    p.partition,
                    p.replicas,
                    p.isr,
                    p.leader,
                    p.leader_epoch,
                    p.partition_epoch,
                    p.adding_replicas,
                    p.removing_replicas,
                )
            yield from (rec.ConfigRecord("topic", topic.name, k, v) for k, v in sorted(topic.configs.items()))
        for resource, configs in self.broker_configs.items():
            yield from (rec.ConfigRecord("broker", resource, k, v) for k, v in sorted(configs.items()))
        for group, configs in self.group_configs.items():
            yield from (rec.ConfigRecord("group", group, k, v) for k, v in sorted(configs.items()))
        for name, configs in self.client_metrics_configs.items():
            yield from (rec.ConfigRecord("client_metrics", name, k, v) for k, v in sorted(configs.items()))
        yield from security_state_records(self)
        yield from (rec.FeatureLevelRecord(name, level) for name, level in sorted(self.features.items()))
        yield rec.ProducerIdsRecord(-1, self.next_producer_id)

    def _snapshot_json(self) -> Iterator[RecordJson]:
        """The snapshot's records in their JSON form, each at the version `metadata.version` allows."""
        versions: dict[type[MetadataRecord], int] = {}
        for record in self._snapshot_records():
            cls = type(record)
            if cls not in versions:
                versions[cls] = rec.writable_version(cls, self.features)
            yield record.to_json(versions[cls])

    def to_snapshot(self) -> bytes:
        return json.dumps({"offset": self.offset, "records": list(self._snapshot_json())}).encode()

    async def to_snapshot_yielding(self) -> bytes:
        """`to_snapshot` (the same bytes), letting other tasks run every `APPLY_SLICE_S` while the
        records are gathered and encoded. The image must not change meanwhile: only its one applier
        may call this."""
        records: list[RecordJson] = []
        for record in _sliced(self._snapshot_json()):
            if record is None:
                await asyncio.sleep(0)
            else:
                records.append(record)
        # Encoding 10,000 partitions in one `json.dumps` takes ~20 ms (three times that under load):
        # the list is encoded in chunks, each one's brackets dropped, joined as `json.dumps` would.
        encoded: list[str] = []
        slice_end = time.monotonic() + APPLY_SLICE_S
        for start in range(0, len(records), _ENCODE_CHUNK):
            encoded.append(json.dumps(records[start : start + _ENCODE_CHUNK])[1:-1])
            if time.monotonic() >= slice_end:
                await asyncio.sleep(0)
                slice_end = time.monotonic() + APPLY_SLICE_S
        return f'{{"offset": {json.dumps(self.offset)}, "records": [{", ".join(encoded)}]}}'.encode()

    @classmethod
    def from_snapshot(cls, data: bytes) -> MetadataImage:
        return _run(_snapshot_loading(data))


def _sliced(records: Iterable[T]) -> Iterator[T | None]:
    """`records`, with a None in between whenever `APPLY_SLICE_S` went by (time to yield)."""
    slice_end = time.monotonic() + APPLY_SLICE_S
    for record in records:
        yield record
        if time.monotonic() >= slice_end:
            yield None
            slice_end = time.monotonic() + APPLY_SLICE_S


def _snapshot_loading(data: bytes) -> Generator[None, None, MetadataImage]:
    """Builds the image a snapshot describes, yielding between slices; returns it."""
    offset, records = _snapshot_records_decoded(data)
    image = MetadataImage()
    delta = MetadataDelta()
    # The snapshot goes to a new image: a record this node cannot read (UnsupportedRecordError)
    # leaves nothing behind.
    for record in _sliced(records):
        if record is None:
            yield
        else:
            image._apply(decode_record(record), offset, delta)
    image.offset = offset
    return image


# Records encoded per `json.dumps` call when a snapshot is written a slice at a time.
_ENCODE_CHUNK = 500
# What every snapshot this broker writes starts with; the records that follow are decoded one by one.
_SNAPSHOT_HEAD = re.compile(r'\{"offset": (-?\d+), "records": ')
_SNAPSHOT_TAIL = re.compile(r"\s*\}\s*")


def _snapshot_records_decoded(data: bytes) -> tuple[int, Iterator[Any]]:
    """A snapshot's offset and its records, decoded lazily one record at a time (a 10,000-partition
    snapshot decoded in one `json.loads` holds the event loop for tens of milliseconds). A document
    in any other layout is decoded whole; malformed data raises `ValueError`."""
    if not data:
        return 0, iter(())
    text = data.decode()
    head = _SNAPSHOT_HEAD.match(text)
    if head is None:
        try:
            document = json.loads(text)
            return document["offset"], iter(document["records"])
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"malformed snapshot: {error!r}") from error
    return int(head.group(1)), _records_then_end(text, head.end())


def _records_then_end(text: str, position: int) -> Generator[dict[str, Any], None, None]:
    items = rec.json_array_items(text, position)
    while True:
        try:
            record = next(items)
        except StopIteration as done:
            end = done.value
            break
        except ValueError as error:
            raise ValueError(f"malformed snapshot: {error}") from error
        if not isinstance(record, dict):
            raise ValueError(f"malformed snapshot: a record is {type(record).__name__}")
        yield record
    if _SNAPSHOT_TAIL.fullmatch(text, end) is None:
        raise ValueError(f"malformed snapshot at character {end}")


def _entry_applying(
    image: MetadataImage, offset: int, records: Sequence[MetadataRecord]
) -> Generator[None, None, tuple[MetadataImage, MetadataDelta]]:
    """Applies one entry to a copy of `image`, yielding between slices; returns the copy."""
    staged = image.copy_for_update()
    delta = MetadataDelta()
    for record in _sliced(records):
        if record is None:
            yield
        else:
            staged._apply(record, offset, delta)
    staged.offset = offset
    # Nobody applies to the original any more: the copy may change what it shares in place.
    staged._shared_topics.clear()
    return staged, delta


def _run(steps: Generator[None, None, T]) -> T:
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


async def _run_yielding(steps: Generator[None, None, T]) -> T:
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        await asyncio.sleep(0)


# Entries with more records than this (a topic with many partitions, its deletion's follow-ups, a
# large AlterPartition batch) are applied off to the side a slice at a time: a 10,000-partition
# topic takes tens of milliseconds to apply (many more under load), which must not hold up Raft
# heartbeats and elections on the same event loop — and no reader may see the topic half-created.
LARGE_ENTRY_RECORDS = 500
# How long applying may run before the event loop gets a turn.
APPLY_SLICE_S = 0.01


async def apply_entry_yielding(
    image: MetadataImage, offset: int, records: Sequence[MetadataRecord]
) -> tuple[MetadataImage, MetadataDelta]:
    """`image.apply_entry`, letting other tasks run every `APPLY_SLICE_S`. A large entry goes to a
    copy, returned once the whole entry is in (the caller replaces its image by it: readers see the
    entry entirely or not at all); a small one is applied in place and `image` itself returned."""
    if len(records) < LARGE_ENTRY_RECORDS:
        return image, image.apply_entry(offset, records)
    return await _run_yielding(_entry_applying(image, offset, records))


async def decode_entry_yielding(data: bytes) -> list[MetadataRecord]:
    """`records.decode_entry`, letting other tasks run every `APPLY_SLICE_S` of a large entry. The whole
    entry is decoded before any of it applies: one record this node cannot read refuses all of it."""
    if len(data) < _DECODE_IN_ONE_GO_BYTES:
        return rec.decode_entry(data)
    decoded: list[MetadataRecord] = []
    for item in _sliced(rec.decoded_entry_items(data)):
        if item is None:
            await asyncio.sleep(0)
        else:
            decoded.append(decode_record(item))
    return decoded


class MetadataRefusal:
    """Where a node stopped following the metadata log: the first entry (or snapshot) holding a record it
    cannot read, written by a newer release. Nothing of that entry applies, nor anything after it (an
    image that skipped it would differ from every other node's); the node keeps serving the last image
    it built, says so once in its log, and reports it (`stopped_at`, the lag of its applied offset)
    until it is upgraded."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.stopped_at: int | None = None  # the offset of the refused entry / snapshot
        self.error: UnsupportedRecordError | None = None

    def samples(self) -> list[tuple[dict[str, str], float]]:
        """A metrics gauge's samples: the refused entry's offset, labelled with the record it could not
        read; none while every entry applies."""
        if self.error is None or self.stopped_at is None:
            return []
        labels = {"type": str(self.error.type_name), "version": str(self.error.version)}
        return [(labels, float(self.stopped_at))]

    def _refuse(self, offset: int, error: UnsupportedRecordError) -> None:
        self.stopped_at, self.error = offset, error
        log.error(
            "%s stops applying the metadata log at offset %d: record type %r version %r is unknown to "
            "this release (upgrade it); it keeps serving the metadata it had",
            self.node,
            offset,
            error.type_name,
            error.version,
        )

    async def entry(self, offset: int, data: bytes) -> list[MetadataRecord] | None:
        """The entry's records, or None: refused (now or at an earlier entry)."""
        if self.error is not None:
            return None
        try:
            return await decode_entry_yielding(data)
        except UnsupportedRecordError as error:
            self._refuse(offset, error)
            return None

    async def snapshot(self, data: bytes) -> MetadataImage | None:
        """The image the snapshot describes, or None: refused (now or at an earlier entry)."""
        if self.error is not None:
            return None
        try:
            return await image_from_snapshot_yielding(data)
        except UnsupportedRecordError as error:
            self._refuse(_snapshot_records_decoded(data)[0], error)
            return None


# Entries up to this size decode in well under a millisecond: in one go.
_DECODE_IN_ONE_GO_BYTES = 64 * 1024


async def image_from_snapshot_yielding(data: bytes) -> MetadataImage:
    """`MetadataImage.from_snapshot`, letting other tasks run every `APPLY_SLICE_S`."""
    return await _run_yielding(_snapshot_loading(data))


# How long a listener may take partition changes in one go before the event loop gets a turn: a
# 10,000-partition topic opens 10,000 logs (seconds of file system work), which must not hold up
# heartbeats, Raft and clients.
PUBLISH_SLICE_S = 0.01


def publish(delta: MetadataDelta, listener: MetadataListener) -> None:
    """Tell a broker's listener about one entry's changes."""
    for _ in _publish_steps(delta, listener):
        pass


async def publish_yielding(delta: MetadataDelta, listener: MetadataListener) -> None:
    """`publish`, letting other tasks run every `PUBLISH_SLICE_S` of partition changes."""
    for _ in _publish_steps(delta, listener):
        await asyncio.sleep(0)


def _publish_steps(delta: MetadataDelta, listener: MetadataListener) -> Iterator[None]:
    """Publishes `delta`, yielding whenever `PUBLISH_SLICE_S` went by in partition changes."""
    for broker in delta.brokers:
        listener.on_broker_changed(broker)
    slice_end = time.monotonic() + PUBLISH_SLICE_S
    for previous, current in delta.partitions:
        listener.on_partition_changed(previous, current)
        if time.monotonic() >= slice_end:
            yield
            slice_end = time.monotonic() + PUBLISH_SLICE_S
    for change in delta.topic_configs:
        listener.on_topic_configs_changed(change)
    for removed in delta.removed_partitions:
        listener.on_partition_removed(removed)
        if time.monotonic() >= slice_end:
            yield
            slice_end = time.monotonic() + PUBLISH_SLICE_S
    for resource_name, configs in delta.broker_configs:
        listener.on_broker_configs_changed(resource_name, configs)
    if delta.security:
        listener.on_security_records(delta.security)


def publish_image(image: MetadataImage, listener: MetadataListener) -> None:
    """Hand a listener the whole image: partitions and brokers, then topic configs and security."""
    listener.on_image_loaded(image.partitions(), list(image.brokers.values()))
    for topic in image.topics.values():
        if topic.configs:
            listener.on_topic_configs_changed(
                TopicConfigChange(topic.name, topic.topic_id, dict(topic.configs))
            )
    for resource_name, configs in image.broker_configs.items():
        listener.on_broker_configs_changed(resource_name, dict(configs))
    security = security_state_records(image)
    if security:
        listener.on_security_records(security)
