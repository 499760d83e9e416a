"""The persisted registry of topics: ids, partition counts, leader epochs and config overrides.

Every change is expressed as a record (a plain dict) applied by `apply_record`. Today the
records are folded into a JSON snapshot written with write-then-rename; a replicated
metadata log can later store the same records and replay them through `apply_record`.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from broker.metadata.topic_names import collision_key
from broker.runtime.durable_json import write_json_durably

SNAPSHOT_NAME = "broker-metadata.json"


class TopicExists(Exception):
    pass


class TopicCollision(Exception):
    pass


class UnknownTopic(Exception):
    pass


@dataclass(frozen=True, slots=True)
class TopicRecord:
    name: str
    topic_id: uuid.UUID
    partitions: int
    replication_factor: int = 1
    configs: dict[str, str] = field(default_factory=dict)
    # One epoch per partition, bumped whenever leadership could have changed.
    leader_epochs: tuple[int, ...] = ()
    internal: bool = False

    def leader_epoch(self, partition: int) -> int:
        return self.leader_epochs[partition] if partition < len(self.leader_epochs) else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "topic_id": str(self.topic_id),
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
            "configs": self.configs,
            "leader_epochs": list(self.leader_epochs),
            "internal": self.internal,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TopicRecord:
        return cls(
            name=data["name"],
            topic_id=uuid.UUID(data["topic_id"]),
            partitions=int(data["partitions"]),
            replication_factor=int(data.get("replication_factor", 1)),
            configs=dict(data.get("configs", {})),
            leader_epochs=tuple(data.get("leader_epochs", ())),
            internal=bool(data.get("internal", False)),
        )


class MetadataStore:
    """Topic metadata for one node. Thread-safe for the cleaner thread's reads."""

    def __init__(self, data_dir: Path) -> None:
        self._path = Path(data_dir) / SNAPSHOT_NAME
        self._lock = threading.Lock()
        self._topics: dict[str, TopicRecord] = {}
        self._by_id: dict[uuid.UUID, str] = {}
        self._collisions: dict[str, str] = {}
        self.cluster_id = ""
        self.version = 0  # bumps on every change; lets callers cache derived responses

    # --- persistence -------------------------------------------------------------------

    def load(self) -> None:
        if self._path.exists():
            data = json.loads(self._path.read_text(encoding="utf-8"))
            self.cluster_id = data.get("cluster_id", "")
            for topic in data.get("topics", []):
                self._index(TopicRecord.from_json(topic))
        if not self.cluster_id:
            self.cluster_id = _new_cluster_id()
            self._save()
        self.version += 1

    def _save(self) -> None:
        data = {
            "cluster_id": self.cluster_id,
            "topics": [t.to_json() for t in sorted(self._topics.values(), key=lambda t: t.name)],
        }
        write_json_durably(self._path, data, indent=1)

    # --- records -----------------------------------------------------------------------

    def apply_record(self, record: dict[str, Any]) -> TopicRecord | None:
        """Apply one change record and persist. Returns the topic as it is afterwards."""
        with self._lock:
            result = self._apply(record)
            self._save()
            self.version += 1
            return result

    def _apply(self, record: dict[str, Any]) -> TopicRecord | None:
        kind = record["type"]
        if kind == "create_topic":
            topic = TopicRecord.from_json(record["topic"])
            if topic.name in self._topics:
                raise TopicExists(topic.name)
            other = self._collisions.get(collision_key(topic.name))
            if other is not None:
                raise TopicCollision(other)
            self._index(topic)
            return topic
        topic = self._topics.get(record["name"])
        if topic is None:
            raise UnknownTopic(record["name"])
        if kind == "delete_topic":
            del self._topics[topic.name]
            del self._by_id[topic.topic_id]
            self._collisions.pop(collision_key(topic.name), None)
            return None
        if kind == "add_partitions":
            count = int(record["partitions"])
            epochs = topic.leader_epochs + (0,) * (count - topic.partitions)
            updated = replace(topic, partitions=count, leader_epochs=epochs)
        elif kind == "set_configs":
            updated = replace(topic, configs=dict(record["configs"]))
        else:
            raise ValueError(f"unknown metadata record type {kind!r}")
        self._topics[topic.name] = updated
        return updated

    def _index(self, topic: TopicRecord) -> None:
        self._topics[topic.name] = topic
        self._by_id[topic.topic_id] = topic.name
        self._collisions[collision_key(topic.name)] = topic.name

    # --- commands ----------------------------------------------------------------------

    def create_topic(
        self,
        name: str,
        partitions: int,
        *,
        replication_factor: int = 1,
        configs: dict[str, str] | None = None,
        internal: bool = False,
    ) -> TopicRecord:
        topic = TopicRecord(
            name=name,
            topic_id=uuid.uuid4(),
            partitions=partitions,
            replication_factor=replication_factor,
            configs=dict(configs or {}),
            leader_epochs=(0,) * partitions,
            internal=internal,
        )
        result = self.apply_record({"type": "create_topic", "topic": topic.to_json()})
        assert result is not None
        return result

    def delete_topic(self, name: str) -> None:
        self.apply_record({"type": "delete_topic", "name": name})

    def add_partitions(self, name: str, total: int) -> TopicRecord:
        result = self.apply_record({"type": "add_partitions", "name": name, "partitions": total})
        assert result is not None
        return result

    def set_topic_configs(self, name: str, configs: dict[str, str]) -> TopicRecord:
        result = self.apply_record({"type": "set_configs", "name": name, "configs": configs})
        assert result is not None
        return result

    # --- queries -----------------------------------------------------------------------

    def get(self, name: str) -> TopicRecord | None:
        return self._topics.get(name)

    def get_by_id(self, topic_id: uuid.UUID) -> TopicRecord | None:
        name = self._by_id.get(topic_id)
        return self._topics.get(name) if name is not None else None

    def colliding_topic(self, name: str) -> str | None:
        other = self._collisions.get(collision_key(name))
        return other if other is not None and other != name else None

    def topics(self) -> Iterator[TopicRecord]:
        return iter(list(self._topics.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._topics

    def __len__(self) -> int:
        return len(self._topics)


def _new_cluster_id() -> str:
    # Kafka cluster ids are 22-character url-safe base64 encodings of a uuid.
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
