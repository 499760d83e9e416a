"""The controller's metadata log records, typed and versioned, and the Raft entries that carry them.

Each record type is a frozen dataclass with its record type id and name (Kafka's `apiKey` and
`name` in metadata/*.json), the newest version this node knows and its own encode/decode; the
security records are `broker.metadata.security_records`' (applied by the brokers' `SecurityStore`
too). An entry is a list of records that apply together (a topic and its partitions, a fencing and
the leader elections it causes), each record carrying its own version.

The encoding stays JSON, deliberately:
- Every metadata log and snapshot written so far is JSON: a record without `"v"` is version 0 of
  the dict shape it always had, so old logs decode with no second reader, and a version-0 record
  is written byte for byte as the release before wrote it, so nodes of both releases read each
  other's entries during a rolling upgrade.
- The log is small next to the data: a compact binary form like Kafka's would shave bytes off
  entries no client ever reads, but cost a second decoder kept forever and the ability to read a
  log with `jq` when a cluster is in trouble.
- A 10,000-partition entry is still decoded a record at a time (`decoded_entry_items`), so the
  event loop is never held for long.
What Kafka's binary framing gives — a type and a version before the fields — is kept: `"type"` and
`"v"` are read first and a record this node does not know is refused (`UnsupportedRecordError`)
before anything of its entry is applied.

Versions and `metadata.version`: a writer emits a record version only once every node may read it,
i.e. once the finalized `metadata.version` reaches the level that introduced it, as Kafka's
`MetadataVersion` gates its record versions. Each type's `SINCE` maps its versions to that level;
today every record type has version 0 only, readable since level 7 (3.3-IV3), the lowest supported.
The next record version gets the next `metadata.version` level this broker supports.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from broker.controller.api import Endpoint
from broker.metadata.features import METADATA_VERSION, MINIMUM_METADATA_VERSION
from broker.metadata.metadata_records import (
    MetadataRecord,
    RecordJson,
    UnsupportedRecordError,
    decode_record,
    record_type,
)
from broker.metadata.security_records import SecurityRecord
from broker.raft.messages import VOTERS_ENTRY_PREFIX

__all__ = [
    "BeginControlledShutdownRecord",
    "BrokerStateRecord",
    "ConfigRecord",
    "FeatureLevelRecord",
    "FenceBrokerRecord",
    "MetadataRecord",
    "PartitionChangeRecord",
    "PartitionRecord",
    "ProducerIdsRecord",
    "RegisterBrokerRecord",
    "RemoveTopicRecord",
    "SecurityRecord",
    "TopicRecord",
    "UnfenceBrokerRecord",
    "UnregisterBrokerRecord",
    "UnsupportedRecordError",
]


def writable_version(cls: type[MetadataRecord], features: Mapping[str, int]) -> int:
    """The newest version of `cls` that the finalized `metadata.version` in `features` lets a writer emit."""
    level = features.get(METADATA_VERSION, MINIMUM_METADATA_VERSION)
    return max(version for version, first in cls.SINCE.items() if first <= level or version == 0)


def encode_entry(records: Sequence[MetadataRecord], features: Mapping[str, int]) -> bytes:
    """One Raft entry: the records as a JSON array, each at the version `features` allow."""
    versions: dict[type[MetadataRecord], int] = {}
    encoded = []
    for record in records:
        cls = type(record)
        if cls not in versions:
            versions[cls] = writable_version(cls, features)
        encoded.append(record.to_json(versions[cls]))
    return json.dumps(encoded, separators=(",", ":"), sort_keys=True).encode()


def decode_entry(data: bytes) -> list[MetadataRecord]:
    """Records of one Raft entry; the leader's no-op (empty data) and a voter set (Raft's own) hold none.
    Raises `UnsupportedRecordError` if any record is unknown to this node (nothing of it applies)."""
    if not data or data.startswith(VOTERS_ENTRY_PREFIX):
        return []
    items = json.loads(data)
    if not isinstance(items, list):
        raise ValueError(f"a metadata log entry is a JSON array, not {type(items).__name__}")
    return [decode_record(item) for item in items]


def decoded_entry_items(data: bytes) -> Iterator[Any]:
    """An entry's records in their JSON form, one at a time, for a caller that yields to its event loop
    in between (one `json.loads` of a 10,000-partition entry holds it for tens of milliseconds)."""
    if not data or data.startswith(VOTERS_ENTRY_PREFIX):
        return iter(())
    return json_array_items(data.decode(), 0)


_ARRAY_START = re.compile(r"\s*\[\s*")
_ARRAY_NEXT = re.compile(r"\s*(,|\])\s*")


def json_array_items(text: str, position: int) -> Generator[Any, None, int]:
    """The items of the JSON array that starts at `position` of `text`, decoded one by one; returns
    where the array ends (the text after it is not looked at). Malformed JSON raises `ValueError`."""
    start = _ARRAY_START.match(text, position)
    if start is None:
        raise ValueError(f"no JSON array at character {position}")
    position = start.end()
    if text.startswith("]", position):
        return position + 1
    decoder = json.JSONDecoder()
    while True:
        item, position = decoder.raw_decode(text, position)
        yield item
        separator = _ARRAY_NEXT.match(text, position)
        if separator is None:
            raise ValueError(f"malformed JSON array at character {position}")
        position = separator.end()
        if separator.group(1) == "]":
            return position


def decode_records(items: Iterable[Any]) -> list[MetadataRecord]:
    """Records from their JSON forms (an entry fetched already decoded)."""
    return [decode_record(item) for item in items]


def _ints(values: Iterable[Any]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _endpoints_json(endpoints: Sequence[Endpoint]) -> list[list[Any]]:
    return [[e.name, e.host, e.port, e.security_protocol] for e in endpoints]


def _endpoints(data: Iterable[Sequence[Any]]) -> tuple[Endpoint, ...]:
    return tuple(
        Endpoint(str(name), str(host), int(port), str(protocol)) for name, host, port, protocol in data
    )


@record_type
@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord(MetadataRecord):
    """A broker (re)joins, fenced; its epoch is the offset of this record's entry."""

    TYPE_ID = 0
    TYPE = "register_broker"
    broker_id: int
    incarnation_id: uuid.UUID
    endpoints: tuple[Endpoint, ...]
    rack: str | None

    def fields_json(self, version: int) -> RecordJson:
        return {
            "broker_id": self.broker_id,
            "incarnation_id": str(self.incarnation_id),
            "endpoints": _endpoints_json(self.endpoints),
            "rack": self.rack,
        }

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> RegisterBrokerRecord:
        return cls(
            int(data["broker_id"]),
            uuid.UUID(data["incarnation_id"]),
            _endpoints(data["endpoints"]),
            data["rack"],
        )


