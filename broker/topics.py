"""Topic lifecycle: keeps the metadata registry and the partition logs in step."""

from __future__ import annotations

import logging
import uuid

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig
from broker.controller.forwarding import ControllerError, ControllerLink
from broker.controller.rpc.admin import (
    AlterConfigsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    NewTopic,
    TopicResult,
)
from broker.controller.rpc.base import R, Request
from broker.log.config import LogConfig, known_topic_configs
from broker.log.log_manager import LogManager
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


def _raise_for_result(result: TopicResult) -> None:
    if result.error_code:
        raise TopicError(ErrorCode(result.error_code), result.message or "")


class TopicManager:
    """Topic commands for request handlers (`create`, `delete`, `grow`, `configure`, `auto_create_topic`):
    checked here as Kafka's broker does, then committed by the active controller (`cluster`, set when the
    broker joins its quorum); they return once this broker's registry shows the result."""

    cluster: ControllerLink

    def __init__(self, config: BrokerConfig, metadata: MetadataStore, logs: LogManager) -> None:
        self.config = config
        self.metadata = metadata
        self.logs = logs
        self.default_log_config = self.default_log_config_for(config)

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

    def _check_growth(self, name: str, total: int) -> TopicRecord:
        """CreatePartitions' checks of the broker (the controller checks the assignments)."""
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
        return topic

    def _check_configs(self, name: str, configs: dict[str, str]) -> TopicRecord:
        topic = self.metadata.get(name)
        if topic is None:
            raise TopicError(ErrorCode.unknown_topic_or_partition, "This server does not host this topic.")
        self.validate_configs(configs)
        return topic

    # --- commands ----------------------------------------------------------------------

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
        """`assignments`: explicit replica lists per partition (checked by the controller)."""
        configs = dict(configs or {})
        self.validate_configs(configs)
        topic = NewTopic(
            name,
            partitions,
            replication_factor,
            configs,
            internal,
            tuple(tuple(replicas) for replicas in assignments) if assignments else None,
        )
        result = await self._forward(CreateTopicsRequest((topic,), validate_only))
        _raise_for_result(result.results[0])
        created_id = result.results[0].topic_id
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
        topic = self._deletable(name)
        result = await self._forward(DeleteTopicsRequest((name,)))
        _raise_for_result(result.results[0])
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
        topic = self._check_growth(name, total)
        if validate_only:
            return topic
        await self._forward(
            CreatePartitionsRequest(
                name, total, tuple(tuple(replicas) for replicas in assignments) if assignments else None
            )
        )
        return self._seen_locally(name)

    async def configure(
        self, name: str, configs: dict[str, str], *, validate_only: bool = False
    ) -> TopicRecord:
        """Replace the topic's config overrides with `configs`."""
        topic = self._check_configs(name, configs)
        if validate_only:
            return topic
        changes: dict[str, str | None] = {k: v for k, v in configs.items() if topic.configs.get(k) != v}
        changes.update({k: None for k in topic.configs if k not in configs})
        if changes:
            await self._forward(AlterConfigsRequest("topic", name, changes))
        return self._seen_locally(name)

    async def auto_create_topic(self, name: str) -> TopicRecord | None:
        """Create a topic on first use when the broker allows it; None if it may not."""
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

    async def _forward(self, request: Request[R]) -> R:
        try:
            return await self.cluster.call(request)
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
