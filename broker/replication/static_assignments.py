"""TEST / BOOTSTRAP ONLY: partition leadership fixed by a JSON file instead of the controller.

`replication.static.assignments=/path/assignments.json` makes a broker run the replication data path
with leaders, replicas and ISRs read from that file — so that replication can be exercised with
real broker processes before the controller quorum (`broker/controller/`) drives it. The controller's
metadata log replaces this mode: nothing here elects leaders, fences brokers or survives failures
on its own. Every broker of the cluster is given the same file:

    {
      "cluster_id": "q1Sh-9_ISia_zwGINzRvyQ",             (optional: every broker reports it)
      "brokers": {"1": "127.0.0.1:9092", "2": "127.0.0.1:9093"},
      "topics": {
        "orders": {
          "topic_id": "5f2b6c1e-...",            (optional: derived from the name)
          "partitions": [
            {"leader": 1, "leader_epoch": 0, "replicas": [1, 2], "isr": [1, 2]}
          ]
        }
      }
    }

The file is re-read when it changes (checked every second), so a test moves leadership by writing
a new version with a higher `leader_epoch`. ISR changes a leader proposes are accepted locally
(`StaticAlterPartition`) and are not written back: each broker only knows its own proposals.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

from broker.config import ConfigError
from broker.controller.api import (
    AlterPartitionRequest,
    AlterPartitionResult,
    BrokerRegistration,
    Endpoint,
    PartitionAssignment,
)
from broker.partitions.single_node import SingleNodeImage, single_node_registration
from broker.replication.manager import ReplicaManager, accept_alter_partition

log = logging.getLogger(__name__)

RELOAD_INTERVAL_S = 1.0
# Kafka error codes AlterPartition answers with.
FENCED_LEADER_EPOCH = 74
INVALID_UPDATE_VERSION = 95
UNKNOWN_TOPIC_ID = 100
_TOPIC_ID_NAMESPACE = uuid.UUID("6c1b4f4e-7d0a-4c8e-9a57-2f3d1e0b9c11")


def static_topic_id(topic: str) -> uuid.UUID:
    """The same id on every broker for a topic the file gives no id."""
    return uuid.uuid5(_TOPIC_ID_NAMESPACE, topic)


@dataclass(frozen=True)
class StaticLayout:
    partitions: list[PartitionAssignment]
    brokers: list[BrokerRegistration]
    cluster_id: str | None


def parse_static_assignments(text: str, listener_name: str) -> StaticLayout:
    try:
        data = json.loads(text)
        cluster_id = data.get("cluster_id")
        brokers = [
            BrokerRegistration(
                broker_id=int(broker_id),
                incarnation_id=uuid.UUID(int=0),
                epoch=0,
                endpoints=(Endpoint(listener_name, *_host_port(address)),),
                fenced=False,
            )
            for broker_id, address in data.get("brokers", {}).items()
        ]
        partitions = []
        for topic, spec in data.get("topics", {}).items():
            topic_id = uuid.UUID(spec["topic_id"]) if spec.get("topic_id") else static_topic_id(topic)
            for index, part in enumerate(spec["partitions"]):
                replicas = tuple(int(r) for r in part["replicas"])
                partitions.append(
                    PartitionAssignment(
                        topic=topic,
                        partition=index,
                        topic_id=topic_id,
                        leader=int(part["leader"]),
                        leader_epoch=int(part.get("leader_epoch", 0)),
                        partition_epoch=int(part.get("partition_epoch", 0)),
                        replicas=replicas,
                        isr=tuple(int(r) for r in part.get("isr", replicas)),
                    )
                )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"replication.static.assignments: {exc!r}") from None
    return StaticLayout(partitions, brokers, str(cluster_id) if cluster_id else None)


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = str(address).rpartition(":")
    return host or "127.0.0.1", int(port)


class StaticAlterPartition:
    """AlterPartition answered locally: accepted when it is based on the current partition state."""

    def __init__(self, manager: ReplicaManager) -> None:
        self.manager = manager

    async def alter_partition(self, request: AlterPartitionRequest) -> AlterPartitionResult:
        for assignment in self.manager.assignments.values():
            if assignment.topic_id == request.topic_id and assignment.partition == request.partition:
                if request.leader_epoch != assignment.leader_epoch:
                    return AlterPartitionResult(FENCED_LEADER_EPOCH)
                if request.partition_epoch != assignment.partition_epoch:
                    return AlterPartitionResult(INVALID_UPDATE_VERSION)
                return AlterPartitionResult(0, accept_alter_partition(assignment, request))
        return AlterPartitionResult(UNKNOWN_TOPIC_ID)


class StaticAssignmentsSource:
    """Feeds the file to the ReplicaManager at start and whenever it changes."""

    def __init__(
        self, path: Path, manager: ReplicaManager, listener_name: str, local: SingleNodeImage
    ) -> None:
        self.path = path
        self.manager = manager
        # The topics the file does not name stay led by this node alone.
        self.local = local
        self.listener_name = listener_name
        self._seen: tuple[float, int] | None = None
        self._task: asyncio.Task[None] | None = None

    def load(self) -> None:
        try:
            stat = self.path.stat()
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"replication.static.assignments: cannot read {self.path}: {exc}") from None
        self._seen = (stat.st_mtime, stat.st_size)
        layout = parse_static_assignments(text, self.listener_name)
        if layout.cluster_id:
            # Clients refuse brokers that report different cluster ids.
            self.manager.state.metadata.cluster_id = layout.cluster_id
        named = frozenset(p.topic for p in layout.partitions)
        self.local.external = named
        brokers = list(layout.brokers)
        if all(b.broker_id != self.local.node_id for b in brokers):
            brokers.append(single_node_registration(self.local.node_id))
        self.manager.on_image_loaded([*layout.partitions, *self.local.partitions(exclude=named)], brokers)

    def start_watching(self) -> None:
        self._task = asyncio.create_task(self._watch(), name="static-assignments-watch")

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(RELOAD_INTERVAL_S)
            try:
                stat = self.path.stat()
                if (stat.st_mtime, stat.st_size) != self._seen:
                    log.info("static assignments changed: reloading %s", self.path)
                    self.load()
            except (OSError, ConfigError) as exc:
                log.warning("static assignments not reloaded: %s", exc)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
