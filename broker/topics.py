"""Topic lifecycle: keeps the metadata registry and the partition logs in step."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig
from broker.controller.forwarding import ControllerError, ControllerLink
from broker.log.config import LogConfig, known_topic_configs
from broker.log.log_manager import LogManager
from broker.metadata.topic_names import topic_name_problem
from broker.metadata.topic_registry import MetadataStore, TopicRecord

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"


def transaction_state_topic_configs(config: BrokerConfig) -> dict[str, str]:
    """Kafka's `__transaction_state` topic configs."""
    return {
        "cleanup.policy": "compact",
        "compression.type": "producer",
        "min.insync.replicas": str(config.get_int("transaction.state.log.min.isr")),
        "segment.bytes": str(config.get_int("transaction.state.log.segment.bytes")),
        "unclean.leader.election.enable": "false",
    }


# Creating partitions opens files on the event loop; a single request may not ask for more.
MAX_PARTITIONS = 10_000
_ZERO_UUID = uuid.UUID(int=0)


class TopicError(Exception):
    """A topic operation failed with a Kafka error code."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


def _raise_for_result(result: dict[str, Any]) -> None:
    if result.get("error_code"):
        raise TopicError(ErrorCode(result["error_code"]), result.get("message") or "")


class TopicManager:
    """Topic commands. The sync ones change this node's registry and logs directly (a single
    node); the async ones (`create`, `delete`, `grow`, `configure`, `auto_create_topic`) are what
    request handlers call: in a cluster (`cluster` set) they go through the active controller and
    return once this broker's registry shows the result."""

    def __init__(self, config: BrokerConfig, metadata: MetadataStore, logs: LogManager) -> None:
        self.config = config
        self.metadata = metadata
        self.logs = logs
        self.default_log_config = self.default_log_config_for(config)
        # Set on a cluster member: admin writes go through the active controller.
        self.cluster: ControllerLink | None = None
        # A single node's partition layer follows the registry (broker.partitions.single_node):
        # called with a topic's name after it is created, deleted or grows.
        self.on_topic_changed: Callable[[str], None] | None = None

    def _changed(self, name: str) -> None:
        if self.on_topic_changed is not None:
            self.on_topic_changed(name)

    @staticmethod
    def default_log_config_for(config: BrokerConfig) -> LogConfig:
        return LogConfig.from_properties(config.topic_defaults())

    # --- startup -----------------------------------------------------------------------

    def open_all(self) -> None:
        """Give every registered partition its log with the topic's config; drop orphan logs.

        LogManager.load opens what is on disk with default settings; `create` is idempotent
        and applies each topic's overrides. Orphans are left by a crash in the middle of a
        topic deletion (the registry forgets the topic first).
        """
        known = {(t.name, p) for t in self.metadata.topics() for p in range(t.partitions)}
        for partition_log in self.logs.partitions():
            key = (partition_log.topic, partition_log.partition)
            if key not in known:
                log.warning("deleting orphaned partition log %s-%d", *key)
                self.logs.delete_partition(*key)
        for topic in self.metadata.topics():
            config = self.log_config(topic)
            for partition in range(topic.partitions):
                self.logs.create(topic.name, partition, config)

    # --- configs -----------------------------------------------------------------------

    def apply_broker_defaults(self) -> None:
        """The broker's log defaults changed (dynamic broker configs): every log without its own
        override of a setting takes the new default, from its next append, roll or retention pass."""
        self.default_log_config = self.default_log_config_for(self.config)
        self.logs.default_config = self.default_log_config
        for topic in self.metadata.topics():
            config = self.log_config(topic)
            for partition in range(topic.partitions):
                partition_log = self.logs.get(topic.name, partition)
                if partition_log is not None:
                    partition_log.update_config(config)

    def log_config(self, topic: TopicRecord) -> LogConfig:
        return LogConfig.from_properties(topic.configs, base=self.default_log_config)

    def validate_configs(self, configs: dict[str, str]) -> LogConfig:
        known = known_topic_configs()
        for name in configs:
            if name not in known:
                raise TopicError(ErrorCode.invalid_config, f"Unknown topic config name: {name}")
        try:
            return LogConfig.from_properties(configs, base=self.default_log_config)
        except Exception as exc:  # LogConfig raises ValueError subclasses with a message
            raise TopicError(ErrorCode.invalid_config, str(exc)) from None

    # --- commands ----------------------------------------------------------------------

    def check_new_topic(self, name: str, partitions: int, replication_factor: int) -> tuple[int, int]:
        """Validate a create request; returns the (partitions, replication factor) to use."""
        problem = topic_name_problem(name)
        if problem:
            raise TopicError(ErrorCode.invalid_topic_exception, problem)
        if name in self.metadata:
            raise TopicError(ErrorCode.topic_already_exists, f"Topic '{name}' already exists.")
        other = self.metadata.colliding_topic(name)
        if other is not None:
            raise TopicError(
                ErrorCode.invalid_topic_exception,
                f"Topic '{name}' collides with existing topic: {other}",
            )
        if partitions == -1:
            partitions = self.config.num_partitions
        if partitions < 1 or partitions > MAX_PARTITIONS:
            raise TopicError(ErrorCode.invalid_partitions, "Number of partitions must be larger than 0.")
        if replication_factor == -1:
            replication_factor = self.config.default_replication_factor
        if replication_factor < 1:
            raise TopicError(
                ErrorCode.invalid_replication_factor, "Replication factor must be larger than 0."
            )
        if replication_factor > 1:
            raise TopicError(
                ErrorCode.invalid_replication_factor,
                f"Replication factor: {replication_factor} larger than available brokers: 1.",
            )
        return partitions, replication_factor

    def create_topic(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: dict[str, str] | None = None,
        *,
        validate_only: bool = False,
        internal: bool = False,
    ) -> TopicRecord:
        partitions, replication_factor = self.check_new_topic(name, partitions, replication_factor)
        configs = dict(configs or {})
        log_config = self.validate_configs(configs)
        if validate_only:
            return TopicRecord(name=name, topic_id=_ZERO_UUID, partitions=partitions, configs=configs)
        topic = self.metadata.create_topic(
            name, partitions, replication_factor=replication_factor, configs=configs, internal=internal
        )
        for partition in range(partitions):
            self.logs.create(name, partition, log_config)
        self._changed(name)
        log.info("created topic %s with %d partitions", name, partitions)
        return topic

    def delete_topic(self, name: str) -> TopicRecord:
        topic = self._deletable(name)
        # Registry first: once it forgets the topic, a crash leaves only orphan logs that
        # open_all removes on the next start.
        self.metadata.delete_topic(name)
        self.logs.delete_topic(name)
        self._changed(name)
        log.info("deleted topic %s", name)
        return topic

    def add_partitions(self, name: str, total: int, *, validate_only: bool = False) -> TopicRecord:
        topic = self.metadata.get(name)
        if topic is None:
            raise TopicError(ErrorCode.unknown_topic_or_partition, "This server does not host this topic.")
        if total < topic.partitions:
            raise TopicError(
                ErrorCode.invalid_partitions,
                f"Topic currently has {topic.partitions} partitions, which is higher than the requested {total}.",
            )
        if total == topic.partitions:
            raise TopicError(ErrorCode.invalid_partitions, f"Topic already has {total} partitions.")
        if total > MAX_PARTITIONS:
            raise TopicError(ErrorCode.invalid_partitions, "Too many partitions.")
        if validate_only:
            return topic
        config = self.log_config(topic)
        for partition in range(topic.partitions, total):
            self.logs.create(name, partition, config)
        grown = self.metadata.add_partitions(name, total)
        self._changed(name)
        return grown

    def set_configs(self, name: str, configs: dict[str, str], *, validate_only: bool = False) -> TopicRecord:
        topic = self.metadata.get(name)
        if topic is None:
            raise TopicError(ErrorCode.unknown_topic_or_partition, "This server does not host this topic.")
        log_config = self.validate_configs(configs)
        if validate_only:
            return topic
        updated = self.metadata.set_topic_configs(name, configs)
        for partition in range(topic.partitions):
            partition_log = self.logs.get(name, partition)
            if partition_log is not None:
                partition_log.update_config(log_config)
        return updated

    def auto_create(self, name: str) -> TopicRecord | None:
        """Create a topic on first use when the broker allows it; None if it may not."""
        if not self.config.auto_create_topics_enable:
            return None
        try:
            return self.create_topic(name)
        except TopicError as exc:
            if exc.error_code == ErrorCode.topic_already_exists:
                return self.metadata.get(name)
            raise

    # --- commands for request handlers (single node or cluster) ------------------------------

    async def create(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: dict[str, str] | None = None,
        *,
        validate_only: bool = False,
        internal: bool = False,
        assignments: list[list[int]] | None = None,
    ) -> TopicRecord:
        """`assignments`: explicit replica lists per partition (checked by the controller in a
        cluster; a single node accepts only itself, see handlers/topic_admin.py)."""
        if self.cluster is None:
            return self.create_topic(
                name, partitions, replication_factor, configs, validate_only=validate_only, internal=internal
            )
        configs = dict(configs or {})
        self.validate_configs(configs)
        topic = {
            "name": name,
            "partitions": partitions,
            "replication_factor": replication_factor,
            "configs": configs,
            "internal": internal,
            "assignments": assignments or None,
        }
        result = await self._forward("create_topics", {"validate_only": validate_only, "topics": [topic]})
        _raise_for_result(result["results"][0])
        created_id = result["results"][0].get("topic_id")
        if not validate_only and created_id and self.metadata.get(name) is None:
            # Committed, but this broker's image has not caught up yet (a loaded node): the topic exists, so
            # answer as Kafka's CreateTopics does once its controller commits, not REQUEST_TIMED_OUT (a client's
            # retry would then get TOPIC_ALREADY_EXISTS). Metadata shows the topic once this broker catches up.
            return TopicRecord(
                name=name,
                topic_id=uuid.UUID(created_id),
                partitions=len(assignments)
                if assignments
                else (self.config.num_partitions if partitions == -1 else partitions),
                replication_factor=len(assignments[0])
                if assignments
                else (
                    self.config.default_replication_factor if replication_factor == -1 else replication_factor
                ),
                configs=configs,
            )
        if validate_only:
            return TopicRecord(
                name=name,
                topic_id=_ZERO_UUID,
                partitions=self.config.num_partitions if partitions == -1 else partitions,
                replication_factor=(
                    self.config.default_replication_factor if replication_factor == -1 else replication_factor
                ),
                configs=configs,
            )
        return self._seen_locally(name)

    async def delete(self, name: str) -> TopicRecord:
        if self.cluster is None:
            return self.delete_topic(name)
        topic = self._deletable(name)
        result = await self._forward("delete_topics", {"names": [name]})
        _raise_for_result(result["results"][0])
        log.info("deleted topic %s", name)
        return topic

    async def grow(
        self,
        name: str,
        total: int,
        *,
        validate_only: bool = False,
        assignments: list[list[int]] | None = None,
    ) -> TopicRecord:
        if self.cluster is None:
            return self.add_partitions(name, total, validate_only=validate_only)
        topic = self.add_partitions(name, total, validate_only=True)  # the same checks as a single node
        if validate_only:
            return topic
        await self._forward(
            "create_partitions", {"name": name, "total": total, "assignments": assignments or None}
        )
        return self._seen_locally(name)

    async def configure(
        self, name: str, configs: dict[str, str], *, validate_only: bool = False
    ) -> TopicRecord:
        """Replace the topic's config overrides with `configs`."""
        if self.cluster is None:
            return self.set_configs(name, configs, validate_only=validate_only)
        topic = self.set_configs(name, configs, validate_only=True)
        if validate_only:
            return topic
        changes: dict[str, str | None] = {k: v for k, v in configs.items() if topic.configs.get(k) != v}
        changes.update({k: None for k in topic.configs if k not in configs})
        if changes:
            await self._forward(
                "alter_configs", {"resource_type": "topic", "resource_name": name, "changes": changes}
            )
        return self._seen_locally(name)

    async def auto_create_topic(self, name: str) -> TopicRecord | None:
        """Create a topic on first use when the broker allows it; None if it may not."""
        if self.cluster is None:
            return self.auto_create(name)
        if not self.config.auto_create_topics_enable:
            return None
        try:
            return await self.create(name)
        except TopicError as exc:
            if exc.error_code == ErrorCode.topic_already_exists:
                return self.metadata.get(name)
            raise

    def _deletable(self, name: str) -> TopicRecord:
        topic = self.metadata.get(name)
        if topic is None:
            raise TopicError(ErrorCode.unknown_topic_or_partition, "This server does not host this topic.")
        if topic.internal:
            raise TopicError(ErrorCode.invalid_topic_exception, f"Cannot delete internal topic {name}")
        if not self.config.get_bool("delete.topic.enable"):
            raise TopicError(ErrorCode.topic_deletion_disabled, "Topic deletion is disabled.")
        return topic

    async def _forward(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.cluster is not None, "only a cluster member forwards topic commands"
        try:
            return await self.cluster.call(method, params)
        except ControllerError as exc:
            raise TopicError(ErrorCode(exc.code), exc.message) from None

    def _seen_locally(self, name: str) -> TopicRecord:
        topic = self.metadata.get(name)
        if topic is None:
            raise TopicError(
                ErrorCode.request_timed_out,
                f"Topic '{name}' was changed but this broker has not caught up yet.",
            )
        return topic

    def ensure_transaction_state_topic(self) -> TopicRecord:
        topic = self.metadata.get(TRANSACTION_STATE_TOPIC)
        if topic is not None:
            return topic
        return self.create_topic(
            TRANSACTION_STATE_TOPIC,
            self.config.get_int("transaction.state.log.num.partitions"),
            1,
            transaction_state_topic_configs(self.config),
            internal=True,
        )

    def ensure_offsets_topic(self) -> TopicRecord:
        topic = self.metadata.get(OFFSETS_TOPIC)
        if topic is not None:
            return topic
        return self.create_topic(
            OFFSETS_TOPIC,
            self.config.offsets_topic_num_partitions,
            1,
            {
                "cleanup.policy": "compact",
                "compression.type": "producer",
                "segment.bytes": str(self.config.get_int("offsets.topic.segment.bytes")),
            },
            internal=True,
        )