@dataclass(frozen=True, slots=True)
class _BrokerEpochRecord(MetadataRecord):
    """A change to one registration of a broker; ignored when the broker registered again since."""

    broker_id: int
    epoch: int

    def fields_json(self, version: int) -> RecordJson:
        return {"broker_id": self.broker_id, "epoch": self.epoch}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> _BrokerEpochRecord:
        return cls(int(data["broker_id"]), int(data["epoch"]))


@record_type
@dataclass(frozen=True, slots=True)
class FenceBrokerRecord(_BrokerEpochRecord):
    TYPE_ID = 1
    TYPE = "fence_broker"


@record_type
@dataclass(frozen=True, slots=True)
class UnfenceBrokerRecord(_BrokerEpochRecord):
    TYPE_ID = 2
    TYPE = "unfence_broker"


@record_type
@dataclass(frozen=True, slots=True)
class BeginControlledShutdownRecord(_BrokerEpochRecord):
    TYPE_ID = 3
    TYPE = "begin_controlled_shutdown"


@record_type
@dataclass(frozen=True, slots=True)
class UnregisterBrokerRecord(MetadataRecord):
    TYPE_ID = 4
    TYPE = "unregister_broker"
    broker_id: int

    def fields_json(self, version: int) -> RecordJson:
        return {"broker_id": self.broker_id}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> UnregisterBrokerRecord:
        return cls(int(data["broker_id"]))


@record_type
@dataclass(frozen=True, slots=True)
class BrokerStateRecord(MetadataRecord):
    """A broker's whole registration, epoch included: written only in snapshots."""

    TYPE_ID = 5
    TYPE = "broker_state"
    broker_id: int
    incarnation_id: uuid.UUID
    epoch: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool

    def fields_json(self, version: int) -> RecordJson:
        return {
            "broker_id": self.broker_id,
            "incarnation_id": str(self.incarnation_id),
            "epoch": self.epoch,
            "endpoints": _endpoints_json(self.endpoints),
            "rack": self.rack,
            "fenced": self.fenced,
            "in_controlled_shutdown": self.in_controlled_shutdown,
        }

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> BrokerStateRecord:
        return cls(
            int(data["broker_id"]),
            uuid.UUID(data["incarnation_id"]),
            int(data["epoch"]),
            _endpoints(data["endpoints"]),
            data["rack"],
            bool(data["fenced"]),
            bool(data["in_controlled_shutdown"]),
        )


@record_type
@dataclass(frozen=True, slots=True)
class TopicRecord(MetadataRecord):
    TYPE_ID = 6
    TYPE = "topic"
    name: str
    topic_id: uuid.UUID
    internal: bool = False

    def fields_json(self, version: int) -> RecordJson:
        return {"name": self.name, "topic_id": str(self.topic_id), "internal": self.internal}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> TopicRecord:
        return cls(str(data["name"]), _topic_id(data["topic_id"]), bool(data["internal"]))


