"""The cluster metadata as the committed log describes it: the replicated state machine.

Every controller and every broker folds the same records, in log order, into a
`MetadataImage`. `apply_entry` returns a `MetadataDelta` naming what changed, which
`publish` hands to a `MetadataListener`. A snapshot is the list of records that rebuilds
the image, so loading one goes through the same code as following the log.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
import uuid
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from broker.controller import records as rec
from broker.controller.api import (
    BrokerRegistration,
    Endpoint,
    MetadataListener,
    PartitionAssignment,
    TopicConfigChange,
)
from broker.controller.records import SECURITY_RECORD_TYPES, Record


@functools.lru_cache(maxsize=4096)
def _topic_id(text: str) -> uuid.UUID:
    """Parsed once: every partition record of a 10,000-partition topic names the same topic id."""
    return uuid.UUID(text)


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
    security: list[Record] = field(default_factory=list)

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
        self.acls: set[tuple[Any, ...]] = set()
        self.scram: dict[str, dict[str, dict[str, Any]]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}  # delegation tokens by id (no HMAC)
        self.quotas: dict[str, dict[str, float]] = {}  # JSON of the entity -> values
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

    def apply_entry(self, offset: int, records: Iterable[Record]) -> MetadataDelta:
        delta = MetadataDelta()
        for record in records:
            self._apply(record, offset, delta)
        self.offset = offset
        return delta

    def _apply(self, record: Record, offset: int, delta: MetadataDelta) -> None:
        kind = record["type"]
        if kind in SECURITY_RECORD_TYPES:
            self._apply_security(record)
            delta.security.append(record)
        elif kind == "register_broker":
            broker = BrokerRegistration(
                broker_id=record["broker_id"],
                incarnation_id=uuid.UUID(record["incarnation_id"]),
                epoch=offset,
                endpoints=tuple(Endpoint(*e) for e in record["endpoints"]),
                rack=record["rack"],
                fenced=True,
            )
            self.brokers[broker.broker_id] = broker
            delta.brokers.append(broker)
        elif kind in ("fence_broker", "unfence_broker", "begin_controlled_shutdown"):
            broker = self.brokers.get(record["broker_id"])
            if broker is None or broker.epoch != record["epoch"]:
                return  # about an earlier registration: nothing to change
            if kind == "begin_controlled_shutdown":
                broker = replace(broker, in_controlled_shutdown=True)
            else:
                broker = replace(broker, fenced=kind == "fence_broker", in_controlled_shutdown=False)
            self.brokers[broker.broker_id] = broker
            delta.brokers.append(broker)
        elif kind == "unregister_broker":
            broker = self.brokers.pop(record["broker_id"], None)
            if broker is not None:
                delta.brokers.append(replace(broker, fenced=True))
        elif kind == "topic":
            topic_id = _topic_id(record["topic_id"])
            self.topics[topic_id] = TopicImage(record["name"], topic_id, bool(record["internal"]))
            self.topic_ids[record["name"]] = topic_id
            self._shared_topics.discard(topic_id)
        elif kind == "remove_topic":
            topic = self.topics.pop(_topic_id(record["topic_id"]))
            del self.topic_ids[topic.name]
            delta.removed_partitions.extend(topic.partitions.values())
        elif kind == "partition":
            self._apply_partition(record, delta)
        elif kind == "partition_change":
            self._apply_partition_change(record, delta)
        elif kind == "config":
            self._apply_config(record, delta)
        elif kind == "feature_level":
            self.features[record["name"]] = int(record["level"])
        elif kind == "producer_ids":
            self.next_producer_id = max(self.next_producer_id, int(record["next_producer_id"]))
        else:
            raise ValueError(f"unknown metadata record type {kind!r}")

    def _apply_partition(self, record: Record, delta: MetadataDelta) -> None:
        topic = self._own_topic(_topic_id(record["topic_id"]))
        if topic is None:
            raise KeyError(f"partition record of unknown topic {record['topic_id']}")
        previous = topic.partitions.get(record["partition"])
        current = PartitionAssignment(
            topic=topic.name,
            partition=record["partition"],
            topic_id=topic.topic_id,
            leader=record["leader"],
            leader_epoch=record["leader_epoch"],
            partition_epoch=record["partition_epoch"],
            replicas=tuple(record["replicas"]),
            isr=tuple(record["isr"]),
            adding_replicas=tuple(record.get("adding_replicas", ())),
            removing_replicas=tuple(record.get("removing_replicas", ())),
        )
        topic.partitions[current.partition] = current
        delta.partitions.append((previous, current))

    def _apply_partition_change(self, record: Record, delta: MetadataDelta) -> None:
        found = self.topics.get(_topic_id(record["topic_id"]))
        if found is None or record["partition"] not in found.partitions:
            return  # the topic was deleted after the change was decided
        topic = self._own_topic(found.topic_id)
        assert topic is not None
        previous = topic.partitions[record["partition"]]
        leader = record.get("leader", previous.leader)
        current = replace(
            previous,
            leader=leader,
            leader_epoch=previous.leader_epoch + (1 if leader != previous.leader else 0),
            partition_epoch=previous.partition_epoch + 1,
            isr=tuple(record.get("isr", previous.isr)),
            replicas=tuple(record.get("replicas", previous.replicas)),
            adding_replicas=tuple(record.get("adding_replicas", previous.adding_replicas)),
            removing_replicas=tuple(record.get("removing_replicas", previous.removing_replicas)),
        )
        topic.partitions[current.partition] = current
        delta.partitions.append((previous, current))

    def _apply_config(self, record: Record, delta: MetadataDelta) -> None:
        if record["resource_type"] == "topic":
            topic_id = self.topic_ids.get(record["resource_name"])
            topic = self._own_topic(topic_id) if topic_id is not None else None
            if topic is None:
                return
            configs = topic.configs
        elif record["resource_type"] in _NAMED_CONFIG_KINDS:
            configs = self._named_configs(record["resource_type"]).setdefault(record["resource_name"], {})
        else:
            configs = self.broker_configs.setdefault(record["resource_name"], {})
        if record["value"] is None:
            configs.pop(record["name"], None)
        else:
            configs[record["name"]] = record["value"]
        if record["resource_type"] == "topic":
            delta.topic_configs.append(TopicConfigChange(topic.name, topic.topic_id, dict(configs)))
        elif record["resource_type"] in _NAMED_CONFIG_KINDS:
            if not configs:
                del self._named_configs(record["resource_type"])[record["resource_name"]]
        else:
            delta.broker_configs.append((record["resource_name"], dict(configs)))

    def _named_configs(self, resource_type: str) -> dict[str, dict[str, str]]:
        return self.group_configs if resource_type == "group" else self.client_metrics_configs

    def _apply_security(self, record: Record) -> None:
        kind = record["type"]
        if kind == "create_acl":
            self.acls.add(tuple(record["acl"]))
        elif kind == "delete_acl":
            self.acls.discard(tuple(record["acl"]))
        elif kind == "upsert_scram":
            self.scram.setdefault(record["user"], {})[record["mechanism"]] = record["credential"]
        elif kind == "delete_scram":
            mechanisms = self.scram.get(record["user"], {})
            mechanisms.pop(record["mechanism"], None)
            if not mechanisms:
                self.scram.pop(record["user"], None)
        elif kind == "upsert_token":
            self.tokens[record["token"]["token_id"]] = record["token"]
        elif kind == "delete_token":
            self.tokens.pop(record["token_id"], None)
        else:
            entity = json.dumps(record["entity"])
            values = dict(self.quotas.get(entity, {}))
            values.update({k: float(v) for k, v in record["set"].items()})
            for key in record["remove"]:
                values.pop(key, None)
            if values:
                self.quotas[entity] = values
            else:
                self.quotas.pop(entity, None)

    # --- snapshots ---------------------------------------------------------------------------

    def snapshot_records(self) -> list[Record]:
        """Records that rebuild this image from an empty one (broker epochs included)."""
        return list(self._snapshot_records())

    def _snapshot_records(self) -> Iterator[Record]:
        for broker in self.brokers.values():
            yield {
                "type": "broker_state",
                "broker_id": broker.broker_id,
                "incarnation_id": str(broker.incarnation_id),
                "epoch": broker.epoch,
                "endpoints": [[e.name, e.host, e.port, e.security_protocol] for e in broker.endpoints],
                "rack": broker.rack,
                "fenced": broker.fenced,
                "in_controlled_shutdown": broker.in_controlled_shutdown,
            }
        for topic in self.topics.values():
            yield rec.topic(topic.name, topic.topic_id, topic.internal)
            for p in topic.partitions.values():
                yield rec.partition(
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
            yield from (rec.config("topic", topic.name, k, v) for k, v in sorted(topic.configs.items()))
        for resource, configs in self.broker_configs.items():
            yield from (rec.config("broker", resource, k, v) for k, v in sorted(configs.items()))
        for group, configs in self.group_configs.items():
            yield from (rec.config("group", group, k, v) for k, v in sorted(configs.items()))
        for name, configs in self.client_metrics_configs.items():
            yield from (rec.config("client_metrics", name, k, v) for k, v in sorted(configs.items()))
        yield from ({"type": "create_acl", "acl": list(acl)} for acl in sorted(self.acls, key=repr))
        for user, mechanisms in self.scram.items():
            yield from (
                {"type": "upsert_scram", "user": user, "mechanism": m, "credential": c}
                for m, c in mechanisms.items()
            )
        yield from ({"type": "upsert_token", "token": token} for token in self.tokens.values())
        for entity, values in self.quotas.items():
            yield {"type": "alter_quota", "entity": json.loads(entity), "set": values, "remove": []}
        yield from (rec.feature_level(name, level) for name, level in sorted(self.features.items()))
        yield {"type": "producer_ids", "broker_id": -1, "next_producer_id": self.next_producer_id}

    def to_snapshot(self) -> bytes:
        return json.dumps({"offset": self.offset, "records": self.snapshot_records()}).encode()

    async def to_snapshot_yielding(self) -> bytes:
        """`to_snapshot` (the same bytes), letting other tasks run every `APPLY_SLICE_S` while the
        records are gathered and encoded. The image must not change meanwhile: only its one applier
        may call this."""
        records: list[Record] = []
        for record in _sliced(self._snapshot_records()):
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


def _sliced(records: Iterable[Record]) -> Iterator[Record | None]:
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
    for record in _sliced(records):
        if record is None:
            yield
        elif record["type"] == "broker_state":
            image.brokers[record["broker_id"]] = BrokerRegistration(
                broker_id=record["broker_id"],
                incarnation_id=uuid.UUID(record["incarnation_id"]),
                epoch=record["epoch"],
                endpoints=tuple(Endpoint(*e) for e in record["endpoints"]),
                rack=record["rack"],
                fenced=record["fenced"],
                in_controlled_shutdown=record["in_controlled_shutdown"],
            )
        else:
            image._apply(record, offset, delta)
    image.offset = offset
    return image


# Records encoded per `json.dumps` call when a snapshot is written a slice at a time.
_ENCODE_CHUNK = 500
# What every snapshot this broker writes starts with; the records that follow are decoded one by one.
_SNAPSHOT_HEAD = re.compile(r'\{"offset": (-?\d+), "records": ')
_SNAPSHOT_TAIL = re.compile(r"\s*\}\s*")


def _snapshot_records_decoded(data: bytes) -> tuple[int, Iterator[Record]]:
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


def _records_then_end(text: str, position: int) -> Generator[Record, None, None]:
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
    image: MetadataImage, offset: int, records: Sequence[Record]
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


T = TypeVar("T")


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
    image: MetadataImage, offset: int, records: Sequence[Record]
) -> tuple[MetadataImage, MetadataDelta]:
    """`image.apply_entry`, letting other tasks run every `APPLY_SLICE_S`. A large entry goes to a
    copy, returned once the whole entry is in (the caller replaces its image by it: readers see the
    entry entirely or not at all); a small one is applied in place and `image` itself returned."""
    if len(records) < LARGE_ENTRY_RECORDS:
        return image, image.apply_entry(offset, records)
    return await _run_yielding(_entry_applying(image, offset, records))


async def decode_entry_yielding(data: bytes) -> list[Record]:
    """`records.decode_entry`, letting other tasks run every `APPLY_SLICE_S` of a large entry."""
    if len(data) < _DECODE_IN_ONE_GO_BYTES:
        return rec.decode_entry(data)
    decoded: list[Record] = []
    for record in _sliced(rec.decoded_entry_items(data)):
        if record is None:
            await asyncio.sleep(0)
        else:
            decoded.append(record)
    return decoded


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
    security = [r for r in image.snapshot_records() if r["type"] in SECURITY_RECORD_TYPES]
    if security:
        listener.on_security_records(security)
