"""The persisted registry of topics: ids, partition counts, leader epochs and config overrides.

Every change (`add_topic`, `add_partitions`, `set_topic_configs`) is folded into a JSON snapshot
written with write-then-rename before it returns; a deletion is written with the next change or `flush`
(see `delete_topic`). The metadata log's typed records (broker/controller/records.py) are the truth;
this registry is the broker's local view of them.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from broker.metadata.topic_names import collision_key
from broker.runtime.durable_json import write_json_durably

SNAPSHOT_NAME = "broker-metadata.json"

T = TypeVar("T")


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
        # A deletion not written to the file yet (see `delete_topic`).
        self._unsaved = False

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
        write_json_durably(self._path, data)
        self._unsaved = False

    def flush(self) -> None:
        """Write the deletions `delete_topic` left unwritten (the broker calls this periodically from a
        worker thread, and on close)."""
        with self._lock:
            if self._unsaved:
                self._save()

    # --- changes ----------------------------------------------------------------------

    def _changed(self, change: Callable[[], T]) -> T:
        """Make one change and persist it."""
        with self._lock:
            result = change()
            self._save()
            self.version += 1
            return result

    def add_topic(self, topic: TopicRecord) -> TopicRecord:
        """Add `topic` as it is (its id included). Raises TopicExists or TopicCollision."""
        return self._changed(lambda: self._add(topic))

    def _add(self, topic: TopicRecord) -> TopicRecord:
        if topic.name in self._topics:
            raise TopicExists(topic.name)
        other = self._collisions.get(collision_key(topic.name))
        if other is not None:
            raise TopicCollision(other)
        self._index(topic)
        return topic

    def _existing(self, name: str) -> TopicRecord:
        topic = self._topics.get(name)
        if topic is None:
            raise UnknownTopic(name)
        return topic

    def _index(self, topic: TopicRecord) -> None:
        self._topics[topic.name] = topic
        self._by_id[topic.topic_id] = topic.name
        self._collisions[collision_key(topic.name)] = topic.name

    def _replace(self, name: str, change: Callable[[TopicRecord], TopicRecord]) -> TopicRecord:
        def replaced() -> TopicRecord:
            updated = change(self._existing(name))
            self._topics[name] = updated
            return updated

        return self._changed(replaced)

    def create_topic(
        self,
        name: str,
        partitions: int,
        *,
        replication_factor: int = 1,
        configs: dict[str, str] | None = None,
        internal: bool = False,
    ) -> TopicRecord:
        return self.add_topic(
            TopicRecord(
                name=name,
                topic_id=uuid.uuid4(),
                partitions=partitions,
                replication_factor=replication_factor,
                configs=dict(configs or {}),
                leader_epochs=(0,) * partitions,
                internal=internal,
            )
        )

    def delete_topic(self, name: str) -> None:
        """Forget the topic now; the file keeps listing it until the next change or `flush` rewrites it.

        The file must list every topic whose logs may be on disk (at start `TopicManager.open_all` deletes
        the other logs as orphans), so additions are written before they return. A deletion may lag: the
        metadata log holds it durably before DeleteTopics is answered, and a broker restarting with the
        topic still listed drops it when its image is loaded, before it serves
        (`MetadataApplier.on_image_loaded`). Rewriting and fsyncing the whole registry here, on the
        way to the answer, made a single node's DeleteTopics twice as slow as its metadata log's fsync."""
        with self._lock:
            topic = self._existing(name)
            del self._topics[topic.name]
            del self._by_id[topic.topic_id]
            self._collisions.pop(collision_key(topic.name), None)
            self._unsaved = True
            self.version += 1

    def add_partitions(self, name: str, total: int) -> TopicRecord:
        def grown(topic: TopicRecord) -> TopicRecord:
            epochs = topic.leader_epochs + (0,) * (total - topic.partitions)
            return replace(topic, partitions=total, leader_epochs=epochs)

        return self._replace(name, grown)

    def set_topic_configs(self, name: str, configs: dict[str, str]) -> TopicRecord:
        return self._replace(name, lambda topic: replace(topic, configs=dict(configs)))

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


class TopicsView(Generic[T]):
    """A value derived from every topic (the topics consumer groups may subscribe to, say), built again only
    when the metadata changed: a group heartbeat asks for it each time, and building it is O(topics)."""

    def __init__(self, store: MetadataStore, build: Callable[[Iterable[TopicRecord]], T]) -> None:
        self._store = store
        self._build = build
        self._version = -1
        self._value: T | None = None

    def __call__(self) -> T:
        # The version is read before the topics: a change made while building leaves the value marked older
        # than it is, so it is built again next time, never kept stale.
        version = self._store.version
        if self._value is None or version != self._version:
            self._value = self._build(self._store.topics())
            self._version = version
        return self._value