@record_type
@dataclass(frozen=True, slots=True)
class RemoveTopicRecord(MetadataRecord):
    TYPE_ID = 7
    TYPE = "remove_topic"
    topic_id: uuid.UUID

    def fields_json(self, version: int) -> RecordJson:
        return {"topic_id": str(self.topic_id)}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> RemoveTopicRecord:
        return cls(_topic_id(data["topic_id"]))


@record_type
@dataclass(frozen=True, slots=True)
class PartitionRecord(MetadataRecord):
    """A partition as a whole (created, or as a snapshot holds it)."""

    TYPE_ID = 8
    TYPE = "partition"
    topic_id: uuid.UUID
    partition: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    def fields_json(self, version: int) -> RecordJson:
        data: RecordJson = {
            "topic_id": str(self.topic_id),
            "partition": self.partition,
            "replicas": list(self.replicas),
            "isr": list(self.isr),
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "partition_epoch": self.partition_epoch,
        }
        # Written only while a reassignment is in progress (as the first release wrote them).
        if self.adding_replicas:
            data["adding_replicas"] = list(self.adding_replicas)
        if self.removing_replicas:
            data["removing_replicas"] = list(self.removing_replicas)
        return data

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> PartitionRecord:
        # The hottest decoder (a 10,000-partition topic is as many records): JSON integers taken as they are.
        return cls(
            _topic_id(data["topic_id"]),
            data["partition"],
            tuple(data["replicas"]),
            tuple(data["isr"]),
            data["leader"],
            data["leader_epoch"],
            data["partition_epoch"],
            tuple(data.get("adding_replicas", ())),
            tuple(data.get("removing_replicas", ())),
        )


@record_type
@dataclass(frozen=True, slots=True)
class PartitionChangeRecord(MetadataRecord):
    """Only the given (not None) fields change; applying it bumps partition_epoch, and leader_epoch when
    the leader changes (so every replica derives the same epochs from the log). A reassignment sets
    `adding_replicas` / `removing_replicas`; completing or cancelling it sets them empty."""

    TYPE_ID = 9
    TYPE = "partition_change"
    topic_id: uuid.UUID
    partition: int
    leader: int | None = None
    isr: tuple[int, ...] | None = None
    replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None

    _LISTS: ClassVar[tuple[str, ...]] = ("isr", "replicas", "adding_replicas", "removing_replicas")

    def fields_json(self, version: int) -> RecordJson:
        data: RecordJson = {"topic_id": str(self.topic_id), "partition": self.partition}
        if self.leader is not None:
            data["leader"] = self.leader
        for name in self._LISTS:
            value = getattr(self, name)
            if value is not None:
                data[name] = list(value)
        return data

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> PartitionChangeRecord:
        lists = {name: _ints(data[name]) for name in cls._LISTS if name in data}
        leader = data.get("leader")
        return cls(
            _topic_id(data["topic_id"]),
            int(data["partition"]),
            None if leader is None else int(leader),
            **lists,
        )


@record_type
@dataclass(frozen=True, slots=True)
class ConfigRecord(MetadataRecord):
    """resource_type is "topic", "broker" (resource_name "" = the cluster-wide default), "group" or
    "client_metrics" (a KIP-714 subscription); a None value removes the override."""

    TYPE_ID = 10
    TYPE = "config"
    resource_type: str
    resource_name: str
    name: str
    value: str | None

    def fields_json(self, version: int) -> RecordJson:
        return {
            "resource_type": self.resource_type,
            "resource_name": self.resource_name,
            "name": self.name,
            "value": self.value,
        }

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> ConfigRecord:
        value = data["value"]
        return cls(
            str(data["resource_type"]),
            str(data["resource_name"]),
            str(data["name"]),
            None if value is None else str(value),
        )


@record_type
@dataclass(frozen=True, slots=True)
class ProducerIdsRecord(MetadataRecord):
    """Ids below `next_producer_id` are handed out; the broker got the block ending there."""

    TYPE_ID = 11
    TYPE = "producer_ids"
    broker_id: int
    next_producer_id: int

    def fields_json(self, version: int) -> RecordJson:
        return {"broker_id": self.broker_id, "next_producer_id": self.next_producer_id}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> ProducerIdsRecord:
        return cls(int(data["broker_id"]), int(data["next_producer_id"]))


@record_type
@dataclass(frozen=True, slots=True)
class FeatureLevelRecord(MetadataRecord):
    """A finalized feature's level (Kafka's FeatureLevelRecord); level 0 un-finalizes it."""

    TYPE_ID = 12
    TYPE = "feature_level"
    name: str
    level: int

    def fields_json(self, version: int) -> RecordJson:
        return {"name": self.name, "level": self.level}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any], version: int) -> FeatureLevelRecord:
        return cls(str(data["name"]), int(data["level"]))


@functools.lru_cache(maxsize=4096)
def _topic_id(text: str) -> uuid.UUID:
    """Parsed once: every partition record of a 10,000-partition topic names the same topic id."""
    return uuid.UUID(text)
